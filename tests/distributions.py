"""Do a batched engine's games and the reference's agree? Means of figures over whole games
(game length, wins, points), compared by the interval of their difference."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np


def assert_same_means(
    figures: dict[str, tuple[np.ndarray, np.ndarray]], confidence: float = 0.95
) -> None:
    """For every figure, the means of its two samples (batched, reference) agree within the
    interval of their difference. The intervals are Bonferroni-corrected over the figures, so
    that together they hold at ``confidence`` (three figures at 95%: z = 2.394 each): at 95%
    apiece, one figure in 30 of a slow test would fail by chance."""
    z = NormalDist().inv_cdf(1 - (1 - confidence) / (2 * len(figures)))
    for what, (a, b) in figures.items():
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        half = z * np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        assert abs(a.mean() - b.mean()) <= max(half, 1e-9), (what, a.mean(), b.mean(), half)
