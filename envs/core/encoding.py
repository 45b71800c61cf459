"""The skeleton every game's encoder fills in.

An observation is the public fields seen from a seat plus that seat's own private fields; the
``state()`` encoding is the public fields seen from seat 0 plus every hidden field. Subclasses
write ``_public``, ``_own`` and ``_hidden``: each returns the indices to set to 1 and may write
other values into ``out`` itself.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from cauldron.envs.core.layout import Field, Layout


class FlatEncoder:
    """Builds both layouts and the table of relative seats, and assembles the vectors."""

    observation_fields: ClassVar[list[Field]]
    state_fields: ClassVar[list[Field]]

    def __init__(self, rules: Any) -> None:
        self.rules = rules
        self.n = n = rules.num_players
        self.observation_layout = Layout(self.observation_fields)
        self.state_layout = Layout(self.state_fields)
        # relative[me][seat]: how many places to the left of ``me`` ``seat`` sits
        self.relative = [[(seat - me) % n for seat in range(n)] for me in range(n)]

    def observe(self, state: Any, seat: int) -> np.ndarray:
        """What ``seat`` may know, laid out by ``observation_layout``."""
        layout = self.observation_layout
        out = np.zeros(layout.size, np.float32)
        ones = self._public(state, out, layout, seat)
        ones += self._own(state, seat, layout.offsets)
        out[ones] = 1.0
        return out

    def encode_state(self, state: Any) -> np.ndarray:
        """Everything, with absolute seats, laid out by ``state_layout``."""
        layout = self.state_layout
        out = np.zeros(layout.size, np.float32)
        ones = self._public(state, out, layout, 0)
        ones += self._hidden(state, out, layout.offsets)
        out[ones] = 1.0
        return out

    def _public(self, state: Any, out: np.ndarray, layout: Layout, me: int) -> list[int]:
        raise NotImplementedError

    def _own(self, state: Any, seat: int, offsets: dict[str, int]) -> list[int]:
        raise NotImplementedError

    def _hidden(self, state: Any, out: np.ndarray, offsets: dict[str, int]) -> list[int]:
        raise NotImplementedError
