"""Batched Hexenflug baselines: observation and mask tensors in, one action per game out.

:class:`BatchedHexenflugHeuristic` picks, row by row, the action that
``cauldron.agents.hexenflug.heuristic.HexenflugHeuristic`` picks on the same observation and mask
(the reference breaks ties by the first legal action in id order, and so does every ``argmax`` /
``argmin`` here). Random play is :class:`cauldron.agents.batched.BatchedRandom`. Built as
``cls(num_players, device, generator)`` (see :mod:`cauldron.agents.batched`).
"""

from __future__ import annotations

from typing import Any

import torch

from cauldron.agents.hexenflug.heuristic import FULL_BOOKS, FULL_EXAM, LAYOUT, MAX_BOOKS
from cauldron.envs.hexenflug import actions as A
from cauldron.envs.hexenflug import components as C
from cauldron.envs.hexenflug.phases import Phase

N, K, V, P = C.NUM_CARDS, C.NUM_COLOURS, C.MAX_VALUE, C.MAX_PLAYERS
BIG = 10_000


class BatchedHexenflugHeuristic:
    """The crash-risk heuristic with its thresholds (see ``agents/hexenflug/heuristic.py``)."""

    def __init__(
        self,
        name: str,
        risk: float,
        land_with: int,
        max_gap: int,
        device: Any = "cpu",
    ) -> None:
        self.name = f"heuristic:{name}"
        self.risk, self.land_with, self.max_gap = risk, land_with, max_gap
        cards = torch.arange(N, device=device)
        self.colour, self.value = cards // V, cards % V + 1
        self.values = torch.arange(1, V + 1, device=device)

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """``[B]`` int64: the reference heuristic's action in every row."""
        obs = observation
        phase = obs[:, LAYOUT["phase"]].argmax(1)
        hand = obs[:, LAYOUT["hands"]][:, :N] > 0
        own_layout = obs[:, LAYOUT["layouts"]][:, :N] > 0
        tops = (own_layout.view(-1, K, V) * self.values).amax(-1)  # [B, 5]
        hand_counts = hand.view(-1, K, V).sum(-1)
        gap = self.value - tops[:, self.colour]  # [B, 75]: each card above its row's top
        choice = torch.where(
            phase == Phase.FLY,
            self._fly(obs, mask, hand_counts, own_layout, tops, gap),
            torch.where(
                phase == Phase.DRAWN,
                self._drawn(obs, mask, gap),
                torch.where(
                    phase == Phase.EXAMINE,
                    self._examine(obs, mask, hand_counts),
                    torch.where(
                        phase == Phase.EXAM_BUILD,
                        self._build(obs, mask),
                        self._cat_discard(mask, hand_counts),
                    ),
                ),
            ),
        )
        return choice

    def _fly(self, obs, mask, hand_counts, own_layout, tops, gap) -> torch.Tensor:
        """Take the useful display card of smallest gap; else land (hard: when the crash risk
        is above the threshold; soft: with enough cards of the best colour); else draw."""
        useful = mask[:, A.TAKE : A.TAKE + N] & (gap <= self.max_gap)
        take = torch.where(useful, gap, BIG).argmin(1)
        lands = mask[:, A.LAND : A.LAND + K]
        total = hand_counts + own_layout.view(-1, K, V).sum(-1)
        best = torch.where(lands, total, -1).argmax(1)
        best_total = total.gather(1, best[:, None]).squeeze(1)
        displayed = obs[:, LAYOUT["displayed"]][:, 0] > 0
        land = torch.where(
            displayed, self._crash_risk(obs, tops) > self.risk, best_total >= self.land_with
        )
        land &= lands.any(1)
        return torch.where(useful.any(1), A.TAKE + take, torch.where(land, A.LAND + best, A.DRAW))

    def _crash_risk(self, obs: torch.Tensor, tops: torch.Tensor) -> torch.Tensor:
        """``[B]`` float64: the share of unseen cards that could not be placed (1 if none)."""
        seen = obs[:, LAYOUT["display"]] + obs[:, LAYOUT["discard_pile"]]
        seen = seen + obs[:, LAYOUT["drawn_card"]]
        for table in ("hands", "layouts"):
            seen = seen + obs[:, LAYOUT[table]].view(-1, P, N).sum(1)
        unseen = seen == 0
        bad = unseen & (self.value <= tops[:, self.colour])
        count = unseen.sum(1).double()
        return torch.where(count > 0, bad.sum(1).double() / count.clamp(min=1), 1.0)

    def _drawn(self, obs, mask, gap) -> torch.Tensor:
        """Place within the gap (or when the display is used up), else display, else crash."""
        drawn = obs[:, LAYOUT["drawn_card"]].argmax(1)
        close = gap.gather(1, drawn[:, None]).squeeze(1) <= self.max_gap
        can_display = mask[:, A.DISPLAY]
        place = mask[:, A.PLACE] & (close | ~can_display)
        crash = torch.where(mask[:, A.CRASH_KEEP], A.CRASH_KEEP, A.CRASH)
        return torch.where(place, A.PLACE, torch.where(can_display, A.DISPLAY, crash))

    def _examine(self, obs, mask, hand_counts) -> torch.Tensor:
        """Examine the legal colour with most cards in hand (if :meth:`_examines` says so), or
        skip."""
        options = mask[:, A.EXAMINE : A.EXAMINE + K]
        best = torch.where(options, hand_counts, -1).argmax(1)
        examine = options.any(1) & self._examines(obs, hand_counts, best)
        return torch.where(examine, A.EXAMINE + best, A.SKIP)

    def _examines(self, obs, hand_counts, colour) -> torch.Tensor:
        """``[B]`` bool: whether to examine ``colour``; always."""
        return torch.ones_like(colour, dtype=torch.bool)

    def _build(self, obs, mask) -> torch.Tensor:
        """Choose the lowest legal card of the examined colour, else the lowest joker, until
        none is legal; then finish."""
        cards = mask[:, A.CHOOSE : A.CHOOSE + N]
        colour = obs[:, LAYOUT["exam_colour"]].argmax(1)
        own = cards & (self.colour == colour[:, None])
        pool = torch.where(own.any(1, keepdim=True), own, cards)
        card = torch.where(pool, self.value, BIG).argmin(1)
        return torch.where(cards.any(1), A.CHOOSE + card, A.FINISH)

    def _cat_discard(self, mask, hand_counts) -> torch.Tensor:
        """Discard from the colour with fewest cards in hand, the lowest value first."""
        key = hand_counts[:, self.colour] * (V + 1) + self.value
        return A.CHOOSE + torch.where(mask[:, A.CHOOSE : A.CHOOSE + N], key, BIG).argmin(1)


