"""Hexenflug, as pure rules (no gymnasium, no pettingzoo).

Section names in the docstrings are those of the Hexenflug rulebook. Layouts are kept as
one ascending list of cards per colour; hands, the display and piles as lists of card ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cauldron.envs.core.deck import shuffled
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.rules import PhasedRules
from cauldron.envs.hexenflug import actions as A
from cauldron.envs.hexenflug import components as C
from cauldron.envs.hexenflug.options import HexenflugOptions
from cauldron.envs.hexenflug.phases import Phase

VALUE = [C.value_of(c) for c in range(C.NUM_CARDS)]
COLOUR = [C.colour_of(c) for c in range(C.NUM_CARDS)]


@dataclass
class State:
    """Everything about one game. The draw pile's top is the end of its list; seats are absolute."""

    draw_pile: list[int]
    rng: np.random.Generator
    hands: list[list[int]]
    layouts: list[list[list[int]]]  # [seat][colour] ascending cards
    books: list[list[int]]  # [seat][colour] Spellbooks owned
    supply: list[int]  # Spellbooks left per colour
    removed_books: int  # Spellbooks taken out at setup
    display: list[int] = field(default_factory=list)
    discard: list[int] = field(default_factory=list)
    turn: int = 0
    actor: int = 0
    phase: Phase = Phase.FLY
    drawn: int = -1  # the card drawn and not yet resolved
    displayed: bool = False  # this turn's player added a card to the display
    drew: bool = False  # this turn's player has drawn a card from the draw pile
    added: list[int] = field(default_factory=list)  # cards this player added to the display
    cat_queue: list[int] = field(default_factory=list)  # seats still to discard for a black cat
    exam_colour: int = -1
    exam_cards: list[int] = field(default_factory=list)
    turns: int = 1
    crashes: int = 0
    log: list[tuple] = field(default_factory=list)


