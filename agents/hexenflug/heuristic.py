"""Rule-based Hexenflug players that read only their observation and mask.

All three estimate the chance that the next draw cannot be placed from the cards they have not seen
(everything but the hands, the layouts, the display, the discard pile and the drawn card). Landing
is legal only once a card was drawn this turn, so all always draw at least once.
The *cautious* player lands as soon as a crash becomes more likely than 30%, lands softly once a
colour can pay for an examination (three cards), and keeps its rows tight (gaps of at most four);
the *greedy* player places every card it can, flies until a crash is as likely as not, and lands
softly only with four cards of a colour. Both take every useful display card, examine with as many
cards as they can, and discard their least useful cards on a black cat. The *banker* spends cards
only at the best rate (five cards for three Spellbooks); see :class:`BankerHeuristic`.
"""

from __future__ import annotations

import numpy as np

from cauldron.envs.core.layout import Layout
from cauldron.envs.hexenflug import actions as A
from cauldron.envs.hexenflug import components as C
from cauldron.envs.hexenflug.encoding import OBSERVATION_FIELDS
from cauldron.envs.hexenflug.phases import Phase

LAYOUT = Layout(OBSERVATION_FIELDS)
CARDS = np.arange(C.NUM_CARDS)
COLOUR = CARDS // C.MAX_VALUE
VALUE = CARDS % C.MAX_VALUE + 1
FULL_EXAM, FULL_BOOKS = 5, 3  # Examination: five cards of a colour earn three Spellbooks
MAX_BOOKS = 9  # the observation's supply and books are divided by 9


class HexenflugHeuristic:
    """Push-your-luck player with a crash-risk threshold (see the module docstring)."""

    def __init__(self, name: str, risk: float, land_with: int, max_gap: int) -> None:
        self.name = f"heuristic:{name}"
        self.risk, self.land_with, self.max_gap = risk, land_with, max_gap

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = observation
        legal = np.flatnonzero(action_mask).tolist()  # ascending: ties go to the lowest id
        phase = int(np.argmax(obs[LAYOUT["phase"]]))
        hand = np.flatnonzero(obs[LAYOUT["hands"]][: C.NUM_CARDS])
        own_layout = np.flatnonzero(obs[LAYOUT["layouts"]][: C.NUM_CARDS])
        tops = np.zeros(C.NUM_COLOURS, int)
        for card in own_layout:
            tops[COLOUR[card]] = max(tops[COLOUR[card]], VALUE[card])
        if phase == Phase.FLY:
            return self._fly(obs, legal, hand, own_layout, tops)
        if phase == Phase.DRAWN:
            drawn = int(np.argmax(obs[LAYOUT["drawn_card"]]))
            gap = VALUE[drawn] - tops[COLOUR[drawn]]
            if A.PLACE in legal and (gap <= self.max_gap or A.DISPLAY not in legal):
                return A.PLACE
            if A.DISPLAY in legal:
                return A.DISPLAY
            return A.CRASH_KEEP if A.CRASH_KEEP in legal else A.CRASH
        if phase == Phase.EXAMINE:
            options = [a for a in legal if A.EXAMINE <= a < A.SKIP]
            if not options:
                return A.SKIP
            counts = np.bincount(COLOUR[hand], minlength=C.NUM_COLOURS)
            best = max(options, key=lambda a: counts[a - A.EXAMINE])
            return best if self._examines(obs, hand, best - A.EXAMINE) else A.SKIP
        if phase == Phase.EXAM_BUILD:
            cards = [a - A.CHOOSE for a in legal if A.CHOOSE <= a < A.FINISH]
            if not cards:
                return A.FINISH
            colour = int(np.argmax(obs[LAYOUT["exam_colour"]]))
            own = [c for c in cards if COLOUR[c] == colour]
            return A.CHOOSE + (
                min(own, key=lambda c: VALUE[c]) if own else min(cards, key=lambda c: VALUE[c])
            )
        counts = np.bincount(COLOUR[hand], minlength=C.NUM_COLOURS)
        choices = [a - A.CHOOSE for a in legal]
        return A.CHOOSE + min(choices, key=lambda c: (counts[COLOUR[c]], VALUE[c]))

    def _fly(self, obs, legal, hand, own_layout, tops) -> int:
        takes = [a - A.TAKE for a in legal if A.TAKE <= a < A.DRAW]
        useful = [c for c in takes if VALUE[c] - tops[COLOUR[c]] <= self.max_gap]
        if useful:
            return A.TAKE + min(useful, key=lambda c: VALUE[c] - tops[COLOUR[c]])
        lands = [a - A.LAND for a in legal if A.LAND <= a < A.EXAMINE]
        if not lands:
            return A.DRAW
        hand_counts = np.bincount(COLOUR[hand], minlength=C.NUM_COLOURS)
        row_counts = np.bincount(COLOUR[own_layout], minlength=C.NUM_COLOURS)
        best = max(lands, key=lambda c: hand_counts[c] + row_counts[c])
        displayed = obs[LAYOUT["displayed"]][0] > 0
        if displayed:
            return A.LAND + best if self._crash_risk(obs, tops) > self.risk else A.DRAW
        if hand_counts[best] + row_counts[best] >= self.land_with:
            return A.LAND + best
        return A.DRAW

    def _examines(self, obs: np.ndarray, hand: np.ndarray, colour: int) -> bool:
        """Whether to examine ``colour`` (the legal colour with most cards in hand): always."""
        return True

    @staticmethod
    def _crash_risk(obs: np.ndarray, tops: np.ndarray) -> float:
        seen = obs[LAYOUT["display"]] + obs[LAYOUT["discard_pile"]] + obs[LAYOUT["drawn_card"]]
        for table in ("hands", "layouts"):
            seen = seen + obs[LAYOUT[table]].reshape(C.MAX_PLAYERS, C.NUM_CARDS).sum(axis=0)
        unseen = np.flatnonzero(seen == 0)
        if unseen.size == 0:
            return 1.0
        return float(np.mean(VALUE[unseen] <= tops[COLOUR[unseen]]))


