"""Observation and state encodings of ``headless_horseman_v1``.

Flat ``float32`` vectors in [0, 1] laid out by :class:`~cauldron.envs.core.layout.Layout` (shown in
RULES.md). Seats in an observation are relative to the observer; in ``state()`` absolute. Tables are
padded to 4 seats. Counts are divided by their maximum.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cauldron.envs.core.encoding import FlatEncoder
from cauldron.envs.core.layout import Field, Layout
from cauldron.envs.core.simultaneous import choices_ones, chosen_ones, own_choice_ones
from cauldron.envs.headless_horseman import components as C

if TYPE_CHECKING:
    from cauldron.envs.headless_horseman.rules import State

P = C.MAX_PLAYERS
N = C.NUM_CARDS
T = len(C.TOKENS)
SPACES = C.BOARD.bridge + 1
HORSEMAN_SPACES = C.BOARD.bridge - C.LOWEST_HORSEMAN_START + 1

PUBLIC_FIELDS = [
    Field("over", 1, "the game has ended"),
    Field("ichabod", SPACES, "one-hot Ichabod's space, 0 (Van Tassel Farm) to the Covered Bridge"),
    Field(
        "horseman",
        HORSEMAN_SPACES,
        f"one-hot Horseman's space, from {C.LOWEST_HORSEMAN_START} (the lowest start a board "
        f"may have; the default start {C.BOARD.horseman_start} is index "
        f"{C.BOARD.horseman_start - C.LOWEST_HORSEMAN_START})",
    ),
    Field("tokens_up", T, "face-up Scare tokens: pumpkin 1–4, owl, toad, crow, bat"),
    Field("speed_tile", 1, "Speed tile / 4"),
    Field("row", N, "multi-hot: cards face up in the row this turn"),
    Field("row_tops", C.NUM_TOPS, "per top number 1–6, cards in the row showing it / 4"),
    Field("discard_pile", N, "multi-hot: the discard pile (public)"),
    Field("draw_pile_size", 1, "cards in the draw pile / 30"),
    Field("hand_sizes", P, "cards in hand per seat / 30"),
    Field("handless", P, "per seat, plays from the draw pile (Less Strategy)"),
    Field("chosen", P, "per seat, has already chosen this play round (AEC order)"),
    Field("rounds", 1, "play rounds so far in this turn / 8"),
]
OBSERVATION_FIELDS = PUBLIC_FIELDS + [
    Field("hand", N, "own hand, multi-hot by card id"),
    Field("own_choice", N + 1, "own secret choice this round: card id, or index 30 = top card"),
]
STATE_FIELDS = PUBLIC_FIELDS + [
    Field("hands", P * N, "every hand, per absolute seat"),
    Field("choices", P * (N + 1), "every secret choice this round, per seat"),
    Field("draw_pile_cards", N, "multi-hot: cards in the draw pile (order not encoded)"),
    Field("token_order", T * T, "per flip position, one-hot token (face-down order)"),
]


class Encoder(FlatEncoder):
    """Writes observations and states of one rules object."""

    observation_fields = OBSERVATION_FIELDS
    state_fields = STATE_FIELDS

    def _own(self, state: State, seat: int, o: dict[str, int]) -> list[int]:
        """Own hand and own secret choice of this round."""
        ones = [o["hand"] + c for c in state.hands[seat]]
        return ones + own_choice_ones(state.pending, seat, o["own_choice"])

    def _hidden(self, state: State, out: np.ndarray, o: dict[str, int]) -> list[int]:
        ones = [o["hands"] + seat * N + c for seat, hand in enumerate(state.hands) for c in hand]
        ones += choices_ones(state.pending, o["choices"], N + 1)
        ones += [o["draw_pile_cards"] + c for c in state.draw_pile]
        return ones + [o["token_order"] + i * T + t for i, t in enumerate(state.tokens)]

    def _public(self, state: State, out: np.ndarray, layout: Layout, me: int) -> list[int]:
        o = layout.offsets
        relative = self.relative[me]
        ones = [
            o["ichabod"] + state.ichabod,
            o["horseman"] + state.horseman - C.LOWEST_HORSEMAN_START,
        ]
        ones += [o["tokens_up"] + t for t in state.tokens[: state.flipped]]
        ones += [o["row"] + c for c in state.row]
        ones += [o["discard_pile"] + c for c in state.discard]
        ones += [o["handless"] + relative[s] for s in self.rules.handless]
        ones += chosen_ones(state.pending, o["chosen"], relative)
        index = [o["over"], o["speed_tile"], o["draw_pile_size"], o["rounds"]]
        value = [
            state.phase == 1,
            self.rules.options.speed_tile / 4,
            len(state.draw_pile) / N,
            min(state.rounds, 8) / 8,
        ]
        index += [o["hand_sizes"] + relative[s] for s in range(self.n)]
        value += [len(h) / N for h in state.hands]
        tops = [0.0] * C.NUM_TOPS
        for card in state.row:
            tops[card // 5] += 0.25
        index += range(o["row_tops"], o["row_tops"] + C.NUM_TOPS)
        value += tops
        out[index] = value
        return ones
