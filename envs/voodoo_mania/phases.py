"""Phases of Voodoo Mania."""

from __future__ import annotations

from enum import IntEnum


class Phase(IntEnum):
    """``TICK``: every player chooses this tick's action; ``OVER``: the game has ended."""

    TICK = 0
    OVER = 1
