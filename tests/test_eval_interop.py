"""Worked examples with other training libraries, run at a tiny budget (skipped without them)."""

from __future__ import annotations

import pytest


def test_tianshou_dqn_example_trains_and_tests_on_a_cauldron_game():
    pytest.importorskip("tianshou", reason="Tianshou is optional: pip install -e '.[interop]'")

    from examples.tianshou_dqn import train

    out = train(steps=300, num_envs=2, hidden=(32,), test_games=4)
    assert out["env_steps"] >= 300
    assert out["test_games"] == 4
    assert out["win_rate"] in (0.0, 0.25, 0.5, 0.75, 1.0)
    assert 0.0 <= out["win_low"] <= out["win_rate"] <= out["win_high"] <= 1.0
    assert out["beats_random"] == float(out["win_low"] > 0.5)
    assert out["seconds"] > 0


@pytest.mark.slow
def test_tianshou_dqn_example_beats_random_at_its_defaults():
    """The example's promise: at the default budget the learner's win rate over 200 test games
    against random has a 95% Wilson interval above one half (about 3 minutes on one core)."""
    pytest.importorskip("tianshou", reason="Tianshou is optional: pip install -e '.[interop]'")

    from examples.tianshou_dqn import train

    out = train()
    assert out["test_games"] == 200
    assert out["win_low"] > 0.5, out


def test_rllib_ppo_example_trains_a_masked_shared_policy():
    pytest.importorskip(
        "ray.rllib",
        reason="RLlib is optional and pins an older gymnasium: pip install -e '.[rllib]' in its "
        "own environment",
    )

    from examples.rllib_ppo import CauldronRLlibEnv, train

    env = CauldronRLlibEnv({"env_id": "hexenflug_v1", "num_players": 2})
    obs, _ = env.reset(seed=0)
    [first] = obs.values()
    assert set(first) == {"observations", "action_mask"} and first["action_mask"].dtype == "float32"
    returns = train("headless_horseman_v1", 2, iterations=2, batch=200, hidden=32)
    assert len(returns) == 2
