"""Hocus Pocus: The Game for B tables at once, as tensors (read beside ``rules.py``).

The state is :class:`BatchedState`, one row per game; functions carry the names of
``rules.py``'s methods (``_ask``, ``_play``, ``_check_stun``, ``_reveal_spell``,
``_resolve_spell``, ``_next_spell_discard``, ``_next_spell_pass``, ``_finish_spell``,
``_choose``, ``_forced_draw``, ``_end_turn``, ``_start_turn``, ``_end_round``). Every rule runs
for the whole batch on a row mask and is applied with ``torch.where``; the rules' chains of calls
(a play that reveals a Spell that discards a top that stuns a witch ...) become stages run in
one fixed order that every chain follows, each on the rows that reached it.

**Cards.** Each of the 50 Ingredient cards lies in exactly one list of the reference state: the
deck, a hand, a Cauldron pile, the discard pile or the removed cards. ``location[B, 50]`` says
which (:data:`DECK`, :data:`DISCARD`, :data:`REMOVED`, ``PILE + space``, ``HAND + seat``) and
``position[B, 50]`` where in that list (0 = the list's first entry; the top of the deck and of a
pile is the last). Moving cards is then elementwise (:meth:`BatchedHocusPocus._move`): the cards
above a removed one move down one place, an added card goes to the end. The Spell cards (indices
into ``options.spell_deck``) are kept the same way in ``spell_location`` / ``spell_position``
(deck, discard pile, or being resolved).

**Speed.** Most steps are a question, a plain play or Binx placed: those rows are stepped on
the whole batch; the rows of every other step are taken apart (``take_rows``), run through all
the stages, and put back, and a stage that no row reaches is skipped.

All chance (the end-of-round deck shuffle, the Spell deck reshuffle, *I Put a Spell on You*'s
random cards) comes from the ``torch.Generator`` passed in; shuffles are argsorts of uniform
keys. The reference rules stay the specification: ``tests/test_hocus_pocus_batched.py`` converts
reference states with :func:`from_reference` / :func:`to_reference` and checks every chance-free
transition, observation, mask and ``state()`` against them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch

from cauldron.envs.core.batched import chance_rows, put_rows, take_rows, uniform
from cauldron.envs.core.batched_ops import all_along, any_along, inverse_permutation
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.encoding import Encoder
from cauldron.envs.hocus_pocus.facts import FACTS
from cauldron.envs.hocus_pocus.phases import Phase
from cauldron.envs.hocus_pocus.rules import (
    AFTER_EMPTY_HAND,
    AFTER_FAILED_PLAY,
    AFTER_SPELL_BOOK,
    DECK_DISCARD_SPELLS,
    HocusPocusRules,
    State,
)

N = C.NUM_CARDS
P = C.MAX_PLAYERS
SPACES = C.NUM_SPACES
NAMES = len(C.SPELL_NAMES)
# card locations
DECK, DISCARD, REMOVED, PILE = 0, 1, 2, 3
HAND = PILE + SPACES
# Spell card locations (OUT: in no pile, only in hand-built test states)
IN_PLAY, OUT = 2, 3
(ASK, ACT, BINX, STUN_CHOICE, SALT, SPELL_DISCARD, SPELL_PASS, DISCARD_PHASE, SWAP_OWN,
 SWAP_PARTNER, BURN, OVER) = (int(p) for p in Phase)  # fmt: skip
SPELL = {name: i for i, name in enumerate(C.SPELL_NAMES)}
BIG = 1 << 20


# --------------------------------------------------------------------- state
@dataclass
class BatchedState:
    """B games of Hocus Pocus; the fields of ``rules.State`` (seats absolute), first dim B.

    ``location`` / ``position`` ``[B, 50]`` hold the reference's ``hands``, ``deck``, ``piles``,
    ``discard`` and ``removed`` lists (module docstring); ``spell_location`` /
    ``spell_position`` ``[B, S]`` its ``spell_deck`` and ``spell_discard``. ``questions``
    ``[B, 3, n, 10]`` bool as the reference's array; ``queue [B, n]`` bool: the seats still
    queued for a Spell, always served clockwise from the turn player; ``set_aside [B, n]`` the
    card each seat set aside, or -1; ``handed`` / ``received`` ``[B, n, 2]`` (card, seat) or
    (-1, -1); ``tricks_used [B, 4]`` bool; ``reward`` float64; the rest ``[B]`` int64 or bool."""

    location: torch.Tensor
    position: torch.Tensor
    spell_location: torch.Tensor
    spell_position: torch.Tensor
    turn: torch.Tensor
    actor: torch.Tensor
    phase: torch.Tensor
    binx: torch.Tensor
    stunned: torch.Tensor
    sun: torch.Tensor
    tricks_used: torch.Tensor
    trick_this_turn: torch.Tensor
    no_questions: torch.Tensor
    questions: torch.Tensor
    spell: torch.Tensor
    spell_context: torch.Tensor
    queue: torch.Tensor
    set_aside: torch.Tensor
    handed: torch.Tensor
    received: torch.Tensor
    count: torch.Tensor
    partner: torch.Tensor
    outcome: torch.Tensor
    stuns: torch.Tensor
    turns: torch.Tensor
    reward: torch.Tensor


@dataclass
class Flow:
    """The rows of one :meth:`BatchedHocusPocus.apply` that go on to a later stage (each
    ``[B]``), and what that stage needs to know."""

    reveal: torch.Tensor  # reveal a Spell ...
    context: torch.Tensor  # ... after a Spell Book, a failed play, or with an empty hand
    resolve: torch.Tensor  # resolve the revealed Spell
    spell_discard: torch.Tensor  # next player of Oh, Look! / Fly, My Pretty
    spell_pass: torch.Tensor  # next player of Come Little Children
    finish: torch.Tensor  # finish the Spell ...
    changed: torch.Tensor  # ... which changed the Cauldron
    end_round: torch.Tensor  # a witch is stunned ...
    witch: torch.Tensor  # ... this one
    end_turn: torch.Tensor  # end the turn ...
    draw_card: torch.Tensor  # ... with the end-of-turn draw

    @classmethod
    def empty(cls, rows: int, device: Any) -> Flow:
        def no() -> torch.Tensor:
            return torch.zeros(rows, dtype=torch.bool, device=device)

        zeros = torch.zeros(rows, dtype=torch.int64, device=device)
        return cls(
            reveal=no(),
            context=zeros,
            resolve=no(),
            spell_discard=no(),
            spell_pass=no(),
            finish=no(),
            changed=no(),
            end_round=no(),
            witch=zeros + C.MARY,
            end_turn=no(),
            draw_card=no(),
        )

    def end_turn_after(self, rows: torch.Tensor, draw_card: bool | torch.Tensor) -> None:
        self.end_turn = self.end_turn | rows
        self.draw_card = torch.where(rows, draw_card, self.draw_card)


# --------------------------------------------------------------------- engine
class BatchedHocusPocus:
    """The rules of one reference ``HocusPocusRules`` (player count and options) for B games
    at once; follows :class:`cauldron.envs.core.batched.BatchedGame`."""

    cooperative = FACTS.cooperative
    num_actions = A.NUM_ACTIONS

    def __init__(self, rules: HocusPocusRules, device: Any) -> None:
        self.rules = rules
        self.options = options = rules.options
        self.num_players = n = rules.num_players
        self.device = device
        encoder = Encoder(rules)
        self.observation_layout = encoder.observation_layout
        self.state_layout = encoder.state_layout
        self.observation_size = encoder.observation_layout.size
        self.state_size = encoder.state_layout.size
        self.locations = HAND + n

        def tensor(values: Any, dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.as_tensor(np.asarray(values), dtype=dtype, device=device)

        self.colour = tensor(rules.colour)
        self.type = tensor(rules.type)
        self.is_binx = tensor(rules.is_binx, torch.bool)
        self.is_book = tensor(rules.is_book, torch.bool)
        self.has_icon = tensor(rules.has_icon, torch.bool)
        self.compatible = tensor(rules.compatible, torch.bool)  # [55, 50]
        self.spell_count = len(rules.spell_names)
        self.spell_caster = tensor(rules.spell_casters)
        self.spell_name = tensor(encoder.spell_name)  # [S] index into C.SPELL_NAMES
        copies = np.bincount(encoder.spell_name, minlength=NAMES)
        most = int(copies.max())
        weights = [1.0 / c if c else 0.0 for c in copies]
        self.discarded_value = tensor(
            [_float32_sums(w, most, False) for w in weights], torch.float32
        )  # [13, most + 1]
        self.deck_value = tensor([_float32_sums(w, most, True) for w in weights], torch.float32)
        self.deck_discards = tensor(
            [DECK_DISCARD_SPELLS.get(name, 0) for name in C.SPELL_NAMES]
        )  # by spell name
        self.cards = torch.arange(N, device=device)
        self.seats = torch.arange(n, device=device)
        self.spaces = torch.arange(SPACES, device=device)
        self.spell_ids = torch.arange(self.spell_count, device=device)
        self.players_onehot = torch.zeros(1, P - 1, device=device)
        self.players_onehot[0, n - 2] = 1.0
        self.shaping = float(options.match_reward)
        self._encoding_tables()

    def _encoding_tables(self) -> None:
        """Constant indices of the encodings (see :meth:`_entries`)."""
        device, n = self.device, self.num_players
        inverse = [0.0] + [float(np.float32(1.0 / d)) for d in range(1, N + 1)]
        self.inverse_depth = torch.tensor(inverse, dtype=torch.float32, device=device)
        self.one = torch.ones(1, 1, device=device)
        self.tricks = torch.arange(4, device=device)
        self.names = torch.arange(NAMES, device=device)
        self.card_base, self.players_entry, self.scalar_index, self.question_index = [], [], [], []
        scalars = ("deck_size", "sun", "spell_deck_size", "discards_made", "burns_left")
        scalars += ("no_questions", "trick_this_turn")
        for layout in (self.observation_layout, self.state_layout):
            o = layout.offsets
            # base[code * 2 + buried]: where a card in list ``code`` shows (-1: nowhere)
            base = [-1] * (2 * self.locations)
            base[2 * DISCARD] = base[2 * DISCARD + 1] = o["discard_pile"]
            base[2 * REMOVED] = base[2 * REMOVED + 1] = o["removed_cards"]
            for space in range(SPACES):
                base[2 * (PILE + space)] = o["pile_tops"] + space * N
                base[2 * (PILE + space) + 1] = o["buried_cards"] + space * N
            if layout is self.state_layout:
                base[2 * DECK] = base[2 * DECK + 1] = o["deck_cards"]
                for seat in range(n):
                    base[2 * (HAND + seat)] = base[2 * (HAND + seat) + 1] = o["hands"] + seat * N
            else:
                base[2 * HAND] = base[2 * HAND + 1] = o["hand"]
            self.card_base.append(torch.tensor(base, device=device))
            self.players_entry.append(torch.tensor([[o["num_players"] + n - 2]], device=device))
            self.scalar_index.append(torch.tensor([[o[name] for name in scalars]], device=device))
            questions = [
                o[name] + k * 10 + q
                for name in ("questions_asked", "answers_yes", "answers_no")
                for k in range(n)
                for q in range(10)
            ]
            self.question_index.append(torch.tensor([questions], device=device))

    # ----------------------------------------------------------------- reset
    def new_games(
        self, rows: int, generator: torch.Generator, start_seat: torch.Tensor
    ) -> BatchedState:
        """Setup: shuffle the 50 Ingredient cards and deal 4 each (2–3 players) or 3 (4–6) from
        the top, seat by seat; shuffle the Spell deck; the start seat asks first."""
        n, dev = self.num_players, self.device
        size = C.hand_size(n)
        order = uniform(generator, (rows, N), dev).argsort(dim=1)
        # order[b, i]: the card at deck position i (the top is i = 49); dealt from the top
        position = inverse_permutation(order)
        dealt = N - 1 - position  # 0 = first card dealt
        seat = dealt // size
        in_hand = seat < n
        location = torch.where(in_hand, HAND + seat, DECK)
        # draw(deck, size) gives the top card first: it is the hand's first card
        position = torch.where(in_hand, dealt % size, position)
        spells = uniform(generator, (rows, self.spell_count), dev)
        start = start_seat.to(dev, torch.int64)

        def zeros(*shape: int, dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.zeros(rows, *shape, dtype=dtype, device=dev)

        state = BatchedState(
            location=location,
            position=position,
            spell_location=zeros(self.spell_count),
            spell_position=inverse_permutation(spells.argsort(dim=1)),
            turn=start.clone(),
            actor=start.clone(),
            phase=zeros(),
            binx=zeros() - 1,
            stunned=zeros() - 1,
            sun=zeros(),
            tricks_used=zeros(4, dtype=torch.bool),
            trick_this_turn=zeros(dtype=torch.bool),
            no_questions=zeros(dtype=torch.bool),
            questions=zeros(3, n, 10, dtype=torch.bool),
            spell=zeros() - 1,
            spell_context=zeros() + AFTER_SPELL_BOOK,
            queue=zeros(n, dtype=torch.bool),
            set_aside=zeros(n) - 1,
            handed=zeros(n, 2) - 1,
            received=zeros(n, 2) - 1,
            count=zeros(),
            partner=zeros() - 1,
            outcome=zeros(),
            stuns=zeros(),
            turns=zeros(),
            reward=zeros(dtype=torch.float64),
        )
        self._start_turn(state, torch.ones(rows, dtype=torch.bool, device=dev), start)
        return state

    # ----------------------------------------------------------------- legal moves
    def acting_seat(self, state: BatchedState) -> torch.Tensor:
        return state.actor

    def is_over(self, state: BatchedState) -> torch.Tensor:
        return state.phase == OVER

    def is_truncated(self, state: BatchedState) -> torch.Tensor:
        """A game always ends by its rules (``max_steps`` is the environment's)."""
        return torch.zeros_like(state.trick_this_turn)

    def mid_step(self, state: BatchedState) -> torch.Tensor:
        return torch.zeros_like(state.trick_this_turn)

    def figures(self, state: BatchedState) -> dict[str, torch.Tensor]:
        """The reference ``info`` numbers: ``stuns`` (the score), ``outcome``, and ``turns``."""
        return {
            "stuns": state.stuns.clone(),
            "outcome": state.outcome.clone(),
            "turns": state.turns.clone(),
        }

    def sizes(self, state: BatchedState) -> torch.Tensor:
        """``[B, locations]``: how many cards lie in each list."""
        rows = len(state.location)
        out = torch.zeros(rows, self.locations, dtype=torch.int64, device=self.device)
        return out.scatter_add_(1, state.location, torch.ones_like(state.location))

    def hands(self, state: BatchedState) -> torch.Tensor:
        """``[B, n, 50]`` bool: every hand, multi-hot."""
        return state.location[:, None, :] == HAND + self.seats[None, :, None]

    def hand_of(self, state: BatchedState, seat: torch.Tensor) -> torch.Tensor:
        """``[B, 50]`` bool: the hand of ``seat[b]``."""
        return state.location == (HAND + seat)[:, None]

    def _is_top(self, state: BatchedState, sizes: torch.Tensor) -> torch.Tensor:
        """``[B, 50]`` bool: the card is the last of its list."""
        return state.position == sizes.gather(1, state.location) - 1

    def tops(self, state: BatchedState, sizes: torch.Tensor | None = None) -> torch.Tensor:
        """``[B, 5]``: the top card of each pile (its highest position), or ``50 + space`` for
        an empty space. (``sizes`` is accepted for callers that have it; not needed.)"""
        rows = len(state.location)
        key = state.position * 64 + self.cards  # the highest key of a list is its top card
        highest = torch.full((rows, self.locations), -1, dtype=torch.int64, device=self.device)
        highest = highest.scatter_reduce(1, state.location, key, reduce="amax")
        piles = highest[:, PILE:HAND]
        return torch.where(piles >= 0, piles % 64, N + self.spaces)

    def matched(self, state: BatchedState) -> torch.Tensor:
        """``[B]``: the most Cauldron tops sharing one colour or one type (``match_reward``)."""
        tops = self.tops(state)
        real = tops < N
        card = tops.clamp(max=N - 1)
        attributes = torch.stack([self.colour[card], 5 + self.type[card]], dim=2)  # [B, 5, 2]
        counts = torch.zeros(len(tops), 10, dtype=torch.int64, device=self.device)
        counts.scatter_add_(1, attributes.flatten(1), real.repeat_interleave(2, dim=1).long())
        return counts.amax(dim=1)

    def legal_mask(self, state: BatchedState) -> torch.Tensor:
        """``[B, 329]`` bool: legal actions of each game's acting seat."""
        rows = len(state.phase)
        phase = state.phase
        sizes = self.sizes(state)
        hand = self.hand_of(state, state.actor)
        hand_size = sizes.gather(1, (HAND + state.actor)[:, None]).squeeze(1)
        act = phase == ACT
        plays = self.compatible[self.tops(state, sizes)] & hand[:, None, :]  # [B, 5, 50]
        plays = act[:, None] & plays.transpose(1, 2).flatten(1)
        can_play = any_along(plays, 1)
        trick = act & ~state.trick_this_turn
        used = state.tricks_used
        partners = (state.turn[:, None] + 1 + torch.arange(P - 1, device=self.device)) % (
            self.num_players
        )
        partner_cards = sizes[:, HAND:].gather(1, partners) > 0
        partner_cards &= torch.arange(1, P, device=self.device) < self.num_players
        swap = (trick & ~used[:, C.DAYLIGHT] & (hand_size > 0))[:, None] & partner_cards
        choose = (phase >= SPELL_DISCARD) & (phase <= BURN)
        binx = (phase == BINX)[:, None] & (torch.arange(P, device=self.device) < self.num_players)

        def column(value: torch.Tensor) -> torch.Tensor:
            return value[:, None]

        asks = (phase == ASK)[:, None].expand(rows, 10)
        stun = column(phase == STUN_CHOICE)
        salt = column(phase == SALT)
        return torch.cat(
            [
                asks,
                plays,
                choose[:, None] & hand,
                column((phase == DISCARD_PHASE) & (state.count > 0)),
                binx,
                swap,
                column(trick & ~used[:, C.BILLY]),
                column(trick & ~used[:, C.BURNING_RAIN] & (hand_size >= 3)),
                salt,
                salt,
                stun,
                stun,
                column(act & ~can_play),
            ],
            dim=1,
        )

    # ----------------------------------------------------------------- step
    def apply(
        self, state: BatchedState, actions: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        """Apply one legal action per game in place; return ``[B, n]`` float32 (shared)
        rewards. The common steps (a question, a play that neither stuns nor reveals a Spell,
        Binx placed) run on the whole batch; the rows of any other step are taken apart and
        run through every stage on their own (:meth:`_apply_rows`): same rules, fewer rows."""
        rows = len(actions)
        if self.shaping:
            matched, stuns = self.matched(state), state.stuns.clone()
        common = self._common(state, actions)
        other = (~common).nonzero().squeeze(1)
        if len(other):
            part = take_rows(state, other)
            everything = torch.ones_like(other, dtype=torch.bool)
            self._apply_rows(part, actions[other], chance_rows(generator, other), everything)
            put_rows(state, other, part)
        state.reward = torch.where(common, 0.0, state.reward)
        self._apply_rows(state, actions, generator, common)
        if self.shaping:
            now = torch.where(state.stuns > stuns, SPACES, self.matched(state))
            state.reward = state.reward + self.shaping * (now - matched).double() / SPACES
        return state.reward.float()[:, None].expand(rows, self.num_players).contiguous()

    def _common(self, state: BatchedState, a: torch.Tensor) -> torch.Tensor:
        """``[B]`` the step is a question, Binx placed, or a play of a card without the Spell
        Book that stuns no witch."""
        phase = state.phase
        card, space = ((a - A.PLAY) // 5).clamp(0, N - 1), (a - A.PLAY) % 5
        tops = torch.where(self.spaces == space[:, None], card[:, None], self.tops(state))
        full = all_along(tops < N, 1)
        colours, types = self.colour[tops.clamp(max=N - 1)], self.type[tops.clamp(max=N - 1)]
        stun = full & (
            all_along(colours == colours[:, :1], 1) | all_along(types == types[:, :1], 1)
        )
        play = (phase == ACT) & (a >= A.PLAY) & (a < A.CHOOSE) & ~self.is_book[card] & ~stun
        return (phase == ASK) | (phase == BINX) | play

    def _apply_rows(
        self,
        state: BatchedState,
        a: torch.Tensor,
        generator: torch.Generator,
        live: torch.Tensor,
    ) -> None:
        """Every rule for the ``live`` rows (their rewards in ``state.reward``): the action's
        phase first, then the stages in the order of every chain of the reference's calls
        (reveal, resolve, the Spell's sub-decisions, finish, end of round, end of turn)."""
        flow = Flow.empty(len(a), self.device)
        state.reward = torch.where(live, 0.0, state.reward)
        phase = torch.where(live, state.phase, -1)
        act = phase == ACT
        card = (a - A.CHOOSE).clamp(0, N - 1)
        self._ask(state, phase == ASK, a.clamp(max=9))
        play = act & (a < A.CHOOSE)
        self._play(state, flow, play, ((a - A.PLAY) // 5).clamp(0, N - 1), (a - A.PLAY) % 5)
        self._act(state, flow, act & (a >= A.CHOOSE), a)
        binx = phase == BINX
        state.binx = torch.where(binx, (state.turn + a - A.BINX) % self.num_players, state.binx)
        flow.end_turn_after(binx, True)
        stun_choice = phase == STUN_CHOICE
        flow.end_round |= stun_choice
        flow.witch = torch.where(stun_choice & (a == A.STUN_WINIFRED), C.WINIFRED, flow.witch)
        salt = phase == SALT
        self._use_trick(state, salt & (a == A.SALT_USE), C.SALT)
        flow.finish |= salt & (a == A.SALT_USE)
        flow.resolve |= salt & (a == A.SALT_DECLINE)
        self._choose(state, flow, phase, a, card)
        self._reveal_spell(state, flow, generator)
        self._resolve_spell(state, flow, generator)
        self._next_spell_discard(state, flow)
        self._next_spell_pass(state, flow)
        self._finish_spell(state, flow)
        self._end_round(state, flow.end_round, flow.witch, generator)
        self._end_turn(state, flow.end_turn, flow.draw_card)

    def _ask(self, state: BatchedState, rows: torch.Tensor, question: torch.Tensor) -> None:
        """Ask One Question: every other player answers truthfully yes or no."""
        if not bool(rows.any()):
            return
        value = question % 5
        attribute = torch.where(question[:, None] < 5, self.colour, self.type)  # [B, 50]
        holds = any_along(self.hands(state) & (attribute == value[:, None])[:, None, :], 2)
        q = (torch.arange(10, device=self.device) == question[:, None])[:, None, :]  # [B, 1, 10]
        asker = self.seats[None, :] == state.turn[:, None]  # [B, n]
        ask = rows[:, None, None] & q
        questions = state.questions.clone()
        questions[:, 0] |= ask & asker[:, :, None]
        others = ask & ~asker[:, :, None]
        questions[:, 1] = torch.where(others, holds[:, :, None], questions[:, 1])
        questions[:, 2] = torch.where(others, ~holds[:, :, None], questions[:, 2])
        state.questions = questions
        state.phase = torch.where(rows, ACT, state.phase)

    def _act(self, state: BatchedState, flow: Flow, rows: torch.Tensor, a: torch.Tensor) -> None:
        """The non-play actions of phase ``act``: reveal a Spell, or use a trick."""
        if not bool(rows.any()):
            return
        reveal = rows & (a == A.REVEAL_SPELL)
        empty = ~any_along(self.hand_of(state, state.turn), 1)
        flow.reveal |= reveal
        flow.context = torch.where(
            reveal, torch.where(empty, AFTER_EMPTY_HAND, AFTER_FAILED_PLAY), flow.context
        )
        billy = rows & (a == A.BILLY)
        self._use_trick(state, billy, C.BILLY)
        flow.end_turn_after(billy, False)
        burn = rows & (a == A.BURN)
        self._use_trick(state, burn, C.BURNING_RAIN)
        state.count = torch.where(burn, 3, state.count)
        state.phase = torch.where(burn, BURN, state.phase)
        swap = rows & (a >= A.SWAP) & (a < A.BILLY)
        self._use_trick(state, swap, C.DAYLIGHT)
        partner = (state.turn + a - A.SWAP + 1) % self.num_players
        state.partner = torch.where(swap, partner, state.partner)
        state.phase = torch.where(swap, SWAP_OWN, state.phase)

    def _use_trick(self, state: BatchedState, rows: torch.Tensor, trick: int) -> None:
        """Trick Tokens: each once per game, at most one per turn."""
        state.tricks_used[:, trick] |= rows
        state.trick_this_turn = state.trick_this_turn | rows

    def _play(
        self,
        state: BatchedState,
        flow: Flow,
        rows: torch.Tensor,
        card: torch.Tensor,
        space: torch.Tensor,
    ) -> None:
        """Play One Ingredient Card, then check for a stun before any icon takes effect."""
        if not bool(rows.any()):
            return
        self._move_card(state, rows, card, PILE + space)
        stopped = self._check_stun(state, flow, rows)
        going = rows & ~stopped
        binx = going & self.is_binx[card]
        state.phase = torch.where(binx, BINX, state.phase)
        book = going & self.is_book[card]
        flow.reveal |= book
        flow.context = torch.where(book, AFTER_SPELL_BOOK, flow.context)
        flow.end_turn_after(going & ~binx & ~book, True)

    def _check_stun(self, state: BatchedState, flow: Flow, rows: torch.Tensor) -> torch.Tensor:
        """Stunning A Witch: five tops of one colour stun Sarah, of one type Mary; of one type
        and five colours Mary or Winifred (the turn player chooses). Returns the rows whose
        round ends or that wait for that choice."""
        tops = self.tops(state)
        full = rows & all_along(tops < N, 1)
        card = tops.clamp(max=N - 1)
        colours, types = self.colour[card], self.type[card]
        one_colour = all_along(colours == colours[:, :1], 1)
        one_type = all_along(types == types[:, :1], 1)
        present = torch.zeros(len(rows), 5, dtype=torch.int64, device=self.device)
        five_colours = (present.scatter_(1, colours, 1).sum(dim=1)) == 5
        sarah = full & one_colour
        choice = full & ~one_colour & one_type & five_colours
        mary = full & ~one_colour & one_type & ~five_colours
        flow.end_round = flow.end_round | sarah | mary
        flow.witch = torch.where(sarah, C.SARAH, torch.where(mary, C.MARY, flow.witch))
        state.phase = torch.where(choice, STUN_CHOICE, state.phase)
        state.actor = torch.where(choice, state.turn, state.actor)
        return sarah | mary | choice

    def _reveal_spell(self, state: BatchedState, flow: Flow, generator: torch.Generator) -> None:
        """Spell Cards: draw the top Spell (reshuffling the discards when the deck is empty); a
        stunned caster misses, Take Flight never does; Circle of Salt may cancel it, if unused
        and (unless ``salt_after_trick``) no other trick was used this turn."""
        rows = flow.reveal
        if not bool(rows.any()):
            return
        state.spell_context = torch.where(rows, flow.context, state.spell_context)
        in_deck = state.spell_location == DECK
        empty = rows & ~any_along(in_deck, 1)
        if bool(empty.any()):
            discarded = empty[:, None] & (state.spell_location == DISCARD)
            keys = uniform(generator, state.spell_position.shape, self.device, empty)
            order = inverse_permutation(torch.where(discarded, keys, 2.0).argsort(dim=1))
            state.spell_position = torch.where(discarded, order, state.spell_position)
            state.spell_location = torch.where(discarded, DECK, state.spell_location)
            in_deck = state.spell_location == DECK
        deck_size = in_deck.sum(dim=1)
        top = rows[:, None] & in_deck & (state.spell_position == deck_size[:, None] - 1)
        spell = top.long().argmax(dim=1)
        state.spell_location = torch.where(top, IN_PLAY, state.spell_location)
        state.spell = torch.where(rows, spell, state.spell)
        caster = self.spell_caster[spell]
        miss = rows & (caster != C.ALL_THREE) & (caster == state.stunned)
        flow.finish |= miss
        immune = (caster == C.ALL_THREE) & self.options.take_flight_ignores_salt
        allowed = ~state.trick_this_turn | self.options.salt_after_trick
        salt = rows & ~miss & ~state.tricks_used[:, C.SALT] & allowed & ~immune
        state.phase = torch.where(salt, SALT, state.phase)
        state.actor = torch.where(salt, state.turn, state.actor)
        flow.resolve |= rows & ~miss & ~salt

    def _resolve_spell(self, state: BatchedState, flow: Flow, generator: torch.Generator) -> None:
        """Apply the effect of the revealed Spell (the table of RULES.md, 'Spell Cards')."""
        rows = flow.resolve
        if not bool(rows.any()):
            return
        name = torch.where(rows, self.spell_name[state.spell.clamp(min=0)], -1)
        n = self.num_players
        sizes = self.sizes(state)
        piles = (name == SPELL["Dance Until You Die"]) | (name == SPELL["Take Flight"])
        piles |= (name == SPELL["Book!"]) | (name == SPELL["Boys, Boys"])
        changed = self._discard_piles(state, name, sizes) if bool(piles.any()) else piles
        # the Ingredient deck: Another Glorious Morning, Sistahs!, Amok Amok Amok
        deck_count = self.deck_discards[name.clamp(min=0)]
        from_deck = rows & (deck_count > 0)
        if bool(from_deck.any()):
            self._draw(state, from_deck, torch.full_like(name, DISCARD), deck_count)
        smell = name == SPELL["I Smell Children"]
        state.no_questions = state.no_questions | smell
        state.binx = torch.where(name == SPELL["Hello, Binx"], -1, state.binx)
        random_pass = name == SPELL["I Put a Spell on You"]
        if bool(random_pass.any()):
            self._random_pass(state, random_pass, generator)
        discard = (name == SPELL["Oh, Look!"]) | (name == SPELL["Fly, My Pretty"])
        everyone = (name == SPELL["Oh, Look!"])[:, None].expand(-1, n)
        state.queue = torch.where(
            discard[:, None], everyone | (self.seats == state.turn[:, None]), state.queue
        )
        flow.spell_discard |= discard
        passing = name == SPELL["Come Little Children"]
        holding = sizes[:, HAND:] > 0
        state.queue = torch.where(passing[:, None], holding, state.queue)
        state.set_aside = torch.where(passing[:, None], -1, state.set_aside)
        flow.spell_pass |= passing
        flow.finish |= rows & ~discard & ~passing
        flow.changed |= rows & changed

    def _discard_piles(
        self, state: BatchedState, name: torch.Tensor, sizes: torch.Tensor
    ) -> torch.Tensor:
        """Dance Until You Die (every top but Binx), Take Flight (every top), in space order;
        Book! and Boys, Boys (the two / the tallest piles, ties to the lower space), tallest
        first. Returns ``[B]`` whether the Cauldron changed."""
        pile_sizes = sizes[:, PILE:HAND]
        nonempty = pile_sizes > 0
        binx_top = self.is_binx[self.tops(state, sizes).clamp(max=N - 1)]
        dance = (name == SPELL["Dance Until You Die"])[:, None]
        ascending = torch.where(dance, nonempty & ~binx_top, nonempty)
        ascending &= dance | (name == SPELL["Take Flight"])[:, None]
        order = inverse_permutation(((N - pile_sizes) * SPACES + self.spaces).argsort(dim=1))
        tallest = torch.where(name == SPELL["Book!"], 2, 0) + (name == SPELL["Boys, Boys"]).long()
        by_height = nonempty & (order < tallest[:, None])
        chosen = ascending | by_height
        rank = torch.where(ascending, ascending.long().cumsum(dim=1) - 1, order)
        self._discard_tops(state, chosen, rank, sizes)
        return any_along(chosen, 1)

    def _discard_tops(
        self, state: BatchedState, chosen: torch.Tensor, rank: torch.Tensor, sizes: torch.Tensor
    ) -> None:
        """The top cards of the ``chosen [B, 5]`` piles go to the discard pile, in ``rank``
        order."""
        on_pile = (state.location >= PILE) & (state.location < HAND)
        space = (state.location - PILE).clamp(0, SPACES - 1)
        moving = on_pile & self._is_top(state, sizes) & chosen.gather(1, space)
        self._move(state, moving, torch.full_like(space, DISCARD), rank.gather(1, space))

    def _random_pass(self, state: BatchedState, rows: torch.Tensor, generator) -> None:
        """I Put a Spell on You: each player passes one random card from hand to the left."""
        sizes = self.sizes(state)[:, HAND:]  # [B, n]
        keys = uniform(generator, sizes.shape, self.device, rows)
        pick = (keys * sizes).long().clamp(max=(sizes - 1).clamp(min=0))
        seat = (state.location - HAND).clamp(0, self.num_players - 1)
        in_hand = state.location >= HAND
        chosen = rows[:, None] & in_hand & (state.position == pick.gather(1, seat))
        self._pass_left(state, chosen)

    def _pass_left(self, state: BatchedState, chosen: torch.Tensor) -> None:
        """All ``chosen [B, 50]`` cards (one per hand at most) change hands at once, each to
        the owner's left neighbour; both remember it."""
        n = self.num_players
        giver = (state.location - HAND).clamp(0, n - 1)
        taker = (giver + 1) % n
        self._move(state, chosen, HAND + taker, torch.zeros_like(giver))
        given = torch.full((len(chosen), n + 1), -1, dtype=torch.int64, device=self.device)
        given = given.scatter(1, torch.where(chosen, giver, n), self.cards.expand_as(giver))[
            :, :n
        ]  # [B, n] the card each seat gave, or -1
        gave = given >= 0
        handed = torch.stack([given, (self.seats + 1).expand_as(given) % n], dim=2)
        state.handed = torch.where(gave[:, :, None], handed, state.handed)
        came = given.roll(1, dims=1)  # the card from the right neighbour
        received = torch.stack([came, (self.seats - 1).expand_as(came) % n], dim=2)
        state.received = torch.where((came >= 0)[:, :, None], received, state.received)

    def _first_queued(self, state: BatchedState) -> tuple[torch.Tensor, torch.Tensor]:
        """``[B]`` whether any seat is queued, and the first clockwise from the turn player."""
        n = self.num_players
        clockwise = (state.turn[:, None] + self.seats) % n
        queued = state.queue.gather(1, clockwise)
        return any_along(queued, 1), clockwise.gather(1, queued.long().argmax(dim=1)[:, None])[:, 0]

    def _next_spell_discard(self, state: BatchedState, flow: Flow) -> None:
        """Oh, Look! / Fly, My Pretty: each queued player discards a card of their choice
        (skipped with an empty hand) and makes a forced draw."""
        going = flow.spell_discard
        if not bool(going.any()):
            return
        for _ in range(self.num_players + 1):
            has, seat = self._first_queued(state)
            flow.finish |= going & ~has
            going = going & has
            state.queue &= ~(going[:, None] & (self.seats == seat[:, None]))
            holds = any_along(self.hand_of(state, seat), 1)
            wait = going & holds
            state.actor = torch.where(wait, seat, state.actor)
            state.phase = torch.where(wait, SPELL_DISCARD, state.phase)
            going = going & ~holds
            going = self._forced_draw(state, going, seat, torch.ones_like(seat))
            if not bool(going.any()):
                return

    def _next_spell_pass(self, state: BatchedState, flow: Flow) -> None:
        """Come Little Children: every player with cards chooses one; then all pass left at
        once."""
        rows = flow.spell_pass
        if not bool(rows.any()):
            return
        has, seat = self._first_queued(state)
        wait = rows & has
        state.actor = torch.where(wait, seat, state.actor)
        state.phase = torch.where(wait, SPELL_PASS, state.phase)
        state.queue &= ~(wait[:, None] & (self.seats == seat[:, None]))
        done = rows & ~has
        chosen = done[:, None] & any_along(state.set_aside[:, :, None] == self.cards, 1)  # [B, 50]
        self._pass_left(state, chosen)
        state.set_aside = torch.where(done[:, None], -1, state.set_aside)
        flow.finish |= done

    def _finish_spell(self, state: BatchedState, flow: Flow) -> None:
        """Discard the Spell; check for a stun if it changed the Cauldron; go on with the turn.
        After a failed play the player discards and draws; a hand that was empty when the play
        failed (or that the Spell emptied) makes one forced draw instead."""
        rows = flow.finish
        if not bool(rows.any()):
            return
        finished = rows[:, None] & (self.spell_ids == state.spell[:, None])
        discard_size = (state.spell_location == DISCARD).sum(dim=1, keepdim=True)
        state.spell_position = torch.where(finished, discard_size, state.spell_position)
        state.spell_location = torch.where(finished, DISCARD, state.spell_location)
        state.spell = torch.where(rows, -1, state.spell)
        stopped = self._check_stun(state, flow, rows & flow.changed)
        going = rows & ~stopped
        state.actor = torch.where(going, state.turn, state.actor)
        book = going & (state.spell_context == AFTER_SPELL_BOOK)
        flow.end_turn_after(book, True)
        empty = ~any_along(self.hand_of(state, state.turn), 1)
        draw_one = going & ~book & ((state.spell_context == AFTER_EMPTY_HAND) | empty)
        drew = self._forced_draw(state, draw_one, state.turn, torch.ones_like(state.turn))
        flow.end_turn_after(drew, True)
        discard = going & ~book & ~draw_one
        state.phase = torch.where(discard, DISCARD_PHASE, state.phase)
        state.count = torch.where(discard, 0, state.count)

    def _choose(
        self,
        state: BatchedState,
        flow: Flow,
        phase: torch.Tensor,
        a: torch.Tensor,
        card: torch.Tensor,
    ) -> None:
        """The card choices (and ``finish``) of the sub-decisions, each phase on its rows."""
        for chosen, rule in (
            (DISCARD_PHASE, self._discard),
            (SPELL_DISCARD, self._spell_discard),
            (SPELL_PASS, self._set_aside),
            (SWAP_OWN, self._set_aside),
            (BURN, self._burn),
            (SWAP_PARTNER, self._swap),
        ):
            rows = phase == chosen
            if bool(rows.any()):
                rule(state, flow, rows, a, card)

    def _discard(self, state: BatchedState, flow: Flow, rows, a, card) -> None:
        """After a failed play: discard one card at a time, then ``finish`` (or run out of
        cards) and make a forced draw for each."""
        seat = state.actor
        finish = rows & (a == A.FINISH)
        one = rows & ~finish
        self._move_card(state, one, card, torch.full_like(a, DISCARD))
        state.count = state.count + one.long()
        emptied = one & ~any_along(self.hand_of(state, seat), 1)
        drew = self._forced_draw(state, finish | emptied, seat, state.count)
        flow.end_turn_after(drew, True)

    def _spell_discard(self, state: BatchedState, flow: Flow, rows, a, card) -> None:
        """Oh, Look! / Fly, My Pretty: discard the chosen card, make a forced draw, then the
        next queued player."""
        self._move_card(state, rows, card, torch.full_like(a, DISCARD))
        drew = self._forced_draw(state, rows, state.actor, torch.ones_like(a))
        flow.spell_discard = flow.spell_discard | drew

    def _set_aside(self, state: BatchedState, flow: Flow, rows, a, card) -> None:
        """Come Little Children's pass and Daylight Savings Time's own card wait set aside;
        then the next player of the Spell, or the swap partner, chooses."""
        mine = rows[:, None] & (self.seats == state.actor[:, None])
        state.set_aside = torch.where(mine, card[:, None], state.set_aside)
        swap_own = rows & (state.phase == SWAP_OWN)
        flow.spell_pass = flow.spell_pass | (rows & ~swap_own)
        state.actor = torch.where(swap_own, state.partner, state.actor)
        state.phase = torch.where(swap_own, SWAP_PARTNER, state.phase)

    def _burn(self, state: BatchedState, flow: Flow, rows, a, card) -> None:
        """Burning Rain of Death: discard three chosen cards, draw three, then play."""
        self._move_card(state, rows, card, torch.full_like(a, DISCARD))
        state.count = state.count - rows.long()
        burnt = rows & (state.count == 0)
        self._draw(state, burnt, HAND + state.turn, torch.full_like(a, 3))
        state.phase = torch.where(burnt, ACT, state.phase)

    def _swap(self, state: BatchedState, flow: Flow, rows, a, card) -> None:
        """Daylight Savings Time: the partner's chosen card and the player's set-aside one
        change hands; both partners remember both; then the player plays."""
        own = state.set_aside.gather(1, state.turn[:, None])[:, 0]
        partner = state.actor
        moving = rows[:, None] & ((self.cards == card[:, None]) | (self.cards == own[:, None]))
        dest = torch.where(
            self.cards == card[:, None], (HAND + state.turn)[:, None], (HAND + partner)[:, None]
        )
        self._move(state, moving, dest, torch.zeros_like(dest))
        turn_seat = self.seats == state.turn[:, None]
        partner_seat = self.seats == partner[:, None]
        handed = torch.where(
            turn_seat[:, :, None],
            torch.stack([own, partner], 1)[:, None, :],
            torch.stack([card, state.turn], 1)[:, None, :],
        )
        received = torch.where(
            turn_seat[:, :, None],
            torch.stack([card, partner], 1)[:, None, :],
            torch.stack([own, state.turn], 1)[:, None, :],
        )
        pair = rows[:, None, None] & (turn_seat | partner_seat)[:, :, None]
        state.handed = torch.where(pair, handed, state.handed)
        state.received = torch.where(pair, received, state.received)
        state.set_aside = torch.where(rows[:, None] & turn_seat, -1, state.set_aside)
        state.actor = torch.where(rows, state.turn, state.actor)
        state.partner = torch.where(rows, -1, state.partner)
        state.phase = torch.where(rows, ACT, state.phase)

    def _end_turn(self, state: BatchedState, rows: torch.Tensor, draw_card: torch.Tensor) -> None:
        """Draw One Ingredient Card (an empty deck just means no draw), then the left player."""
        if not bool(rows.any()):
            return
        self._draw(state, rows & draw_card, HAND + state.turn, torch.ones_like(state.turn))
        self._start_turn(state, rows, (state.turn + 1) % self.num_players)

    def _start_turn(self, state: BatchedState, rows: torch.Tensor, seat: torch.Tensor) -> None:
        state.turn = torch.where(rows, seat, state.turn)
        state.actor = torch.where(rows, seat, state.actor)
        state.trick_this_turn = state.trick_this_turn & ~rows
        state.turns = state.turns + rows.long()
        state.phase = torch.where(rows, torch.where(state.no_questions, ACT, ASK), state.phase)

    def _end_round(
        self, state: BatchedState, rows: torch.Tensor, witch: torch.Tensor, generator
    ) -> None:
        """End of Round: the turn player draws and ends the turn; the Stun token goes on the
        witch; the Sun rises; ongoing spells end; the Cauldron and discards are purged, keeping
        only Binx and Spell Book cards, which are shuffled into the deck; Binx returns; the
        player on the left starts the next round. The Sun at the top wins the game."""
        if not bool(rows.any()):
            return
        self._draw(state, rows, HAND + state.turn, torch.ones_like(state.turn))
        state.stunned = torch.where(rows, witch, state.stunned)
        state.sun = state.sun + rows.long()
        state.stuns = state.stuns + rows.long()
        state.reward = state.reward + rows.double() * self.options.stun_reward
        state.no_questions = state.no_questions & ~rows
        won = rows & (state.sun >= self.options.sunrise_steps)
        state.outcome = torch.where(won, 1, state.outcome)
        state.phase = torch.where(won, OVER, state.phase)
        state.reward = state.reward + won.double()
        going = rows & ~won
        # collected = the piles (space by space, bottom first), then the discard pile
        location, position = state.location, state.position
        on_pile = (location >= PILE) & (location < HAND)
        collected = going[:, None] & (on_pile | (location == DISCARD))
        sizes = self.sizes(state)
        before = torch.cat([sizes[:, PILE:HAND], sizes[:, DISCARD : DISCARD + 1]], 1).cumsum(1)
        before = before - torch.cat([sizes[:, PILE:HAND], sizes[:, DISCARD : DISCARD + 1]], 1)
        list_index = torch.where(on_pile, location - PILE, SPACES).clamp(0, SPACES)
        key = before.gather(1, list_index) + position
        leaving = collected & ~self.has_icon
        # (several cards leave one pile here: the icon cards left behind get wrong positions
        # for a moment, until the shuffle below puts them into the deck)
        ending = going.nonzero().squeeze(1)
        rank = _ranks(torch.where(leaving, key, BIG), ending)
        self._move(state, leaving, torch.full_like(location, REMOVED), rank)
        shuffled = going[:, None] & ((state.location == DECK) | (collected & self.has_icon))
        keys = uniform(generator, shuffled.shape, self.device, going)
        order = _ranks(torch.where(shuffled, keys, 2.0), ending)
        state.position = torch.where(shuffled, order, state.position)
        state.location = torch.where(shuffled, DECK, state.location)
        state.binx = torch.where(going, -1, state.binx)
        state.questions = state.questions & ~going[:, None, None, None]
        self._start_turn(state, going, (state.turn + 1) % self.num_players)

    def _move(
        self, state: BatchedState, moving: torch.Tensor, dest: torch.Tensor, rank: torch.Tensor
    ) -> None:
        """Move the cards ``moving [B, 50]`` to the lists ``dest`` (location codes), each to
        place ``rank`` after that list's last card. The cards left above a moved one move down
        one place; at most one card leaves a list, unless those leaving are its top cards or
        all of it. (Skipped when no card moves.)"""
        if not bool(moving.any()):
            return
        location, position = state.location, state.position
        src = torch.where(moving, position, BIG)
        gone = torch.full((len(location), self.locations), BIG, device=self.device)
        gone = gone.scatter_reduce(1, location, src, reduce="amin")
        position = position - (~moving & (position > gone.gather(1, location))).long()
        stay = torch.zeros(len(location), self.locations, dtype=torch.int64, device=self.device)
        stay.scatter_add_(1, location, (~moving).long())
        target = dest.clamp(0, self.locations - 1)
        state.position = torch.where(moving, stay.gather(1, target) + rank, position)
        state.location = torch.where(moving, target, location)

    def _move_card(
        self, state: BatchedState, rows: torch.Tensor, card: torch.Tensor, dest: torch.Tensor
    ) -> None:
        """Move one ``card[b]`` to the end of list ``dest[b]`` in each of ``rows``."""
        moving = rows[:, None] & (self.cards == card[:, None])
        self._move(state, moving, dest[:, None].expand(-1, N), torch.zeros_like(state.position))

    def _draw(
        self, state: BatchedState, rows: torch.Tensor, dest: torch.Tensor, count: torch.Tensor
    ) -> torch.Tensor:
        """``draw(deck, count)`` onto the end of list ``dest[b]``: the top card first. Returns
        ``[B]`` how many cards were there to draw. (:meth:`_move` for this case: the cards
        leave the deck's top, so no card stays above them, and ``dest`` is not the deck.)"""
        deck = state.location == DECK
        deck_size = deck.sum(dim=1)
        depth = deck_size[:, None] - 1 - state.position  # 0 = the top card
        moving = rows[:, None] & deck & (depth < count[:, None])
        target = dest.clamp(0, self.locations - 1)[:, None]
        size = (state.location == target).sum(dim=1, keepdim=True)
        state.position = torch.where(moving, size + depth, state.position)
        state.location = torch.where(moving, target, state.location)
        return torch.minimum(count, deck_size)

    def _forced_draw(
        self, state: BatchedState, rows: torch.Tensor, seat: torch.Tensor, count: torch.Tensor
    ) -> torch.Tensor:
        """A draw the rules force (failed play, Spell): the team loses if the deck runs out.
        Returns the rows that go on."""
        got = self._draw(state, rows, HAND + seat, count)
        lost = rows & (got < count)
        state.outcome = torch.where(lost, -1, state.outcome)
        state.phase = torch.where(lost, OVER, state.phase)
        state.reward = state.reward - lost.double()
        return rows & ~lost

    # ----------------------------------------------------------------- observation
    # Both vectors are built as in ``envs/core/encoding.py``: a list of (index, value) entries
    # per row, scattered into zeros once. An entry that is not there has value 0.

    def _card_entries(
        self, state: BatchedState, code: torch.Tensor, depth: torch.Tensor, layout: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``[B, 50]`` (index, value) of every card by its list: ``code`` is the list's
        location code (hands relative to the observer in an observation); a pile's top card
        shows in ``pile_tops``, the others in ``buried_cards`` with 1 / their depth."""
        buried = (code >= PILE) & (code < HAND) & (depth > 0)
        base = self.card_base[layout is self.state_layout][code * 2 + buried.long()]
        shown = base >= 0
        value = torch.where(buried, self.inverse_depth[depth.clamp(0, N)], shown.float())
        return torch.where(shown, base + self.cards, 0), value

    def _entries(
        self, state: BatchedState, me: torch.Tensor, layout: Any
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """The (index ``[B, k]``, value ``[B, k]``) entries of the public fields seen from
        ``me`` (as the reference encoder's ``_public``) and of the cards' lists; the caller
        adds the own or hidden fields."""
        o, rows, n, dev = layout.offsets, len(me), self.num_players, self.device
        sizes = self.sizes(state)
        loc = state.location
        depth = sizes.gather(1, loc) - 1 - state.position
        relative = (self.seats - me[:, None]) % n  # [B, n] place of each seat from me
        observe = layout is self.observation_layout
        code = torch.where(loc >= HAND, HAND + (loc - HAND - me[:, None]) % n, loc)
        cards = self._card_entries(state, code if observe else loc, depth, layout)
        binx = state.binx
        in_binx_hand = (loc == HAND + binx[:, None]) & (binx >= 0)[:, None]
        aside = state.set_aside.gather(1, binx.clamp(min=0)[:, None])
        spell = self.spell_name[state.spell.clamp(min=0)][:, None]
        discarded = torch.zeros(rows, NAMES, dtype=torch.int64, device=dev)
        discarded.scatter_add_(
            1, self.spell_name.expand(rows, -1), (state.spell_location == DISCARD).long()
        )
        scalars = torch.stack(
            [
                sizes[:, DECK].double() / N,
                state.sun.double() / self.options.sunrise_steps,
                (state.spell_location == DECK).sum(dim=1).double() / self.spell_count,
                torch.where(state.phase == DISCARD_PHASE, state.count, 0).double() / N,
                torch.where(state.phase == BURN, state.count, 0).double() / 3,
                state.no_questions.double(),
                state.trick_this_turn.double(),
            ],
            dim=1,
        ).float()
        one = self.one.expand(rows, 1)

        def at(name: str, index: torch.Tensor) -> torch.Tensor:
            return o[name] + index

        def seat_entry(name: str, seat: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return at(name, (seat - me[:, None]) % n), (seat >= 0).float()

        partner, partner_value = seat_entry("swap_partner", state.partner[:, None])
        holder = torch.where(binx >= 0, 1 + (binx - me) % n, 0)[:, None]
        index = [
            at("phase", state.phase[:, None]),
            self.players_entry[layout is self.state_layout].expand(rows, 1),
            at("turn_player", (state.turn - me)[:, None] % n),
            at("actor", (state.actor - me)[:, None] % n),
            at("binx_holder", holder),
            at("stunned", state.stunned[:, None] + 1),
            at("hand_sizes", relative),
            cards[0],
            at("binx_hand", self.cards.expand(rows, -1)),
            at("binx_set_aside", aside.clamp(min=0)),
            at("pile_sizes", self.spaces.expand(rows, -1)),
            self.scalar_index[layout is self.state_layout].expand(rows, -1),
            self.question_index[layout is self.state_layout].expand(rows, -1),
            at("tricks_used", self.tricks.expand(rows, -1)),
            at("spells_discarded", self.names.expand(rows, -1)),
            at("current_spell", spell),
            partner,
        ]
        order = (me[:, None] + self.seats) % n
        questions = state.questions.gather(2, order[:, None, :, None].expand(-1, 3, n, 10))
        value = [
            one,
            one,
            one,
            one,
            one,
            one,
            (sizes[:, HAND:].double() / N).float(),
            cards[1],
            in_binx_hand.float(),
            ((binx >= 0)[:, None] & (aside >= 0)).float(),
            (sizes[:, PILE:HAND].double() / N).float(),
            scalars,
            questions.flatten(1).float(),
            state.tricks_used.float(),
            self.discarded_value.gather(1, discarded.T).T,
            (state.spell >= 0)[:, None].float(),
            partner_value,
        ]
        return index, value

    def _assemble(self, size: int, index: list, value: list) -> torch.Tensor:
        """``[B, size]`` float32: the entries' values scattered into zeros."""
        index, value = torch.cat(index, dim=1), torch.cat(value, dim=1)
        out = torch.zeros(len(index), size, device=self.device)
        return out.scatter_add_(1, index, value)

    def _handovers(
        self, name: str, seats: str, pair: torch.Tensor, me: torch.Tensor, layout: Any
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Entries of the latest hand-over ``pair`` (``[B, k, 2]`` card and other seat) of
        ``k`` seats: one per seat in an observation (``me`` is the seat), ``k`` in a state."""
        o, n = layout.offsets, self.num_players
        card, other = pair[:, :, 0], pair[:, :, 1]
        given = (card >= 0).float()
        if layout is self.observation_layout:
            return [o[name] + card.clamp(min=0), o[seats] + (other - me[:, None]) % n], [
                given,
                given,
            ]
        rows = self.seats * N
        return [o[name] + rows + card.clamp(min=0), o[seats] + self.seats * P + other.clamp(0)], [
            given,
            given,
        ]

    def observe(self, state: BatchedState, seat: torch.Tensor) -> torch.Tensor:
        """``[B, 1186]`` float32: what ``seat[b]`` may know, as the reference ``observe``."""
        layout = self.observation_layout
        o, rows = layout.offsets, torch.arange(len(seat), device=self.device)
        index, value = self._entries(state, seat, layout)
        aside = state.set_aside[rows, seat][:, None]
        index.append(o["set_aside"] + aside.clamp(min=0))
        value.append((aside >= 0).float())
        for name, seats, pairs in (
            ("handed_card", "handed_to", state.handed),
            ("received_card", "received_from", state.received),
        ):
            more = self._handovers(name, seats, pairs[rows, seat][:, None, :], seat, layout)
            index += more[0]
            value += more[1]
        return self._assemble(layout.size, index, value)

    def encode_state(self, state: BatchedState) -> torch.Tensor:
        """``[B, 2309]`` float32: everything, seats absolute, as the reference ``state()``."""
        layout = self.state_layout
        o, rows = layout.offsets, len(state.turn)
        index, value = self._entries(state, torch.zeros_like(state.turn), layout)
        aside = state.set_aside
        index.append(o["set_aside_all"] + self.seats * N + aside.clamp(min=0))
        value.append((aside >= 0).float())
        for name, seats, pairs in (
            ("handed_cards_all", "handed_to_all", state.handed),
            ("received_cards_all", "received_from_all", state.received),
        ):
            more = self._handovers(name, seats, pairs, state.turn, layout)
            index += more[0]
            value += more[1]
        counts = torch.zeros(rows, NAMES, dtype=torch.int64, device=self.device)
        counts.scatter_add_(
            1, self.spell_name.expand(rows, -1), (state.spell_location == DECK).long()
        )
        index.append(o["spell_deck_cards"] + self.names.expand(rows, -1))
        value.append(self.deck_value.gather(1, counts.T).T)
        return self._assemble(layout.size, index, value)


# --------------------------------------------------------------------- helpers
def _float32_sums(weight: float, most: int, accumulate_in_float32: bool) -> list[float]:
    """``k`` copies of ``weight`` added one by one, for k = 0..most, as the reference encoder
    adds them (into a float32 array, or as Python floats then stored as float32)."""
    sums = []
    for k in range(most + 1):
        if accumulate_in_float32:
            out = np.zeros(1, np.float32)
            for _ in range(k):
                out[0] += weight
            sums.append(float(out[0]))
        else:
            total = 0.0
            for _ in range(k):
                total += weight
            sums.append(float(np.float32(total)))
    return sums


def _ranks(keys: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``[B, k]``: the rank of each key within its row (0 = smallest; ties in sort order), in
    the rows ``rows`` only (0 elsewhere): a sort of the few rows that need one."""
    ranks = torch.zeros(keys.shape, dtype=torch.int64, device=keys.device)
    ranks[rows] = inverse_permutation(keys[rows].argsort(dim=1))
    return ranks


# --------------------------------------------------------------------- conversion
def from_reference(states: list[State], game: BatchedHocusPocus) -> BatchedState:
    """The reference ``states`` as the rows of one :class:`BatchedState` (the inverse of
    :func:`to_reference`)."""
    rows, n, dev = len(states), game.num_players, game.device
    location = np.zeros((rows, N), np.int64)
    position = np.zeros((rows, N), np.int64)
    spell_location = np.full((rows, game.spell_count), OUT, np.int64)
    spell_position = np.zeros((rows, game.spell_count), np.int64)
    for row, s in enumerate(states):
        lists = [(DECK, s.deck), (DISCARD, s.discard), (REMOVED, s.removed)]
        lists += [(PILE + k, pile) for k, pile in enumerate(s.piles)]
        lists += [(HAND + seat, hand) for seat, hand in enumerate(s.hands)]
        for where, cards in lists:
            location[row, cards] = where
            position[row, cards] = np.arange(len(cards))
        spell_location[row, s.spell_deck] = DECK
        spell_position[row, s.spell_deck] = np.arange(len(s.spell_deck))
        spell_location[row, s.spell_discard] = DISCARD
        spell_position[row, s.spell_discard] = np.arange(len(s.spell_discard))
        if s.spell >= 0:
            spell_location[row, s.spell] = IN_PLAY

    def ints(values: Any) -> torch.Tensor:
        return torch.tensor(values, dtype=torch.int64, device=dev)

    def clockwise(s: State) -> list[bool]:
        return [seat in s.queue for seat in range(n)]

    return BatchedState(
        location=torch.from_numpy(location).to(dev),
        position=torch.from_numpy(position).to(dev),
        spell_location=torch.from_numpy(spell_location).to(dev),
        spell_position=torch.from_numpy(spell_position).to(dev),
        turn=ints([s.turn for s in states]),
        actor=ints([s.actor for s in states]),
        phase=ints([int(s.phase) for s in states]),
        binx=ints([s.binx for s in states]),
        stunned=ints([s.stunned for s in states]),
        sun=ints([s.sun for s in states]),
        tricks_used=ints([s.tricks_used for s in states]).bool(),
        trick_this_turn=ints([s.trick_this_turn for s in states]).bool(),
        no_questions=ints([s.no_questions for s in states]).bool(),
        questions=torch.from_numpy(np.stack([s.questions for s in states]) > 0).to(dev),
        spell=ints([s.spell for s in states]),
        spell_context=ints([s.spell_context for s in states]),
        queue=torch.tensor([clockwise(s) for s in states], dtype=torch.bool, device=dev),
        set_aside=ints([[s.set_aside.get(seat, -1) for seat in range(n)] for s in states]),
        handed=ints([[list(h) for h in s.handed] for s in states]),
        received=ints([[list(r) for r in s.received] for s in states]),
        count=ints([s.count for s in states]),
        partner=ints([s.partner for s in states]),
        outcome=ints([s.outcome for s in states]),
        stuns=ints([s.stuns for s in states]),
        turns=ints([s.turns for s in states]),
        reward=torch.tensor([s.reward for s in states], dtype=torch.float64, device=dev),
    )


def to_reference(state: BatchedState, row: int, rng: np.random.Generator) -> State:
    """Game ``row`` of ``state`` as a reference ``State`` drawing its chance from ``rng`` (its
    log starts empty)."""
    r = {f.name: getattr(state, f.name)[row].cpu() for f in fields(state)}
    n = r["queue"].shape[0]

    def listed(location: torch.Tensor, position: torch.Tensor, where: int) -> list[int]:
        cards = (location == where).nonzero().flatten()
        return cards[position[cards].argsort()].tolist()

    loc, pos = r["location"], r["position"]
    turn = int(r["turn"])
    return State(
        hands=[listed(loc, pos, HAND + seat) for seat in range(n)],
        deck=listed(loc, pos, DECK),
        spell_deck=listed(r["spell_location"], r["spell_position"], DECK),
        rng=rng,
        turn=turn,
        piles=[listed(loc, pos, PILE + k) for k in range(SPACES)],
        discard=listed(loc, pos, DISCARD),
        removed=listed(loc, pos, REMOVED),
        spell_discard=listed(r["spell_location"], r["spell_position"], DISCARD),
        actor=int(r["actor"]),
        phase=Phase(int(r["phase"])),
        binx=int(r["binx"]),
        stunned=int(r["stunned"]),
        sun=int(r["sun"]),
        tricks_used=[bool(t) for t in r["tricks_used"]],
        trick_this_turn=bool(r["trick_this_turn"]),
        no_questions=bool(r["no_questions"]),
        questions=r["questions"].numpy().astype(np.float32),
        spell=int(r["spell"]),
        spell_context=int(r["spell_context"]),
        queue=[(turn + k) % n for k in range(n) if bool(r["queue"][(turn + k) % n])],
        set_aside={seat: int(c) for seat, c in enumerate(r["set_aside"]) if c >= 0},
        handed=[(int(c), int(s)) for c, s in r["handed"].tolist()],
        received=[(int(c), int(s)) for c, s in r["received"].tolist()],
        count=int(r["count"]),
        partner=int(r["partner"]),
        outcome=int(r["outcome"]),
        stuns=int(r["stuns"]),
        turns=int(r["turns"]),
        reward=float(r["reward"]),
    )


# --------------------------------------------------------------------- batched_game
def batched_game(reference_env: Any, device: torch.device) -> BatchedHocusPocus:
    """The engine for ``cauldron.envs.make_batched``: same player count and options as the
    reference."""
    return BatchedHocusPocus(reference_env.rules, device)
