"""Phases of a Headless Horseman turn."""

from __future__ import annotations

from enum import IntEnum


class Phase(IntEnum):
    """``PLAY``: every player secretly chooses a card; ``OVER``: the game has ended."""

    PLAY = 0
    OVER = 1
