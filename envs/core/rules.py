"""The interface between a game's pure rules and the PettingZoo layer (Pgx's Game split).

A rules object is made once per environment from the player count and options; it creates game
states and answers questions about them. States are plain dataclasses that the rules mutate in
``apply``; the environment validates every action against ``legal_mask`` first, so ``apply`` only
ever sees legal actions. Rules know nothing of encodings or rendering: the environment layer puts
rules, encoder and renderer together.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class Rules(Protocol):
    """What :class:`cauldron.envs.core.aec.CauldronAECEnv` needs from a game."""

    num_players: int
    num_actions: int

    def new_game(self, rng: np.random.Generator, start_seat: int) -> Any:
        """A fresh, dealt game state that draws all its chance from ``rng``."""

    def acting_seat(self, state: Any) -> int:
        """The seat whose decision the game waits for."""

    def legal_mask(self, state: Any) -> np.ndarray:
        """``int8`` mask over the action space for the acting seat."""

    def apply(self, state: Any, action: int) -> np.ndarray:
        """Play a legal ``action`` for the acting seat; return the reward of every seat."""

    def is_over(self, state: Any) -> bool:
        """Whether the game has ended."""

    def is_truncated(self, state: Any) -> bool:
        """Whether the game was cut short (it is then also over, but nobody won)."""

    def mid_step(self, state: Any) -> bool:
        """Whether a simultaneous step is half chosen (the environment truncates only between
        whole steps, so that AEC and Parallel play truncate alike)."""

    def phase_name(self, state: Any) -> str:
        """The name of the current phase, for errors and rendering."""

    def action_name(self, action: int) -> str:
        """A readable name of ``action``."""

    def info(self, state: Any, seat: int) -> dict[str, Any]:
        """The ``info`` dict of ``seat`` (the game's own figures, such as its score)."""


class PhasedRules:
    """Defaults for rules whose state has ``actor`` (the seat to decide) and ``phase`` (an
    ``IntEnum`` with an ``OVER`` member)."""

    def acting_seat(self, state: Any) -> int:
        return state.actor

    def is_over(self, state: Any) -> bool:
        return state.phase == type(state.phase).OVER

    def is_truncated(self, state: Any) -> bool:
        """Whether the game was cut short; by default a game always ends by its rules."""
        return False

    def mid_step(self, state: Any) -> bool:
        return False

    def phase_name(self, state: Any) -> str:
        return state.phase.name.lower()
