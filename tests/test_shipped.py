"""Shipped checkpoints: every ``checkpoints/<name>.pt`` (PyTorch) or ``<name>.zip``
(SB3) comes with ``configs/eval/trained/<name>.yaml`` that replays its README row's evaluation,
and loads as a ``torch:`` or ``sb3:`` agent that plays legal games."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import torch
import yaml

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.agents.checkpoints import SB3_META
from cauldron.eval.config import load_config
from cauldron.train import __main__ as train_cli
from cauldron.train.ship import ship
from tests.test_train import tiny

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(p for p in (ROOT / "checkpoints").iterdir() if p.suffix in (".pt", ".zip"))
KIND = {".pt": "torch", ".zip": "sb3"}


def trained_with(checkpoint: Path) -> tuple[int, dict]:
    """The player count and options a shipped checkpoint records."""
    if checkpoint.suffix == ".pt":
        saved = torch.load(checkpoint, weights_only=True)
    else:
        saved = json.loads(checkpoint.with_name(checkpoint.name + SB3_META).read_text())
    return saved["num_players"], saved["options"]


def test_checkpoints_and_their_configs_come_in_pairs():
    configs = sorted((ROOT / "configs/eval/trained").glob("*.yaml"))
    assert SHIPPED, "no shipped checkpoints"
    assert [p.stem for p in SHIPPED] == [p.stem for p in configs]


@pytest.mark.parametrize("checkpoint", SHIPPED, ids=lambda p: p.stem)
def test_a_shipped_checkpoint_plays_legal_games_as_its_config_says(checkpoint, monkeypatch):
    monkeypatch.chdir(ROOT)
    config = load_config(f"configs/eval/trained/{checkpoint.stem}.yaml")
    assert trained_with(checkpoint) == (config.players[0], config.options)
    assert config.agents[0] == f"{KIND[checkpoint.suffix]}:checkpoints/{checkpoint.name}"
    agent = make_agent(config.agents[0], config.env, seed=0)
    env = envs.make(config.env, num_players=config.players[0], **config.options)
    for seed in range(2):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else agent.act(obs["observation"], obs["action_mask"])
            assert action is None or obs["action_mask"][action] == 1
            env.step(action)


def test_ship_copies_a_finished_run_and_refuses_an_unfinished_one(tmp_path):
    data = tiny("headless_horseman_v1", "torch", tmp_path, total_steps=128, final_eval_games=2)
    path = tmp_path / "quick.yaml"
    path.write_text(yaml.safe_dump(data))
    run = tmp_path / data["name"]
    with pytest.raises(envs.ConfigError, match="is not a finished torch or sb3 run"):
        ship(run, "mine", root=tmp_path)
    train_cli.main([str(path), "--quiet"])
    checkpoint, config_path = ship(run, "mine", root=tmp_path)
    assert checkpoint.read_bytes() == (run / "final.pt").read_bytes()
    written = yaml.safe_load(config_path.read_text())
    assert written["agents"][0] == "torch:checkpoints/mine.pt"
    assert written["players"] == [2] and written["games"] == 2


def test_ship_writes_an_sb3_run_as_a_model_maskableppo_loads(tmp_path):
    data = tiny("headless_horseman_v1", "sb3", tmp_path, total_steps=256, final_eval_games=2)
    path = tmp_path / "quick.yaml"
    path.write_text(yaml.safe_dump(data))
    run = tmp_path / data["name"]
    train_cli.main([str(path), "--quiet"])
    checkpoint, config_path = ship(run, "mine", root=tmp_path)
    with zipfile.ZipFile(checkpoint) as shipped, zipfile.ZipFile(run / "final.zip") as full:
        assert {"data", "policy.pth", "policy.optimizer.pth"} <= set(shipped.namelist())
        assert shipped.read("policy.pth") == full.read("policy.pth")
        assert len(shipped.read("policy.optimizer.pth")) < len(full.read("policy.optimizer.pth"))
    assert trained_with(checkpoint) == (2, {})
    written = yaml.safe_load(config_path.read_text())
    assert written["agents"][0] == "sb3:checkpoints/mine.zip"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        agent = make_agent(written["agents"][0], written["env"], seed=0)
        env = envs.make(written["env"], num_players=2)
        env.reset(seed=0)
        obs = env.observe(env.agent_selection)
        assert obs["action_mask"][agent.act(obs["observation"], obs["action_mask"])] == 1


@pytest.mark.parametrize("checkpoint", [p for p in SHIPPED if p.suffix == ".zip"], ids=str)
def test_a_shipped_sb3_zip_loads_in_maskableppo_and_plays_as_the_sb3_agent(checkpoint):
    """``MaskablePPO.load`` reads a shipped zip, and its deterministic predictions are the
    ``sb3:`` agent's actions (which reads only the zip's ``policy.pth``)."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(checkpoint, device="cpu")
    players, options = trained_with(checkpoint)
    env_id = json.loads(checkpoint.with_name(checkpoint.name + SB3_META).read_text())["env_id"]
    agent = make_agent(f"sb3:{checkpoint}", env_id, seed=0)
    env = envs.make(env_id, num_players=players, **options)
    env.reset(seed=3)
    for decisions, _ in enumerate(env.agent_iter()):
        obs, _, term, trunc, _ = env.last()
        if term or trunc or decisions == 40:
            break
        mask = obs["action_mask"]
        predicted, _ = model.predict(obs["observation"], action_masks=mask, deterministic=True)
        action = agent.act(obs["observation"], mask)
        assert int(predicted) == action
        env.step(action)
