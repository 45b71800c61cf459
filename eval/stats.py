"""Confidence intervals: Wilson for proportions, percentile bootstrap for means."""

from __future__ import annotations

import math

import numpy as np


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a proportion (95% by default); (0, 1) when there are no trials."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def bootstrap_mean_interval(
    values: list[float], resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """Mean of ``values`` and its percentile-bootstrap interval (seeded, so reproducible)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("bootstrap_mean_interval needs at least one value")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, (resamples, data.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(data.mean()), float(low), float(high)
