"""Worked examples with other training libraries, run at a tiny budget (skipped without them)."""

from __future__ import annotations

import pytest


def test_tianshou_dqn_example_trains_and_tests_on_a_cauldron_game():
    pytest.importorskip("tianshou", reason="Tianshou is optional: pip install -e '.[interop]'")

    from examples.tianshou_dqn import train

    out = train("headless_horseman_v1", num_players=2, steps=300, num_envs=1, hidden=(32,))
    assert out["env_steps"] >= 300
    assert out["test_reward"] in (-1.0, 1.0)  # one whole test game, won or lost by the team


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
