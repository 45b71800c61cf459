"""Resuming a batched-engine run is bit-exact: a run stopped at an update boundary and resumed
ends with the same parameters, optimizer state, games, snapshots, PFSP record, partners and
metrics as the run that was never stopped; an engine loaded from its state dict plays on as the
original."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from cauldron import envs
from cauldron.envs.core.batched import BatchedEnv
from cauldron.train.config import TrainConfig, parse_config
from cauldron.train.ppo import train
from cauldron.train.runlog import RunLog, read_metrics

BATCH = 16 * 8  # num_envs * rollout_steps

CASES = {
    "cooperative": {"env": "hocus_pocus_v1", "opponents": []},
    "cooperative-other-play": {
        "env": "hocus_pocus_v1",
        "opponents": [],
        "other_play": True,
        "recurrent": 8,
        "seq_len": 4,
    },
    "competitive-pfsp": {
        "env": "voodoo_mania_v1",
        "opponents": ["random", "heuristic:chain"],
        "opponent_sampling": "pfsp",
        "self_play_every": 1,
        "recurrent": 8,
        "seq_len": 4,
        "options": {"max_steps": 10},
    },
    "cooperative-partners": {
        "env": "hocus_pocus_v1",
        "opponents": [],
        "partners": [
            {"agent": "self"},
            {"agent": "heuristic:greedy", "epsilon": 0.3},
            {"agent": "snapshots", "weight": 2.0},
        ],
        "self_play_every": 1,
        "recurrent": 8,
        "seq_len": 4,
        "options": {"max_steps": 10},
    },
    "recurrent-warm-start": {
        "env": "voodoo_mania_v1",
        "opponents": ["heuristic:chain"],
        "recurrent": 8,
        "seq_len": 4,
        "warm_start": {"agent": "heuristic:chain", "games": 2, "epochs": 1, "bc_coef": 0.3},
    },
}


def tiny(tmp_path: Path, name: str, updates: int, **extra: Any) -> TrainConfig:
    return parse_config(
        {
            "name": name,
            "num_players": 2,
            "engine": "batched",
            "total_steps": updates * BATCH,
            "num_envs": 16,
            "rollout_steps": 8,
            "minibatches": 2,
            "epochs": 2,
            "hidden": [16],
            "eval_every": 3,
            "eval_games": 1,
            "final_eval_games": 1,
            "out": str(tmp_path),
            **extra,
        }
    )


def run(config: TrainConfig) -> dict[str, Any]:
    torch.set_num_threads(1)
    train(config, RunLog(config.folder, quiet=True))
    return torch.load(config.folder / "train_state.pt", weights_only=True)


def assert_same(a: Any, b: Any, where: str = "state") -> None:
    """Equal nested data, tensors compared with ``torch.equal`` (and their dtypes)."""
    assert type(a) is type(b), where
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and torch.equal(a, b), where
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


def learning_metrics(folder: Path) -> list[tuple[int, str, float]]:
    """Every logged row but the timings and the evaluations (a stopped run evaluates where it
    stops)."""
    rows = read_metrics(folder / "metrics.csv")
    return [row for row in rows if not row[1].startswith(("perf/", "eval/"))]


@pytest.mark.parametrize("case", list(CASES))
def test_a_stopped_and_resumed_run_ends_as_the_run_never_stopped(tmp_path, case):
    extra = CASES[case]
    whole = run(tiny(tmp_path, "whole", 6, **extra))
    run(tiny(tmp_path, "parts", 2, **extra))
    parts = run(tiny(tmp_path, "parts", 6, resume=True, **extra))
    assert whole["step"] == parts["step"] == 6 * BATCH
    whole.pop("config"), parts.pop("config")
    assert_same(whole, parts)
    assert learning_metrics(tmp_path / "whole") == learning_metrics(tmp_path / "parts")
    if "self_play_every" in extra:
        games = whole["games"]
        assert len(games["snapshots"]) == 5
        counted = games["partners"]["games"] if "partners" in extra else games["record"][:, 0]
        assert float(counted.sum()) > 0


def play(env: BatchedEnv, steps: int, chooser: torch.Generator) -> list[torch.Tensor]:
    """``steps`` steps of random legal actions: every output tensor, in order."""
    seen = []
    mask = env.game.legal_mask(env.game_state)
    for _ in range(steps):
        keys = torch.rand(mask.shape, generator=chooser).masked_fill(~mask, -1.0)
        out = env.step(keys.argmax(1))
        mask = out["action_mask"]
        seen += [out[k] for k in ("observation", "action_mask", "seat", "reward", "done")]
    return seen


@pytest.mark.parametrize("env_id", envs.batched_ids())
@pytest.mark.parametrize("seed", [7, list(range(8))], ids=["generator", "row-streams"])
def test_an_engine_loaded_from_a_state_dict_plays_on_as_the_original(env_id, seed):
    env = envs.make_batched(env_id, 2, batch_size=8, device="cpu", max_steps=12)
    env.reset(seed=seed)
    play(env, 5, torch.Generator().manual_seed(0))
    saved = env.state_dict()
    after = play(env, 20, torch.Generator().manual_seed(1))
    copy = envs.make_batched(env_id, 2, batch_size=8, device="cpu", max_steps=12)
    copy.reset(seed=99)
    copy.load_state_dict(saved)
    assert_same(after, play(copy, 20, torch.Generator().manual_seed(1)))


def test_a_state_without_games_for_this_device_resumes_with_new_games(tmp_path, capsys):
    extra = CASES["competitive-pfsp"]
    run(tiny(tmp_path, "moved", 2, **extra))
    path = tmp_path / "moved" / "train_state.pt"
    saved = torch.load(path, weights_only=True)
    torch.save({**saved, "device": "cuda:0"}, path)
    assert run(tiny(tmp_path, "moved", 3, resume=True, **extra))["step"] == 3 * BATCH
    assert "no games for this device: new games are dealt" in capsys.readouterr().out
