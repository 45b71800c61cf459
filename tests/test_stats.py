"""Interval maths against known values."""

from __future__ import annotations

import pytest

from cauldron.eval.stats import bootstrap_mean_interval, wilson_interval


def test_wilson_known_values():
    # Wilson 95% for 8/10: (0.4902, 0.9433); for 0/20: (0, 0.1611) (standard tables).
    assert wilson_interval(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert wilson_interval(0, 20) == pytest.approx((0.0, 0.1611), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_bootstrap_mean_interval_is_reproducible_and_brackets_the_mean():
    values = [0, 1, 1, 2, 3, 0, 1, 2, 2, 1] * 20
    mean, low, high = bootstrap_mean_interval(values, seed=1)
    assert mean == pytest.approx(1.3)
    assert low < mean < high and high - low < 0.4
    assert bootstrap_mean_interval(values, seed=1) == (mean, low, high)
    assert bootstrap_mean_interval([0.0] * 50) == (0.0, 0.0, 0.0)


def test_wilson_interval_always_contains_the_rate():
    for trials in (1, 7, 2000):
        for successes in (0, trials // 2, trials):
            low, high = wilson_interval(successes, trials)
            assert low <= successes / trials <= high