class BankerHeuristic(HexenflugHeuristic):
    """*banker*: Spellbooks at the best rate. Five cards of a colour earn three Spellbooks, three
    cards only one, and a black cat only takes cards from hands of six or more; so the banker
    lands softly as soon as a colour has five cards in hand and layout, holds up to five cards in
    hand, and examines only with five cards of the colour, unless the colour's supply is down to
    two Spellbooks or fewer, its hand holds six cards or more, or one more exhausted colour would
    end the game. It flies like *cautious* otherwise."""

    def __init__(self) -> None:
        super().__init__("banker", risk=0.3, land_with=FULL_EXAM, max_gap=4)

    def _examines(self, obs: np.ndarray, hand: np.ndarray, colour: int) -> bool:
        supply = np.rint(obs[LAYOUT["supply"]] * MAX_BOOKS)
        players = int(np.argmax(obs[LAYOUT["num_players"]])) + 2
        exhausted = int(np.count_nonzero(supply == 0))
        return bool(
            np.count_nonzero(COLOUR[hand] == colour) >= FULL_EXAM
            or supply[colour] < FULL_BOOKS
            or hand.size > FULL_EXAM
            or exhausted + 1 >= C.exhausted_colours_to_end(players)
        )


def cautious() -> HexenflugHeuristic:
    return HexenflugHeuristic("cautious", risk=0.3, land_with=3, max_gap=4)


def greedy() -> HexenflugHeuristic:
    return HexenflugHeuristic("greedy", risk=0.5, land_with=4, max_gap=15)


HEURISTICS = {"cautious": cautious, "greedy": greedy, "banker": BankerHeuristic}
