"""The environment contract every game keeps: truncation, errors that pickle, what
counts as an action, option types, steps after the end, and penalties."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.core.actions import as_action

PARALLEL_IDS = [i for i in envs.ids() if envs.spec(i).parallel]


def lowest_legal_game(env_id: str, num_players: int, **options):
    """Play the lowest legal action every step until the game ends; return the env and steps."""
    env = envs.make(env_id, num_players=num_players, **options)
    env.reset(seed=3)
    steps = 0
    for agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
        steps += 1
    return env, steps


def test_hexenflug_lowest_legal_policy_is_truncated_at_max_steps():
    """The degenerate policy that crashed forever (12,000+ turns) now ends as a truncation."""
    env, steps = lowest_legal_game("hexenflug_v1", 2, max_steps=3_000)
    assert steps == 3_000
    assert all(env.truncations.values()) and not any(env.terminations.values())


@pytest.mark.parametrize("env_id", envs.ids())
def test_every_game_truncates_at_max_steps(env_id):
    env, steps = lowest_legal_game(env_id, 2, max_steps=7)
    assert 7 <= steps <= 8  # simultaneous games truncate only between whole steps
    assert all(env.truncations.values())


@pytest.mark.parametrize("env_id", PARALLEL_IDS)
def test_parallel_truncates_like_aec(env_id):
    env = envs.make_parallel(env_id, num_players=2, max_steps=7)
    observations, _ = env.reset(seed=3)
    joint_steps = 0
    while env.agents:
        actions = {a: int(np.flatnonzero(observations[a]["action_mask"])[0]) for a in env.agents}
        observations, _, terms, truncs, _ = env.step(actions)
        joint_steps += 1
    assert joint_steps == 4 and all(truncs.values()) and not any(terms.values())


@pytest.mark.parametrize("env_id", PARALLEL_IDS)
def test_parallel_step_after_the_end_raises_and_changes_nothing(env_id):
    env = envs.make_parallel(env_id, num_players=2, max_steps=2)
    observations, _ = env.reset(seed=0)
    actions = {a: int(np.flatnonzero(observations[a]["action_mask"])[0]) for a in env.agents}
    env.step(actions)
    assert env.agents == []
    before = env.state().copy()
    with pytest.raises(envs.IllegalActionError, match="the game has ended"):
        env.step(actions)
    assert np.array_equal(before, env.state())


@pytest.mark.parametrize("action", [True, False, np.bool_(True), 1.0, "1", [1, 2], None])
def test_non_integer_actions_are_illegal_and_change_nothing(action):
    env = envs.make("hocus_pocus_v1", num_players=3)
    env.reset(seed=0)
    before = env.unwrapped.state().copy()
    with pytest.raises(envs.IllegalActionError, match="illegal action"):
        env.step(action)
    assert np.array_equal(before, env.unwrapped.state())


def test_zero_d_and_one_element_arrays_count_as_their_integer():
    assert as_action(np.array(4)) == 4 and as_action(np.array([4])) == 4
    assert as_action(np.int8(4)) == 4 and as_action(np.array([4, 5])) is None
    env = envs.make("hexenflug_v1", num_players=2)
    env.reset(seed=0)
    legal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
    env.step(np.array([legal]))
    assert env.unwrapped._steps == 1


def test_errors_survive_pickling_with_their_message():
    env = envs.make("hexenflug_v1", num_players=2)
    env.reset(seed=0)
    with pytest.raises(envs.IllegalActionError) as caught:
        env.step(10_000)
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is envs.IllegalActionError and str(again) == str(caught.value)
    assert again.legal == caught.value.legal
    config = pickle.loads(pickle.dumps(envs.ConfigError("bad option")))
    assert str(config) == "bad option"


@pytest.mark.parametrize(
    "env_id, options, match",
    [
        ("headless_horseman_v1", {"handless_seats": 1}, "'handless_seats' must be of type tuple"),
        ("headless_horseman_v1", {"handless_seats": None}, "must be of type tuple"),
        ("headless_horseman_v1", {"handless_seats": (True,)}, "no bools"),
        ("headless_horseman_v1", {"progress_reward": math.nan}, "finite"),
        ("hocus_pocus_v1", {"stun_reward": math.inf}, "finite"),
        ("hexenflug_v1", {"illegal_reward": -math.inf}, "finite"),
        ("hexenflug_v1", {"max_steps": 0}, "'max_steps' must be at least 1"),
        ("hexenflug_v1", {"max_steps": True}, "must be of type int"),
    ],
)
def test_bad_option_types_raise_config_error(env_id, options, match):
    with pytest.raises(envs.ConfigError, match=match):
        envs.make(env_id, num_players=2, **options)


def test_numpy_numbers_are_accepted_like_python_numbers():
    env = envs.make(
        "headless_horseman_v1",
        num_players=np.int64(3),
        progress_reward=np.float32(0.5),
        max_steps=np.int32(500),
    )
    assert env.unwrapped.rules.num_players == 3 and env.unwrapped.options.max_steps == 500
    assert type(env.unwrapped.options.max_steps) is int
    with pytest.raises(envs.ConfigError, match="takes 2 to 4 players, got True"):
        envs.make("headless_horseman_v1", num_players=True)


@pytest.mark.parametrize("env_id", envs.ids())
def test_penalty_is_shared_by_a_cooperative_team_and_the_offender_alone_otherwise(env_id):
    env = envs.make(env_id, num_players=3, illegal_action="penalty", illegal_reward=-2.0)
    env.reset(seed=0)
    offender = env.agent_selection
    mask = env.observe(offender)["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    cooperative = envs.spec(env_id).cooperative
    for agent in env.agents:
        expected = -2.0 if cooperative or agent == offender else 0.0
        assert env.rewards[agent] == expected
        assert env.infos[agent]["illegal_action"] == (agent == offender)
        assert env.infos[agent]["illegal_agent"] == offender
    assert all(env.terminations.values())
