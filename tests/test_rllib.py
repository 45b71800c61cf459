"""trainer: rllib and the rllib: agent. Config errors and weights-only loading run everywhere;
the RLlib parts (a local Ray instance of 2 CPUs) run where RLlib is installed."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.envs.core.errors import ConfigError
from cauldron.train.config import parse_config
from cauldron.train.runlog import read_metrics

HORSEMAN = {
    "name": "rllib-test",
    "env": "headless_horseman_v1",
    "num_players": 2,
    "trainer": "rllib",
    "num_envs": 2,
    "rollout_steps": 64,
    "minibatches": 2,
    "epochs": 1,
    "hidden": [16],
    "total_steps": 256,
    "eval_every": 1,
    "eval_games": 4,
    "final_eval_games": 10,
}
HEXENFLUG = {
    **HORSEMAN,
    "env": "hexenflug_v1",
    "opponents": ["random", "heuristic:greedy"],
    "self_play_every": 1,
}


def needs_rllib():
    pytest.importorskip(
        "ray.rllib",
        reason="RLlib is optional and pins an older gymnasium: pip install -e '.[rllib]' in its "
        "own environment",
    )


# ------------------------------------------------------------------ config (no RLlib needed)


@pytest.mark.parametrize(
    ("field", "value"),
    [("num_env_runners", 2), ("num_learners", 1), ("ray_address", "auto")],
)
@pytest.mark.parametrize("trainer", ["torch", "sb3"])
def test_rllib_fields_are_refused_for_other_trainers(trainer, field, value):
    data = {**HORSEMAN, "trainer": trainer, field: value}
    with pytest.raises(ConfigError, match=rf"{field} need trainer 'rllib'"):
        parse_config(data)


def test_rllib_without_ray_names_the_trainer_and_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigError, match=r"trainer 'rllib' needs Ray.*pip install"):
        parse_config(HORSEMAN)


def test_unsupported_ray_version_is_refused(monkeypatch):
    ray = pytest.importorskip("ray", reason="Ray is optional: pip install -e '.[ray]'")
    monkeypatch.setattr(ray, "__version__", "2.20.0")
    with pytest.raises(ConfigError, match=r"trainer 'rllib': Ray 2.20.0 is not supported"):
        parse_config(HORSEMAN)


def test_malformed_ray_address_is_refused():
    with pytest.raises(ConfigError, match="ray_address: String should match pattern"):
        parse_config({**HORSEMAN, "ray_address": "http://head"})


@pytest.mark.parametrize("game", ["headless_horseman", "hexenflug"])
def test_shipped_rllib_configs_are_valid(game):
    needs_rllib()
    from cauldron.train.config import load_config

    config = load_config(f"configs/train/{game}_rllib.yaml")
    assert config.trainer == "rllib" and config.env == f"{game}_v1"


# ------------------------------------------------------------------ the rllib: agent


def exported(folder: Path, env_id: str = "headless_horseman_v1") -> Path:
    """A policy file as trainer 'rllib' exports it, in a checkpoint-like folder."""
    torch = pytest.importorskip("torch")
    from cauldron.agents.torch_policy import PolicyNet, save_checkpoint

    env = envs.make(env_id)
    obs = env.observation_space("player_0")["observation"].shape[0]
    torch.manual_seed(0)
    net = PolicyNet(obs, env.action_space("player_0").n, [16])
    save_checkpoint(net, env_id, folder / "cauldron_policy.pt", {"trainer": "rllib"})
    return folder


def test_rllib_agent_plays_legal_moves_from_the_exported_weights(tmp_path):
    agent = make_agent(f"rllib:{exported(tmp_path)}", "headless_horseman_v1")
    env = envs.make("headless_horseman_v1", num_players=2)
    env.reset(seed=3)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else agent.act(obs["observation"], obs["action_mask"])
        assert action is None or obs["action_mask"][action] == 1
        env.step(action)
    assert agent.name == f"rllib:{tmp_path}"


def test_rllib_agent_needs_the_export_and_never_opens_rllibs_pickles(tmp_path):
    (tmp_path / "algorithm_state.pkl").write_bytes(pickle.dumps({"any": "state"}))
    with pytest.raises(ConfigError, match=r"holds no cauldron_policy.pt"):
        make_agent(f"rllib:{tmp_path}", "headless_horseman_v1")
    with pytest.raises(ConfigError, match=r"rllib checkpoint 'nowhere' not found"):
        make_agent("rllib:nowhere", "headless_horseman_v1")


class Trap:
    """Unpickling this would run ``Path.touch`` on the marker."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_pickle_in_place_of_the_export_is_refused_without_running(tmp_path):
    pytest.importorskip("torch")
    import torch

    marker = tmp_path / "ran"
    torch.save(
        {"format": "cauldron-torch-v1", "trap": Trap(marker)}, tmp_path / "cauldron_policy.pt"
    )
    with pytest.raises(ConfigError, match="refused without running them"):
        make_agent(f"rllib:{tmp_path}", "headless_horseman_v1")
    assert not marker.exists()


