"""Batched Voodoo Mania baselines: observation and mask tensors in, one action per game out.

Each policy picks, row by row, the action its reference agent in
``cauldron.agents.voodoo_mania.heuristic`` picks on the same observation and mask (ties go to the
first candidate in slot and side order there, and to the first maximum of every ``argmax`` here).
Random play is :class:`cauldron.agents.batched.BatchedRandom`. Built as ``cls(num_players, device,
generator)`` (see :mod:`cauldron.agents.batched`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn.functional import one_hot

from cauldron.agents.voodoo_mania.heuristic import LAYOUT, deck_answers
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C
from cauldron.envs.voodoo_mania.encoding import SIDE

Q, H = C.NUM_PAIRS, C.HAND_SIZE


def _first(candidates: torch.Tensor) -> torch.Tensor:
    """``[B]``: the index of each row's first true entry (0 when there is none)."""
    return candidates.to(torch.int8).argmax(dim=1)


def answers(hand: torch.Tensor) -> torch.Tensor:
    """``[B, 3, 25]`` bool: per hand card (``hand`` ``[B, 3, 2, 50]`` as encoded) and pair,
    whether a side of the card shows the pair (normal play) or misses it (Voodoo!)."""
    return ((hand[:, :, :, :Q] > 0) | (hand[:, :, :, Q:] > 0)).any(dim=2)


def follow_ups(hand: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
    """``[B, 6]``: per slot and side, how many of the other hand cards could answer the pair
    that play would ask for (the pair the side misses); ``slots`` is ``arange(3)``."""
    wanted = one_hot(hand[:, :, :, Q:].argmax(dim=3), Q).float()  # [B, slot, side, 25]
    present = (hand != 0).flatten(2).any(dim=2)  # [B, 3]
    can = torch.einsum("bsdq,boq->bsdo", wanted, answers(hand).float()) > 0  # [B, 3, 2, other]
    other = slots[:, None, None] != slots  # [slot, 1, other]
    return (can & other & present[:, None, None, :]).sum(dim=3).flatten(1)


class BatchedFast:
    """``heuristic:fast``: the first legal action other than waiting, else wait."""

    name = "heuristic:fast"

    def __init__(self, num_players: int, device: Any, generator: torch.Generator) -> None:
        """No chance and no memory: the arguments are the common signature's."""

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """``[B]`` int64: the reference heuristic's action in every row."""
        acting = mask[:, A.PLAY :]
        return torch.where(acting.any(dim=1), A.PLAY + _first(acting), A.WAIT)


class BatchedChain:
    """``heuristic:chain``: a Voodoo! once the Voodoo pile holds a card for every other player;
    else the normal play with the most follow-ups in the own hand; else any Voodoo!; else the
    first cycle; else wait."""

    name = "heuristic:chain"

    def __init__(self, num_players: int, device: Any, generator: torch.Generator) -> None:
        self.slots = torch.arange(H, device=device)

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """``[B]`` int64: the reference heuristic's action in every row."""
        obs = observation
        plays = obs[:, LAYOUT["hand_plays"]].view(-1, H * 2, 2) > 0  # [B, slot·side, kind]
        legal = mask[:, A.PLAY : A.CYCLE]
        normal, voodoo = plays[:, :, 0] & legal, plays[:, :, 1] & legal
        held = obs[:, LAYOUT["hand_sizes"]] + obs[:, LAYOUT["pile_sizes"]]
        players = (held != 0).sum(dim=1)
        pile = torch.round(obs[:, LAYOUT["voodoo_pile_size"]][:, 0] * C.NUM_CARDS)
        follow_ups = self._follow_ups(obs[:, LAYOUT["hand"]].view(-1, H, 2, SIDE))
        best_normal = torch.where(normal, follow_ups, -1).argmax(dim=1)
        cycles = mask[:, A.CYCLE :]
        cycle = torch.where(cycles.any(dim=1), A.CYCLE + _first(cycles), A.WAIT)
        has_voodoo = voodoo.any(dim=1)
        first_voodoo = A.PLAY + _first(voodoo)
        return torch.where(
            has_voodoo & (pile >= players),
            first_voodoo,
            torch.where(
                normal.any(dim=1),
                A.PLAY + best_normal,
                torch.where(has_voodoo, first_voodoo, cycle),
            ),
        )

    def _follow_ups(self, hand: torch.Tensor) -> torch.Tensor:
        """See :func:`follow_ups`."""
        return follow_ups(hand, self.slots)


class BatchedBlocker:
    """``heuristic:blocker``: the first Voodoo! once the Voodoo pile holds more than its top card
    (or when no normal play is legal); else the normal play whose new wanted pair the fewest
    cards outside the hand answer (the deck's count minus the hand's follow-ups); else the first
    cycle; else wait."""

    name = "heuristic:blocker"

    def __init__(self, num_players: int, device: Any, generator: torch.Generator) -> None:
        self.slots = torch.arange(H, device=device)
        self.answers = torch.tensor(deck_answers(), device=device)

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """``[B]`` int64: the reference heuristic's action in every row."""
        obs = observation
        plays = obs[:, LAYOUT["hand_plays"]].view(-1, H * 2, 2) > 0  # [B, slot·side, kind]
        legal = mask[:, A.PLAY : A.CYCLE]
        normal, voodoo = plays[:, :, 0] & legal, plays[:, :, 1] & legal
        pile = torch.round(obs[:, LAYOUT["voodoo_pile_size"]][:, 0] * C.NUM_CARDS)
        hand = obs[:, LAYOUT["hand"]].view(-1, H, 2, SIDE)
        wanted = hand[:, :, :, Q:].argmax(dim=3).flatten(1)  # [B, slot·side]
        others = self.answers[wanted] - follow_ups(hand, self.slots)
        big = int(self.answers.max()) + 1
        best_normal = torch.where(normal, others, big).argmin(dim=1)
        cycles = mask[:, A.CYCLE :]
        cycle = torch.where(cycles.any(dim=1), A.CYCLE + _first(cycles), A.WAIT)
        has_normal = normal.any(dim=1)
        return torch.where(
            voodoo.any(dim=1) & ((pile > 1) | ~has_normal),
            A.PLAY + _first(voodoo),
            torch.where(has_normal, A.PLAY + best_normal, cycle),
        )


HEURISTICS = {"fast": BatchedFast, "chain": BatchedChain, "blocker": BatchedBlocker}
