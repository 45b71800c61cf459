"""Batched Headless Horseman heuristics: observation and mask tensors in, one action per game out.

:class:`BatchedFocal` picks the action ``agents.headless_horseman_heuristic``'s
``HeadlessHorsemanHeuristic`` picks on the same observation (``tests/test_headless_horseman_
batched.py``). Random play is the shared ``agents.batched.BatchedRandom``; ``HEURISTICS`` is what
``agents.batched.make_batched_agent`` looks up.
"""

from __future__ import annotations

from typing import Any

import torch

from agents.headless_horseman_heuristic import (
    LAYOUT,
    MATCH_BONUS,
    RIDE_COST,
    landing_value,
)
from envs.headless_horseman import components as C


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


HEURISTICS = {"focal": BatchedFocal}
