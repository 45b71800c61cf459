"""Per-game agents for the ``python:`` fallback of the batched evaluator (tests only)."""

from __future__ import annotations

import numpy as np

from cauldron.agents import make_agent


class Reference:
    """A reference heuristic (``heuristic:<name>`` of ``env``) behind a ``python:`` spec; every
    object notes the seed its ``reset`` got in :data:`RESETS`."""

    RESETS: list[int | None] = []

    def __init__(self, env: str, name: str) -> None:
        self.inner = make_agent(f"heuristic:{name}", env)

    def reset(self, seed: int | None = None) -> None:
        Reference.RESETS.append(seed)
        self.inner.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        assert observation.dtype == np.float32 and action_mask.dtype == np.int8
        return np.int64(self.inner.act(observation, action_mask))


class Floaty:
    """Returns a float: not an action."""

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> float:
        return float(np.flatnonzero(action_mask)[0])


class Returns:
    """Returns ``action`` (a number, or ``first_legal`` / ``first_illegal`` of the mask), as
    the numpy type ``dtype`` if given."""

    def __init__(self, action: int | str, dtype: str | None = None) -> None:
        self.action, self.dtype = action, dtype

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> object:
        chosen = {
            "first_legal": lambda: np.flatnonzero(action_mask)[0],
            "first_illegal": lambda: np.flatnonzero(action_mask == 0)[0],
        }.get(self.action, lambda: self.action)()
        return np.dtype(self.dtype).type(chosen) if self.dtype else int(chosen)
