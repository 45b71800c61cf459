"""Confidence intervals: Wilson for proportions, percentile bootstrap for means and paired
differences."""

from __future__ import annotations

import math

import numpy as np

MIN_SEEDS = 3  # docs/benchmark_protocol.md: at least 3 training seeds per result, better 5


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


def paired_difference(
    a: np.ndarray, b: np.ndarray, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """Mean of ``a - b`` over the same deals (``a[i]`` and ``b[i]`` from deal ``i``) and the
    percentile-bootstrap interval of the per-deal differences, as the harness's paired
    differences: the deal's own difficulty cancels."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError("paired_difference needs two equal-length 1-d arrays (the same deals)")
    return bootstrap_mean_interval((x - y).tolist(), resamples, seed, level)


def bootstrap_ratio_interval(
    numerator: np.ndarray,
    denominator: np.ndarray,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, tuple[float, float, float]]:
    """Means of ``numerator`` [a, n] and ``denominator`` [b, n] (rows: seeds or pairs of seeds;
    columns: the same n deals in both), their ratio and difference, each as (estimate, low,
    high) from a two-stage percentile bootstrap: each array's rows with replacement, then the
    deals (one draw shared by both arrays, so the comparison stays paired). The ratio is NaN
    when the denominator's mean is 0, and its interval uses the resamples where it is not."""
    num, den = (
        np.atleast_2d(np.asarray(numerator, float)),
        np.atleast_2d(np.asarray(denominator, float)),
    )
    if num.size == 0 or den.size == 0 or num.shape[1] != den.shape[1]:
        raise ValueError("bootstrap_ratio_interval needs non-empty arrays over the same deals")
    rng = np.random.default_rng(seed)
    deals = num.shape[1]
    # How often each deal and each row is drawn, per resample: a mean over the draws is then a
    # weighted mean (counts / total), without materialising the resampled arrays.
    deal_counts = _counts(rng, deals, resamples)

    def means(x: np.ndarray) -> np.ndarray:
        per_row = x @ deal_counts.T / deals  # [rows, resamples]
        row_counts = _counts(rng, x.shape[0], resamples)  # [resamples, rows]
        return (row_counts * per_row.T).sum(axis=1) / x.shape[0]

    top, bottom = means(num), means(den)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(bottom != 0, top / bottom, np.nan)
    tail = (1 - level) / 2 * 100

    def interval(estimate: float, draws: np.ndarray) -> tuple[float, float, float]:
        draws = draws[np.isfinite(draws)]
        if not np.isfinite(estimate) or draws.size == 0:
            return estimate, math.nan, math.nan
        low, high = np.percentile(draws, [tail, 100 - tail])
        return estimate, float(low), float(high)

    a, b = float(num.mean()), float(den.mean())
    return {
        "numerator": interval(a, top),
        "denominator": interval(b, bottom),
        "ratio": interval(a / b if b else math.nan, ratios),
        "difference": interval(a - b, top - bottom),
    }


def _counts(rng: np.random.Generator, size: int, resamples: int) -> np.ndarray:
    """[resamples, size]: how often each of ``size`` items is drawn in each resample of
    ``size`` draws with replacement."""
    draws = rng.integers(0, size, (resamples, size))
    return np.stack([np.bincount(row, minlength=size) for row in draws]).astype(float)


Z_95 = 1.959964  # two-sided 95%
Z_POWER_80 = 0.841621  # one-sided 80% power


def verdict(low: float, high: float) -> str:
    """The table's verdict from a paired 95% interval of the game's measure: ``yes`` when it
    lies above 0, ``no`` when below, otherwise ``not sure``."""
    if low > 0:
        return "yes"
    if high < 0:
        return "no"
    return "not sure"


def detectable_difference(differences: np.ndarray) -> float:
    """The smallest true mean difference these paired per-deal ``differences`` would find with
    80% power at the 95% level: (z(0.975) + z(0.8)) times the standard error of their mean."""
    d = np.asarray(differences, dtype=float)
    if d.size < 2:
        return math.inf
    return float((Z_95 + Z_POWER_80) * d.std(ddof=1) / math.sqrt(d.size))


def judged(differences: np.ndarray | list[float]) -> dict[str, float | str]:
    """Paired per-deal ``differences`` of a game's measure: ``mean`` with its 95% percentile
    bootstrap interval (``low``, ``high``), the ``verdict`` (:func:`verdict`) and the
    ``detectable`` difference (:func:`detectable_difference`)."""
    d = np.asarray(differences, dtype=float)
    mean, low, high = bootstrap_mean_interval(d.tolist())
    return {
        "mean": mean,
        "low": low,
        "high": high,
        "verdict": verdict(low, high),
        "detectable": detectable_difference(d),
    }
