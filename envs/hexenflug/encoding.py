"""Observation and state encodings of ``hexenflug_v1``.

Flat ``float32`` vectors in [0, 1] laid out by :class:`~cauldron.envs.core.layout.Layout` (shown in
RULES.md). Seats in an observation are relative to the observer (0 = self, 1 = left, ...); in
``state()`` they are absolute. Tables are padded to 5 seats. Counts are divided by their maximum.
Every card enters and leaves a hand in public (landing, a kept crash card, examinations, black-cat
discards), so the observation shows every hand: it is ``state()`` without the draw pile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cauldron.envs.core.encoding import FlatEncoder
from cauldron.envs.core.layout import Field, Layout
from cauldron.envs.hexenflug import components as C

if TYPE_CHECKING:
    from cauldron.envs.hexenflug.rules import State

P = C.MAX_PLAYERS
N = C.NUM_CARDS
K = C.NUM_COLOURS

PUBLIC_FIELDS = [
    Field("phase", 6, "one-hot phase: fly, drawn, cat_discard, examine, exam_build, over"),
    Field("num_players", P - 1, "one-hot number of players at the table, 2–5"),
    Field("turn_player", P, "one-hot seat whose turn it is"),
    Field("actor", P, "one-hot seat whose decision the game waits for"),
    Field("hand_sizes", P, "cards in hand per seat / 75"),
    Field("hands", P * N, "per seat, multi-hot of the cards in its hand (all enter it in public)"),
    Field("layouts", P * N, "per seat, multi-hot of the cards in its layout (card id)"),
    Field("display", N, "multi-hot: the general display"),
    Field("discard_pile", N, "multi-hot: the discard pile"),
    Field("books", P * K, "per seat and colour, Spellbooks owned / 9"),
    Field("supply", K, "Spellbooks left per colour / 9"),
    Field("draw_pile_size", 1, "cards in the draw pile / 75"),
    Field("drawn_card", N, "one-hot: the drawn card waiting to be resolved"),
    Field("displayed", 1, "the turn player has added a card to the display this turn"),
    Field("drew", 1, "the turn player has drawn a card this turn (landing is allowed)"),
    Field("added_to_display", N, "multi-hot: cards the turn player added to the display this turn"),
    Field("exam_colour", K, "one-hot colour being examined"),
    Field("exam_cards", N, "multi-hot: cards chosen so far for the examination"),
    Field("scores", P, "per seat, current score / the game's maximum (6 × books per colour)"),
]
OBSERVATION_FIELDS = PUBLIC_FIELDS
STATE_FIELDS = PUBLIC_FIELDS + [
    Field("draw_pile_cards", N, "multi-hot: cards in the draw pile (order not encoded)"),
]


def max_score(books_per_colour: int) -> int:
    """Scoring: the most one player can score, every Spellbook (5 colours × ``books_per_colour``)
    plus one bonus per complete set (``books_per_colour`` sets)."""
    return (K + 1) * books_per_colour


class Encoder(FlatEncoder):
    """Writes observations and states of one rules object."""

    observation_fields = OBSERVATION_FIELDS
    state_fields = STATE_FIELDS

    def _own(self, state: State, seat: int, o: dict[str, int]) -> list[int]:
        """Nothing is private: every card enters and leaves a hand in public."""
        return []

    def _hidden(self, state: State, out: np.ndarray, o: dict[str, int]) -> list[int]:
        return [o["draw_pile_cards"] + c for c in state.draw_pile]

    def _public(self, state: State, out: np.ndarray, layout: Layout, me: int) -> list[int]:
        """Write the public fields seen from seat ``me``; return indices still to be set to 1."""
        o = layout.offsets
        relative = self.relative[me]
        ones = [
            o["phase"] + state.phase,
            o["num_players"] + self.n - 2,
            o["turn_player"] + relative[state.turn],
            o["actor"] + relative[state.actor],
        ]
        index, value = [], []
        scores = self.rules.scores(state)
        top = max_score(self.rules.books_per_colour)
        for seat in range(self.n):
            r = relative[seat]
            index += [o["hand_sizes"] + r, o["scores"] + r]
            value += [len(state.hands[seat]) / N, scores[seat] / top]
            ones += [o["hands"] + r * N + c for c in state.hands[seat]]
            off = o["layouts"] + r * N
            ones += [off + c for row in state.layouts[seat] for c in row]
            off = o["books"] + r * K
            index += range(off, off + K)
            value += [b / 9 for b in state.books[seat]]
        index += range(o["supply"], o["supply"] + K)
        value += [s / 9 for s in state.supply]
        index += [o["draw_pile_size"], o["displayed"], o["drew"]]
        value += [len(state.draw_pile) / N, state.displayed, state.drew]
        out[index] = value
        for name, cards in (
            ("display", state.display),
            ("discard_pile", state.discard),
            ("added_to_display", state.added),
            ("exam_cards", state.exam_cards),
        ):
            off = o[name]
            ones += [off + c for c in cards]
        if state.drawn >= 0:
            ones.append(o["drawn_card"] + state.drawn)
        if state.exam_colour >= 0:
            ones.append(o["exam_colour"] + state.exam_colour)
        return ones