class HexenflugRules(PhasedRules):
    """Rules of Hexenflug for ``num_players`` players and ``options``."""

    num_actions = A.NUM_ACTIONS

    def __init__(self, num_players: int, options: HexenflugOptions) -> None:
        if options.books_per_colour < 0 or options.books_per_colour > 9:
            raise ConfigError(
                f"option 'books_per_colour' must be 0 (by player count) to 9, "
                f"got {options.books_per_colour}"
            )
        self.num_players = num_players
        self.options = options
        self.books_per_colour = options.books_per_colour or C.BOOKS_PER_COLOUR[num_players]

    # ----------------------------------------------------------------- setup
    def new_game(self, rng: np.random.Generator, start_seat: int = 0) -> State:
        """Setup: remove Spellbooks by player count, shuffle the Witch cards into a draw pile."""
        n = self.num_players
        state = State(
            draw_pile=shuffled(list(range(C.NUM_CARDS)), rng),
            rng=rng,
            hands=[[] for _ in range(n)],
            layouts=[[[] for _ in range(C.NUM_COLOURS)] for _ in range(n)],
            books=[[0] * C.NUM_COLOURS for _ in range(n)],
            supply=[self.books_per_colour] * C.NUM_COLOURS,
            removed_books=C.TOTAL_BOOKS - C.NUM_COLOURS * self.books_per_colour,
            turn=start_seat,
            actor=start_seat,
        )
        return state

    # ----------------------------------------------------------------- queries
    def action_name(self, action: int) -> str:
        return A.action_name(action)

    def scores(self, state: State) -> list[int]:
        """Scoring: one point per Spellbook, one more per complete set of five colours."""
        return [sum(b) + min(b) for b in state.books]

    def winners(self, state: State) -> list[int]:
        """Highest score wins; ties go to the most cards in hand; a remaining tie is shared."""
        key = [(s, len(h)) for s, h in zip(self.scores(state), state.hands, strict=True)]
        best = max(key)
        return [seat for seat, k in enumerate(key) if k == best]

    def info(self, state: State, seat: int) -> dict[str, Any]:
        """Scores of every seat, this seat's score, and the winners once the game is over."""
        scores = self.scores(state)
        info = {"score": scores[seat], "scores": scores, "phase": state.phase.name.lower()}
        if state.phase == Phase.OVER:
            info["winners"] = self.winners(state)
        return info

    def can_place(self, layout: list[list[int]], card: int) -> bool:
        """Your Layout: a row is one colour in strictly ascending values."""
        row = layout[COLOUR[card]]
        return not row or VALUE[row[-1]] < VALUE[card]

    def landing_colours(self, state: State) -> list[int]:
        """Landing: "instead of drawing again", so only after a draw this turn; soft, any layout
        colour; hard (after displaying), a colour with fewest cards."""
        if not state.drew:
            return []
        rows = state.layouts[state.turn]
        sizes = {c: len(r) for c, r in enumerate(rows) if r}
        if not sizes:
            return []
        if not state.displayed:
            return sorted(sizes)
        fewest = min(sizes.values())
        return [c for c, s in sizes.items() if s == fewest]

    def legal_mask(self, state: State) -> np.ndarray:
        """Legal actions of the acting seat (``int8``)."""
        mask = np.zeros(A.NUM_ACTIONS, np.int8)
        phase = state.phase
        if phase == Phase.FLY:
            layout = state.layouts[state.turn]
            takes = [
                A.TAKE + c
                for c in state.display
                if c not in state.added and self.can_place(layout, c)
            ]
            mask[takes] = 1
            mask[A.DRAW] = 1
            mask[[A.LAND + c for c in self.landing_colours(state)]] = 1
        elif phase == Phase.DRAWN:
            placeable = self.can_place(state.layouts[state.turn], state.drawn)
            mask[A.PLACE] = placeable
            mask[A.DISPLAY] = not state.displayed
            if state.displayed and not placeable:
                mask[A.CRASH] = 1
                mask[A.CRASH_KEEP] = self._may_keep(state)
        elif phase == Phase.CAT_DISCARD:
            mask[[A.CHOOSE + c for c in state.hands[state.actor]]] = 1
        elif phase == Phase.EXAMINE:
            hand = state.hands[state.turn]
            owned = state.books[state.turn]
            colours = {COLOUR[c] for c in hand}
            mask[[A.EXAMINE + c for c in colours if _completable(hand, owned, c, [])]] = 1
            mask[A.SKIP] = 1
        elif phase == Phase.EXAM_BUILD:
            hand = state.hands[state.turn]
            owned = state.books[state.turn]
            chosen = state.exam_cards
            options = [
                c
                for c in hand
                if c not in chosen and _completable(hand, owned, state.exam_colour, chosen + [c])
            ]
            mask[[A.CHOOSE + c for c in options]] = 1
            mask[A.FINISH] = _valid_examination(owned, state.exam_colour, chosen)
        return mask

    def _may_keep(self, state: State) -> bool:
        colour = COLOUR[state.drawn]
        return self.options.beginner_crash_rule and state.books[state.turn][colour] == 0

    # ----------------------------------------------------------------- transitions
    def apply(self, state: State, action: int) -> tuple[float, ...]:
        """Apply a legal ``action`` of the acting seat; return every seat's reward."""
        phase = state.phase
        if phase == Phase.FLY:
            if action < A.DRAW:
                self._take(state, action - A.TAKE)
            elif action == A.DRAW:
                self._draw(state)
            else:
                self._land(state, action - A.LAND)
        elif phase == Phase.DRAWN:
            self._resolve_drawn(state, action)
        elif phase == Phase.CAT_DISCARD:
            card = action - A.CHOOSE
            state.hands[state.actor].remove(card)
            state.discard.append(card)
            state.log.append(("cat_discard", state.actor, card))
            self._next_cat_discard(state)
        elif phase == Phase.EXAMINE:
            if action == A.SKIP:
                self._end_turn(state)
            else:
                state.exam_colour = action - A.EXAMINE
                state.exam_cards = []
                state.phase = Phase.EXAM_BUILD
        elif phase == Phase.EXAM_BUILD:
            if action == A.FINISH:
                self._examine(state)
            else:
                state.exam_cards.append(action - A.CHOOSE)
        if len(state.log) > 32:
            del state.log[:-16]
        return self._rewards(state)

    def _take(self, state: State, card: int) -> None:
        """Flying: take a display card (not one you added this turn) into your layout."""
        state.display.remove(card)
        state.layouts[state.turn][COLOUR[card]].append(card)
        state.log.append(("take", state.turn, card))

    def _draw(self, state: State) -> None:
        """Flying: draw one card. A black cat makes every player with six or more cards discard
        down to five (from the current player clockwise) before it is resolved."""
        card = state.draw_pile.pop()
        state.drawn = card
        state.drew = True
        state.phase = Phase.DRAWN
        state.log.append(("draw", state.turn, card))
        if not state.draw_pile:
            self._replenish(state)
            if state.phase == Phase.OVER:
                return
        if VALUE[card] == C.BLACK_CAT_VALUE:
            n = self.num_players
            state.cat_queue = [(state.turn + k) % n for k in range(n)]
            self._next_cat_discard(state)

    def _replenish(self, state: State) -> None:
        """Draw Pile Depletion: shuffle the discards into a new draw pile; with none, the game
        ends at once."""
        if state.discard:
            state.draw_pile = shuffled(state.discard, state.rng)
            state.discard = []
            state.log.append(("reshuffle", state.turn))
        else:
            self._game_over(state)

    def _next_cat_discard(self, state: State) -> None:
        while state.cat_queue:
            seat = state.cat_queue[0]
            if len(state.hands[seat]) > C.HAND_LIMIT_ON_CAT:
                state.actor = seat
                state.phase = Phase.CAT_DISCARD
                return
            state.cat_queue.pop(0)
        state.actor = state.turn
        state.phase = Phase.DRAWN

    def _resolve_drawn(self, state: State, action: int) -> None:
        """After Drawing a Card: place it, add it to the display (once a turn), or crash."""
        card, state.drawn = state.drawn, -1
        if action == A.PLACE:
            state.layouts[state.turn][COLOUR[card]].append(card)
            state.log.append(("place", state.turn, card))
            state.phase = Phase.FLY
        elif action == A.DISPLAY:
            state.display.append(card)
            state.added.append(card)
            state.displayed = True
            state.log.append(("display", state.turn, card))
            state.phase = Phase.FLY
        else:
            self._crash(state, card, keep=action == A.CRASH_KEEP)

    def _crash(self, state: State, card: int, keep: bool) -> None:
        """Crash: the drawn card (unless kept by the beginner rule) and the layout row of its
        colour are discarded; the turn ends."""
        row = state.layouts[state.turn][COLOUR[card]]
        state.discard.extend(row)
        row.clear()
        if keep:
            state.hands[state.turn].append(card)
        else:
            state.discard.append(card)
        state.crashes += 1
        state.log.append(("crash", state.turn, card))
        self._end_turn(state)

    def _land(self, state: State, colour: int) -> None:
        """Landing: the chosen layout row goes to the hand; then the Examination."""
        row = state.layouts[state.turn][colour]
        state.hands[state.turn].extend(row)
        state.log.append(("land", state.turn, colour, len(row), state.displayed))
        row.clear()
        state.phase = Phase.EXAMINE

    def _examine(self, state: State) -> None:
        """Examination: discard 3/4/5 chosen cards, take 1/2/3 Spellbooks of the colour (as many
        as are left). The game ends when enough colours are exhausted."""
        colour, cards = state.exam_colour, state.exam_cards
        hand = state.hands[state.turn]
        for card in cards:
            hand.remove(card)
        state.discard.extend(cards)
        earned = min(C.BOOKS_FOR_CARDS[len(cards)], state.supply[colour])
        state.supply[colour] -= earned
        state.books[state.turn][colour] += earned
        state.log.append(("examine", state.turn, colour, len(cards), earned))
        state.exam_colour, state.exam_cards = -1, []
        exhausted = sum(1 for s in state.supply if s == 0)
        if exhausted >= C.exhausted_colours_to_end(self.num_players):
            self._game_over(state)
        else:
            self._end_turn(state)

    def _end_turn(self, state: State) -> None:
        state.turn = state.actor = (state.turn + 1) % self.num_players
        state.displayed = False
        state.drew = False
        state.added = []
        state.phase = Phase.FLY
        state.turns += 1

    def _game_over(self, state: State) -> None:
        state.phase = Phase.OVER
        state.log.append(("over", state.turn))

    def _rewards(self, state: State) -> tuple[float, ...]:
        n = self.num_players
        if state.phase != Phase.OVER:
            return (0.0,) * n
        if self.options.reward == "score_margin":
            scores = self.scores(state)
            return tuple(float(s - max(scores[:i] + scores[i + 1 :])) for i, s in enumerate(scores))
        winners = self.winners(state)
        return tuple(1.0 if seat in winners else -1.0 for seat in range(n))


