"""Batched Headless Horseman heuristics: observation and mask tensors in, one action per game out.

:class:`BatchedFocal`, :class:`BatchedHighest` and :class:`BatchedSafe` pick the action
``cauldron.agents.headless_horseman.heuristic``'s ``HeadlessHorsemanHeuristic``,
``HighestHeuristic`` and ``SafeHeuristic`` pick on the same observation
(``tests/test_headless_horseman_batched.py``). The reference players take the minimum of a key tuple
over the legal cards in id order; here each key becomes one number (its parts weighted so that an
earlier part always outweighs the later ones) and the first maximum wins, the same card. Random play
is the shared ``cauldron.agents.batched.BatchedRandom``; ``HEURISTICS`` is what
``cauldron.agents.batched.make_batched_agent`` looks up.
"""

from __future__ import annotations

from typing import Any

import torch

from cauldron.agents.headless_horseman.heuristic import (
    BOARD,
    LAYOUT,
    MATCH_BONUS,
    RIDE_COST,
    landing_value,
)
from cauldron.envs.headless_horseman import components as C


class BatchedFocal:
    """The focal heuristic (``heuristic:focal``) for B observations at once: every number's
    landing value from Ichabod's space (a table built with the reference's ``landing_value``),
    a bonus for a number that matches the row, a cost for the Horseman's ride; the first card
    of the highest score, as the reference's ``max`` over the legal cards in order."""

    name = "heuristic:focal"

    def __init__(
        self, num_players: int, device: Any = "cpu", generator: torch.Generator | None = None
    ) -> None:
        """The same for every player count; the heuristic draws no chance (no generator)."""
        spaces = C.BOARD.bridge + 1
        values = [
            [landing_value(p, top) for top in range(1, C.NUM_TOPS + 1)] for p in range(spaces)
        ]
        self.values = torch.tensor(values, dtype=torch.float64, device=device)  # [space, top]
        self.card_top = torch.tensor([C.top_of(c) - 1 for c in range(C.NUM_CARDS)], device=device)
        bottoms = torch.tensor([C.bottom_of(c) for c in range(C.NUM_CARDS)], device=device)
        self.speed_icon = bottoms == C.SPEED_ICON
        self.bottom = bottoms.double()

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """``[B]`` int64: the focal card of each game (the top card when it is the only play)."""
        position = observation[:, LAYOUT["ichabod"]].argmax(dim=1)
        in_row = (observation[:, LAYOUT["row_tops"]] > 0).double()  # [B, 6]
        # The reference multiplies the float32 Speed tile, so a speed card's ride costs a hair
        # more than a printed ride of the same size (ties go to the printed one): kept as is.
        speed_cost = (RIDE_COST * (observation[:, LAYOUT["speed_tile"]] * 4)).double()  # [B, 1]
        cost = torch.where(self.speed_icon, speed_cost, RIDE_COST * self.bottom)  # [B, 30]
        value = self.values[position][:, self.card_top]  # [B, 30]
        score = value + MATCH_BONUS * in_row[:, self.card_top] - cost
        score = torch.cat([score, torch.zeros_like(score[:, :1])], dim=1)
        return torch.where(mask, score, -torch.inf).argmax(dim=1)


class _Cards:
    """Per-card tables and the observation's parts that the lexicographic heuristics read."""

    def __init__(self, device: Any) -> None:
        spaces = C.BOARD.bridge + 1
        tops = range(1, C.NUM_TOPS + 1)
        values = [[landing_value(p, top) for top in tops] for p in range(spaces)]
        scares = [[p + top in BOARD.scare_spaces for top in tops] for p in range(spaces)]
        self.values = torch.tensor(values, dtype=torch.float64, device=device)  # [space, top]
        self.scares = torch.tensor(scares, dtype=torch.float64, device=device)  # [space, top]
        self.card_top = torch.tensor([C.top_of(c) - 1 for c in range(C.NUM_CARDS)], device=device)
        bottoms = torch.tensor([C.bottom_of(c) for c in range(C.NUM_CARDS)], device=device)
        self.speed_icon = bottoms == C.SPEED_ICON
        self.bottom = bottoms.double()

    def parts(self, observation: torch.Tensor) -> dict[str, torch.Tensor]:
        """``[B, 30]`` float64 per card: ``top`` (1–6), ``ride``, ``in_row`` (its number is in
        the row), ``scare`` (it would land Ichabod on a Scare space), ``value`` (landing value)."""
        position = observation[:, LAYOUT["ichabod"]].argmax(dim=1)
        speed = (observation[:, LAYOUT["speed_tile"]] * 4).double()  # [B, 1]
        return {
            "top": (self.card_top + 1).double().expand(len(observation), -1),
            "ride": torch.where(self.speed_icon, speed, self.bottom),
            "in_row": (observation[:, LAYOUT["row_tops"]] > 0).double()[:, self.card_top],
            "scare": self.scares[position][:, self.card_top],
            "value": self.values[position][:, self.card_top],
        }


def _first_best(score: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[B]``: the first legal card of the highest score; the top card (30) when it is the only
    legal play."""
    score = torch.cat([score, torch.zeros_like(score[:, :1])], dim=1)
    return torch.where(mask, score, -torch.inf).argmax(dim=1)


class BatchedHighest:
    """``heuristic:highest`` for B observations: a number in the row first, then no Scare
    space, then the highest number, then the shortest ride (each part outweighs the next)."""

    name = "heuristic:highest"

    def __init__(
        self, num_players: int, device: Any = "cpu", generator: torch.Generator | None = None
    ) -> None:
        """The same for every player count; no chance (no generator)."""
        self.cards = _Cards(device)

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """``[B]`` int64: the reference heuristic's card in every game."""
        c = self.cards.parts(observation)
        # ride <= 4 < one step of top; top * 10 <= 60 < 100 < 1000
        score = 1000 * c["in_row"] - 100 * c["scare"] + 10 * c["top"] - c["ride"]
        return _first_best(score, mask)


class BatchedSafe:
    """``heuristic:safe`` for B observations: no Scare space first, then the shortest ride,
    then a number in the row, then the best landing value (each part outweighs the next)."""

    name = "heuristic:safe"

    def __init__(
        self, num_players: int, device: Any = "cpu", generator: torch.Generator | None = None
    ) -> None:
        """The same for every player count; no chance (no generator)."""
        self.cards = _Cards(device)

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """``[B]`` int64: the reference heuristic's card in every game."""
        c = self.cards.parts(observation)
        # landing values are whole numbers within ±200, rides whole numbers 0–4
        score = -1e6 * c["scare"] - 1e4 * c["ride"] + 1e3 * c["in_row"] + c["value"]
        return _first_best(score, mask)


HEURISTICS = {"focal": BatchedFocal, "highest": BatchedHighest, "safe": BatchedSafe}
