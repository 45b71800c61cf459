"""``cauldron train-bench``: row selection and what one measured row returns."""

from __future__ import annotations

import pytest

from cauldron import envs
from cauldron.train import bench


def test_only_keeps_the_named_trainers_rows_beside_the_peer():
    """``--only "torch, batched"`` yields one batched row per batched game and no threads or
    RLlib rows; the Hanabi peer, where it is installed, comes first."""
    rows = list(bench.rows(1024, (16,), 1, ["torch, batched"]))
    labels = [(label, env_id) for label, env_id, _ in rows]
    measured = [row for row in labels if row[1] != "hanabi_v5"]
    assert measured == [("torch, batched", env_id) for env_id in envs.batched_ids()]
    if len(labels) > len(measured):
        assert labels[0] == ("sb3", "hanabi_v5")


def test_an_unknown_trainer_is_refused_naming_the_choices(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--only", "jax"])
    assert "invalid choice: 'jax'" in capsys.readouterr().err


def test_a_batched_row_measures_its_rate_and_the_games_share(tmp_path):
    """A tiny batched run gives learner steps per second and the share of its updates' time
    spent stepping the games, a fraction strictly between 0 and 1."""
    rate, share = bench.time_training(
        "headless_horseman_v1", "torch", bench.BATCHED_SETTINGS, 2048, 0, 1, (16,)
    )
    assert rate > 0 and share is not None and 0.0 < share < 1.0