def _valid_examination(owned: list[int], colour: int, cards: list[int]) -> bool:
    """Using Jokers: 3–5 cards, at least one of the examined colour; each joker of a different
    other colour, one the player owns a Spellbook of, and higher than every examined card."""
    if not 3 <= len(cards) <= 5:
        return False
    own = [VALUE[c] for c in cards if COLOUR[c] == colour]
    jokers = [c for c in cards if COLOUR[c] != colour]
    joker_colours = [COLOUR[c] for c in jokers]
    return (
        bool(own)
        and len(set(joker_colours)) == len(joker_colours)
        and all(owned[k] > 0 for k in joker_colours)
        and all(VALUE[j] > max(own) for j in jokers)
    )


def _completable(hand: list[int], owned: list[int], colour: int, chosen: list[int]) -> bool:
    """Whether ``chosen`` can still grow, with cards of ``hand``, into a valid examination.

    A valid set has a split value m: examined-colour cards at most m, one joker per other owned
    colour above m. Try every m between the chosen examined cards and the chosen jokers."""
    if len(chosen) > 5:
        return False
    own = [VALUE[c] for c in chosen if COLOUR[c] == colour]
    jokers = [c for c in chosen if COLOUR[c] != colour]
    joker_colours = {COLOUR[c] for c in jokers}
    if len(joker_colours) != len(jokers) or any(owned[k] == 0 for k in joker_colours):
        return False
    low = max(own, default=0)
    high = min((VALUE[c] for c in jokers), default=C.MAX_VALUE + 1)
    if low >= high:
        return False
    rest = [c for c in hand if c not in chosen]
    own_values = sorted(VALUE[c] for c in rest if COLOUR[c] == colour)
    for m in range(max(low, 1), high):
        examined = len(own) + sum(1 for v in own_values if v <= m)
        if examined == 0:
            continue
        free_colours = {
            COLOUR[c]
            for c in rest
            if COLOUR[c] != colour
            and COLOUR[c] not in joker_colours
            and owned[COLOUR[c]] > 0
            and VALUE[c] > m
        }
        if min(5, examined + len(jokers) + len(free_colours)) >= 3:
            return True
    return False
