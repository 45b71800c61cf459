"""The agent interface used by evaluation, training and play."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Agent(Protocol):
    """Chooses a legal action from one player's observation vector and action mask.

    ``reset`` is called at the start of every game (agents may keep memory within a game).
    """

    name: str

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...
