"""Return of the Headless Horseman for B games at once, as tensors (the batched engine).

The same rules as ``rules.py``, function for function (``new_games``, ``apply_joint``,
``_resolve_turn``, ``_move_ichabod``, ``_split``, ``_move_horseman``, ``_to_next_blank``,
``_flip``, ``_draw``, ``_begin_round``; the AEC order's ``apply`` is the shared
:class:`~cauldron.envs.core.simultaneous.BatchedSimultaneous`), over :class:`BatchedState`,
whose fields are those of ``rules.State`` with a batch dimension first. Hands and the row are
fixed-size tensors padded with ``-1``; every rule runs for the whole batch and a ``live`` mask
([B] bool) says which games it applies to, so no Python ``if`` looks at one game's data. Chance
(spins, the ``reshuffle`` option's shuffles, deals) comes from the ``torch.Generator`` passed in.

The draw pile and the discard pile share one ring of 30 card slots (``piles``), read from
``head``: first the draw pile from its top, then the discard pile from its first card. Flipping
the discard pile over when the draw pile runs out (the rulebook) puts its first card on top, so a
draw simply reads on into it and no card moves; a discarded card goes to the ring's end.

The reference rules stay the specification: ``tests/test_headless_horseman_batched.py`` converts
reference states with :func:`from_reference` / :func:`to_reference` and checks every chance-free
transition, the observations, masks and ``state()`` against them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

from cauldron.envs.core.batched import randint, shuffled_decks, uniform
from cauldron.envs.core.batched_ops import as_float
from cauldron.envs.core.simultaneous import BatchedSimultaneous, has_chosen, own_choice
from cauldron.envs.headless_horseman import actions as A
from cauldron.envs.headless_horseman import components as C
from cauldron.envs.headless_horseman.facts import FACTS
from cauldron.envs.headless_horseman.phases import Phase
from cauldron.envs.headless_horseman.rules import HeadlessHorsemanRules, State

HAND_SLOTS = C.HAND_SIZE  # a hand never holds more: only a one-card hand draws, at most 3
ROW_SLOTS = C.NUM_TOPS + C.MAX_PLAYERS  # at most one card per top before the matching round
N = C.NUM_CARDS
T = len(C.TOKENS)
P = C.MAX_PLAYERS
PLAY, OVER = int(Phase.PLAY), int(Phase.OVER)
BLANK, SECRET, TREE, SCARE = range(4)  # kinds of space


# --------------------------------------------------------------------- state
@dataclasses.dataclass
class BatchedState:
    """B games; the fields of ``rules.State`` (seats absolute), every one ``[B, ...]`` int64.

    ``hands [B, n, 4]`` and ``row [B, 10]`` hold card ids in list order, ``-1`` past their end
    (``row_size`` counts the row). ``piles [B, 30]`` is the ring of the draw pile and the discard
    pile (module docstring): from slot ``head`` on, ``draw_pile_size`` cards of the draw pile,
    top first, then ``discard_size`` cards of the discard pile, first discarded first; the other
    slots are free. ``pending [B, n]``: each seat's hidden choice this play round, or ``-1``.
    ``tokens [B, 8]``: Scare tokens in flip order. The rest are ``[B]``."""

    hands: torch.Tensor
    piles: torch.Tensor
    head: torch.Tensor
    draw_pile_size: torch.Tensor
    discard_size: torch.Tensor
    tokens: torch.Tensor
    ichabod: torch.Tensor
    horseman: torch.Tensor
    row: torch.Tensor
    row_size: torch.Tensor
    flipped: torch.Tensor
    pending: torch.Tensor
    actor: torch.Tensor
    phase: torch.Tensor
    outcome: torch.Tensor
    turns: torch.Tensor
    rounds: torch.Tensor


# --------------------------------------------------------------------- engine
class BatchedHeadlessHorseman(BatchedSimultaneous):
    """The rules of one reference ``HeadlessHorsemanRules`` (player count, options, board) for
    B games at once; follows :class:`cauldron.envs.core.batched.BatchedGame`."""

    cooperative = FACTS.cooperative
    choosing_phase = PLAY
    num_actions = A.NUM_ACTIONS

    def __init__(self, rules: HeadlessHorsemanRules, encoder: Any, device: Any) -> None:
        self.rules = rules
        self.num_players = n = rules.num_players
        self.options = rules.options
        self.board = board = rules.board
        self.device = device
        self.observation_layout = encoder.observation_layout
        self.state_layout = encoder.state_layout
        self.observation_size = encoder.observation_layout.size
        self.state_size = encoder.state_layout.size

        def tensor(values: Any) -> torch.Tensor:
            return torch.tensor(values, dtype=torch.int64, device=device)

        kinds = [BLANK] * (board.bridge + 1)
        secret_end = list(range(board.bridge + 1))
        for start, end in board.secret_paths:
            kinds[start], secret_end[start] = SECRET, end
        for space in board.tree_spaces:
            kinds[space] = TREE
        for space in board.scare_spaces:
            kinds[space] = SCARE
        self.space_kind = tensor(kinds)
        self.secret_end = tensor(secret_end)
        next_blank = []
        for space in range(board.bridge + 1):
            ahead = min(space + 1, board.bridge)
            while not board.is_blank(ahead):
                ahead += 1
            next_blank.append(ahead)
        self.next_blank = tensor(next_blank)
        self.green_path_end = tensor((0, *board.green_path_end))  # by spin 1..3
        self.spinner = tensor(C.SPINNER)
        speed = self.options.speed_tile
        ride = [speed if C.bottom_of(c) == C.SPEED_ICON else C.bottom_of(c) for c in range(N)]
        self.ride = tensor([*ride, 0])
        self.is_pumpkin = torch.tensor([t in C.PUMPKINS for t in range(T)], device=device)
        self.handless = torch.tensor([s in rules.handless for s in range(n)], device=device)
        self.seat_ids = torch.arange(n, device=device)
        self.passes = landing_passes(board)
        self.card_ids = torch.arange(N, device=device)
        self.token_ids = torch.arange(T, device=device)
        self.hand_slots = torch.arange(HAND_SLOTS, device=device)
        self.always = torch.ones((1, 1), dtype=torch.bool, device=device)
        self.ones_row = torch.ones(1, ROW_SLOTS, device=device)
        self.speed_field = torch.full((1,), self.options.speed_tile / 4, device=device)
        o = encoder.observation_layout.offsets
        scalars = [o["over"], o["speed_tile"], o["draw_pile_size"], o["rounds"]]
        self.scalar_index = tensor([scalars])
        # index [1 + card] of the card's top in row_tops (no card: the first, with value 0)
        self.row_tops_index = tensor([o["row_tops"]] + [o["row_tops"] + c // 5 for c in range(N)])
        relative = [
            [o[name] + r for name in ("handless", "chosen", "hand_sizes")] for r in range(n)
        ]
        self.relative_index = tensor(relative).T[None]  # [1, 3, n]: field, relative seat

    # ----------------------------------------------------------------- reset
    def new_games(
        self, rows: int, generator: torch.Generator, start_seat: torch.Tensor | None = None
    ) -> BatchedState:
        """Set Up: Ichabod at the farm, the Horseman at his start, Scare tokens face down and
        mixed, the cards shuffled, four cards for every player who holds a hand (dealt from the
        pile's top, seat by seat). ``start_seat`` has no effect: everyone plays every round."""
        n, dev = self.num_players, self.device
        piles = shuffled_decks(rows, N, generator, dev)  # the shuffled deck, top first
        hands = torch.full((rows, n, HAND_SLOTS), -1, dtype=torch.int64, device=dev)
        dealt = 0
        for seat in range(n):
            if seat not in self.rules.handless:
                hands[:, seat] = piles[:, dealt : dealt + C.HAND_SIZE]
                dealt += C.HAND_SIZE
        zeros = torch.zeros(rows, dtype=torch.int64, device=dev)
        return BatchedState(
            hands=hands,
            piles=piles,
            head=zeros + dealt,
            draw_pile_size=zeros + N - dealt,
            discard_size=zeros.clone(),
            tokens=shuffled_decks(rows, T, generator, dev),
            ichabod=zeros + self.board.farm,
            horseman=zeros + self.board.horseman_start,
            row=torch.full((rows, ROW_SLOTS), -1, dtype=torch.int64, device=dev),
            row_size=zeros.clone(),
            flipped=zeros.clone(),
            pending=torch.full((rows, n), -1, dtype=torch.int64, device=dev),
            actor=zeros.clone(),
            phase=zeros + PLAY,
            outcome=zeros.clone(),
            turns=zeros + 1,
            rounds=zeros + 1,
        )

    # ----------------------------------------------------------------- legal moves
    def is_over(self, state: BatchedState) -> torch.Tensor:
        return state.phase == OVER

    def is_truncated(self, state: BatchedState) -> torch.Tensor:
        """A game always ends by its rules."""
        return torch.zeros_like(state.phase, dtype=torch.bool)

    def pumpkins_up(self, state: BatchedState) -> torch.Tensor:
        """``[B]`` pumpkin tokens among the face-up ones."""
        up = self.token_ids < state.flipped[:, None]
        return (up & self.is_pumpkin[state.tokens]).sum(dim=1)

    def figures(self, state: BatchedState) -> dict[str, torch.Tensor]:
        """The reference ``info``: progress, scares, pumpkins, turns, outcome."""
        return {
            "progress": state.ichabod.clone(),
            "scares": state.flipped.clone(),
            "pumpkins": self.pumpkins_up(state),
            "turns": state.turns.clone(),
            "outcome": state.outcome.clone(),
        }

    def legal_mask_for(self, state: BatchedState, seat: torch.Tensor) -> torch.Tensor:
        """``[B, 31]`` bool: the cards in ``seat``'s hand; a seat without a hand plays the draw
        pile's top card; nothing once the game is over."""
        hand = state.hands[torch.arange(len(seat), device=self.device), seat]  # [B, 4]
        mask = torch.zeros(len(seat), A.NUM_ACTIONS + 1, dtype=torch.bool, device=self.device)
        mask.scatter_(1, torch.where(hand >= 0, hand, A.NUM_ACTIONS), self.always.expand_as(hand))
        mask[:, A.PLAY_TOP] = hand[:, 0] < 0  # no hand: the draw pile's top card
        return mask[:, : A.NUM_ACTIONS] & (state.phase == PLAY)[:, None]

    # ----------------------------------------------------------------- step
    def apply_joint(
        self,
        state: BatchedState,
        actions: torch.Tensor,
        generator: torch.Generator,
        live: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Flip and Match Numbers in the Row: every choice (``actions [B, n]``) goes face up into
        the row, in seat order (a top card drawn for each seat playing from the pile); with a
        match among all row cards, Ichabod and then the Horseman move (:meth:`_resolve_turn`);
        otherwise everyone plays again. Only ``live`` games change. Returns ``[B, n]``."""
        if live is None:
            live = state.phase == PLAY
        from_pile = live[:, None] & (actions == A.PLAY_TOP)
        drawn = self._draw(state, from_pile.sum(dim=1), self.num_players, generator)
        nth = (from_pile.cumsum(dim=1) - 1).clamp(min=0)
        cards = torch.where(from_pile, drawn.gather(1, nth), actions)
        self._remove_from_hands(state, cards, live[:, None] & ~from_pile)
        self._append_to_row(state, cards, live[:, None] & (cards >= 0))
        matched = self.row_tops(state) >= 2
        has_match = matched.any(dim=1)
        lowest = matched.to(torch.int8).argmax(dim=1) + 1
        again = live & ~has_match
        state.rounds = state.rounds + again
        rewards = self._resolve_turn(state, lowest, live & has_match, generator)
        begin = again | (live & has_match & (state.phase == PLAY))
        self._begin_round(state, begin, generator)
        return rewards

    def _resolve_turn(
        self, state: BatchedState, steps: torch.Tensor, live: torch.Tensor, generator
    ) -> torch.Tensor:
        """Move Ichabod by the lowest match, resolve his space, move the Horseman, discard the
        row, then check the end of the game. (The caller begins the next play round.)"""
        before = state.ichabod
        self._move_ichabod(state, steps, live, generator)
        self._move_horseman(state, live & (state.phase == PLAY), generator)
        self._discard_row(state, live)
        reward = self.options.progress_reward * (state.ichabod - before) / self.board.bridge
        lost = live & (state.phase == OVER)
        won = live & ~lost & (state.ichabod == self.board.bridge)
        state.outcome = torch.where(won, 1, state.outcome)
        state.phase = torch.where(won, OVER, state.phase)
        going_on = live & ~lost & ~won
        state.turns = state.turns + going_on
        state.rounds = torch.where(going_on, 1, state.rounds)
        reward = torch.where(live, reward + won.float() - lost.float(), 0.0).float()
        return reward[:, None].expand(-1, self.num_players).contiguous()

    def _move_ichabod(
        self, state: BatchedState, steps: torch.Tensor, live: torch.Tensor, generator
    ) -> None:
        """Move Ichabod; stop and spin at the Spinning Tree (The Split Path); stop at the bridge
        (Ending the Game); then If Ichabod Lands on a Special Space, chained: each pass moves
        the games still moving and resolves the space they land on (a secret path's end and a
        tree's spin start another pass)."""
        board = self.board
        moving = live
        for _ in range(self.passes):
            target = state.ichabod + steps
            split = moving & (state.ichabod < board.split_tree) & (target >= board.split_tree)
            self._split(state, split, generator)
            moving = moving & ~split
            state.ichabod = torch.where(moving, target.clamp(max=board.bridge), state.ichabod)
            kind = self.space_kind[state.ichabod]
            secret = moving & (kind == SECRET)
            state.ichabod = torch.where(secret, self.secret_end[state.ichabod], state.ichabod)
            tree = moving & (kind == TREE)
            steps = torch.where(tree, self._spin(live.shape, generator, tree), 0)
            self._flip(state, moving & (kind == SCARE))
            moving = secret | tree

    def _split(self, state: BatchedState, live: torch.Tensor, generator) -> None:
        """The Split Path: spin at the tree, go to the end of that green path, stop there."""
        end = self.green_path_end[self._spin(live.shape, generator, live)]
        state.ichabod = torch.where(live, end, state.ichabod)

    def _move_horseman(self, state: BatchedState, live: torch.Tensor, generator) -> None:
        """Move the Headless Horseman by every row card's bottom number, plus the Speed tile per
        speed icon. Catching or passing Ichabod scares him instead: the Horseman stops right
        behind him, Ichabod moves on to the next blank space, a Scare token is flipped."""
        target = state.horseman + self.ride[state.row].sum(dim=1)
        scare = live & (target >= state.ichabod)
        state.horseman = torch.where(live, torch.minimum(target, state.ichabod - 1), state.horseman)
        self._to_next_blank(state, scare & (state.ichabod < self.board.bridge), generator)
        self._flip(state, scare)

    def _to_next_blank(self, state: BatchedState, live: torch.Tensor, generator) -> None:
        """Ichabod to the next blank space (the Spinning Tree and the bridge count as blank); on
        the Spinning Tree he spins and goes down a green path at once."""
        space = self.next_blank[state.ichabod]
        state.ichabod = torch.where(live, space, state.ichabod)
        self._split(state, live & (space == self.board.split_tree), generator)

    def _flip(self, state: BatchedState, live: torch.Tensor) -> None:
        """Flip a Scare token; all four pumpkins face up lose the game at once."""
        state.flipped = torch.where(live & (state.flipped < T), state.flipped + 1, state.flipped)
        lost = live & (self.pumpkins_up(state) == len(C.PUMPKINS))
        state.outcome = torch.where(lost, -1, state.outcome)
        state.phase = torch.where(lost, OVER, state.phase)

    def _spin(self, shape: torch.Size, generator, rows: torch.Tensor) -> torch.Tensor:
        """Spins of the Spinning Tree (1, 2 or 3, equally likely), one per entry of ``shape``
        (the games ``rows`` spin)."""
        return self.spinner[randint(generator, len(C.SPINNER), shape, self.device, rows)]

    def _draw(
        self, state: BatchedState, count: torch.Tensor, most: int, generator: torch.Generator
    ) -> torch.Tensor:
        """``[B, most]``: ``count[b]`` cards drawn one after another from the top of game b's
        draw pile, ``-1`` past them or when none is left. "If the draw pile runs out, flip the
        discard pile over to start a new draw pile": the draw reads on into the discard pile
        from its first card (the ring, module docstring), and what is left of the discard pile
        becomes the draw pile. With ``reshuffle`` the discard pile is shuffled first, in the
        games whose draw pile runs out."""
        draw, used = state.draw_pile_size, state.discard_size
        runs_out = count > draw
        if self.options.reshuffle:
            self._shuffle_discard(state, runs_out & (used > 0), generator)
        taken = torch.where(runs_out, count.minimum(draw + used), count)
        j = torch.arange(most, device=self.device)[None, :]
        slots = (state.head[:, None] + j) % N
        cards = torch.where(j < taken[:, None], state.piles.gather(1, slots), -1)
        state.head = (state.head + taken) % N
        state.draw_pile_size = torch.where(runs_out, draw + used, draw) - taken
        state.discard_size = torch.where(runs_out, 0, used)
        return cards

    def _shuffle_discard(self, state: BatchedState, live: torch.Tensor, generator) -> None:
        """Option ``reshuffle``: the discard pile in a random order (argsort of random keys)."""
        start = state.head + state.draw_pile_size
        keys = uniform(generator, state.piles.shape, self.device, live)
        keys = torch.where(self.card_ids < state.discard_size[:, None], keys, 2.0)
        order = keys.argsort(dim=1)  # the discard pile's positions, shuffled, then the rest
        source = torch.where(self.card_ids < state.discard_size[:, None], order, self.card_ids)
        ring = state.piles.gather(1, (start[:, None] + source) % N)
        slots = (start[:, None] + self.card_ids) % N
        shuffled = state.piles.scatter(1, slots, ring)
        state.piles = torch.where(live[:, None], shuffled, state.piles)

    def _begin_round(self, state: BatchedState, live: torch.Tensor, generator) -> None:
        """Each Player Plays a Card: first, every player with one card left shouts "Ichabod!",
        spins and draws that many cards, seat after seat (one draw of all their cards, dealt
        out in seat order)."""
        n = self.num_players
        one_card = (state.hands[:, :, 0] >= 0) & (state.hands[:, :, 1] < 0)
        shout = live[:, None] & ~self.handless[None, :] & one_card
        count = torch.where(shout, self._spin(shout.shape, generator, shout.any(1)), 0)
        most = max(C.SPINNER)
        drawn = self._draw(state, count.sum(dim=1), n * most, generator)
        first = count.cumsum(dim=1) - count
        k = torch.arange(most, device=self.device)
        mine = drawn.gather(1, (first[:, :, None] + k).clamp(max=n * most - 1).flatten(1))
        mine = torch.where(k < count[:, :, None], mine.view(-1, n, most), -1)
        extended = torch.cat([state.hands[:, :, :1], mine], dim=2)
        state.hands = torch.where(shout[:, :, None], extended, state.hands)
        state.actor = torch.where(live, 0, state.actor)

    def _remove_from_hands(
        self, state: BatchedState, cards: torch.Tensor, live: torch.Tensor
    ) -> None:
        """Take ``cards[b, seat]`` out of each ``live[b, seat]`` hand, closing the gap."""
        hit = live[:, :, None] & (state.hands == cards[:, :, None])
        gap = torch.where(hit.any(dim=2), hit.to(torch.int8).argmax(dim=2), HAND_SLOTS)
        source = self.hand_slots + (self.hand_slots >= gap[:, :, None])
        shifted = state.hands.gather(2, source.clamp(max=HAND_SLOTS - 1))
        state.hands = torch.where(source < HAND_SLOTS, shifted, -1)

    def _append_to_row(self, state: BatchedState, cards: torch.Tensor, live: torch.Tensor) -> None:
        """Put the ``live`` ``cards [B, n]`` face up at the end of the row, in seat order."""
        slot = state.row_size[:, None] + live.cumsum(dim=1) - 1
        slot = torch.where(live, slot, ROW_SLOTS)  # a spare column for the others
        wide = torch.cat([state.row, state.row[:, :1]], dim=1)
        state.row = wide.scatter(1, slot, cards)[:, :ROW_SLOTS]
        state.row_size = state.row_size + live.sum(dim=1)

    def _discard_row(self, state: BatchedState, live: torch.Tensor) -> None:
        """The row goes onto the discard pile, in row order (at the end of the ring)."""
        slots = torch.arange(ROW_SLOTS, device=self.device)[None, :]
        end = state.head + state.draw_pile_size + state.discard_size
        keep = live[:, None] & (slots < state.row_size[:, None])
        target = torch.where(keep, (end[:, None] + slots) % N, N)  # N: a spare column
        wide = torch.cat([state.piles, state.piles[:, :1]], dim=1)
        state.piles = wide.scatter(1, target, state.row)[:, :N]
        state.discard_size = state.discard_size + torch.where(live, state.row_size, 0)
        state.row = torch.where(live[:, None], -1, state.row)
        state.row_size = torch.where(live, 0, state.row_size)

    # ----------------------------------------------------------------- observation
    def row_tops(self, state: BatchedState) -> torch.Tensor:
        """``[B, 6]``: cards in the row per top number 1-6."""
        counts = torch.zeros(len(state.row), C.NUM_TOPS + 1, device=self.device)
        top = (state.row + 5) // 5  # card ids run five per top; no card (-1) gives 0
        return counts.scatter_add_(1, top, self.ones_row.expand_as(top))[:, 1:]

    def _ring_places(self, state: BatchedState) -> torch.Tensor:
        """``[B, 30]``: each ring slot's place counted from ``head`` (draw pile first)."""
        place = self.card_ids - state.head[:, None]
        return torch.where(place < 0, place + N, place)

    def _public(self, state: BatchedState, me: torch.Tensor) -> tuple[list, list]:
        """The public fields seen from seat ``me[b]`` (as the reference encoder's ``_public``;
        seats relative to ``me``) as ``(index [B, k], value [B, k])`` pairs: the entries set
        to 1 where the value is true, and the entries holding other numbers. (The public
        fields lie at the same offsets in the observation and ``state()``.)"""
        o, rows = self.observation_layout.offsets, len(me)
        seat_at = (me[:, None] + self.seat_ids) % self.num_players  # relative -> absolute
        place = self._ring_places(state)
        draw = state.draw_pile_size[:, None]
        in_discard = (place >= draw) & (place < draw + state.discard_size[:, None])
        in_row = state.row >= 0
        always = self.always.expand(rows, 1)
        ones = [
            (o["ichabod"] + state.ichabod[:, None], always),
            (o["horseman"] - C.LOWEST_HORSEMAN_START + state.horseman[:, None], always),
            (o["tokens_up"] + state.tokens, self.token_ids < state.flipped[:, None]),
            (o["row"] + state.row, in_row),
            (o["discard_pile"] + state.piles, in_discard),
            (self.relative_index[:, 0].expand(rows, -1), self.handless[seat_at]),
            (
                self.relative_index[:, 1].expand(rows, -1),
                has_chosen(state.pending).gather(1, seat_at),
            ),
        ]
        scalars = [
            (state.phase == OVER).float(),
            self.speed_field.expand(rows),
            state.draw_pile_size / N,
            state.rounds.clamp(max=8) / 8,
        ]
        values = [
            (self.scalar_index.expand(rows, -1), torch.stack(scalars, dim=1)),
            (self.row_tops_index[state.row + 1], as_float(in_row) / 4),
            (
                self.relative_index[:, 2].expand(rows, -1),
                (state.hands >= 0).sum(dim=2).gather(1, seat_at) / N,
            ),
        ]
        return ones, values

    def _assemble(self, size: int, ones: list, values: list) -> torch.Tensor:
        """``[B, size]`` float32: the ``ones`` entries set where true, ``values`` added."""
        index = torch.cat([i for i, _ in ones + values], dim=1)
        truth = as_float(torch.cat([v for _, v in ones], dim=1))
        value = torch.cat([truth] + [v for _, v in values], dim=1)
        out = torch.zeros(len(index), size, device=self.device)
        return out.scatter_add_(1, index.clamp(min=0), value)

    def observe(self, state: BatchedState, seat: torch.Tensor) -> torch.Tensor:
        """``[B, 313]`` float32: what ``seat[b]`` may know, as the reference ``observe``."""
        layout = self.observation_layout
        o, rows = layout.offsets, torch.arange(len(seat), device=self.device)
        ones, values = self._public(state, seat)
        hand, choice = state.hands[rows, seat], own_choice(state.pending, seat)[:, None]
        ones.append((o["hand"] + hand, hand >= 0))
        ones.append((o["own_choice"] + choice, choice >= 0))
        return self._assemble(layout.size, ones, values)

    def encode_state(self, state: BatchedState) -> torch.Tensor:
        """``[B, 590]`` float32: everything, seats absolute, as the reference ``state()``."""
        layout = self.state_layout
        o, seats = layout.offsets, self.seat_ids[None, :, None]
        ones, values = self._public(state, torch.zeros_like(state.actor))
        in_draw = self._ring_places(state) < state.draw_pile_size[:, None]
        hands = o["hands"] + seats * N + state.hands
        choices = o["choices"] + seats[:, :, 0] * (N + 1) + state.pending
        order = o["token_order"] + self.token_ids * T + state.tokens
        ones.append((hands.flatten(1), (state.hands >= 0).flatten(1)))
        ones.append((choices, state.pending >= 0))
        ones.append((o["draw_pile_cards"] + state.piles, in_draw))
        ones.append((order, self.always.expand_as(order)))
        return self._assemble(layout.size, ones, values)


# --------------------------------------------------------------------- helpers
def landing_passes(board: C.Board) -> int:
    """The most passes of :meth:`BatchedHeadlessHorseman._move_ichabod` a move can need: one per
    space Ichabod lands on in a chain (a secret path's end, a tree's spin), on ``board``."""
    passes: dict[int, int] = {}
    secret = dict(board.secret_paths)
    for space in range(board.bridge, board.farm - 1, -1):
        more = 0
        if space in secret:
            more = passes[min(secret[space], board.bridge)]
        elif space in board.tree_spaces:
            more = max(
                1
                if space < board.split_tree <= space + spin
                else passes[min(space + spin, board.bridge)]
                for spin in C.SPINNER
            )
        passes[space] = 1 + more
    return max(passes.values())


# --------------------------------------------------------------------- conversion
def _padded(cards: list[int], size: int, what: str) -> list[int]:
    if len(cards) > size:
        raise ValueError(f"{what} holds {len(cards)} cards; the batched engine keeps {size}")
    return list(cards) + [-1] * (size - len(cards))


def from_reference(states: list[State], device: Any = "cpu") -> BatchedState:
    """The reference ``states`` as the rows of one :class:`BatchedState` on ``device``."""
    n = len(states[0].hands)

    def rows(values: list) -> torch.Tensor:
        return torch.tensor(values, dtype=torch.int64, device=device)

    return BatchedState(
        hands=rows([[_padded(h, HAND_SLOTS, "a hand") for h in s.hands] for s in states]),
        piles=rows([_padded(s.draw_pile[::-1] + s.discard, N, "the piles") for s in states]),
        head=rows([0] * len(states)),
        draw_pile_size=rows([len(s.draw_pile) for s in states]),
        discard_size=rows([len(s.discard) for s in states]),
        tokens=rows([s.tokens for s in states]),
        ichabod=rows([s.ichabod for s in states]),
        horseman=rows([s.horseman for s in states]),
        row=rows([_padded(s.row, ROW_SLOTS, "the row") for s in states]),
        row_size=rows([len(s.row) for s in states]),
        flipped=rows([s.flipped for s in states]),
        pending=rows([[s.pending.get(seat, -1) for seat in range(n)] for s in states]),
        actor=rows([s.actor for s in states]),
        phase=rows([int(s.phase) for s in states]),
        outcome=rows([s.outcome for s in states]),
        turns=rows([s.turns for s in states]),
        rounds=rows([s.rounds for s in states]),
    )


def to_reference(state: BatchedState, row: int, rng: np.random.Generator) -> State:
    """Game ``row`` of ``state`` as a reference ``State`` drawing its chance from ``rng`` (its
    log starts empty)."""
    draw, used, head = (int(t[row]) for t in (state.draw_pile_size, state.discard_size, state.head))
    ring = state.piles[row].tolist()
    piles = [ring[(head + j) % N] for j in range(draw + used)]
    pending = state.pending[row].tolist()
    return State(
        hands=[[c for c in hand if c >= 0] for hand in state.hands[row].tolist()],
        draw_pile=piles[:draw][::-1],
        tokens=state.tokens[row].tolist(),
        rng=rng,
        ichabod=int(state.ichabod[row]),
        horseman=int(state.horseman[row]),
        discard=piles[draw:],
        row=state.row[row, : int(state.row_size[row])].tolist(),
        flipped=int(state.flipped[row]),
        pending={seat: a for seat, a in enumerate(pending) if a >= 0},
        actor=int(state.actor[row]),
        phase=Phase(int(state.phase[row])),
        outcome=int(state.outcome[row]),
        turns=int(state.turns[row]),
        rounds=int(state.rounds[row]),
    )


# --------------------------------------------------------------------- batched_game
def batched_game(reference: Any, device: Any) -> BatchedHeadlessHorseman:
    """The batched engine of a reference ``raw_env`` (its rules, options and encoder)."""
    return BatchedHeadlessHorseman(reference.rules, reference.encoder, device)
