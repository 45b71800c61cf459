"""Shipped checkpoints: every ``checkpoints/<name>.pt`` (PyTorch) or ``<name>.zip`` (SB3)
derives the evaluation config that replays its run's final evaluation (``cauldron eval
checkpoints/<name>.pt``; ``configs/eval/trained/<name>.yaml`` where that played other than the
default number of games), and loads as a ``torch:`` or ``sb3:`` agent that plays legal games."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import torch
import yaml

from cauldron import envs
from cauldron.agents import HEURISTICS, make_agent
from cauldron.agents.checkpoints import SB3_META
from cauldron.eval import __main__ as eval_cli
from cauldron.eval import trained
from cauldron.eval.config import load_config
from cauldron.train import __main__ as train_cli
from cauldron.train.ship import ship
from tests.test_train import tiny

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(p for p in (ROOT / "checkpoints").rglob("*") if p.suffix in (".pt", ".zip"))
OVERRIDES = sorted((ROOT / "configs/eval/trained").rglob("*.yaml"))


def trained_with(checkpoint: Path) -> tuple[str, int, dict]:
    """The env, player count and options a shipped checkpoint records."""
    if checkpoint.suffix == ".pt":
        saved = torch.load(checkpoint, weights_only=True)
    else:
        saved = json.loads(checkpoint.with_name(checkpoint.name + SB3_META).read_text())
    return saved["env_id"], saved["num_players"], saved["options"]


def replay_config(checkpoint: Path):
    """The evaluation config ``cauldron eval`` replays for ``checkpoint`` (run from the root)."""
    stem = checkpoint.relative_to(ROOT / "checkpoints").with_suffix("")
    override = ROOT / "configs/eval/trained" / f"{stem}.yaml"
    return load_config(
        override.relative_to(ROOT) if override.is_file() else checkpoint.relative_to(ROOT)
    )


def test_every_override_derives_from_a_shipped_checkpoint_of_its_name_and_sets_only_games():
    assert SHIPPED, "no shipped checkpoints"
    for path in OVERRIDES:
        data = yaml.safe_load(path.read_text())
        assert set(data) == {"base", "games"} and data["games"] != trained.GAMES
        base = (path.parent / data["base"]).resolve()
        assert base in SHIPPED and base.stem == path.stem


@pytest.mark.parametrize("checkpoint", SHIPPED, ids=lambda p: p.stem)
def test_a_shipped_checkpoint_plays_legal_games_as_its_derived_config_says(checkpoint, monkeypatch):
    monkeypatch.chdir(ROOT)
    config = replay_config(checkpoint)
    assert trained_with(checkpoint) == (config.env, config.players[0], config.options)
    spec = f"{trained.KINDS[checkpoint.suffix]}:{checkpoint.relative_to(ROOT).as_posix()}"
    heuristics = [f"heuristic:{h}" for h in HEURISTICS[config.env]]
    assert config.agents == [spec, "random", *heuristics]
    assert (config.labels, config.name, config.seed) == (
        {spec: checkpoint.stem},
        checkpoint.stem,
        0,
    )
    agent = make_agent(config.agents[0], config.env, seed=0)
    env = envs.make(config.env, num_players=config.players[0], **config.options)
    for seed in range(2):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else agent.act(obs["observation"], obs["action_mask"])
            assert action is None or obs["action_mask"][action] == 1
            env.step(action)


def test_cauldron_eval_takes_a_checkpoint_in_place_of_a_config(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    summary = eval_cli.main(
        ["checkpoints/hexenflug_torch.pt", "--games", "2", "--out", str(tmp_path), "--quiet"]
    )
    assert summary["config"]["agents"][0] == "torch:checkpoints/hexenflug_torch.pt"
    assert (tmp_path / "hexenflug_torch" / "report.md").is_file()


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("weights.bin", b"\x80\x03binary", "not a YAML config: not UTF-8 text"),
        ("notes.txt", b"just some words", "neither a config .* nor a checkpoint"),
        ("broken.pt", b"not a checkpoint", "cannot load torch checkpoint"),
        ("bare.zip", b"PK", "has no .*cauldron.json|cannot read"),
        ("missing.pt", None, "checkpoint .*missing.pt' not found"),
    ],
)
def test_a_file_that_is_neither_a_config_nor_a_checkpoint_is_a_clear_error(
    tmp_path, name, content, problem
):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(envs.ConfigError, match=problem):
        load_config(path)


def test_a_checkpoint_that_does_not_record_its_training_is_refused(tmp_path):
    path = tmp_path / "old.pt"
    torch.save({"format": "cauldron-torch-v1", "env_id": "hexenflug_v1"}, path)
    with pytest.raises(envs.ConfigError, match="does not record num_players, options"):
        load_config(path)


def test_ship_copies_a_finished_run_and_refuses_an_unfinished_one(tmp_path):
    data = tiny("headless_horseman_v1", "torch", tmp_path, total_steps=128, final_eval_games=2)
    path = tmp_path / "quick.yaml"
    path.write_text(yaml.safe_dump(data))
    run = tmp_path / data["name"]
    with pytest.raises(envs.ConfigError, match="is not a finished torch or sb3 run"):
        ship(run, "mine", root=tmp_path)
    train_cli.main([str(path), "--quiet"])
    checkpoint, override = ship(run, "mine", root=tmp_path)
    assert checkpoint.read_bytes() == (run / "final.pt").read_bytes()
    assert yaml.safe_load(override.read_text()) == {
        "base": "../../../checkpoints/mine.pt",
        "games": 2,
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        config = load_config("configs/eval/trained/mine.yaml")
    assert config.agents[0] == "torch:checkpoints/mine.pt"
    assert (config.players, config.games, config.name) == ([2], 2, "mine")
    checkpoint, override = ship(run, "methods/mine", root=tmp_path)
    assert checkpoint == tmp_path / "checkpoints/methods/mine.pt"
    assert yaml.safe_load(override.read_text())["base"] == "../../../../checkpoints/methods/mine.pt"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        config = load_config("configs/eval/trained/methods/mine.yaml")
    assert config.agents[0] == "torch:checkpoints/methods/mine.pt"


def test_ship_leaves_out_a_centralized_critic_and_the_policy_plays_the_same(tmp_path):
    data = tiny(
        "headless_horseman_v1", "torch", tmp_path, centralized_critic=True, final_eval_games=2
    )
    path = tmp_path / "quick.yaml"
    path.write_text(yaml.safe_dump(data))
    run = tmp_path / data["name"]
    train_cli.main([str(path), "--quiet"])
    checkpoint = ship(run, "mine", root=tmp_path)[0]
    full, shipped = (torch.load(p, weights_only=True) for p in (run / "final.pt", checkpoint))
    assert full["state_size"] > 0 and shipped["critic"] is False
    assert not any(key.startswith("critic.") for key in shipped["state_dict"])
    assert shipped["state_dict"].keys() == {
        key for key in full["state_dict"] if not key.startswith("critic.")
    }
    assert checkpoint.stat().st_size < (run / "final.pt").stat().st_size
    agents = [
        make_agent(f"torch:{p}", "headless_horseman_v1") for p in (run / "final.pt", checkpoint)
    ]
    env = envs.make("headless_horseman_v1", num_players=2)
    env.reset(seed=5)
    for decisions, _ in enumerate(env.agent_iter()):
        obs, _, term, trunc, _ = env.last()
        if term or trunc or decisions == 60:
            break
        actions = [a.act(obs["observation"], obs["action_mask"]) for a in agents]
        assert actions[0] == actions[1]
        env.step(actions[0])
    assert agents[1].explain().value is None
    with pytest.raises(envs.ConfigError, match="shipped without its critic"):
        agents[1].net.value(torch.zeros(1, full["state_size"]))


def test_a_checkpoint_whose_critic_flag_is_not_a_boolean_is_refused(tmp_path):
    from cauldron.agents.torch_policy import PolicyNet, load_checkpoint, save_checkpoint

    net = PolicyNet(8, 3, [4], state_size=5, critic=False)
    path = tmp_path / "p.pt"
    save_checkpoint(net, "hexenflug_v1", path)
    assert load_checkpoint(path)[1]["critic"] is False
    data = torch.load(path, weights_only=True)
    torch.save({**data, "critic": "no"}, path)
    with pytest.raises(envs.ConfigError, match="critic must be true or false"):
        load_checkpoint(path)


def test_ship_writes_an_sb3_run_as_a_model_maskableppo_loads(tmp_path):
    data = tiny("headless_horseman_v1", "sb3", tmp_path, total_steps=256, final_eval_games=2)
    path = tmp_path / "quick.yaml"
    path.write_text(yaml.safe_dump(data))
    run = tmp_path / data["name"]
    train_cli.main([str(path), "--quiet"])
    checkpoint = ship(run, "mine", root=tmp_path)[0]
    with zipfile.ZipFile(checkpoint) as shipped, zipfile.ZipFile(run / "final.zip") as full:
        assert {"data", "policy.pth", "policy.optimizer.pth"} <= set(shipped.namelist())
        assert shipped.read("policy.pth") == full.read("policy.pth")
        assert len(shipped.read("policy.optimizer.pth")) < len(full.read("policy.optimizer.pth"))
    assert trained_with(checkpoint) == ("headless_horseman_v1", 2, {})
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        config = load_config("checkpoints/mine.zip")
        assert config.agents[0] == "sb3:checkpoints/mine.zip"
        agent = make_agent(config.agents[0], config.env, seed=0)
        env = envs.make(config.env, num_players=2)
        env.reset(seed=0)
        obs = env.observe(env.agent_selection)
        assert obs["action_mask"][agent.act(obs["observation"], obs["action_mask"])] == 1


@pytest.mark.parametrize("checkpoint", [p for p in SHIPPED if p.suffix == ".zip"], ids=str)
def test_a_shipped_sb3_zip_loads_in_maskableppo_and_plays_as_the_sb3_agent(checkpoint):
    """``MaskablePPO.load`` reads a shipped zip, and its deterministic predictions are the
    ``sb3:`` agent's actions (which reads only the zip's ``policy.pth``)."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(checkpoint, device="cpu")
    env_id, players, options = trained_with(checkpoint)
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
