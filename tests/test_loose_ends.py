"""Loose ends of a first day with Cauldron: old ids, batched decoding, action names, a missing
SB3, config hashes, ``eval --quiet``, torch threads in the examples, the Gymnasium view."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

from cauldron import envs

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("env_id", envs.ids())
def test_an_old_version_id_names_the_current_one(env_id):
    old = env_id.rpartition("_v")[0] + "_v0"
    with pytest.raises(envs.ConfigError, match=f"current version of this game is '{env_id}'"):
        envs.make(old)
    with pytest.raises(envs.ConfigError, match="unknown environment id 'chess_v6'"):
        envs.make("chess_v6")


def test_decode_takes_a_batch_of_observations_row_by_row():
    env = envs.make("hocus_pocus_v1", num_players=4)
    rows = []
    for seed in (0, 1, 2):
        env.reset(seed=seed)
        rows.append(env.observe(env.agent_selection)["observation"])
    batch = np.stack(rows)
    fields = envs.decode("hocus_pocus_v1", batch)
    layout = envs.layout("hocus_pocus_v1")
    for field in layout.fields:
        assert fields[field.name].shape == (3, field.size)
        for i, row in enumerate(rows):
            np.testing.assert_array_equal(
                fields[field.name][i], envs.decode("hocus_pocus_v1", row)[field.name]
            )
    with pytest.raises(envs.ConfigError, match=r"\[B, "):
        envs.decode("hocus_pocus_v1", batch[None])


def test_action_names_come_from_the_registry():
    from cauldron.envs.hocus_pocus import actions as hocus_pocus

    assert envs.action_name("hocus_pocus_v1", hocus_pocus.FINISH) == "finish discarding"
    assert envs.action_name("voodoo_mania_v1", np.int64(0)) == "wait"
    assert envs.action_name("headless_horseman_v1", 30) == "play the top card of the draw pile"
    for env_id in envs.ids():
        size = int(envs.make(env_id).action_space("player_0").n)
        names = [envs.action_name(env_id, a) for a in range(size)]
        assert len(set(names)) == size, env_id  # every action has its own name
        for bad in (-1, size, 1.0, "3"):
            with pytest.raises(envs.ConfigError, match=f"integers 0..{size - 1}"):
                envs.action_name(env_id, bad)


def test_train_on_sb3_without_sb3_contrib_says_what_to_install(monkeypatch, tmp_path, capsys):
    from cauldron.envs.core.errors import run_command
    from cauldron.train.__main__ import main

    monkeypatch.setitem(sys.modules, "sb3_contrib", None)  # importing it now fails
    monkeypatch.delitem(sys.modules, "cauldron.train.sb3", raising=False)
    argv = [str(ROOT / "configs/train/hocus_pocus_sb3.yaml"), "--set", f"out={tmp_path}"]
    with pytest.raises(SystemExit) as stop:
        run_command(lambda: main(argv))
    message = str(stop.value.code)
    assert message.startswith("error: trainer 'sb3' needs") and "pip install" in message
    assert "sb3_contrib" in message and "\n" not in message
    assert not any(tmp_path.iterdir())  # stopped before any run folder was made


def test_config_hash_ignores_where_and_how_a_config_runs():
    from cauldron.eval.provenance import config_hash, provenance

    config = {"env": "hocus_pocus_v1", "games": 10, "seed": 0, "agents": ["random"]}
    placed = {**config, "name": "elsewhere", "out": "/tmp/x", "workers": 7}
    assert config_hash(placed) == config_hash(config)
    assert config_hash({**config, "games": 11}) != config_hash(config)
    libraries = provenance(config)["libraries"]
    for package in ("stable-baselines3", "sb3-contrib"):
        if installed(package):
            assert libraries[package]
        else:
            assert package not in libraries


def installed(package: str) -> bool:
    from cauldron.eval.provenance import version

    return version(package) is not None


def test_eval_quiet_hides_the_progress_bar(tmp_path, capsys):
    from cauldron.eval.__main__ import main

    config = tmp_path / "tiny.yaml"
    config.write_text(
        "env: hocus_pocus_v1\nplayers: [2]\nagents: [random]\ngames: 2\nworkers: 1\n"
        f"out: {tmp_path}\nname: tiny\n"
    )
    main([str(config), "--quiet"])
    assert "game/s" not in capsys.readouterr().err
    main([str(config)])
    assert "game/s" in capsys.readouterr().err  # the bar shows without --quiet


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("[!_]*.py")), ids=lambda p: p.name)
def test_examples_set_torch_threads_from_an_argument(path):
    """The examples' libraries (Tianshou, RLlib) are optional and absent here, so read the
    source: ``train`` takes ``threads`` and calls ``torch.set_num_threads(threads)``, and the
    command line has ``--threads`` (default 1)."""
    tree = ast.parse(path.read_text())
    [train] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "train"]
    assert "threads" in [a.arg for a in train.args.args]
    calls = [ast.unparse(n) for n in ast.walk(train) if isinstance(n, ast.Call)]
    assert "torch.set_num_threads(threads)" in calls
    assert "--threads" in path.read_text()


def test_gymnasium_makes_the_single_agent_view():
    import gymnasium

    env = gymnasium.make("cauldron/hocus_pocus-v1", num_players=3)
    obs, _ = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape
    mask = env.unwrapped.action_masks()
    _, reward, *_ = env.step(int(np.flatnonzero(mask)[0]))
    assert len(env.unwrapped.aec.possible_agents) == 3 and np.isfinite(reward)
    with pytest.raises(envs.ConfigError, match="needs opponents"):
        gymnasium.make("cauldron/hexenflug-v1")


def test_train_quiet_hides_the_final_evaluations_progress_bar(tmp_path, capsys):
    """``cauldron train --quiet`` passes ``progress=False`` to the final evaluation too."""
    from cauldron.train.__main__ import final_evaluation
    from cauldron.train.config import parse_config

    config = parse_config(
        {
            "env": "headless_horseman_v1",
            "num_players": 3,
            "options": {"progress_reward": 1.0},
            "final_eval_games": 2,
            "out": str(tmp_path),
            "name": "quiet",
        }
    )
    checkpoint = Path(__file__).parents[1] / "checkpoints" / "headless_horseman_torch.pt"
    final_evaluation(config, checkpoint, progress=False)
    assert "%|" not in capsys.readouterr().err
    final_evaluation(config, checkpoint, progress=True)
    assert "%|" in capsys.readouterr().err
