"""Shipped checkpoints (issue 17): every ``checkpoints/<name>.pt`` comes with
``configs/eval/trained/<name>.yaml`` that replays its README row's evaluation, and loads as a
``torch:`` agent that plays legal games."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml

import envs
from agents import make_agent
from eval.config import load_config
from tests.test_train import tiny
from train import __main__ as train_cli
from train.ship import ship

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "checkpoints").glob("*.pt"))


def test_checkpoints_and_their_configs_come_in_pairs():
    configs = sorted((ROOT / "configs/eval/trained").glob("*.yaml"))
    assert SHIPPED, "no shipped checkpoints"
    assert [p.stem for p in SHIPPED] == [p.stem for p in configs]


@pytest.mark.parametrize("checkpoint", SHIPPED, ids=lambda p: p.stem)
def test_a_shipped_checkpoint_plays_legal_games_as_its_config_says(checkpoint, monkeypatch):
    monkeypatch.chdir(ROOT)
    config = load_config(f"configs/eval/trained/{checkpoint.stem}.yaml")
    saved = torch.load(checkpoint, weights_only=True)
    assert (saved["num_players"], saved["options"]) == (config.players[0], config.options)
    assert config.agents[0] == f"torch:checkpoints/{checkpoint.name}"
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
    with pytest.raises(envs.ConfigError, match="is not a finished torch run"):
        ship(run, "mine", root=tmp_path)
    train_cli.main([str(path), "--quiet"])
    checkpoint, config_path = ship(run, "mine", root=tmp_path)
    assert checkpoint.read_bytes() == (run / "final.pt").read_bytes()
    written = yaml.safe_load(config_path.read_text())
    assert written["agents"][0] == "torch:checkpoints/mine.pt"
    assert written["players"] == [2] and written["games"] == 2
