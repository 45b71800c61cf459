"""Observation and state encodings of ``voodoo_mania_v1``.

Flat ``float32`` vectors in [0, 1] laid out by :class:`~cauldron.envs.core.layout.Layout` (shown in
RULES.md). Seats in an observation are relative to the observer; in ``state()`` absolute; tables
padded to 6 seats. Counts are divided by their true bounds for the player count: an own pile can
hold at most every card dealt to the players (the Voodoo pile always keeps its top card), n · deal
cards (deal = 45 / 30 / 22 / 18 / 15 at 2–6 players), and a round scores at most that many
points. A card side is 25 entries of pairs shown plus 25 one-hot entries of the pair it misses
(pair = ingredient · 5 + colour).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cauldron.envs.core.encoding import FlatEncoder
from cauldron.envs.core.layout import Field, Layout
from cauldron.envs.core.simultaneous import choices_ones, chosen_ones, own_choice_ones
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C

if TYPE_CHECKING:
    from cauldron.envs.voodoo_mania.rules import State, VoodooManiaRules

P = C.MAX_PLAYERS
Q = C.NUM_PAIRS
SIDE = 2 * Q
HAND = C.HAND_SIZE * 2 * SIDE

PUBLIC_FIELDS = [
    Field("over", 1, "the game has ended"),
    Field("num_players", P - 1, "one-hot number of players at the table, 2–6"),
    Field("top_shows", Q, "pairs shown on the visible side of the Voodoo pile's top card"),
    Field("wanted", Q, "one-hot: the pair that side misses (the pair to play)"),
    Field("voodoo_pile_size", 1, "cards in the Voodoo pile / 91"),
    Field("hand_sizes", P, "cards in hand per seat / 3"),
    Field(
        "pile_sizes",
        P,
        "cards in each player's own pile / cards dealt to all players (n · deal: 88–90)",
    ),
    Field("round", C.ROUNDS, "one-hot round"),
    Field(
        "scores",
        P,
        "points carried over from finished rounds, per seat / (3 rounds · n · deal: 264–270)",
    ),
    Field("last_player", P + 1, "one-hot: no play last tick (index 0) or whose play won"),
    Field("last_voodoo", 1, "last tick's play was a Voodoo!"),
    Field("last_cyclers", P, "per seat, cycled a card last tick"),
    Field("chosen", P, "per seat, has already chosen this tick (AEC order)"),
    Field("tick", 1, "ticks so far / max_ticks"),
]
OBSERVATION_FIELDS = PUBLIC_FIELDS + [
    Field("hand", HAND, "per slot 0–2 and side 0–1: pairs shown (25), pair missing (25)"),
    Field("hand_plays", C.HAND_SIZE * 2 * 2, "per slot and side: normal play, Voodoo! play"),
    Field("own_choice", A.NUM_ACTIONS, "one-hot own action chosen this tick (AEC)"),
]
STATE_FIELDS = PUBLIC_FIELDS + [
    Field("hands", P * HAND, "every hand, per absolute seat, as in `hand`"),
    Field("choices", P * A.NUM_ACTIONS, "every action chosen this tick, per seat"),
    Field("pile_cards", P * C.NUM_CARDS, "per seat, multi-hot of the cards in the own pile"),
    Field("voodoo_cards", C.NUM_CARDS, "multi-hot: cards in the Voodoo pile"),
]


class Encoder(FlatEncoder):
    """Writes observations and states of one rules object."""

    observation_fields = OBSERVATION_FIELDS
    state_fields = STATE_FIELDS

    def __init__(self, rules: VoodooManiaRules) -> None:
        super().__init__(rules)
        self.pile_bound = rules.num_players * rules.per_player
        self.score_bound = C.ROUNDS * self.pile_bound
        # side_ones[card][side]: offsets (within a side block) of its shown pairs and missing pair
        self.side_ones = [
            [sorted(face.shows) + [Q + face.missing] for face in sides] for sides in rules.deck
        ]

    def _hand_ones(self, hand: list[int], offset: int) -> list[int]:
        return [
            offset + (2 * slot + side) * SIDE + i
            for slot, card in enumerate(hand)
            for side in (0, 1)
            for i in self.side_ones[card][side]
        ]

    def _own(self, state: State, seat: int, o: dict[str, int]) -> list[int]:
        """Own hand (both sides), its legal plays, and own choice of this tick."""
        ones = self._hand_ones(state.hands[seat], o["hand"])
        if state.phase == 0:
            ones += [
                o["hand_plays"] + 4 * slot + 2 * side + kind
                for slot, side, kind in self.rules.plays(state, seat)
            ]
        return ones + own_choice_ones(state.pending, seat, o["own_choice"])

    def _hidden(self, state: State, out: np.ndarray, o: dict[str, int]) -> list[int]:
        ones = []
        for seat, hand in enumerate(state.hands):
            ones += self._hand_ones(hand, o["hands"] + seat * HAND)
            ones += [o["pile_cards"] + seat * C.NUM_CARDS + c for c in state.piles[seat]]
        ones += choices_ones(state.pending, o["choices"], A.NUM_ACTIONS)
        return ones + [o["voodoo_cards"] + c for c, _ in state.voodoo]

    def _public(self, state: State, out: np.ndarray, layout: Layout, me: int) -> list[int]:
        o = layout.offsets
        relative = self.relative[me]
        card, side = state.voodoo[-1]
        face = self.rules.deck[card][side]
        ones = [o["top_shows"] + p for p in face.shows]
        ones += [o["wanted"] + face.missing, o["round"] + min(state.round, C.ROUNDS - 1)]
        ones.append(o["num_players"] + self.n - 2)
        ones.append(
            o["last_player"] + (0 if state.last_player < 0 else 1 + relative[state.last_player])
        )
        ones += [o["last_cyclers"] + relative[s] for s in state.last_cyclers]
        ones += chosen_ones(state.pending, o["chosen"], relative)
        index = [o["over"], o["voodoo_pile_size"], o["last_voodoo"], o["tick"]]
        value = [
            state.phase == 1,
            len(state.voodoo) / C.NUM_CARDS,
            state.last_voodoo,
            state.tick / self.rules.options.max_ticks,
        ]
        for seat in range(self.n):
            r = relative[seat]
            index += [o["hand_sizes"] + r, o["pile_sizes"] + r, o["scores"] + r]
            value += [
                len(state.hands[seat]) / C.HAND_SIZE,
                len(state.piles[seat]) / self.pile_bound,
                state.scores[seat] / self.score_bound,
            ]
        out[index] = value
        return ones
