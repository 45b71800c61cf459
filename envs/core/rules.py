"""The interface between a game's pure rules and the PettingZoo layer (Pgx's Game split).

A rules object is made once per environment from the player count and options; it creates game
states and answers questions about them. States are plain dataclasses that the rules mutate in
``apply``; the environment validates every action against ``legal_mask`` first, so ``apply`` only
ever sees legal actions.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from envs.core.layout import Layout


class Rules(Protocol):
    """What :class:`envs.core.aec.CauldronAECEnv` needs from a game."""

    num_players: int
    num_actions: int
    observation_layout: Layout
    state_layout: Layout

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

    def observe(self, state: Any, seat: int) -> np.ndarray:
        """``float32`` observation of ``seat`` laid out by ``observation_layout``."""

    def encode_state(self, state: Any) -> np.ndarray:
        """``float32`` full-information encoding laid out by ``state_layout``."""

    def phase_name(self, state: Any) -> str:
        """The name of the current phase, for errors and rendering."""

    def action_name(self, action: int) -> str:
        """A readable name of ``action``."""

    def info(self, state: Any, seat: int) -> dict[str, Any]:
        """The ``info`` dict of ``seat`` (the game's own figures, such as its score)."""

    def render(self, state: Any, seat: int | None) -> str:
        """A text picture of the table as ``seat`` sees it, or all of it for ``None``."""
