"""``heuristic:planner`` for B observations at once (see
:mod:`cauldron.agents.hocus_pocus.planner`).

The same functions over ``[B, ...]`` tensors in float64, every sum in the reference's order, so
that each row gets the reference's action (ties to the first legal action in id order). A play's
rating needs, for every card ``k`` and space ``s``, the Cauldron with ``k`` on ``s`` and ``k``
out of the hand: a top's best key card without ``k`` is its best or, when that is ``k``, its
second best; the best key card of ``k`` itself as a top is one of the two copies sharing ``k``'s
other attribute. Key cards are listed per top and attribute (``key_lists``: at most ten), so a
maximum runs over ten values, not fifty, with the same result.
"""

from __future__ import annotations

from typing import Any

import torch

from cauldron.agents.hocus_pocus.batched_play import best_play
from cauldron.agents.hocus_pocus.cards import (
    CAULDRON_SPELLS,
    COLOUR,
    HAS,
    IS_SPELL_BOOK,
    KEYS,
    KIND,
    LAYOUT,
    TOP_HAS,
)
from cauldron.agents.hocus_pocus.planner import COVER_WEIGHT, GRID, NO_WEIGHT, PARTNER_WEIGHT
from cauldron.envs.core.batched_ops import any_along
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.phases import Phase

N, SPACES, SEATS = C.NUM_CARDS, C.NUM_SPACES, C.MAX_PLAYERS


def key_lists() -> torch.Tensor:
    """``[55, 10, 10]``: per top and attribute the top lacks, its key cards (``KEYS``) in id
    order, padded with ``50``: two copies for a card on top, up to ten for an empty space."""
    lists = torch.full((N + SPACES, 10, 10), N, dtype=torch.int64)
    for top in range(N + SPACES):
        for question in range(10):
            if not TOP_HAS[top, question]:
                cards = torch.as_tensor(KEYS[top, question]).nonzero().flatten()
                lists[top, question, : len(cards)] = cards
    return lists


