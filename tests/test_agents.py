"""Agents: baselines play legally and reach their known strength; checkpoints load safely."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cauldron import envs
from cauldron.agents import HEURISTICS, make_agent
from cauldron.envs.core.errors import ConfigError
from cauldron.eval.play import play_team

BASELINES = [
    (env_id, spec)
    for env_id in envs.ids()
    for spec in ["random"] + [f"heuristic:{h}" for h in HEURISTICS.get(env_id, {})]
]


def _play_with(env, agent, seeds) -> None:
    for seed in seeds:
        env.reset(seed=seed)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = agent.act(obs["observation"], obs["action_mask"])
            assert obs["action_mask"][action] == 1, name
            env.step(action)


@pytest.mark.parametrize("env_id, spec", BASELINES)
def test_baselines_only_choose_legal_actions(env_id, spec):
    env = envs.make(env_id, num_players=envs.spec(env_id).players[1])
    _play_with(env, make_agent(spec, env_id, seed=0), range(3))


def test_hocus_pocus_heuristic_team_stuns_more_than_random_team():
    """Known answer (the baselines' design targets): random teams ~0 stuns, greedy teams
    ~0.7–0.8."""
    seeds = range(150)
    greedy = np.mean(
        [g.info["stuns"] for g in play_team("hocus_pocus_v1", 4, "heuristic:greedy", seeds)]
    )
    rand = np.mean([g.info["stuns"] for g in play_team("hocus_pocus_v1", 4, "random", seeds)])
    assert rand < 0.1 and greedy > 0.5


def test_headless_horseman_heuristic_team_beats_random_team():
    """Calibration known answer: focal heuristic teams win about 80-90%, random under 20%."""
    seeds = range(150)
    wins = {
        spec: sum(g.info["outcome"] == 1 for g in play_team("headless_horseman_v1", 3, spec, seeds))
        for spec in ("random", "heuristic:focal")
    }
    assert wins["random"] < 45 and wins["heuristic:focal"] > 105


def test_same_seeds_same_games():
    assert play_team("hocus_pocus_v1", 3, "random", range(5)) == play_team(
        "hocus_pocus_v1", 3, "random", range(5)
    )


def test_bad_agent_specs():
    with pytest.raises(
        envs.ConfigError,
        match=r"available: \['heuristic:greedy', 'heuristic:planner', 'heuristic:consensus'\]",
    ):
        make_agent("heuristic:clever", "hocus_pocus_v1")
    with pytest.raises(envs.ConfigError, match="unknown agent spec"):
        make_agent("alphazero", "hocus_pocus_v1")
    with pytest.raises(envs.ConfigError, match="torch checkpoint 'nope.pt' not found"):
        make_agent("torch:nope.pt", "hocus_pocus_v1")
    with pytest.raises(envs.ConfigError, match="sb3 checkpoint 'nope.zip' not found"):
        make_agent("sb3:nope.zip", "hocus_pocus_v1")


def _torch_checkpoint(tmp_path, env_id: str):
    from cauldron.agents.torch_policy import PolicyNet, save_checkpoint

    env = envs.make(env_id)
    obs = env.observation_space("player_0")["observation"].shape[0]
    net = PolicyNet(obs, env.action_space("player_0").n, [32])
    path = tmp_path / f"{env_id}.pt"
    save_checkpoint(net, env_id, path)
    return path


def test_torch_checkpoint_plays_legally_and_refuses_another_game(tmp_path):
    path = _torch_checkpoint(tmp_path, "hexenflug_v1")
    agent = make_agent(f"torch:{path}", "hexenflug_v1")
    _play_with(envs.make("hexenflug_v1", num_players=2), agent, range(2))
    with pytest.raises(envs.ConfigError, match="trained for 'hexenflug_v1', not 'hocus_pocus_v1'"):
        make_agent(f"torch:{path}", "hocus_pocus_v1")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(envs.ConfigError, match="cannot load torch checkpoint"):
        make_agent(f"torch:{bad}", "hexenflug_v1")


def tiny_sb3_model(env_id: str, folder) -> Path:
    """An untrained MaskablePPO for ``env_id``'s spaces (one layer of 16), saved with its
    sidecar in ``folder``: the path of the zip."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    space = envs.make(env_id).observation_space("player_0")["observation"]
    n = int(envs.make(env_id).action_space("player_0").n)

    class Spaces(gym.Env):
        observation_space = space
        action_space = gym.spaces.Discrete(n)

        def reset(self, seed=None, options=None):
            return space.sample(), {}

        def step(self, action):
            return space.sample(), 0.0, True, False, {}

        def action_masks(self):
            return np.ones(n, bool)

    model = MaskablePPO("MlpPolicy", Spaces(), policy_kwargs={"net_arch": [16]}, seed=0)
    path = Path(folder) / "model.zip"
    model.save(path)
    meta = {"env_id": env_id, "obs_size": space.shape[0], "num_actions": n, "net_arch": [16]}
    (Path(folder) / "model.zip.cauldron.json").write_text(json.dumps(meta))
    return path


def test_sb3_checkpoint_plays_legally_from_weights_alone(tmp_path):
    env_id = "headless_horseman_v1"
    path = tiny_sb3_model(env_id, tmp_path)
    agent = make_agent(f"sb3:{path}", env_id)
    _play_with(envs.make(env_id, num_players=3), agent, range(2))
    with pytest.raises(envs.ConfigError, match="trained for 'headless_horseman_v1'"):
        make_agent(f"sb3:{path}", "voodoo_mania_v1")


def test_a_policy_agent_runs_on_one_thread_unless_a_command_or_the_variable_chose(monkeypatch):
    import torch

    from cauldron.agents import torch_policy

    monkeypatch.setattr(torch_policy, "_threads_chosen", False)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        make_agent("torch:checkpoints/hexenflug_torch.pt", "hexenflug_v1")
        assert torch.get_num_threads() == 1
        monkeypatch.setenv(torch_policy.THREADS_VARIABLE, "2")
        make_agent("torch:checkpoints/hexenflug_torch.pt", "hexenflug_v1")
        assert torch.get_num_threads() == 2
        monkeypatch.setenv(torch_policy.THREADS_VARIABLE, "many")
        with pytest.raises(ConfigError, match="CAULDRON_TORCH_THREADS must be a whole number"):
            make_agent("torch:checkpoints/hexenflug_torch.pt", "hexenflug_v1")
        monkeypatch.delenv(torch_policy.THREADS_VARIABLE)
        torch_policy.choose_threads(2)
        make_agent("torch:checkpoints/hexenflug_torch.pt", "hexenflug_v1")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
