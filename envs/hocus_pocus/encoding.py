"""Observation and state encodings of ``hocus_pocus_v1``.

Both are flat ``float32`` vectors in [0, 1] laid out by :class:`~cauldron.envs.core.layout.Layout`s
(shown in RULES.md). Seats in an observation are relative to the observer (0 = self, 1 = left, ...);
in ``state()`` they are absolute. Every table is padded to 6 seats so one network serves every
player count. Counts are divided by their largest possible value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cauldron.envs.core.encoding import FlatEncoder
from cauldron.envs.core.layout import Field, Layout
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.phases import Phase

if TYPE_CHECKING:
    from cauldron.envs.hocus_pocus.rules import HocusPocusRules, State

P = C.MAX_PLAYERS
N = C.NUM_CARDS
S = len(C.SPELL_NAMES)

PUBLIC_FIELDS = [
    Field(
        "phase",
        12,
        "one-hot phase: ask, act, binx, stun_choice, salt, spell_discard, "
        "spell_pass, discard, swap_own, swap_partner, burn, over",
    ),
    Field("num_players", P - 1, "one-hot number of players at the table, 2–6"),
    Field("turn_player", P, "one-hot seat whose turn it is"),
    Field("actor", P, "one-hot seat whose decision the game waits for"),
    Field("hand_sizes", P, "cards in hand per seat / 50"),
    Field("binx_holder", P + 1, "one-hot: nobody (index 0) or the seat in front of whom Binx is"),
    Field("binx_hand", N, "the hand of the Binx holder (shown to all), multi-hot by card id"),
    Field(
        "binx_set_aside",
        N,
        "one-hot: the card the Binx holder has chosen to pass or swap (its hand is face up)",
    ),
    Field("pile_tops", 5 * N, "per Cauldron space, one-hot card id of the top card (0 if empty)"),
    Field(
        "buried_cards",
        5 * N,
        "per Cauldron space and card id, 1 / depth of a card under the top: 1 right under it "
        "(what discarding the top uncovers), 1/2 the next, …; 0 if not in that pile",
    ),
    Field("pile_sizes", 5, "cards per Cauldron space / 50"),
    Field("discard_pile", N, "multi-hot: Ingredient discard pile (purged at round end)"),
    Field("removed_cards", N, "multi-hot: cards out of the game after a purge"),
    Field("deck_size", 1, "Ingredient deck size / 50"),
    Field(
        "questions_asked", P * 10, "per seat, the questions (5 colours, 5 types) asked this round"
    ),
    Field("answers_yes", P * 10, "per seat and question, the latest answer this round was yes"),
    Field("answers_no", P * 10, "per seat and question, the latest answer this round was no"),
    Field("no_questions", 1, "I Smell Children is in force"),
    Field("stunned", 4, "one-hot witch under the Stun token: none, Sarah, Mary, Winifred"),
    Field("sun", 1, "Sun position / sunrise_steps (witches stunned so far)"),
    Field(
        "tricks_used", 4, "Circle of Salt, Daylight Savings Time, Billy Butcherson, Burning Rain"
    ),
    Field("trick_this_turn", 1, "a trick was used this turn"),
    Field("spell_deck_size", 1, "Spell deck size / Spell cards in the game"),
    Field("spells_discarded", S, "per spell name, copies in the Spell discard pile / copies"),
    Field("current_spell", S, "one-hot spell name being resolved"),
    Field("swap_partner", P, "one-hot Daylight Savings Time partner"),
    Field("discards_made", 1, "cards discarded so far after a failed play / 50"),
    Field("burns_left", 1, "cards still to discard for Burning Rain of Death / 3"),
]
OBSERVATION_FIELDS = PUBLIC_FIELDS + [
    Field("hand", N, "own hand, multi-hot by card id"),
    Field("set_aside", N, "own card chosen to pass or swap, not yet handed over"),
    Field("handed_card", N, "one-hot: the latest card this player passed or swapped away"),
    Field("handed_to", P, "one-hot seat it went to"),
    Field("received_card", N, "one-hot: the latest card this player received by a pass or swap"),
    Field("received_from", P, "one-hot seat it came from"),
]
STATE_FIELDS = PUBLIC_FIELDS + [
    Field("hands", P * N, "every hand, per absolute seat, multi-hot by card id"),
    Field("set_aside_all", P * N, "every card chosen to pass or swap, per seat"),
    Field("handed_cards_all", P * N, "per seat, `handed_card`"),
    Field("handed_to_all", P * P, "per seat, `handed_to` (absolute seats)"),
    Field("received_cards_all", P * N, "per seat, `received_card`"),
    Field("received_from_all", P * P, "per seat, `received_from` (absolute seats)"),
    Field("deck_cards", N, "multi-hot: cards in the Ingredient deck (order not encoded)"),
    Field("spell_deck_cards", S, "per spell name, copies in the Spell deck / copies"),
]


class Encoder(FlatEncoder):
    """Writes observations and states of one rules object."""

    observation_fields = OBSERVATION_FIELDS
    state_fields = STATE_FIELDS

    def __init__(self, rules: HocusPocusRules) -> None:
        super().__init__(rules)
        n = self.n
        name_index = {name: i for i, name in enumerate(C.SPELL_NAMES)}
        self.spell_name = [name_index[s] for s in rules.spell_names]
        copies = np.bincount(self.spell_name, minlength=S)
        self.spell_weight = [1.0 / copies[i] for i in self.spell_name]
        self.spell_total = len(rules.spell_names)
        self.sunrise_steps = rules.options.sunrise_steps
        # seat_order[me][k]: the seat k places to me's left
        self.seat_order = [np.array([(me + k) % n for k in range(n)]) for me in range(n)]
        self.question_index = {
            layout is self.state_layout: np.array(
                [
                    layout.offsets[name] + k * 10 + q
                    for name in ("questions_asked", "answers_yes", "answers_no")
                    for k in range(n)
                    for q in range(10)
                ]
            )
            for layout in (self.observation_layout, self.state_layout)
        }

    def _own(self, state: State, seat: int, o: dict[str, int]) -> list[int]:
        """Own hand, the card set aside to pass or swap, and the latest cards handed over."""
        ones = [o["hand"] + c for c in state.hands[seat]]
        if seat in state.set_aside:
            ones.append(o["set_aside"] + state.set_aside[seat])
        for name, seats, (card, other) in (
            ("handed_card", "handed_to", state.handed[seat]),
            ("received_card", "received_from", state.received[seat]),
        ):
            if card >= 0:
                ones += [o[name] + card, o[seats] + self.relative[seat][other]]
        return ones

    def _hidden(self, state: State, out: np.ndarray, o: dict[str, int]) -> list[int]:
        """Every hand, set-aside card and hand-over, the deck's cards and the Spell deck's
        counts."""
        ones = [o["hands"] + seat * N + c for seat, hand in enumerate(state.hands) for c in hand]
        ones += [o["set_aside_all"] + seat * N + c for seat, c in state.set_aside.items()]
        for seat in range(self.n):
            for name, seats, (card, other) in (
                ("handed_cards_all", "handed_to_all", state.handed[seat]),
                ("received_cards_all", "received_from_all", state.received[seat]),
            ):
                if card >= 0:
                    ones += [o[name] + seat * N + card, o[seats] + seat * P + other]
        ones += [o["deck_cards"] + c for c in state.deck]
        for spell in state.spell_deck:
            out[o["spell_deck_cards"] + self.spell_name[spell]] += self.spell_weight[spell]
        return ones

    def _public(self, state: State, out: np.ndarray, layout: Layout, me: int) -> list[int]:
        """Write the public fields seen from seat ``me``; return indices still to be set to 1."""
        o = layout.offsets
        questions = self.question_index[layout is self.state_layout]
        n = self.n
        relative = self.relative[me]
        ones = [
            o["phase"] + state.phase,
            o["num_players"] + n - 2,
            o["turn_player"] + relative[state.turn],
            o["actor"] + relative[state.actor],
            o["stunned"] + state.stunned + 1,
            o["binx_holder"] + (0 if state.binx < 0 else 1 + relative[state.binx]),
        ]
        index = [o["hand_sizes"] + relative[seat] for seat in range(n)]
        value = [len(hand) / N for hand in state.hands]
        if state.binx >= 0:
            off = o["binx_hand"]
            ones += [off + c for c in state.hands[state.binx]]
            if state.binx in state.set_aside:
                ones.append(o["binx_set_aside"] + state.set_aside[state.binx])
        tops, sizes, buried = o["pile_tops"], o["pile_sizes"], o["buried_cards"]
        for space, pile in enumerate(state.piles):
            if pile:
                ones.append(tops + space * N + pile[-1])
                index.append(sizes + space)
                value.append(len(pile) / N)
                depth = len(pile) - 1
                index += [buried + space * N + c for c in pile[:-1]]
                value += [1.0 / (depth - k) for k in range(depth)]
        off = o["discard_pile"]
        ones += [off + c for c in state.discard]
        off = o["removed_cards"]
        ones += [off + c for c in state.removed]
        off = o["tricks_used"]
        ones += [off + t for t, used in enumerate(state.tricks_used) if used]
        if state.spell >= 0:
            ones.append(o["current_spell"] + self.spell_name[state.spell])
        if state.partner >= 0:
            ones.append(o["swap_partner"] + relative[state.partner])
        discarded = [0.0] * S
        for spell in state.spell_discard:
            discarded[self.spell_name[spell]] += self.spell_weight[spell]
        off = o["spells_discarded"]
        index += range(off, off + S)
        value += discarded
        index += [
            o["deck_size"],
            o["no_questions"],
            o["sun"],
            o["trick_this_turn"],
            o["spell_deck_size"],
            o["discards_made"],
            o["burns_left"],
        ]
        value += [
            len(state.deck) / N,
            state.no_questions,
            state.sun / self.sunrise_steps,
            state.trick_this_turn,
            len(state.spell_deck) / self.spell_total,
            state.count / N if state.phase == Phase.DISCARD else 0.0,
            state.count / 3 if state.phase == Phase.BURN else 0.0,
        ]
        out[index] = value
        out[questions] = state.questions[:, self.seat_order[me]].ravel()
        return ones
