"""Hexenflug's rules once more, over B games held as tensors (read beside ``rules.py``).

The state is :class:`BatchedState`, one row per game, its fields named as in ``rules.State``;
functions carry the names of ``rules.py``'s methods. Branches of the rules become masks: every
rule is computed for the whole batch and applied where its rows say so (``torch.where``). Piles,
hands and rows are fixed-size tensors over the 75 card ids:

- ``draw_pile[B, 75]`` holds card ids bottom to top, ``pile_size[B]`` how many are real (the top
  is ``draw_pile[b, pile_size[b] - 1]``, the end of the reference list);
- hands, layouts, the display, the discard pile, this turn's added cards and the examination's
  cards are multi-hot ``bool`` tensors. A layout row is ascending by rule, so a multi-hot is
  lossless; the others carry no order in the rules (membership only; the discard pile is
  shuffled before it is drawn again), and :func:`to_reference` lists them by card id;
- ``cat_queue[B]`` is the length of the reference's queue: the queue is always the last
  ``cat_queue`` seats of the turn player's clockwise round.

All chance (deals and reshuffles) comes from the ``torch.Generator`` passed in; shuffles are
argsorts of uniform keys.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import torch

from cauldron.envs.core.batched import chance_rows, shuffled_decks, uniform
from cauldron.envs.core.layout import Layout
from cauldron.envs.hexenflug import actions as A
from cauldron.envs.hexenflug import components as C
from cauldron.envs.hexenflug.encoding import OBSERVATION_FIELDS, STATE_FIELDS, max_score
from cauldron.envs.hexenflug.facts import FACTS
from cauldron.envs.hexenflug.phases import Phase
from cauldron.envs.hexenflug.rules import HexenflugRules, State

N = C.NUM_CARDS  # 75 card ids
K = C.NUM_COLOURS  # 5 colours
V = C.MAX_VALUE  # values 1..15
P = C.MAX_PLAYERS  # encodings are padded to 5 seats
FLY, DRAWN, CAT_DISCARD, EXAMINE, EXAM_BUILD, OVER = (int(p) for p in Phase)
I32 = torch.int32  # counts and values (int64 reductions are several times slower on CPU)


# --------------------------------------------------------------------- state
@dataclass
class BatchedState:
    """B games of Hexenflug (first dimension B everywhere; ``n`` seats, absolute)."""

    draw_pile: torch.Tensor  # [B, 75] int64 card ids, bottom first
    pile_size: torch.Tensor  # [B] int64 cards really in the draw pile
    hands: torch.Tensor  # [B, n, 75] bool
    layouts: torch.Tensor  # [B, n, 75] bool (a row per colour: ascending by rule)
    books: torch.Tensor  # [B, n, 5] int32 Spellbooks owned
    supply: torch.Tensor  # [B, 5] int32 Spellbooks left per colour
    removed_books: torch.Tensor  # [B] int64
    display: torch.Tensor  # [B, 75] bool
    discard: torch.Tensor  # [B, 75] bool
    turn: torch.Tensor  # [B] int64
    actor: torch.Tensor  # [B] int64
    phase: torch.Tensor  # [B] int64 (Phase values)
    drawn: torch.Tensor  # [B] int64, -1 for none
    displayed: torch.Tensor  # [B] bool
    drew: torch.Tensor  # [B] bool
    added: torch.Tensor  # [B, 75] bool
    cat_queue: torch.Tensor  # [B] int64 seats still to discard for a black cat
    exam_colour: torch.Tensor  # [B] int64, -1 for none
    exam_cards: torch.Tensor  # [B, 75] bool
    turns: torch.Tensor  # [B] int64
    crashes: torch.Tensor  # [B] int64


# --------------------------------------------------------------------- engine
class BatchedHexenflug:
    """The :class:`~cauldron.envs.core.batched.BatchedGame` of Hexenflug for one player count and
    set of options (those of the reference ``rules``)."""

    num_actions = A.NUM_ACTIONS
    cooperative = FACTS.cooperative

    def __init__(self, rules: HexenflugRules, device: torch.device) -> None:
        self.num_players = n = rules.num_players
        self.device = device
        self.books_per_colour = rules.books_per_colour
        self.beginner = bool(rules.options.beginner_crash_rule)
        self.score_margin = rules.options.reward == "score_margin"
        self.exhausted_to_end = C.exhausted_colours_to_end(n)
        self.observation_size = Layout(OBSERVATION_FIELDS).size
        self.layout = Layout(STATE_FIELDS)  # the observation is its first part
        self.state_size = self.layout.size
        cards = torch.arange(N, device=device)
        self.colour = cards // V  # [75]
        self.value = (cards % V + 1).to(I32)  # [75]
        self.values = torch.arange(1, V + 1, dtype=I32, device=device)  # [15]
        self.seats = torch.arange(n, device=device)
        self.colours = torch.arange(K, device=device)
        self.max_score = float(max_score(self.books_per_colour))
        self.four_ones = torch.ones(1, 4, dtype=torch.uint8, device=device)

    # ----------------------------------------------------------------- reset
    def new_games(
        self, rows: int, generator: torch.Generator, start_seat: torch.Tensor
    ) -> BatchedState:
        """Setup: Spellbooks by player count, the 75 Witch cards shuffled into the draw pile."""
        n, dev = self.num_players, self.device

        def zeros(*shape: int, dtype: torch.dtype = torch.int64) -> torch.Tensor:
            return torch.zeros(rows, *shape, dtype=dtype, device=dev)

        start = start_seat.to(dev, torch.int64)
        return BatchedState(
            draw_pile=shuffled_decks(rows, N, generator, dev),
            pile_size=torch.full((rows,), N, dtype=torch.int64, device=dev),
            hands=zeros(n, N, dtype=torch.bool),
            layouts=zeros(n, N, dtype=torch.bool),
            books=zeros(n, K, dtype=I32),
            supply=torch.full((rows, K), self.books_per_colour, dtype=I32, device=dev),
            removed_books=torch.full(
                (rows,), C.TOTAL_BOOKS - K * self.books_per_colour, dtype=torch.int64, device=dev
            ),
            display=zeros(N, dtype=torch.bool),
            discard=zeros(N, dtype=torch.bool),
            turn=start.clone(),
            actor=start.clone(),
            phase=zeros(),
            drawn=torch.full((rows,), -1, dtype=torch.int64, device=dev),
            displayed=zeros(dtype=torch.bool),
            drew=zeros(dtype=torch.bool),
            added=zeros(N, dtype=torch.bool),
            cat_queue=zeros(),
            exam_colour=torch.full((rows,), -1, dtype=torch.int64, device=dev),
            exam_cards=zeros(N, dtype=torch.bool),
            turns=torch.ones(rows, dtype=torch.int64, device=dev),
            crashes=zeros(),
        )

    # ----------------------------------------------------------------- legal moves
    def acting_seat(self, state: BatchedState) -> torch.Tensor:
        return state.actor

    def is_over(self, state: BatchedState) -> torch.Tensor:
        return state.phase == OVER

    def is_truncated(self, state: BatchedState) -> torch.Tensor:
        """A game always ends by its rules (``max_steps`` is the environment's)."""
        return torch.zeros_like(state.displayed)

    def mid_step(self, state: BatchedState) -> torch.Tensor:
        return torch.zeros_like(state.displayed)

    def scores(self, state: BatchedState) -> torch.Tensor:
        """Scoring: ``[B, n]`` one point per Spellbook, one more per complete set of five."""
        return state.books.sum(-1, dtype=I32) + state.books.amin(-1)

    def winners(self, state: BatchedState) -> torch.Tensor:
        """``[B, n]`` bool: highest score, ties to the most cards in hand; a tie left is shared."""
        key = self.scores(state) * (N + 1) + state.hands.sum(-1, dtype=I32)
        return key == key.amax(-1, keepdim=True)

    def figures(self, state: BatchedState) -> dict[str, torch.Tensor]:
        """``scores`` ``[B, n]`` (every seat's, as ``info["scores"]``), ``turns`` ``[B]`` and
        ``winners`` ``[B, n]`` bool (as ``info["winners"]``; none in a game not over)."""
        return {
            "scores": self.scores(state),
            "turns": state.turns.clone(),
            "winners": self.winners(state) & self.is_over(state)[:, None],
        }

    def _turn_rows(self, table: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        """``table[b, seat[b]]`` for a per-seat table ``[B, n, ...]``."""
        return table[torch.arange(len(seat), device=self.device), seat]

    def _tops(self, layout: torch.Tensor) -> torch.Tensor:
        """``[B, 5]``: the highest value in each layout row (0 for an empty row)."""
        rows = layout.view(-1, K, V) * self.values
        return rows.amax(-1)

    def can_place(self, layout: torch.Tensor) -> torch.Tensor:
        """Your Layout: ``[B, 75]`` whether each card may go on its colour's row (strictly
        ascending; any card on an empty row)."""
        tops = self._tops(layout)
        return (self.values > tops[:, :, None]).view(-1, N)

    def landing_colours(self, state: BatchedState, layout: torch.Tensor) -> torch.Tensor:
        """Landing: ``[B, 5]``, only after a draw this turn; soft, any layout colour; hard (after
        displaying), a colour with fewest cards."""
        sizes = layout.view(-1, K, V).sum(-1, dtype=I32)
        nonempty = sizes > 0
        fewest = torch.where(nonempty, sizes, N).amin(-1, keepdim=True)
        smallest = sizes == fewest
        return state.drew[:, None] & nonempty & (~state.displayed[:, None] | smallest)

    def legal_mask(self, state: BatchedState) -> torch.Tensor:
        """``[B, 167]`` bool: legal actions of each game's acting seat. The examination's and
        the black cat's choices are computed for the rows in those phases only."""
        phase = state.phase
        fly, drawn_phase = phase == FLY, phase == DRAWN
        mask = torch.zeros(len(phase), A.NUM_ACTIONS, dtype=torch.bool, device=self.device)
        layout = self._turn_rows(state.layouts, state.turn)
        placeable = self.can_place(layout)
        mask[:, A.TAKE : A.TAKE + N] = fly[:, None] & state.display & ~state.added & placeable
        mask[:, A.DRAW] = fly
        drawn = state.drawn.clamp(min=0)
        place = placeable.gather(1, drawn[:, None]).squeeze(1)
        crash = drawn_phase & state.displayed & ~place
        mask[:, A.PLACE] = drawn_phase & place
        mask[:, A.DISPLAY] = drawn_phase & ~state.displayed
        mask[:, A.CRASH] = crash
        if self.beginner:  # an option, the same for every row
            owned = self._turn_rows(state.books, state.turn)
            no_book = owned.gather(1, self.colour[drawn][:, None]).squeeze(1) == 0
            mask[:, A.CRASH_KEEP] = crash & no_book
        mask[:, A.LAND : A.LAND + K] = fly[:, None] & self.landing_colours(state, layout)
        rows = (phase == EXAMINE).nonzero().squeeze(1)
        hand, owned = state.hands[rows, state.turn[rows]], state.books[rows, state.turn[rows]]
        mask[rows, A.EXAMINE : A.EXAMINE + K] = _examinable(hand, owned)
        mask[rows, A.SKIP] = True
        rows = (phase == CAT_DISCARD).nonzero().squeeze(1)
        mask[rows, A.CHOOSE : A.CHOOSE + N] = state.hands[rows, state.actor[rows]]
        rows = (phase == EXAM_BUILD).nonzero().squeeze(1)
        hand, owned = state.hands[rows, state.turn[rows]], state.books[rows, state.turn[rows]]
        choose, finish = _exam_choices(
            hand, owned, state.exam_colour[rows], state.exam_cards[rows], self
        )
        mask[rows, A.CHOOSE : A.CHOOSE + N] = choose
        mask[rows, A.FINISH] = finish
        return mask

    # ----------------------------------------------------------------- step
    def apply(
        self, state: BatchedState, actions: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        """Apply one legal action per game in place; return ``[B, n]`` float32 rewards."""
        a, phase = actions, state.phase
        fly, drawn_phase = phase == FLY, phase == DRAWN
        card = (a - A.CHOOSE).clamp(0, N - 1)
        take = fly & (a < A.DRAW)
        draw = fly & (a == A.DRAW)
        land = fly & (a >= A.LAND)
        place = drawn_phase & (a == A.PLACE)
        display = drawn_phase & (a == A.DISPLAY)
        crash = drawn_phase & (a >= A.CRASH)
        cat = phase == CAT_DISCARD
        skip = (phase == EXAMINE) & (a == A.SKIP)
        start_exam = (phase == EXAMINE) & (a < A.SKIP)
        finish = (phase == EXAM_BUILD) & (a == A.FINISH)
        choose = (phase == EXAM_BUILD) & (a < A.FINISH)
        self._take(state, take, a.clamp(0, N - 1))
        self._land(state, land, (a - A.LAND).clamp(0, K - 1))
        self._resolve_drawn(state, place, display, crash, a == A.CRASH_KEEP)
        self._cat_discard(state, cat, card)
        state.exam_colour = torch.where(start_exam, a - A.EXAMINE, state.exam_colour)
        state.phase = torch.where(start_exam, EXAM_BUILD, state.phase)
        b = _indices(choose)
        state.exam_cards[b, card[b]] = True
        self._end_turn(state, skip)
        self._examine(state, finish)
        self._draw(state, draw, generator)
        return self._rewards(state)

    def _take(self, state: BatchedState, rows: torch.Tensor, card: torch.Tensor) -> None:
        """Flying: take a display card (not one you added this turn) into your layout."""
        b = _indices(rows)
        state.display[b, card[b]] = False
        state.layouts[b, state.turn[b], card[b]] = True

    def _draw(self, state: BatchedState, rows: torch.Tensor, generator: torch.Generator) -> None:
        """Flying: draw one card. A black cat makes every player with six or more cards discard
        down to five (from the current player clockwise) before it is resolved."""
        top = (state.pile_size - 1).clamp(min=0)
        card = state.draw_pile.gather(1, top[:, None]).squeeze(1)
        state.pile_size = state.pile_size - rows.long()
        state.drawn = torch.where(rows, card, state.drawn)
        state.phase = torch.where(rows, DRAWN, state.phase)
        state.drew = state.drew | rows
        self._replenish(state, rows & (state.pile_size == 0), generator)
        cat = rows & (self.value[card] == C.BLACK_CAT_VALUE) & (state.phase != OVER)
        state.cat_queue = torch.where(cat, self.num_players, state.cat_queue)
        self._next_cat_discard(state, cat)

    def _replenish(
        self, state: BatchedState, rows: torch.Tensor, generator: torch.Generator
    ) -> None:
        """Draw Pile Depletion: shuffle the discards into a new draw pile; with none, the game
        ends at once."""
        empty = rows & ~state.discard.any(1)
        state.phase = torch.where(empty, OVER, state.phase)
        b = _indices(rows & ~empty)
        discard = state.discard[b]
        keys = uniform(chance_rows(generator, b), discard.shape, self.device)
        state.draw_pile[b] = torch.where(discard, keys, 2.0).argsort(dim=1)
        state.pile_size[b] = discard.sum(1)
        state.discard[b] = False

    def _next_cat_discard(self, state: BatchedState, rows: torch.Tensor) -> None:
        """The next seat of the black-cat queue holding six or more cards discards; with none
        left, the drawn cat is resolved by the turn player."""
        n, b = self.num_players, _indices(rows)
        turn = state.turn[b]
        order = (turn[:, None] + self.seats) % n  # the round from the turn player
        sizes = state.hands[b].sum(-1, dtype=I32).gather(1, order)
        queued = self.seats >= n - state.cat_queue[b][:, None]
        waiting = queued & (sizes > C.HAND_LIMIT_ON_CAT)
        found = waiting.any(1)
        first = (waiting.cumsum(1, dtype=I32) == 0).sum(1, dtype=I32).long().clamp(max=n - 1)
        seat = order.gather(1, first[:, None]).squeeze(1)
        state.cat_queue = state.cat_queue.index_put((b,), torch.where(found, n - first, 0))
        state.actor = state.actor.index_put((b,), torch.where(found, seat, turn))
        state.phase = state.phase.index_put((b,), torch.where(found, CAT_DISCARD, DRAWN))

    def _cat_discard(self, state: BatchedState, rows: torch.Tensor, card: torch.Tensor) -> None:
        """Black Cat Cards: the acting seat discards one chosen card."""
        b = _indices(rows)
        state.hands[b, state.actor[b], card[b]] = False
        state.discard[b, card[b]] = True
        self._next_cat_discard(state, rows)

    def _resolve_drawn(
        self,
        state: BatchedState,
        place: torch.Tensor,
        display: torch.Tensor,
        crash: torch.Tensor,
        keep: torch.Tensor,
    ) -> None:
        """After Drawing a Card: place it, add it to the display (once a turn), or crash."""
        b = _indices(place)
        state.layouts[b, state.turn[b], state.drawn[b]] = True
        b = _indices(display)
        state.display[b, state.drawn[b]] = True
        state.added[b, state.drawn[b]] = True
        state.displayed = state.displayed | display
        state.phase = torch.where(place | display, FLY, state.phase)
        self._crash(state, crash, keep & crash)
        state.drawn = torch.where(place | display | crash, -1, state.drawn)

    def _crash(self, state: BatchedState, rows: torch.Tensor, keep: torch.Tensor) -> None:
        """Crash: the drawn card (unless kept by the beginner rule) and the layout row of its
        colour are discarded; the turn ends."""
        b = _indices(rows)
        turn, card = state.turn[b], state.drawn[b]
        lost = state.layouts[b, turn] & (self.colour == self.colour[card][:, None])
        state.discard[b] |= lost
        state.layouts[b, turn] &= ~lost
        kept = keep[b]
        state.hands[b, turn, card] |= kept
        state.discard[b, card] |= ~kept
        state.crashes = state.crashes + rows.long()
        self._end_turn(state, rows)

    def _land(self, state: BatchedState, rows: torch.Tensor, colour: torch.Tensor) -> None:
        """Landing: the chosen layout row goes to the hand; then the Examination."""
        b = _indices(rows)
        turn = state.turn[b]
        moved = state.layouts[b, turn] & (self.colour == colour[b][:, None])
        state.hands[b, turn] |= moved
        state.layouts[b, turn] &= ~moved
        state.phase = torch.where(rows, EXAMINE, state.phase)

    def _examine(self, state: BatchedState, rows: torch.Tensor) -> None:
        """Examination: discard 3/4/5 chosen cards, take 1/2/3 Spellbooks of the colour (as many
        as are left). The game ends when enough colours are exhausted."""
        b = _indices(rows)
        turn, colour, cards = state.turn[b], state.exam_colour[b], state.exam_cards[b]
        state.hands[b, turn] &= ~cards
        state.discard[b] |= cards
        earned = torch.minimum(cards.sum(1, dtype=I32) - 2, state.supply[b, colour])
        state.supply[b, colour] -= earned
        state.books[b, turn, colour] += earned
        state.exam_colour = torch.where(rows, -1, state.exam_colour)
        state.exam_cards[b] = False
        over = rows & ((state.supply == 0).sum(1, dtype=I32) >= self.exhausted_to_end)
        state.phase = torch.where(over, OVER, state.phase)
        self._end_turn(state, rows & ~over)

    def _end_turn(self, state: BatchedState, rows: torch.Tensor) -> None:
        following = (state.turn + 1) % self.num_players
        state.turn = torch.where(rows, following, state.turn)
        state.actor = torch.where(rows, following, state.actor)
        state.displayed = state.displayed & ~rows
        state.drew = state.drew & ~rows
        state.added[_indices(rows)] = False
        state.phase = torch.where(rows, FLY, state.phase)
        state.turns = state.turns + rows.long()

    def _rewards(self, state: BatchedState) -> torch.Tensor:
        """``[B, n]``: 0 until the game is over; then ±1 by winners (or the score margin)."""
        over = (state.phase == OVER)[:, None]
        if self.score_margin:
            scores = self.scores(state)
            others = scores[:, None, :].expand(-1, self.num_players, -1)
            others = others.masked_fill(
                torch.eye(self.num_players, dtype=torch.bool, device=self.device), -1
            )
            final = (scores - others.amax(-1)).float()
        else:
            final = torch.where(self.winners(state), 1.0, -1.0)
        return torch.where(over, final, 0.0)

    # ----------------------------------------------------------------- observation
    def _relative(self, table: torch.Tensor, me: torch.Tensor) -> torch.Tensor:
        """``[B, n, ...]`` per-seat ``table`` seen from ``me`` (0 = me, 1 = next seat clockwise)."""
        order = (me[:, None] + self.seats) % self.num_players
        return table[torch.arange(len(me), device=self.device)[:, None], order]

    def _encode(self, state: BatchedState, me: torch.Tensor, size: int) -> torch.Tensor:
        """``[B, size]`` float32: the public fields seen from ``me`` at the named slices of
        ``encoding.py``'s layout (the draw pile's cards too when ``size`` is the state's).
        Per-seat tables fill the first n of their 5 seats. The 0/1 fields are written into one
        ``uint8`` buffer and converted once (bool-to-float copies cost ten times more); the
        counts are then divided in float32, as the reference divides them."""
        n, offset, rows = self.num_players, self.layout.offsets, len(me)
        flags = torch.zeros(rows, size, dtype=torch.uint8, device=self.device)

        def field(table: torch.Tensor, name: str, per_seat: int = 0) -> torch.Tensor:
            view = table[:, self.layout[name]]
            return view.unflatten(1, (P, per_seat))[:, :n] if per_seat else view

        ones = torch.stack(
            [
                offset["phase"] + state.phase,
                torch.full_like(me, offset["num_players"] + n - 2),
                offset["turn_player"] + (state.turn - me) % n,
                offset["actor"] + (state.actor - me) % n,
                offset["drawn_card"] + state.drawn.clamp(min=0),
                offset["exam_colour"] + state.exam_colour.clamp(min=0),
            ],
            1,
        )
        present = torch.stack([state.drawn >= 0, state.exam_colour >= 0], 1).view(torch.uint8)
        flags.scatter_add_(1, ones, torch.cat([self.four_ones.expand(rows, -1), present], 1))
        field(flags, "hands", N).copy_(self._relative(state.hands, me).view(torch.uint8))
        field(flags, "layouts", N).copy_(self._relative(state.layouts, me).view(torch.uint8))
        for name, cards in (
            ("display", state.display),
            ("discard_pile", state.discard),
            ("added_to_display", state.added),
            ("exam_cards", state.exam_cards),
        ):
            field(flags, name).copy_(cards.view(torch.uint8))
        field(flags, "displayed")[:, 0] = state.displayed.view(torch.uint8)
        field(flags, "drew")[:, 0] = state.drew.view(torch.uint8)
        if size == self.state_size:
            real = torch.arange(N, device=self.device) < state.pile_size[:, None]
            field(flags, "draw_pile_cards").scatter_add_(1, state.draw_pile, real.view(torch.uint8))
        out = flags.float()
        field(out, "hand_sizes")[:, :n] = self._relative(state.hands.sum(-1, dtype=I32), me) / N
        field(out, "books", K).copy_(self._relative(state.books, me) / 9)
        field(out, "supply").copy_(state.supply / 9)
        field(out, "draw_pile_size")[:, 0] = state.pile_size / N
        field(out, "scores")[:, :n] = self._relative(self.scores(state), me) / self.max_score
        return out

    def observe(self, state: BatchedState, seat: torch.Tensor) -> torch.Tensor:
        """``[B, 1193]`` float32: the observation of ``seat[b]`` in game ``b``."""
        return self._encode(state, seat, self.observation_size)

    def encode_state(self, state: BatchedState) -> torch.Tensor:
        """``[B, 1268]`` float32: the public fields from seat 0 plus the draw pile's cards."""
        return self._encode(state, torch.zeros_like(state.turn), self.state_size)


# --------------------------------------------------------------------- helpers
def _indices(rows: torch.Tensor) -> torch.Tensor:
    """The indices of the ``True`` rows (the rules of a rare branch touch only those)."""
    return rows.nonzero().squeeze(1)


def _counts(cards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For multi-hot ``cards`` ``[B, 75]``: per colour and split value m = 1..15, ``[B, 5, 15]``
    how many cards are at most m, and whether any card is above m."""
    upto = cards.view(-1, K, V).cumsum(-1, dtype=I32)
    above = upto[:, :, -1:] > upto
    return upto, above


def _examinable(hand: torch.Tensor, owned: torch.Tensor) -> torch.Tensor:
    """Examination: ``[B, 5]`` whether a valid examination of each colour can be built from
    ``hand`` (``rules._completable`` with nothing chosen, vectorised over the split value m: at
    least one card of the colour at most m, plus one joker per other owned colour above m,
    reach 3)."""
    upto, above = _counts(hand)
    free_colour = (owned > 0)[:, :, None] & above  # [B, 5 (k), 15 (m)]
    # [B, 5 (colour), 15 (m)]: the owned colours other than this one with a card above m
    free_others = free_colour.sum(1, keepdim=True, dtype=I32) - free_colour.to(I32)
    ok = (upto >= 1) & (upto + free_others >= 3)
    return ok.any(-1)


def _exam_choices(
    hand: torch.Tensor,
    owned: torch.Tensor,
    exam_colour: torch.Tensor,
    exam_cards: torch.Tensor,
    game: BatchedHexenflug,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Using Jokers, during an examination of ``exam_colour`` with ``exam_cards`` chosen:
    ``[B, 75]`` which hand cards may be chosen next (``rules._completable`` of the chosen cards
    plus that card, vectorised over the 15 split values m) and ``[B]`` whether the chosen cards
    already make a valid examination (``rules._valid_examination``).

    With S chosen (``own`` examined-colour cards, the highest ``low``; ``jokers``, the lowest
    ``high``), E(m) = own + examined-colour cards left in hand at most m, free(m) = other owned
    colours, neither examined nor joker yet, with a card left above m. An examined-colour card of
    value v fits when some m >= max(low, v), m < high has E(m) + jokers + free(m) >= 3; a joker of
    colour k and value v when k is owned and unused and some m in [max(low, 1), min(high, v)) has
    E(m) >= 1 and E(m) + jokers + 1 + free(m) - [k has a card above m] >= 3."""
    values = game.values
    colour = exam_colour.clamp(min=0)
    examined = game.colours == colour[:, None]  # [B, 5]
    chosen = exam_cards.view(-1, K, V)
    per_colour = chosen.sum(-1, dtype=I32)  # [B, 5]
    size = per_colour.sum(-1, dtype=I32)
    own = (per_colour * examined).sum(-1, dtype=I32)
    jokers = size - own
    low = ((chosen & examined[:, :, None]) * values).view(-1, N).amax(1)
    high = torch.where(chosen & ~examined[:, :, None], values, V + 1).view(-1, N).amin(1)
    used = (per_colour > 0) & ~examined
    usable = (owned > 0) & ~examined & ~used  # [B, 5]
    rest = hand & ~exam_cards
    upto, above = _counts(rest)
    free_colour = usable[:, :, None] & above  # [B, 5, 15]
    free = free_colour.sum(1, dtype=I32)  # [B, 15]
    e = own[:, None] + (upto * examined[:, :, None]).sum(1, dtype=I32)  # [B, 15]
    below_high = values < high[:, None]
    room = (size < 5)[:, None]
    # examined-colour cards: any good m at or above max(low, v)
    good = below_high & (e + jokers[:, None] + free >= 3)
    good_from = good.flip(-1).cumsum(-1, dtype=I32).flip(-1) > 0  # [B, 15]: a good m >= index + 1
    start = (torch.maximum(low[:, None], values) - 1).long()
    own_ok = good_from.gather(1, start)  # [B, 15]
    # jokers: any good m below v
    fits = (
        (values >= low.clamp(min=1)[:, None])[:, None, :]
        & below_high[:, None, :]
        & (e >= 1)[:, None, :]
        & ((e + jokers[:, None] + 1 + free)[:, None, :] - free_colour.to(I32) >= 3)
    )  # [B, 5, 15]
    fits_below = fits.cumsum(-1, dtype=I32) > 0  # a good m <= index + 1
    joker_ok = torch.cat([torch.zeros_like(fits_below[:, :, :1]), fits_below[:, :, :-1]], -1)
    joker_ok &= usable[:, :, None]
    ok = torch.where(examined[:, :, None], own_ok[:, None, :], joker_ok)
    choose = (ok & room[:, :, None]).view(-1, N) & rest
    valid = (
        (size >= 3)
        & (size <= 5)
        & (own >= 1)
        & ~((per_colour > 1) & ~examined).any(-1)
        & ~(used & (owned == 0)).any(-1)
        & (low < high)
    )
    return choose, valid


# --------------------------------------------------------------------- conversion
def from_reference(states: list[State], device: torch.device | str) -> BatchedState:
    """Rows of reference states of one player count, on ``device`` (the inverse of
    :func:`to_reference`)."""
    n, dev = len(states[0].hands), torch.device(device)

    def multihot(lists: list[list[int]]) -> torch.Tensor:
        out = np.zeros((len(lists), N), bool)
        for row, cards in enumerate(lists):
            out[row, cards] = True
        return torch.from_numpy(out).to(dev)

    def seats(get) -> torch.Tensor:
        return torch.stack([multihot([get(s, seat) for s in states]) for seat in range(n)], 1)

    def ints(get) -> torch.Tensor:
        return torch.tensor([get(s) for s in states], dtype=torch.int64, device=dev)

    piles = np.zeros((len(states), N), np.int64)
    for row, s in enumerate(states):
        piles[row, : len(s.draw_pile)] = s.draw_pile
    return BatchedState(
        draw_pile=torch.from_numpy(piles).to(dev),
        pile_size=ints(lambda s: len(s.draw_pile)),
        hands=seats(lambda s, seat: s.hands[seat]),
        layouts=seats(lambda s, seat: [c for row in s.layouts[seat] for c in row]),
        books=torch.tensor([s.books for s in states], dtype=I32, device=dev),
        supply=torch.tensor([s.supply for s in states], dtype=I32, device=dev),
        removed_books=ints(lambda s: s.removed_books),
        display=multihot([s.display for s in states]),
        discard=multihot([s.discard for s in states]),
        turn=ints(lambda s: s.turn),
        actor=ints(lambda s: s.actor),
        phase=ints(lambda s: int(s.phase)),
        drawn=ints(lambda s: s.drawn),
        displayed=ints(lambda s: s.displayed).bool(),
        drew=ints(lambda s: s.drew).bool(),
        added=multihot([s.added for s in states]),
        cat_queue=ints(lambda s: len(s.cat_queue)),
        exam_colour=ints(lambda s: s.exam_colour),
        exam_cards=multihot([s.exam_cards for s in states]),
        turns=ints(lambda s: s.turns),
        crashes=ints(lambda s: s.crashes),
    )


def to_reference(state: BatchedState, row: int, rng: np.random.Generator) -> State:
    """Game ``row`` as a reference :class:`~cauldron.envs.hexenflug.rules.State` drawing chance from
    ``rng`` (unordered collections listed by card id; an empty log)."""
    r = {f.name: getattr(state, f.name)[row].cpu() for f in fields(state)}
    colour = torch.arange(N) // V
    n = r["hands"].shape[0]

    def cards(mask: torch.Tensor) -> list[int]:
        return mask.nonzero().flatten().tolist()

    turn = int(r["turn"])
    queue = int(r["cat_queue"])
    return State(
        draw_pile=r["draw_pile"][: int(r["pile_size"])].tolist(),
        rng=rng,
        hands=[cards(r["hands"][seat]) for seat in range(n)],
        layouts=[
            [cards(r["layouts"][seat] & (colour == c)) for c in range(K)] for seat in range(n)
        ],
        books=r["books"].tolist(),
        supply=r["supply"].tolist(),
        removed_books=int(r["removed_books"]),
        display=cards(r["display"]),
        discard=cards(r["discard"]),
        turn=turn,
        actor=int(r["actor"]),
        phase=Phase(int(r["phase"])),
        drawn=int(r["drawn"]),
        displayed=bool(r["displayed"]),
        drew=bool(r["drew"]),
        added=cards(r["added"]),
        cat_queue=[(turn + k) % n for k in range(n - queue, n)],
        exam_colour=int(r["exam_colour"]),
        exam_cards=cards(r["exam_cards"]),
        turns=int(r["turns"]),
        crashes=int(r["crashes"]),
    )


# --------------------------------------------------------------------- batched_game
def batched_game(reference_env, device: torch.device) -> BatchedHexenflug:
    """The engine for ``cauldron.envs.make_batched``: same player count and options as the
    reference."""
    return BatchedHexenflug(reference_env.rules, device)
