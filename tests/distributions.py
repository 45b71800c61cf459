"""Do a batched engine's games and the reference's agree? Means of figures over whole games
(game length, wins, points), compared by the interval of their difference."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np


def assert_same_means(
    figures: dict[str, tuple[np.ndarray, np.ndarray]], confidence: float = 0.95, cases: int = 1
) -> None:
    """For every figure, the means of its two samples (batched, reference) agree within the
    interval of their difference. The intervals are Bonferroni-corrected over the figures and
    the ``cases`` of a parametrized test, so that all its comparisons hold together at
    ``confidence`` (three figures in one case at 95%: z = 2.394; in ten cases: z = 3.144). At
    95% apiece, one of the 30 comparisons of a ten-case slow test fails by chance 78% of the
    time."""
    z = NormalDist().inv_cdf(1 - (1 - confidence) / (2 * len(figures) * cases))
    for what, (a, b) in figures.items():
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        half = z * np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        assert abs(a.mean() - b.mean()) <= max(half, 1e-9), (what, a.mean(), b.mean(), half)
