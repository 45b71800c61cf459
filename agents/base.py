"""The agent interface used by evaluation, training and play."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Agent(Protocol):
    """Chooses a legal action from one player's observation vector and action mask.

    - ``reset(seed)`` is called before every game with a seed derived from the game's seed and
      the seat, so a stochastic agent plays the same game the same way every time.
    - ``act(observation, action_mask)`` gets the seat's float32 observation vector (its fields:
      ``envs.decode(env_id, observation)``) and the int8 mask of legal actions, and returns the
      index of a legal action (an ``int``).
    - Every seat gets its own object, so an agent may keep memory within a game.
    - ``name`` is optional: the harness names agents by their spec or key.

    Any class with these methods is an agent: ``python:<package.module>:<Class>?key=value`` puts
    it in an evaluation config, ``eval.evaluate`` takes instances.
    """

    name: str

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...
