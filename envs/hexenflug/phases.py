"""Phases of a Hexenflug turn."""

from __future__ import annotations

from enum import IntEnum


class Phase(IntEnum):
    """What the game waits for; the acting seat is ``State.actor``."""

    FLY = 0  # take display cards, draw, or land
    DRAWN = 1  # place the drawn card, add it to the display, or crash
    CAT_DISCARD = 2  # a player with six or more cards discards one (black cat)
    EXAMINE = 3  # after landing: choose a colour to examine, or skip
    EXAM_BUILD = 4  # choose the cards of the examination one at a time, then finish
    OVER = 5
