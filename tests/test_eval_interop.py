"""Worked examples with other training libraries, run at a tiny budget (skipped without them)."""

from __future__ import annotations

import pytest


def test_tianshou_dqn_example_trains_and_tests_on_a_cauldron_game():
    pytest.importorskip("tianshou", reason="Tianshou is optional: pip install -e '.[interop]'")
    import torch

    from examples.tianshou_dqn import train

    torch.set_num_threads(1)
    out = train("headless_horseman_v0", num_players=2, steps=300, num_envs=1, hidden=(32,))
    assert out["env_steps"] >= 300
    assert out["test_reward"] in (-1.0, 1.0)  # one whole test game, won or lost by the team
