"""The bridge's reward-shaping hook: a callable of the game state and the move."""

from __future__ import annotations

import numpy as np
import pytest

from cauldron.train.bridge import SingleAgentBridge, load_shaping
from cauldron.train.config import parse_config
from tests import shaping_example


def test_shaping_adds_to_the_learners_reward_after_every_move():
    plain = SingleAgentBridge("headless_horseman_v1", 2, seed=0)
    shaped = SingleAgentBridge(
        "headless_horseman_v1", 2, seed=0, reward_shaping=shaping_example.bonus_for_seat_0
    )
    shaping_example.CALLS.clear()
    plain.reset(seed=3)
    shaped.reset(seed=3)
    for _ in range(4):
        action = int(np.flatnonzero(plain.action_masks())[0])
        seat = shaped.seat()
        _, base, *_ = plain.step(action)
        _, reward, *_ = shaped.step(action)
        assert reward == pytest.approx(base + (0.25 if seat == 0 else 0.0))
    event = shaping_example.CALLS[0]
    assert set(event) == {"seat", "action", "action_name", "rewards"}
    assert isinstance(event["action_name"], str) and len(event["rewards"]) == 2


def test_shaping_sees_the_opponents_moves_too():
    from cauldron.agents import make_agent

    pool = [lambda rng: make_agent("random", "hexenflug_v1", int(rng.integers(2**31)))]
    bridge = SingleAgentBridge(
        "hexenflug_v1",
        2,
        opponents=pool,
        seed=0,
        reward_shaping=shaping_example.bonus_for_seat_0,
    )
    shaping_example.CALLS.clear()
    bridge.reset(seed=1)
    for _ in range(60):
        _, _, term, trunc, _ = bridge.step(int(np.flatnonzero(bridge.action_masks())[0]))
        if term or trunc:
            break
    assert {e["seat"] for e in shaping_example.CALLS} == {0, 1}


@pytest.mark.parametrize(
    "spec, match",
    [
        ("tests.shaping_example", "package.module:function"),
        ("tests.nowhere:f", "cannot be imported"),
        ("tests.shaping_example:missing", "cannot be imported"),
        ("tests.shaping_example:NOT_CALLABLE", "is not callable"),
    ],
)
def test_bad_shaping_specs_are_rejected_naming_the_spec(spec, match):
    with pytest.raises(ValueError, match=match):
        load_shaping(spec)


def test_training_config_checks_the_shaping_function(tmp_path):
    data = {"env": "headless_horseman_v1", "out": str(tmp_path)}
    config = parse_config({**data, "reward_shaping": "tests.shaping_example:bonus_for_seat_0"})
    assert config.reward_shaping.endswith("bonus_for_seat_0")
    with pytest.raises(ValueError, match="cannot be imported"):
        parse_config({**data, "reward_shaping": "tests.nowhere:f"})
    with pytest.raises(ValueError, match="needs engine 'reference'"):
        parse_config(
            {
                **data,
                "engine": "batched",
                "reward_shaping": "tests.shaping_example:bonus_for_seat_0",
            }
        )
