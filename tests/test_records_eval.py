"""Evaluations that save games: ``save_games: N`` in an evaluation config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cauldron import envs
from cauldron.agents import HEURISTICS
from cauldron.eval import harness, records, report
from cauldron.eval.config import parse_config


def run(tmp_path: Path, env_id: str, workers: int = 1, save: int = 3, games: int = 8) -> Path:
    agents = ["random", *(f"heuristic:{h}" for h in HEURISTICS.get(env_id, {}))][:2]
    players = envs.spec(env_id).players[0]
    config = parse_config(
        {
            "env": env_id,
            "players": [players],
            "agents": agents,
            "games": games,
            "workers": workers,
            "crossplay": "none",
            "save_games": save,
            "out": str(tmp_path),
            "name": f"run{workers}",
        }
    )
    folder = tmp_path / config.name
    report.prepare(folder)
    summary = harness.summarize(config, harness.play_all(config, progress=False))
    report.write(summary, folder)
    return folder


@pytest.mark.parametrize("env_id", envs.ids())
def test_saved_games_are_the_evaluated_games_best_and_worst_first(env_id, tmp_path):
    folder = run(tmp_path, env_id)
    games = records.read_games(folder / "games.jsonl")
    results = (folder / "results.json").read_text()
    lineups = results.count('"label"')
    assert len(games) == 3 * lineups
    spec = envs.spec(env_id)
    first_agent = "random"  # the lineup's first agent: config order
    for game in games:
        assert records.check(game) == len(game.steps)
        info, seats = game.end["info"][0], game.header["agents"]
        if spec.cooperative:
            expected = float(info[spec.score])
        else:
            mine = [s for seat, s in enumerate(info["scores"]) if seats[seat] == first_agent]
            theirs = [s for seat, s in enumerate(info["scores"]) if seats[seat] != first_agent]
            expected = sum(mine) / len(mine) - sum(theirs) / len(theirs)
        assert game.header["meta"]["score"] == pytest.approx(expected)
    for i in range(0, len(games), 3):
        lineup = games[i : i + 3]
        scores = [g.header["meta"]["score"] for g in lineup]
        kept = [g.header["meta"]["kept"] for g in lineup]
        best, worst = (min, max) if spec.lower_is_better else (max, min)
        assert kept[0] == "best" and scores[0] == best(scores)
        assert {g.header["meta"]["better"] for g in lineup} == {
            "lower" if spec.lower_is_better else "higher"
        }
        if "worst" in kept:  # unless every game scored the same
            assert kept[1] == "worst" and scores[1] == worst(scores)
        seeds = [g.header["seed"] for g in lineup]
        firsts = [seed for seed, why in zip(seeds, kept, strict=True) if why == "first seeds"]
        others = [seed for seed, why in zip(seeds, kept, strict=True) if why != "first seeds"]
        assert firsts == sorted(set(range(8)) - set(others))[: len(firsts)]
    page = (folder / "games.html").read_text()
    data = json.loads(page.split('id="data">')[1].split("</script>")[0])
    assert [g["error"] for g in data["games"]] == [None] * len(games)
    assert "[Watch them step by step](games.html)" in (folder / "report.md").read_text()


def test_saved_games_do_not_depend_on_the_workers(tmp_path):
    env_id = envs.ids()[0]
    one = run(tmp_path, env_id, workers=1, games=60)
    two = run(tmp_path, env_id, workers=2, games=60)
    assert (one / "games.jsonl").read_text() == (two / "games.jsonl").read_text()


def test_no_games_are_saved_by_default(tmp_path):
    folder = run(tmp_path, envs.ids()[0], save=0)
    assert not (folder / "games.jsonl").exists()
    assert "Saved games" not in (folder / "report.md").read_text()


def test_training_s_final_evaluation_saves_its_best_and_worst_games(tmp_path):
    pytest.importorskip("torch", reason="training needs the train extra")
    from cauldron.train import __main__ as train_cli
    from tests.test_train import tiny

    data = tiny(envs.ids()[0], "torch", tmp_path, total_steps=128)
    path = tmp_path / "quick.yaml"
    path.write_text(yaml.safe_dump({**data, "final_eval_games": 3}))
    train_cli.main([str(path), "--quiet"])
    folder = tmp_path / data["name"] / "evaluation"
    games = records.read_games(folder / "games.jsonl")
    assert {g.header["meta"]["kept"] for g in games} <= {"best", "worst"}
    assert any(spec.startswith("torch:") for g in games for spec in g.header["agents"])
    assert all(records.check(g) == len(g.steps) for g in games)
    assert not (folder / "games.html").exists()  # drawn on demand: cauldron viewer
    assert "cauldron viewer games.jsonl" in (folder / "report.md").read_text()


def test_saved_games_replay_shaped_returns_that_differ_only_by_rounding(tmp_path):
    """Hocus Pocus with ``stun_reward`` 0.2: the record sums each step's rewards and the
    evaluation each agent's accumulated ones, which can differ in the last bit (-0.8 against
    -0.7999999999999999); saving the games must not take that for a different game."""
    config = parse_config(
        {
            "env": "hocus_pocus_v1",
            "players": [4],
            "agents": ["random"],
            "options": {"stun_reward": 0.2, "match_reward": 0.5},
            "games": 4,
            "workers": 1,
            "save_games": 2,
            "out": str(tmp_path),
            "name": "shaped",
        }
    )
    games = harness.play_all(config, progress=False)
    summary = harness.summarize(config, games)
    report.write(summary, tmp_path / "shaped")
    saved = records.read_games(tmp_path / "shaped" / "games.jsonl")
    assert len(saved) == 2 and all(records.check(game) > 0 for game in saved)