class BatchedPlanner:
    """The question-reading planner (``heuristic:planner``) for B observations at once."""

    name = "heuristic:planner"

    def __init__(self, num_players: int, device: Any, generator: torch.Generator) -> None:
        self.device = device
        self.has = torch.as_tensor(HAS, device=device)  # [50, 10]
        self.top_has = torch.as_tensor(TOP_HAS, device=device)  # [55, 10]
        self.keys = torch.as_tensor(KEYS, device=device)  # [55, 10, 50]
        self.lists = key_lists().to(device)  # [55, 10, 10]
        self.colour = torch.as_tensor(COLOUR, device=device)
        self.kind = torch.as_tensor(KIND, device=device)
        self.book = torch.as_tensor(IS_SPELL_BOOK, dtype=torch.float64, device=device)
        cauldron = torch.zeros(len(C.SPELL_NAMES), dtype=torch.bool)
        cauldron[list(CAULDRON_SPELLS)] = True
        self.cauldron = cauldron.to(device)
        self.seats = torch.arange(SEATS, device=device)

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """``[B]`` int64: the reference planner's action in every row."""
        obs = observation
        phase = obs[:, LAYOUT["phase"]].argmax(1)
        tops = self.top_cards(obs)
        hold = self.holdings(obs)
        hand = hold[:, 0] > 0
        live = self.live_values(hold)
        lists = self.lists[tops]  # [B, 5, 10, 10]: key cards per space and attribute
        padded = torch.cat([live, torch.zeros_like(live[:, :1])], 1)  # [B, 51]
        terms = padded.gather(1, lists.flatten(1)).view(lists.shape)  # their values
        values = self.plan_values(tops, terms)
        target = values.argmax(1)
        shown = self.top_has[tops]  # [B, 5, 10]
        shown_target = shown.gather(2, target[:, None, None].expand(-1, SPACES, 1))[..., 0]
        keys = self.keys[tops, target[:, None]]  # [B, 5, 50]: the target's key cards per space
        key = any_along(keys & ~shown_target[:, :, None], 1)  # [B, 50]
        choice = torch.where(
            phase == Phase.ASK,
            A.ASK + self.question(obs, hold, key & ~hand),
            torch.where(
                phase == Phase.ACT,
                self.play(mask, hand, shown, padded, lists, terms),
                self.choose(mask, values, key),
            ),
        )
        choice = torch.where(phase == Phase.BINX, A.BINX, choice)
        choice = torch.where(phase == Phase.STUN_CHOICE, A.STUN_WINIFRED, choice)
        spell = obs[:, LAYOUT["current_spell"]].argmax(1)
        salt = self.cauldron[spell] & (shown_target.sum(1) >= 2)
        choice = torch.where(
            phase == Phase.SALT, torch.where(salt, A.SALT_USE, A.SALT_DECLINE), choice
        )
        finish = (phase == Phase.DISCARD) & mask[:, A.FINISH]
        return torch.where(finish, A.FINISH, choice)

    def top_cards(self, obs: torch.Tensor) -> torch.Tensor:
        """``[B, 5]``: each space's top card, or ``50 + space`` when empty."""
        tops = obs[:, LAYOUT["pile_tops"]].view(len(obs), SPACES, N)
        empty = N + torch.arange(SPACES, device=obs.device)
        return torch.where(any_along(tops > 0, 2), tops.argmax(2), empty)

    def holdings(self, obs: torch.Tensor) -> torch.Tensor:
        """``[B, 6, 50]``: :func:`cauldron.agents.hocus_pocus.planner.holdings` per row."""
        rows = len(obs)
        n = obs[:, LAYOUT["num_players"]].argmax(1) + 2
        hand = obs[:, LAYOUT["hand"]] > 0
        sizes = torch.round(obs[:, LAYOUT["hand_sizes"]].double() * N)
        binx = obs[:, LAYOUT["binx_holder"]].argmax(1) - 1
        binx_hand = obs[:, LAYOUT["binx_hand"]] > 0
        seen = (
            hand
            | any_along(obs[:, LAYOUT["pile_tops"]].view(rows, SPACES, N) > 0, 1)
            | any_along(obs[:, LAYOUT["buried_cards"]].view(rows, SPACES, N) > 0, 1)
            | (obs[:, LAYOUT["discard_pile"]] > 0)
            | (obs[:, LAYOUT["removed_cards"]] > 0)
            | binx_hand
        )
        unseen = ~seen
        base = sizes / unseen.sum(1, keepdim=True).clamp(min=1).double()  # [B, 6]
        hold = base[:, :, None] * unseen[:, None, :].double()
        yes = obs[:, LAYOUT["answers_yes"]].view(rows, SEATS, 10) > 0
        no = obs[:, LAYOUT["answers_no"]].view(rows, SEATS, 10) > 0
        count = (unseen[:, :, None] & self.has).sum(1)  # [B, 10]
        one_of = torch.where(
            yes & (count > 0)[:, None, :], 1.0 / count.clamp(min=1).double()[:, None, :], 0.0
        )
        floor = torch.maximum(one_of[:, :, self.colour], one_of[:, :, self.kind])
        hold = torch.maximum(hold, floor * unseen[:, None, :].double())
        said_no = no[:, :, self.colour] | no[:, :, self.kind]
        hold = torch.where(said_no, NO_WEIGHT * hold, hold)
        handed = obs[:, LAYOUT["handed_card"]] > 0
        to = obs[:, LAYOUT["handed_to"]].argmax(1)
        took = (self.seats == to[:, None]) & any_along(handed, 1)[:, None]  # [B, 6]
        hold = torch.where(took[:, :, None] & (handed & unseen)[:, None, :], 1.0, hold)
        shows = (self.seats == binx[:, None]) & (binx > 0)[:, None]
        hold = torch.where(shows[:, :, None], binx_hand[:, None, :].double(), hold)
        hold = torch.round(hold.clamp(max=1.0) * GRID) / GRID
        hold[:, 0] = hand.double()
        return torch.where((self.seats[None, :] < n[:, None])[:, :, None], hold, 0.0)

    @staticmethod
    def live_values(hold: torch.Tensor) -> torch.Tensor:
        """``[B, 50]``: :func:`cauldron.agents.hocus_pocus.planner.live_values` per row."""
        free = torch.ones_like(hold[:, 0])
        for seat in range(1, SEATS):
            free = free * (1.0 - hold[:, seat])
        return torch.where(hold[:, 0] > 0, 1.0, PARTNER_WEIGHT * (1.0 - free))

    def plan_values(self, tops: torch.Tensor, terms: torch.Tensor) -> torch.Tensor:
        """``[B, 10]``: :func:`cauldron.agents.hocus_pocus.planner.plan_values` per row, from the
        key-card values ``terms`` ``[B, 5, 10, 10]``."""
        shown = self.top_has[tops].double()
        parts = shown + COVER_WEIGHT * (1.0 - shown) * terms.amax(3)
        total = parts[:, 0]
        for space in range(1, SPACES):
            total = total + parts[:, space]
        return total

    def question(self, obs: torch.Tensor, hold: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """``[B]``: the question placing the most of ``keys`` ``[B, 50]`` among partners who
        have not answered it (chances on the ``GRID``: the sums are exact in any order)."""
        rows = len(obs)
        yes = obs[:, LAYOUT["answers_yes"]].view(rows, SEATS, 10) > 0
        no = obs[:, LAYOUT["answers_no"]].view(rows, SEATS, 10) > 0
        found = (hold[:, 1:] * keys[:, None, :].double()) @ self.has.double()  # [B, 5, 10]
        count = (keys[:, :, None] & self.has).sum(1).double()
        gain = (found * (~(yes | no)[:, 1:]).double()).sum(1) + 1e-3 * count
        return gain.argmax(1)

    def play(
        self,
        mask: torch.Tensor,
        hand: torch.Tensor,
        shown: torch.Tensor,
        padded: torch.Tensor,
        lists: torch.Tensor,
        terms: torch.Tensor,
    ) -> torch.Tensor:
        """``[B]``: the best-rated play (card ``k`` onto space ``s``, ``k`` leaving the hand),
        rated for the ``H`` cards in hand; with none, Billy Butcherson, Burning Rain of Death,
        or reveal a Spell."""
        rows, device = len(mask), mask.device
        size = max(1, int(hand.sum(1).max())) if rows else 1
        order = torch.where(
            hand, torch.arange(N, device=device), N + torch.arange(N, device=device)
        )
        cards = order.sort(1).values[:, :size] % N  # [B, H]: the hand in id order (padded)
        first = terms.argmax(3, keepdim=True)  # [B, 5, 10, 1]: each top's best key card ...
        best = terms.gather(3, first)
        second = terms.scatter(3, first, 0.0).amax(3, keepdim=True)  # ... and the next best
        taken = lists.gather(3, first) == cards[:, None, None, :]  # [B, 5, 10, H]
        without = torch.where(taken, second, best)
        covered = shown.double()[..., None]
        old = covered + COVER_WEIGHT * (1.0 - covered) * without  # [B, 5, 10, H]
        has = self.has[cards].double()  # [B, H, 10]
        pairs = self.lists[cards][..., :2]  # [B, H, 10, 2]: a card's key cards as a top
        own_keys = padded.gather(1, pairs.flatten(1)).view(rows, size, 10, 2).amax(3)
        new = (has + COVER_WEIGHT * (1.0 - has) * own_keys).transpose(1, 2)  # [B, 10, H]
        score = torch.empty(rows, size, SPACES, dtype=torch.float64, device=device)
        for space in range(SPACES):
            total = new if space == 0 else old[:, 0]
            for other in range(1, SPACES):
                total = total + (new if other == space else old[:, other])
            others = torch.cat([shown[:, :space], shown[:, space + 1 :]], 1).all(1)  # [B, 10]
            stun = any_along(others[:, None, :] & (has > 0), 2).double()  # [B, H]
            score[:, :, space] = 100.0 * stun + total.amax(1) - 0.5 * self.book[cards]
        at = (hand.cumsum(1) - 1).clamp(min=0)  # [B, 50]: a hand card's place in ``cards``
        full = score.gather(1, at[:, :, None].expand(-1, -1, SPACES)).flatten(1)  # [B, 250]
        return best_play(mask, full)

    def choose(self, mask: torch.Tensor, values: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        """``[B]``: the card least useful to the plan among the legal choices."""
        usefulness = values[:, self.colour] + values[:, self.kind] + 3.0 * key.double()
        legal = mask[:, A.CHOOSE : A.FINISH]
        return A.CHOOSE + torch.where(legal, usefulness, torch.inf).argmin(1)
