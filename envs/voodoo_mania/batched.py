"""Voodoo Mania for B games at once, as tensors (the batched engine).

The same rules as ``rules.py``, function for function (``new_games``, ``_deal``, ``wanted``,
``plays``, ``totals``, ``winners``, ``legal_mask_for``, ``apply_joint``, ``_cycle``, ``_play``,
``_stalled``, ``_truncate``, ``_end_round``; the AEC order's ``apply`` is the shared
:class:`~cauldron.envs.core.simultaneous.BatchedSimultaneous`), over :class:`BatchedState`,
whose fields are those of ``rules.State`` with a batch dimension first. Every rule runs for the
whole batch and a ``live`` mask ([B] or [B, n] bool) says which games (or seats) it applies to, so
no Python ``if`` looks at one game's data. Chance (the deals and each tick's play priority) comes
from the ``torch.Generator`` passed in.

A card side is a *face*, ``2 · card + side``. Piles are rings: each own pile and the Voodoo pile
keep their cards in ``R = 91`` slots read from a ``head`` (the bottom card) for ``size`` cards, so
sliding a card under a pile and taking the top card are one write each and nothing moves. Empty
hand slots and unused slots hold ``NONE`` (card 91, face 182), a card that shows and misses
nothing, so table look-ups need no masks.

Two invariants of the rules are used. No pile ever holds all 91 cards (the Voodoo pile keeps a
card, and a round ends when the first player runs out), so the ring slot below a pile's bottom
and above its top is free and may be written unconditionally. And a hand holds fewer than three
cards only while its own pile is empty (the pile refills the hand after every play and a cycle
needs a pile card), so a Voodoo! card that reaches a short hand's empty pile goes straight into
the hand (``_top_up``).

The reference rules stay the specification: ``tests/test_voodoo_mania_batched.py`` converts
reference states with :func:`from_reference` / :func:`to_reference` and checks every chance-free
transition, the observations, masks and ``state()`` against them.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

import numpy as np
import torch
from torch.nn.functional import one_hot, pad

from cauldron.envs.core.batched import chance_rows, randint, shuffled_decks, uniform
from cauldron.envs.core.simultaneous import BatchedSimultaneous, has_chosen, own_choice
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C
from cauldron.envs.voodoo_mania.facts import FACTS
from cauldron.envs.voodoo_mania.phases import Phase
from cauldron.envs.voodoo_mania.rules import State, VoodooManiaRules

N = C.NUM_CARDS
NONE = N  # no card: an empty hand slot or ring slot
R = N  # ring slots of a pile (a pile never holds every card: the Voodoo pile keeps one)
Q = C.NUM_PAIRS
H = C.HAND_SIZE
P = C.MAX_PLAYERS
TICK, OVER = int(Phase.TICK), int(Phase.OVER)
OUT_SLOTS = N - 1 - min(n * d for n, d in C.CARDS_PER_PLAYER.items())  # cards left out: 2


# --------------------------------------------------------------------- state
@dataclasses.dataclass
class BatchedState:
    """B games; the fields of ``rules.State`` (seats absolute), every one ``[B, ...]``.

    ``hands [B, n, 3]``: cards in list order, ``NONE`` past the hand's end. ``piles [B, n, 91]``
    with ``pile_head``, ``pile_size [B, n]``: each own pile as a ring, bottom card at
    ``pile_head``. ``voodoo [B, 91]`` with ``voodoo_head``, ``voodoo_size [B]``: the Voodoo pile's
    faces as a ring, bottom first. ``out [B, 2]``: cards left out of the round, ``NONE``-padded.
    ``scores [B, n]``. ``pending [B, n]``: each seat's hidden choice this tick, or ``-1``.
    ``last_player`` is ``-1`` after a tick without a play; ``last_cyclers [B, n]`` bool. The rest
    are ``[B]``; ``truncated`` and ``last_voodoo`` are bool, every other field int64.

    One field is derived, not in ``rules.State``: ``answers [B, 26]``, per pair, how many cards
    in the hands and own piles can be played on it (normal or Voodoo!), kept up to date by the
    plays and deals so that the stalled-table rule is one look-up."""

    hands: torch.Tensor
    piles: torch.Tensor
    pile_head: torch.Tensor
    pile_size: torch.Tensor
    voodoo: torch.Tensor
    voodoo_head: torch.Tensor
    voodoo_size: torch.Tensor
    out: torch.Tensor
    scores: torch.Tensor
    round: torch.Tensor
    tick: torch.Tensor
    phase: torch.Tensor
    truncated: torch.Tensor
    idle: torch.Tensor
    pending: torch.Tensor
    actor: torch.Tensor
    last_player: torch.Tensor
    last_voodoo: torch.Tensor
    last_cyclers: torch.Tensor
    answers: torch.Tensor


# --------------------------------------------------------------------- engine
class BatchedVoodooMania(BatchedSimultaneous):
    """The rules of one reference ``VoodooManiaRules`` (player count, options) for B games at
    once; follows :class:`cauldron.envs.core.batched.BatchedGame`."""

    cooperative = FACTS.cooperative
    choosing_phase = TICK
    num_actions = A.NUM_ACTIONS

    def __init__(self, rules: VoodooManiaRules, encoder: Any, device: Any) -> None:
        self.rules = rules
        self.num_players = n = rules.num_players
        self.options = rules.options
        self.per_player = rules.per_player
        self.device = device
        self.observation_layout = encoder.observation_layout
        self.state_layout = encoder.state_layout
        self.observation_size = encoder.observation_layout.size
        self.state_size = encoder.state_layout.size
        self.pile_bound = encoder.pile_bound
        self.score_bound = encoder.score_bound

        # Faces 0..181 of the deck, then two faces of the card NONE, which show and miss nothing
        # (pair 25 stands for "no pair").
        shows = torch.zeros(2 * N + 2, Q + 1, dtype=torch.bool)
        missing = torch.full((2 * N + 2,), Q, dtype=torch.int64)
        for card, sides in enumerate(rules.deck):
            for side, face in enumerate(sides):
                shows[2 * card + side, list(face.shows)] = True
                missing[2 * card + side] = face.missing
        misses = one_hot(missing, Q + 1).bool()
        self.face_missing = missing.to(device)  # [184]
        code = torch.cat([shows[:, :Q], misses[:, :Q]], 1).float()
        self.face_code = code.to(device)  # [184, 50]: pairs shown, pair missing
        self.card_code = code.view(N + 1, 2 * 2 * Q).to(device)  # [92, 100]: both sides
        playable = (shows | misses).view(N + 1, 2, Q + 1).any(1)
        playable[NONE] = False
        self.playable_on = playable.long().to(device)  # [92, 26]: pairs each card answers (0/1)
        # play_kinds[card, wanted]: per side, a normal play and a Voodoo! play on that pair
        kinds = torch.stack([shows, misses], dim=2).view(N + 1, 2, Q + 1, 2)
        self.play_kinds = kinds.permute(0, 2, 1, 3).reshape(N + 1, Q + 1, 4).contiguous()
        self.play_kinds = self.play_kinds.to(device)
        self.seat_ids = torch.arange(n, device=device)
        self.slots = torch.arange(H, device=device)
        self.ring = torch.arange(R, device=device)
        # what the observation divides by: per seat (hand, own pile, points, cycled, chosen) and
        # single numbers (over, Voodoo pile, Voodoo!, tick)
        bounds = [H, self.pile_bound, self.score_bound, 1, 1]
        self.seat_bounds = torch.tensor(bounds, dtype=torch.float64, device=device)[:, None]
        bounds = [1, N, 1, self.options.max_ticks]
        self.single_bounds = torch.tensor(bounds, dtype=torch.float64, device=device)
        self.players_code = _one_hot(torch.tensor([n - 2], device=device), P - 1)

    # ----------------------------------------------------------------- reset
    def new_games(
        self, rows: int, generator: torch.Generator, start_seat: torch.Tensor | None = None
    ) -> BatchedState:
        """Fresh games: round 0, tick 0, no points, the first deal (:meth:`_dealt`).
        ``start_seat`` has no effect: everyone acts every tick."""
        n, dev = self.num_players, self.device
        zeros = torch.zeros(rows, dtype=torch.int64, device=dev)
        return BatchedState(
            **self._dealt(rows, generator),
            scores=torch.zeros(rows, n, dtype=torch.int64, device=dev),
            round=zeros.clone(),
            tick=zeros.clone(),
            phase=zeros + TICK,
            truncated=torch.zeros(rows, dtype=torch.bool, device=dev),
            idle=zeros.clone(),
        )

    def _dealt(self, rows: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
        """Setup: shuffle, one card starts the Voodoo pile (a random side up), deal each player's
        own pile, each player takes three cards from it; the rest stay out of the round. Nothing
        of the previous round's last tick is kept. Returns the fields a deal sets."""
        n, d, dev = self.num_players, self.per_player, self.device
        deck = shuffled_decks(rows, N, generator, dev)
        side = randint(generator, 2, (rows,), dev)
        dealt = deck[:, 1 : 1 + n * d].view(rows, n, d)
        piles = torch.full((rows, n, R), NONE, dtype=torch.int64, device=dev)
        piles[:, :, : d - H] = dealt[:, :, H:]
        voodoo = torch.full((rows, R), NONE, dtype=torch.int64, device=dev)
        voodoo[:, 0] = 2 * deck[:, 0] + side
        out = torch.full((rows, OUT_SLOTS), NONE, dtype=torch.int64, device=dev)
        left = N - 1 - n * d
        out[:, :left] = deck[:, N - left :]
        zeros = torch.zeros(rows, dtype=torch.int64, device=dev)
        return {
            "answers": _lookup(self.playable_on, dealt.flatten(1)).sum(dim=1),
            "hands": dealt[:, :, :H].contiguous(),
            "piles": piles,
            "pile_head": torch.zeros(rows, n, dtype=torch.int64, device=dev),
            "pile_size": torch.full((rows, n), d - H, dtype=torch.int64, device=dev),
            "voodoo": voodoo,
            "voodoo_head": zeros.clone(),
            "voodoo_size": zeros + 1,
            "out": out,
            "pending": torch.full((rows, n), -1, dtype=torch.int64, device=dev),
            "actor": zeros.clone(),
            "last_player": zeros - 1,
            "last_voodoo": torch.zeros(rows, dtype=torch.bool, device=dev),
            "last_cyclers": torch.zeros(rows, n, dtype=torch.bool, device=dev),
        }

    def _deal(self, state: BatchedState, live: torch.Tensor, generator: torch.Generator) -> None:
        """A new deal (:meth:`_dealt`) in the ``live`` games."""
        if not bool(live.any()):
            return
        rows = live.nonzero().squeeze(1)
        for name, value in self._dealt(len(rows), chance_rows(generator, rows)).items():
            getattr(state, name)[rows] = value

    # ----------------------------------------------------------------- legal moves
    def is_over(self, state: BatchedState) -> torch.Tensor:
        return state.phase == OVER

    def is_truncated(self, state: BatchedState) -> torch.Tensor:
        return state.truncated.clone()

    def wanted(self, state: BatchedState) -> torch.Tensor:
        """``[B]``: the pair missing on the visible side of the Voodoo pile's top card."""
        return _lookup(self.face_missing, self._voodoo_top(state))

    def _voodoo_top(self, state: BatchedState) -> torch.Tensor:
        top = (state.voodoo_head + state.voodoo_size - 1) % R
        return state.voodoo.gather(1, top[:, None]).squeeze(1)

    def plays(self, state: BatchedState, seat: torch.Tensor) -> torch.Tensor:
        """``[B, 3, 4]`` bool: per hand slot of ``seat[b]`` and side 0, 1, a legal normal play
        (the side shows the wanted pair) and a legal Voodoo! play (it misses it too)."""
        hand = self._hand(state, seat)
        index = hand * (Q + 1) + self.wanted(state)[:, None]
        return _lookup(self.play_kinds.view(-1, 4), index)

    def _hand(self, state: BatchedState, seat: torch.Tensor) -> torch.Tensor:
        """``[B, 3]``: the hand of ``seat[b]``."""
        return state.hands.gather(1, seat[:, None, None].expand(-1, 1, H)).squeeze(1)

    def hand_sizes(self, state: BatchedState) -> torch.Tensor:
        """``[B, n]``: cards in each hand."""
        return (state.hands != NONE).sum(dim=2)

    def totals(self, state: BatchedState) -> torch.Tensor:
        """``[B, n]``: cards each player holds now (hand and own pile)."""
        return self.hand_sizes(state) + state.pile_size

    def winners(self, state: BatchedState) -> torch.Tensor:
        """End of the Game (a default: the rulebook leaves it open): ``[B, n]`` bool, the fewest
        points win; ties are shared."""
        return state.scores == state.scores.min(dim=1, keepdim=True).values

    def figures(self, state: BatchedState) -> dict[str, torch.Tensor]:
        """The reference ``info``: ``scores`` and ``cards`` ``[B, n]``, ``round`` and ``tick``
        ``[B]``, and ``winners`` ``[B, n]`` bool (none in a game not over or truncated)."""
        ended = (state.phase == OVER) & ~state.truncated
        return {
            "scores": state.scores.clone(),
            "cards": self.totals(state),
            "round": state.round.clone(),
            "tick": state.tick.clone(),
            "winners": self.winners(state) & ended[:, None],
        }

    def legal_mask_for(self, state: BatchedState, seat: torch.Tensor) -> torch.Tensor:
        """``[B, 10]`` bool: wait always; every legal play; cycling any held slot with cards in
        the own pile, only when no play is possible unless ``cycle_anytime``; nothing once the
        game is over."""
        kinds = self.plays(state, seat).view(-1, 2 * H, 2)
        plays = kinds[:, :, 0] | kinds[:, :, 1]  # [B, 6]: action 1 + 2k + s
        may_cycle = state.pile_size.gather(1, seat[:, None]).squeeze(1) > 0
        if not self.options.cycle_anytime:
            may_cycle = may_cycle & ~plays.any(dim=1)
        cycles = may_cycle[:, None] & (self._hand(state, seat) != NONE)
        wait = torch.ones_like(may_cycle)[:, None]
        return torch.cat([wait, plays, cycles], dim=1) & (state.phase == TICK)[:, None]

    # ----------------------------------------------------------------- step
    def apply_joint(
        self,
        state: BatchedState,
        actions: torch.Tensor,
        generator: torch.Generator,
        live: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """One tick (``actions [B, n]``): every cycle happens, then one play, by a random
        priority among the seats that play, is made; the round ends when its player runs out of
        cards or the table is stalled; ``max_ticks`` and ``max_idle_ticks`` truncate. Only
        ``live`` games change (default: those not over). Returns ``[B, n]`` float32 rewards."""
        if live is None:
            live = state.phase == TICK
        per_tick = self.options.reward == "per_tick"
        before = self.totals(state) if per_tick else None
        if self.options.max_idle_ticks:
            could = self._anyone_could_play(state)
        state.tick = state.tick + live.long()
        cycling = live[:, None] & (actions >= A.CYCLE)
        state.last_cyclers = torch.where(live[:, None], cycling, state.last_cyclers)
        self._cycle(state, cycling, actions - A.CYCLE)
        playing = live[:, None] & (actions >= A.PLAY) & (actions < A.CYCLE)
        keys = uniform(generator, playing.shape, self.device, live)
        winner = torch.where(playing, keys, -1.0).argmax(dim=1)
        played = playing.any(dim=1)
        if self.options.max_idle_ticks:
            idle = torch.where(could & ~played, state.idle + 1, 0)
            state.idle = torch.where(live, idle, state.idle)
        state.last_player = torch.where(live, torch.where(played, winner, -1), state.last_player)
        state.last_voodoo = state.last_voodoo & ~live
        choice = actions.gather(1, winner[:, None]).squeeze(1) - A.PLAY
        self._play(state, played, winner, choice // 2, choice % 2)
        after = self.totals(state)
        emptied = played & (after.gather(1, winner[:, None]).squeeze(1) == 0)
        stalled = played & ~emptied & self._stalled(state)
        rewards = self._end_round(state, emptied | stalled, generator)
        if per_tick:
            moved = (self._relative(after) - self._relative(before)).float()
            rewards = rewards + torch.where(played[:, None], moved, 0.0)
        clock = state.tick >= self.options.max_ticks
        if self.options.max_idle_ticks:
            clock = clock | (state.idle >= self.options.max_idle_ticks)
        clock = live & (state.phase != OVER) & clock
        if not bool(clock.any()):  # no game reaches the clock: nothing more to do
            return rewards
        return torch.where(clock[:, None], rewards + self._truncate(state, clock), rewards)

    def _anyone_could_play(self, state: BatchedState) -> torch.Tensor:
        """``[B]``: some player holds a legal play (normal or Voodoo!)."""
        rows = len(state.phase)
        seats = [torch.full((rows,), s, device=self.device) for s in range(self.num_players)]
        return torch.stack([self.plays(state, s).flatten(1).any(1) for s in seats]).any(0)

    def _cycle(self, state: BatchedState, live: torch.Tensor, slot: torch.Tensor) -> None:
        """Slide a hand card under the own pile and replace it with the pile's top card, in
        every ``live [B, n]`` seat (hand slot ``slot [B, n]``)."""
        slot = slot.clamp(0, H - 1)[:, :, None]
        card = state.hands.gather(2, slot).squeeze(2)
        top = state.piles.gather(2, self._pile_top(state)[:, :, None]).squeeze(2)
        self._under_pile(state, card, live)
        state.pile_size = state.pile_size - live.long()  # the top card goes into the hand
        new = torch.where(live, top, card)[:, :, None]
        state.hands.scatter_(2, slot, new)

    def _pile_top(self, state: BatchedState) -> torch.Tensor:
        """``[B, n]``: the ring slot of each own pile's top card."""
        return (state.pile_head + state.pile_size - 1) % R

    def _under_pile(self, state: BatchedState, card: torch.Tensor, live: torch.Tensor) -> None:
        """Slide ``card [B, n]`` under the own pile of every ``live [B, n]`` seat."""
        below = (state.pile_head - 1) % R  # a free slot: a pile never fills the whole ring
        state.piles.scatter_(2, below[:, :, None], card[:, :, None])
        state.pile_head = torch.where(live, below, state.pile_head)
        state.pile_size = state.pile_size + live.long()

    def _play(
        self,
        state: BatchedState,
        live: torch.Tensor,
        seat: torch.Tensor,
        slot: torch.Tensor,
        side: torch.Tensor,
    ) -> None:
        """Lay the card with that side up. A normal play changes the wanted pair; Voodoo! keeps
        it, and every other player, from the caller's left, slides a card from the bottom of the
        Voodoo pile under their own pile while it has more than its top card, and a player whose
        hand is short (the own pile had run out) takes them up to three cards. The player then
        refills the hand from the own pile (:meth:`_voodoo`). Only ``live`` games play."""
        slot = slot.clamp(0, H - 1)
        wanted = self.wanted(state)
        hand = self._hand(state, seat)  # [B, 3]
        face = 2 * hand.gather(1, slot[:, None]).squeeze(1) + side
        above = (state.voodoo_head + state.voodoo_size) % R  # a free slot, as in _under_pile
        state.voodoo.scatter_(1, above[:, None], face[:, None])
        state.voodoo_size = state.voodoo_size + live.long()
        played = torch.where(live, face // 2, NONE)
        state.answers = state.answers - _lookup(self.playable_on, played)
        shout = live & (_lookup(self.face_missing, face) == wanted)
        state.last_voodoo = state.last_voodoo | shout
        if bool(shout.any()):
            self._voodoo(state, shout, seat)
        # The player refills the played card's slot from the own pile, or the hand closes up.
        at = seat[:, None]
        size = state.pile_size.gather(1, at).squeeze(1)
        refill = size > 0
        top = seat * R + (state.pile_head.gather(1, at).squeeze(1) + size - 1) % R
        pile_top = state.piles.flatten(1).gather(1, top[:, None])
        replaced = torch.where(self.slots == slot[:, None], pile_top, hand)
        source = self.slots + (self.slots >= slot[:, None])
        closed = torch.where(source < H, hand.gather(1, source.clamp(max=H - 1)), NONE)
        new_hand = torch.where(refill[:, None], replaced, closed)
        new_hand = torch.where(live[:, None], new_hand, hand)
        state.hands.scatter_(1, at[:, :, None].expand(-1, 1, H), new_hand[:, None])
        state.pile_size.scatter_(1, at, (size - (live & refill).long())[:, None])

    def _voodoo(self, state: BatchedState, live: torch.Tensor, seat: torch.Tensor) -> None:
        """Voodoo! by ``seat`` in the ``live`` games: the k-th player to the caller's left takes
        the Voodoo pile's k-th card from the bottom, while it has more than its top card."""
        n = self.num_players
        count = torch.where(live, (state.voodoo_size - 1).clamp(max=n - 1), 0)
        k = (self.seat_ids - seat[:, None]) % n  # [B, n]
        takes = (k >= 1) & (k <= count[:, None])
        slots = (state.voodoo_head[:, None] + k - 1) % R
        cards = state.voodoo.gather(1, slots) // 2
        state.voodoo_head = (state.voodoo_head + count) % R
        state.voodoo_size = state.voodoo_size - count
        self._top_up(state, cards, takes)
        received = _lookup(self.playable_on, torch.where(takes, cards, NONE)).sum(dim=1)
        state.answers = state.answers + received

    def _top_up(self, state: BatchedState, cards: torch.Tensor, live: torch.Tensor) -> None:
        """Voodoo! cards ``cards [B, n]`` reach the own piles of the ``live [B, n]`` seats; a short
        hand takes its card at once (Setup's hand of three; its pile was empty, module
        docstring), the others' cards stay under their piles."""
        sizes = self.hand_sizes(state)
        short = live & (sizes < H)
        at = sizes.clamp(max=H - 1)[:, :, None]
        old = state.hands.gather(2, at).squeeze(2)
        state.hands.scatter_(2, at, torch.where(short, cards, old)[:, :, None])
        self._under_pile(state, cards, live & ~short)

    def _pile_cards(self, state: BatchedState) -> torch.Tensor:
        """``[B, n, 91]``: each own pile's ring with ``NONE`` in the slots not in the pile."""
        place = (self.ring - state.pile_head[:, :, None]) % R
        return torch.where(place < state.pile_size[:, :, None], state.piles, NONE)

    def _stalled(self, state: BatchedState) -> torch.Tensor:
        """``[B]``: a stalled table (a default: the rulebook leaves it open): no card in any hand
        or own pile can be played on the wanted pair, so nothing can ever change; the round then
        ends."""
        return state.answers.gather(1, self.wanted(state)[:, None]).squeeze(1) == 0

    def _relative(self, held: torch.Tensor) -> torch.Tensor:
        """``[B, n]`` float64: the mean of the others' cards (or points) in ``held [B, n]``
        minus one's own, / cards per player (as the reference computes it)."""
        held = held.double()
        others = (held.sum(dim=1, keepdim=True) - held) / (self.num_players - 1)
        return (others - held) / self.per_player

    def _pay_round(self, held: torch.Tensor) -> torch.Tensor:
        """Per-round rewards of ``held [B, n]`` points, float32 (:meth:`_relative`)."""
        return self._relative(held).float()

    def _truncate(self, state: BatchedState, live: torch.Tensor) -> torch.Tensor:
        """At ``max_ticks`` (or ``max_idle_ticks``) the ``live`` games are cut short. So that
        waiting out the clock never pays, the rewards rank the players by points so far plus
        cards held now (fewest win, ties shared); with per-round rewards the unfinished round is
        paid as if it had ended. Option ``truncation="loss"`` pays −1 to everyone instead."""
        state.phase = torch.where(live, OVER, state.phase)
        state.truncated = state.truncated | live
        held = self.totals(state)
        if self.options.truncation == "loss":
            return torch.full(held.shape, -1.0, device=self.device)
        if self.options.reward == "per_round":
            return self._pay_round(held)
        if self.options.reward == "per_tick":
            return torch.zeros(held.shape, device=self.device)
        standing = state.scores + held
        best = standing == standing.min(dim=1, keepdim=True).values
        return torch.where(best, 1.0, -1.0)

    def _end_round(
        self, state: BatchedState, live: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        """End of the Round / Recording Points in the ``live`` games: every card in hand and
        pile is a point, carried over; after the third round the game ends; otherwise all cards
        are dealt anew. Returns ``[B, n]`` rewards (zero in the other games)."""
        if not bool(live.any()):  # no round ends: nothing to do
            return torch.zeros(live.shape + (self.num_players,), device=self.device)
        points = self.totals(state)
        state.scores = state.scores + torch.where(live[:, None], points, 0)
        state.round = state.round + live.long()
        final = live & (state.round == C.ROUNDS)
        state.phase = torch.where(final, OVER, state.phase)
        if self.options.reward == "per_round":
            rewards = torch.where(live[:, None], self._pay_round(points), 0.0)
        else:
            won = torch.where(self.winners(state), 1.0, -1.0)
            rewards = torch.where(final[:, None], won, 0.0)
        self._deal(state, live & ~final, generator)
        return rewards

    # ----------------------------------------------------------------- observation
    def _public(self, state: BatchedState, me: torch.Tensor) -> dict[str, torch.Tensor]:
        """The public fields seen from seat ``me[b]`` (as the reference encoder's ``_public``;
        per-seat fields relative to ``me``, column r the seat r places to the left, padded to six
        seats), each ``[B, size]`` float32. Fractions are divided in float64 and then rounded,
        as the reference does."""
        n, rows = self.num_players, len(me)
        top = self._voodoo_top(state)
        per_seat = [self.hand_sizes(state), state.pile_size, state.scores]
        per_seat += [state.last_cyclers.long(), has_chosen(state.pending).long()]
        per_seat = (torch.stack(per_seat, dim=1).double() / self.seat_bounds).float()
        seat_at = (me[:, None, None] + self.seat_ids) % n
        seen = pad(per_seat.gather(2, seat_at.expand(-1, len(per_seat[0]), -1)), (0, P - n))
        singles = [state.phase == OVER, state.voodoo_size, state.last_voodoo, state.tick]
        singles = torch.stack([v.long() for v in singles], dim=1).double() / self.single_bounds
        singles = singles.float()
        last = torch.where(state.last_player < 0, 0, 1 + (state.last_player - me) % n)
        return {
            "over": singles[:, 0:1],
            "num_players": self.players_code.expand(rows, -1),
            "top_shows": _lookup(self.face_code, top)[:, :Q],
            "wanted": _one_hot(_lookup(self.face_missing, top), Q),
            "voodoo_pile_size": singles[:, 1:2],
            "hand_sizes": seen[:, 0],
            "pile_sizes": seen[:, 1],
            "round": _one_hot(state.round.clamp(max=C.ROUNDS - 1), C.ROUNDS),
            "scores": seen[:, 2],
            "last_player": _one_hot(last, P + 1),
            "last_voodoo": singles[:, 2:3],
            "last_cyclers": seen[:, 3],
            "chosen": seen[:, 4],
            "tick": singles[:, 3:4],
        }

    def observe(self, state: BatchedState, seat: torch.Tensor) -> torch.Tensor:
        """``[B, 421]`` float32: what ``seat[b]`` may know, as the reference ``observe``."""
        fields = self._public(state, seat)
        fields["hand"] = _lookup(self.card_code, self._hand(state, seat)).flatten(1)
        plays = self.plays(state, seat) & (state.phase == TICK)[:, None, None]
        fields["hand_plays"] = plays.flatten(1).float()
        choice = own_choice(state.pending, seat)
        fields["own_choice"] = _one_hot(choice, A.NUM_ACTIONS)  # none: -1
        return torch.cat([fields[f.name] for f in self.observation_layout.fields], dim=1)

    def encode_state(self, state: BatchedState) -> torch.Tensor:
        """``[B, 2596]`` float32: everything, seats absolute, as the reference ``state()``."""
        rows, n = len(state.actor), self.num_players
        fields = self._public(state, torch.zeros_like(state.actor))
        seats = (0, 0, 0, P - n)  # pad the seat dimension to six
        fields["hands"] = pad(_lookup(self.card_code, state.hands).flatten(2), seats)
        fields["choices"] = pad(_one_hot(state.pending, A.NUM_ACTIONS), seats)
        piles = torch.zeros(rows, n, N + 1, device=self.device)
        piles.scatter_(2, self._pile_cards(state), 1.0)
        fields["pile_cards"] = pad(piles[:, :, :N], seats)
        place = (self.ring - state.voodoo_head[:, None]) % R
        cards = torch.where(place < state.voodoo_size[:, None], state.voodoo // 2, NONE)
        voodoo = torch.zeros(rows, N + 1, device=self.device).scatter_(1, cards, 1.0)
        fields["voodoo_cards"] = voodoo[:, :N]
        parts = [fields[f.name].reshape(rows, -1) for f in self.state_layout.fields]
        return torch.cat(parts, dim=1)


# --------------------------------------------------------------------- helpers
def _lookup(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``table[index]`` (rows of ``table`` for an index tensor of any shape), by one
    ``index_select``, faster than advanced indexing on the CPU."""
    rows = table.index_select(0, index.flatten())
    return rows.view(*index.shape, *table.shape[1:])


def _one_hot(index: torch.Tensor, size: int) -> torch.Tensor:
    """``[..., size]`` float32: 1 at ``index``, all zeros where ``index`` is outside
    ``0..size-1`` (such as ``-1``, no choice)."""
    return (index[..., None] == torch.arange(size, device=index.device)).float()


# --------------------------------------------------------------------- conversion
def _padded(values: list[int], size: int, what: str) -> list[int]:
    if len(values) > size:
        raise ValueError(f"{what} holds {len(values)} cards; the batched engine keeps {size}")
    return list(values) + [NONE] * (size - len(values))


def from_reference(states: list[State], device: Any = "cpu") -> BatchedState:
    """The reference ``states`` as the rows of one :class:`BatchedState` on ``device``."""
    n = len(states[0].hands)

    def rows(values: list, dtype: torch.dtype = torch.int64) -> torch.Tensor:
        return torch.tensor(values, dtype=dtype, device=device)

    return BatchedState(
        hands=rows([[_padded(h, H, "a hand") for h in s.hands] for s in states]),
        piles=rows([[_padded(p, R, "an own pile") for p in s.piles] for s in states]),
        pile_head=rows([[0] * n for _ in states]),
        pile_size=rows([[len(p) for p in s.piles] for s in states]),
        voodoo=rows([_padded([2 * c + f for c, f in s.voodoo], R, "the pile") for s in states]),
        voodoo_head=rows([0] * len(states)),
        voodoo_size=rows([len(s.voodoo) for s in states]),
        out=rows([_padded(s.out, OUT_SLOTS, "the cards left out") for s in states]),
        scores=rows([s.scores for s in states]),
        round=rows([s.round for s in states]),
        tick=rows([s.tick for s in states]),
        phase=rows([int(s.phase) for s in states]),
        truncated=rows([s.truncated for s in states], torch.bool),
        idle=rows([s.idle for s in states]),
        pending=rows([[s.pending.get(seat, -1) for seat in range(n)] for s in states]),
        actor=rows([s.actor for s in states]),
        last_player=rows([s.last_player for s in states]),
        last_voodoo=rows([s.last_voodoo for s in states], torch.bool),
        last_cyclers=rows(
            [[seat in s.last_cyclers for seat in range(n)] for s in states], torch.bool
        ),
        answers=rows([count_answers(s) for s in states]),
    )


@cache
def _playable_on() -> tuple[frozenset[int], ...]:
    return tuple(frozenset(a.shows | b.shows | {a.missing, b.missing}) for a, b in C.load_deck())


def count_answers(state: State) -> list[int]:
    """``BatchedState.answers`` of one reference state."""
    counts = [0] * (Q + 1)
    for cards in state.hands + state.piles:
        for card in cards:
            for pair in _playable_on()[card]:
                counts[pair] += 1
    return counts


def _ring(cards: list[int], head: int, size: int) -> list[int]:
    return [cards[(head + j) % R] for j in range(size)]


def to_reference(state: BatchedState, row: int, rng: np.random.Generator) -> State:
    """Game ``row`` of ``state`` as a reference ``State`` drawing its chance from ``rng`` (its
    log starts empty)."""
    heads, sizes = state.pile_head[row].tolist(), state.pile_size[row].tolist()
    piles = [
        _ring(p, h, s) for p, h, s in zip(state.piles[row].tolist(), heads, sizes, strict=True)
    ]
    faces = _ring(
        state.voodoo[row].tolist(), int(state.voodoo_head[row]), int(state.voodoo_size[row])
    )
    pending = state.pending[row].tolist()
    return State(
        rng=rng,
        hands=[[c for c in hand if c != NONE] for hand in state.hands[row].tolist()],
        piles=piles,
        voodoo=[divmod(face, 2) for face in faces],
        out=[c for c in state.out[row].tolist() if c != NONE],
        scores=state.scores[row].tolist(),
        round=int(state.round[row]),
        tick=int(state.tick[row]),
        phase=Phase(int(state.phase[row])),
        truncated=bool(state.truncated[row]),
        idle=int(state.idle[row]),
        pending={seat: a for seat, a in enumerate(pending) if a >= 0},
        actor=int(state.actor[row]),
        last_player=int(state.last_player[row]),
        last_voodoo=bool(state.last_voodoo[row]),
        last_cyclers=state.last_cyclers[row].nonzero().squeeze(1).tolist(),
    )


# --------------------------------------------------------------------- batched_game
def batched_game(reference: Any, device: Any) -> BatchedVoodooMania:
    """The batched engine of a reference ``raw_env`` (its rules, options and encoder)."""
    return BatchedVoodooMania(reference.rules, reference.encoder, device)
