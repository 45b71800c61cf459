"""Rule-based Headless Horseman players that read only their observation and mask.

*focal* values each number 1–6 by where Ichabod would land if that number matched: progress counts,
a secret path is a bonus, a tree is worth its average spin, a Scare space is a heavy penalty, the
bridge is best. It plays the card whose number makes a match with the row at once if one does, and
otherwise the card of the best-valued number: every player using this rule ranks the numbers the
same way, so team-mates tend to pick the same number (a focal point). Cards that make the Horseman
ride far cost a little. *highest* follows a board-blind convention (the highest number), and
*safe* keeps the Horseman slow (the shortest ride first); see their classes.
"""

from __future__ import annotations

import numpy as np

from cauldron.envs.core.layout import Layout
from cauldron.envs.headless_horseman import actions as A
from cauldron.envs.headless_horseman import components as C
from cauldron.envs.headless_horseman.encoding import OBSERVATION_FIELDS

LAYOUT = Layout(OBSERVATION_FIELDS)
BOARD = C.BOARD
SCARE_PENALTY = 12.0
MATCH_BONUS = 4.0
RIDE_COST = 0.4


def landing_value(position: int, steps: int) -> float:
    """Worth of moving Ichabod ``steps`` from ``position`` (expected progress, minus scares)."""
    target = position + steps
    if position < BOARD.split_tree <= target:
        return float(np.mean(BOARD.green_path_end)) - position
    if target >= BOARD.bridge:
        return 2.0 * (BOARD.bridge - position)
    secret = dict(BOARD.secret_paths)
    if target in secret:
        return secret[target] - position + 1.0
    if target in BOARD.tree_spaces:
        return target + 2.0 - position
    if target in BOARD.scare_spaces:
        return steps - SCARE_PENALTY
    return float(steps)


class HeadlessHorsemanHeuristic:
    """The match-seeking, scare-avoiding player described in the module docstring."""

    name = "heuristic:focal"

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return pick_card(observation, action_mask, focal_cost)


def ride_of(card: int, speed: float) -> float:
    """Spaces ``card`` makes the Horseman ride (the Speed tile for a speed icon)."""
    bottom = C.bottom_of(card)
    return speed if bottom == C.SPEED_ICON else float(bottom)


def focal_cost(card: int, position: int, in_row: np.ndarray, speed: float) -> float:
    """Minus the focal heuristic's score of ``card``: the landing value of its top, a bonus when
    the row already shows that number, less the cost of the spaces it rides."""
    top = C.top_of(card)
    score = landing_value(position, top) + MATCH_BONUS * in_row[top - 1]
    return -(score - RIDE_COST * ride_of(card, speed))


def pick_card(observation: np.ndarray, action_mask: np.ndarray, key) -> int:
    """The legal card with the smallest ``key(card, position, in_row, speed)`` (Ichabod's
    space, which numbers the row shows, the speed tile's value), or the Play Top action when it
    is the only one."""
    legal = np.flatnonzero(action_mask)
    if legal.tolist() == [A.PLAY_TOP]:
        return A.PLAY_TOP
    position = int(np.argmax(observation[LAYOUT["ichabod"]]))
    in_row = observation[LAYOUT["row_tops"]] > 0
    speed = observation[LAYOUT["speed_tile"]][0] * 4
    return int(min(legal, key=lambda card: key(card, position, in_row, speed)))


class HighestHeuristic:
    """*highest*: a convention that ignores the board's special spaces. Match the row with the
    highest number that does; otherwise play the highest number in hand, skipping a number that
    lands on a Scare space while another card is held (ties: the shorter Horseman ride). Partners
    who share the convention meet on the high numbers everyone holds, and every match runs far."""

    name = "heuristic:highest"

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        def key(card: int, position: int, in_row: np.ndarray, speed: float) -> tuple:
            top = C.top_of(card)
            scare = position + top in BOARD.scare_spaces
            return (not in_row[top - 1], scare, -top, ride_of(card, speed))

        return pick_card(observation, action_mask, key)


class SafeHeuristic:
    """*safe*: keeps the Horseman slow. It plays the card that makes him ride least (blank
    first), and among those the number that matches the row, then the best landing value; a
    number that lands on a Scare space is never played while another card is held."""

    name = "heuristic:safe"

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        def key(card: int, position: int, in_row: np.ndarray, speed: float) -> tuple:
            top = C.top_of(card)
            scare = position + top in BOARD.scare_spaces
            return (scare, ride_of(card, speed), not in_row[top - 1], -landing_value(position, top))

        return pick_card(observation, action_mask, key)


HEURISTICS = {
    "focal": HeadlessHorsemanHeuristic,
    "highest": HighestHeuristic,
    "safe": SafeHeuristic,
}