class BatchedCautious(BatchedHexenflugHeuristic):
    """``heuristic:cautious`` (risk 0.3, lands softly with 3 cards, gaps of at most 4)."""

    def __init__(self, num_players: int, device: Any, generator: torch.Generator) -> None:
        super().__init__("cautious", risk=0.3, land_with=3, max_gap=4, device=device)


class BatchedGreedy(BatchedHexenflugHeuristic):
    """``heuristic:greedy`` (risk 0.5, lands softly with 4 cards, places every card it can)."""

    def __init__(self, num_players: int, device: Any, generator: torch.Generator) -> None:
        super().__init__("greedy", risk=0.5, land_with=4, max_gap=15, device=device)


class BatchedBanker(BatchedHexenflugHeuristic):
    """``heuristic:banker`` (flies as cautious but lands softly with 5 cards; examines only with
    five cards of the colour, unless its supply is under three Spellbooks, the hand holds six
    cards or more, or one more exhausted colour would end the game)."""

    def __init__(self, num_players: int, device: Any, generator: torch.Generator) -> None:
        super().__init__("banker", risk=0.3, land_with=FULL_EXAM, max_gap=4, device=device)
        self.exhausted_to_end = C.exhausted_colours_to_end(num_players)

    def _examines(self, obs, hand_counts, colour) -> torch.Tensor:
        supply = torch.round(obs[:, LAYOUT["supply"]] * MAX_BOOKS)  # [B, 5]
        exhausted = (supply == 0).sum(1)
        count = hand_counts.gather(1, colour[:, None]).squeeze(1)
        return (
            (count >= FULL_EXAM)
            | (supply.gather(1, colour[:, None]).squeeze(1) < FULL_BOOKS)
            | (hand_counts.sum(1) > FULL_EXAM)
            | (exhausted + 1 >= self.exhausted_to_end)
        )


HEURISTICS = {"cautious": BatchedCautious, "greedy": BatchedGreedy, "banker": BatchedBanker}