def test_rllib_agent_for_another_game_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="trained for 'headless_horseman_v1', not 'hexenflug_v1'"):
        make_agent(f"rllib:{exported(tmp_path)}", "hexenflug_v1")


# ------------------------------------------------------------------ with RLlib


@pytest.fixture(scope="module")
def ray_instance():
    needs_rllib()
    import ray
    import torch

    torch.set_num_threads(1)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_unreachable_ray_address_fails_fast_before_any_work(tmp_path):
    needs_rllib()
    from tests.test_ray_eval import free_port

    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(ConfigError, match=rf"ray_address '{address}': no Ray cluster answers"):
        parse_config({**HORSEMAN, "ray_address": address, "out": str(tmp_path)})


def test_exported_policy_acts_like_rllibs_module(ray_instance):
    import torch

    from cauldron.train.rllib import MaskedBridge, module_weights, ppo_config, to_policy_net

    config = parse_config(HORSEMAN)
    algo = ppo_config(config).build_algo()
    try:
        algo.train()
        module = algo.get_module()
        net = to_policy_net(module_weights(algo), config.hidden)
        env = MaskedBridge(ppo_config(config).env_config)
        obs, _ = env.reset(seed=1)
        batch_obs, batch_mask = [], []
        for _ in range(20):
            batch_obs.append(obs["observations"])
            batch_mask.append(obs["action_mask"])
            obs, *_ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        observations = torch.as_tensor(np.array(batch_obs))
        mask = torch.as_tensor(np.array(batch_mask))
        with torch.no_grad():
            theirs = module.forward_inference(
                {"obs": {"observations": observations, "action_mask": mask}}
            )["action_dist_inputs"]
            ours, _ = net.masked_logits(observations, mask)
        legal = mask.bool()
        assert torch.allclose(theirs[legal], ours[legal], atol=1e-5)
        assert torch.equal(theirs.argmax(-1), ours.argmax(-1))
    finally:
        algo.stop()


@pytest.mark.slow
@pytest.mark.parametrize("data", [HORSEMAN, HEXENFLUG], ids=["headless_horseman", "hexenflug"])
def test_tiny_rllib_run_saves_reloads_and_plays_in_the_harness(ray_instance, tmp_path, data):
    import torch

    from cauldron.train.__main__ import run

    config = parse_config({**data, "out": str(tmp_path)})
    summary = run(config, quiet=True)
    folder = tmp_path / "rllib-test"
    for artifact in ("config.yaml", "metrics.csv", "tb", "final.pt", "evaluation/report.md"):
        assert (folder / artifact).exists(), artifact
    assert (folder / "final_rllib" / "cauldron_policy.pt").is_file()
    assert list((folder / "checkpoints").glob("step_*.pt"))
    logged = max(row[0] for row in read_metrics(folder / "metrics.csv"))
    assert torch.load(folder / "final.pt", weights_only=True)["steps"] == logged > 0
    trained = f"rllib:{folder / 'final_rllib'}"
    assert summary["config"]["agents"][0] == trained
    played = [row for row in summary["rows"] if trained in row["lineup"]]
    assert played and all(len(row["games"]["seed"]) == 10 for row in played)
    agent = make_agent(trained, data["env"])  # reloads outside the run, from weights only
    assert agent.name == trained


@pytest.mark.slow
def test_self_play_snapshots_join_every_pool_and_the_oldest_leave(ray_instance):
    from cauldron.train.rllib import (
        MaskedBridge,
        add_snapshot,
        module_weights,
        ppo_config,
        to_policy_net,
    )

    config = parse_config({**HEXENFLUG, "num_env_runners": 1})
    algo = ppo_config(config).build_algo()
    try:
        net = to_policy_net(module_weights(algo), config.hidden)
        for _ in range(7):
            add_snapshot(algo, net, config.hidden)

        def pools(runner):
            return [
                (len(env.unwrapped.bridge.opponents), env.unwrapped.snapshots)
                for env in runner.env.unwrapped.envs
            ]

        remote = algo.env_runner_group.foreach_env_runner(pools, local_env_runner=False)
        assert remote == [[(2 + 5, 7)] * config.num_envs]  # 2 baselines, the 5 latest snapshots
        env = MaskedBridge(ppo_config(config).env_config)
        env.add_snapshot(net.state_dict(), config.hidden)
        obs, _ = env.reset(seed=0)
        assert obs["action_mask"].any()
    finally:
        algo.stop()
