"""The PettingZoo contract, for every registered environment and every allowed player count."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from cauldron import envs
from tests.conftest import play_random, random_legal_action


def test_registry_lists_versioned_ids():
    assert envs.ids() and all(i.rsplit("_v", 1)[1].isdigit() for i in envs.ids())


def test_api(env_case):
    env_id, n, options = env_case
    api_test(envs.make(env_id, num_players=n, **options), num_cycles=300)


def test_seed(env_case):
    env_id, n, options = env_case
    seed_test(lambda: envs.make(env_id, num_players=n, **options), num_cycles=300)


@pytest.mark.parametrize("env_id", [i for i in envs.ids() if not envs.spec(i).parallel])
def test_turn_based_games_have_no_parallel_env(env_id):
    with pytest.raises(envs.ConfigError, match="no Parallel API"):
        envs.make_parallel(env_id)


def test_parallel_api(parallel_case):
    env_id, n, options = parallel_case
    parallel_api_test(envs.make_parallel(env_id, num_players=n, **options), num_cycles=300)


def test_parallel_seed(parallel_case):
    """PettingZoo's parallel seed test samples actions without masks, so it runs in the
    `penalty` mode where an illegal action ends the game instead of raising."""
    env_id, n, options = parallel_case
    options = {**options, "illegal_action": "penalty"}
    parallel_seed_test(lambda: envs.make_parallel(env_id, num_players=n, **options), 300)


def test_aec_and_parallel_play_the_same_game(parallel_case):
    """Same seed and same choices: the AEC env (choices in turn) and the Parallel env (all at
    once) go through the same states."""
    env_id, n, options = parallel_case
    aec = envs.make(env_id, num_players=n, **options)
    par = envs.make_parallel(env_id, num_players=n, **options)
    aec.reset(seed=9)
    observations, _ = par.reset(seed=9)
    rng = np.random.default_rng(9)
    while par.agents:
        assert aec.state().tobytes() == par.state().tobytes()
        joint = {a: random_legal_action(observations[a]["action_mask"], rng) for a in par.agents}
        for agent in par.agents:
            assert aec.agent_selection == agent
            aec.step(joint[agent])
        observations, rewards, terms, _, _ = par.step(joint)
    assert aec.state().tobytes() == par.state().tobytes()
    assert all(aec.terminations.values()) and all(terms.values())
    assert aec.rewards == rewards


def test_dtypes_shapes_and_masks(env_case):
    """Observations are float32 in [0, 1] of the declared shape; masks are int8 0/1; only the
    acting agent has a non-empty mask; state() matches state_space."""
    env_id, n, options = env_case
    env = envs.make(env_id, num_players=n, **options)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for agent in env.agent_iter(400):
        obs, _, term, trunc, _ = env.last()
        space = env.observation_space(agent)
        assert obs["observation"].dtype == np.float32
        assert obs["observation"].shape == space["observation"].shape
        assert obs["observation"].min() >= 0.0 and obs["observation"].max() <= 1.0
        assert obs["action_mask"].dtype == np.int8
        assert set(np.unique(obs["action_mask"])) <= {0, 1}
        state = env.state()
        assert state.dtype == np.float32 and state.shape == env.state_space.shape
        assert env.state_space.contains(state)
        if term or trunc:
            env.step(None)
            continue
        assert obs["action_mask"].any()
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        env.step(random_legal_action(obs["action_mask"], rng))


def _trajectory(env_id: str, n: int, options: dict, disturb: bool) -> list:
    env = envs.make(env_id, num_players=n, **options)
    env.reset(seed=11)
    rng = np.random.default_rng(5)
    out = []
    for agent in env.agent_iter(600):
        if disturb:
            random.seed(random.random())
            np.random.seed(np.random.randint(1 << 30))
            np.random.random(7)
        obs, reward, term, trunc, _ = env.last()
        out.append((agent, obs["observation"].tobytes(), reward))
        env.step(None if term or trunc else random_legal_action(obs["action_mask"], rng))
    return out


def test_global_rng_isolation(env_case):
    """Disturbing `random` and `np.random` between steps changes nothing (RLCard's test)."""
    env_id, n, options = env_case
    assert _trajectory(env_id, n, options, False) == _trajectory(env_id, n, options, True)


def test_same_seed_same_game_different_seed_different_game(env_case):
    """The env's seed alone decides the chance events: same seed, same states along a fixed
    sequence of action choices; different seeds give different games."""
    env_id, n, options = env_case

    def states(seed):
        env = envs.make(env_id, num_players=n, **options)
        env.reset(seed=seed)
        rng = np.random.default_rng(0)
        out = []
        for _ in env.agent_iter(40):
            obs, _, term, trunc, _ = env.last()
            out.append(env.state().tobytes())
            env.step(None if term or trunc else random_legal_action(obs["action_mask"], rng))
        return out

    assert states(1) == states(1)
    assert len({tuple(states(s)) for s in range(4)}) > 1


def test_mask_fuzz(env_case):
    """Across random legal play, every unmasked action is accepted by a copy of the env, and every
    masked action raises IllegalActionError and leaves the env exactly as it was."""
    env_id, n, options = env_case
    env = envs.make(env_id, num_players=n, **options)
    env.reset(seed=7)
    rng = np.random.default_rng(7)
    for step, agent in enumerate(env.agent_iter(150)):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        mask = obs["action_mask"]
        legal = np.flatnonzero(mask)
        sample = legal if step % 10 == 0 else rng.choice(legal, min(3, len(legal)), replace=False)
        for action in sample:
            trial = copy.deepcopy(env)
            trial.step(int(action))
        illegal = np.flatnonzero(mask == 0)
        before = env.state().tobytes()
        for action in rng.choice(illegal, min(5, len(illegal)), replace=False):
            with pytest.raises(envs.IllegalActionError):
                env.step(int(action))
        assert env.state().tobytes() == before and env.agent_selection == agent
        env.step(random_legal_action(mask, rng))


def test_random_games_end(env_case):
    env_id, n, options = env_case
    env = envs.make(env_id, num_players=n, **options)
    for seed in range(3):
        env.reset(seed=seed)
        play_random(env, np.random.default_rng(seed))
        assert not env.agents
