"""What counts as an action: the one place every environment reads an action from its caller."""

from __future__ import annotations

import numpy as np


def as_action(action: object) -> int | None:
    """The action index ``action`` holds, or ``None`` if it holds none.

    Python and numpy integers count, as do 0-d and one-element integer arrays (what
    Stable-Baselines3's ``predict`` returns), as in Gymnasium's ``Discrete.contains``. Booleans,
    floats and anything else do not.
    """
    if isinstance(action, np.ndarray) and action.size == 1:
        action = action.reshape(())[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return None
    return int(action)
