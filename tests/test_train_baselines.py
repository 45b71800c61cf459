"""Training's final evaluation: the config's opponents among the baselines,
the baseline teams played once and reused, the game's own (unshaped) returns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cauldron.eval import harness
from cauldron.train import baselines
from cauldron.train.__main__ import final_evaluation
from cauldron.train.config import parse_config

HORSEMAN = Path(__file__).parents[1] / "checkpoints" / "headless_horseman_torch.pt"


def horseman_config(tmp_path, **extra):
    return parse_config(
        {
            "env": "headless_horseman_v1",
            "num_players": 3,
            "options": {"progress_reward": 1.0},
            "final_eval_games": 2,
            "out": str(tmp_path),
            "name": "run",
            **extra,
        }
    )


@pytest.fixture
def played(monkeypatch):
    """Every lineup the harness is asked to play, call by call."""
    calls: list[list[harness.Lineup]] = []
    play_all = harness.play_all

    def spy(config, objects=None, progress=True, only=None):
        calls.append(list(only))
        return play_all(config, objects, progress, only)

    monkeypatch.setattr(harness, "play_all", spy)
    return calls


def test_baseline_teams_are_played_once_and_reused_by_later_runs(tmp_path, played):
    config = horseman_config(tmp_path)
    first = final_evaluation(config, HORSEMAN, workers=1, progress=False)
    teams = [r["lineup"][0] for r in first["rows"] if r["kind"] == "team"]
    baseline_teams = {agent for agent in teams if not agent.startswith("torch:")}
    assert baseline_teams == {"random", "heuristic:focal", "heuristic:highest", "heuristic:safe"}
    assert {lineup.agents[0] for lineup in played[-1]} >= {"random", "heuristic:focal"}
    cache = list((tmp_path / ".baselines").glob("*.json"))
    assert len(cache) == 4

    played.clear()
    second = final_evaluation(
        horseman_config(tmp_path, name="other-seed", seed=1), HORSEMAN, 1, False
    )
    assert len(played) == 1
    assert all(f"torch:{HORSEMAN}" in lineup.agents for lineup in played[0])
    rows = {r["label"]: r for r in first["rows"]}
    assert len(second["rows"]) == len(first["rows"])
    for row in second["rows"]:
        assert row["games"] == rows[row["label"]]["games"]


def test_a_changed_game_count_or_a_damaged_cache_plays_the_teams_again(tmp_path):
    from cauldron.eval.config import EvalConfig

    asked: list[list[harness.Lineup]] = []

    def play(only):
        asked.append(only)
        return harness.play_all(config, progress=False, only=only)

    teams = [harness.Lineup("team", (a,), (2,)) for a in ("random", "heuristic:focal")]
    config = EvalConfig(
        env="headless_horseman_v1", players=[2], agents=["random", "heuristic:focal"], games=2
    )
    first, reused = baselines.cached_results(config, teams, play, tmp_path)
    assert (len(asked), reused) == (1, 0)
    again, reused = baselines.cached_results(config, teams, play, tmp_path)
    assert (len(asked), reused, again) == (1, 2, first)

    config = config.model_copy(update={"games": 3})
    _, reused = baselines.cached_results(config, teams, play, tmp_path)
    assert (len(asked), reused) == (2, 0)

    damaged = baselines.cache_key(config, teams[0])
    (tmp_path / f"{damaged}.json").write_text("{not json")
    results, reused = baselines.cached_results(config, teams, play, tmp_path)
    assert (asked[-1], reused) == ([teams[0]], 1)
    assert len(results[teams[0]]) == 3
    data = json.loads((tmp_path / f"{damaged}.json").read_text())
    assert data["format"] == baselines.FORMAT and len(data["games"]) == 3


def test_the_cache_key_follows_everything_the_games_depend_on(tmp_path):
    from cauldron.eval.config import EvalConfig

    base = dict(env="headless_horseman_v1", players=[3], agents=["random"], games=4, seed=0)
    lineup = harness.Lineup("team", ("random",), (3,))
    key = baselines.cache_key(EvalConfig(**base), lineup)
    assert key == baselines.cache_key(EvalConfig(**base, out=str(tmp_path)), lineup)
    for change in ({"games": 5}, {"seed": 1}, {"options": {"speed_tile": 4}}):
        assert baselines.cache_key(EvalConfig(**{**base, **change}), lineup) != key
    other = harness.Lineup("team", ("heuristic:focal",), (3,))
    assert baselines.cache_key(EvalConfig(**base), other) != key


def test_final_evaluation_reports_the_games_own_returns_without_shaping(tmp_path):
    summary = final_evaluation(horseman_config(tmp_path), HORSEMAN, 1, False)
    assert summary["config"]["options"] == {}
    for row in summary["rows"]:
        for returns, outcome in zip(row["games"]["returns"], row["games"]["outcome"], strict=True):
            assert set(returns) == {float(outcome)}


def test_final_evaluation_plays_the_configs_own_opponents(tmp_path, played):
    config = parse_config(
        {
            "env": "hexenflug_v1",
            "num_players": 2,
            "opponents": ["heuristic:cautious", f"python:{__name__}:UserRandom"],
            "final_eval_games": 2,
            "hidden": [8],
            "out": str(tmp_path),
            "name": "run",
        }
    )
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog

    checkpoint = train(config.model_copy(update={"total_steps": 1}), RunLog(config.folder, True))
    summary = final_evaluation(config, checkpoint, 1, False)
    opponents = {agent for r in summary["rows"] for agent in r["lineup"]}
    assert f"python:{__name__}:UserRandom" in opponents
    assert {"random", "heuristic:banker"} <= opponents


class UserRandom:
    """A user's agent: a random legal action (its name says what it is not: it is not one of
    the baselines)."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask):
        return int(self.rng.choice(np.flatnonzero(action_mask)))


def test_a_batched_run_is_evaluated_team_by_team_on_the_batched_engine(tmp_path, played):
    """``engine: batched`` in a cooperative game: every team on the batched engine, the same
    deals as ``cauldron eval-batched`` (game i from seed i), nothing played by the harness."""
    from cauldron.eval import batched

    config = horseman_config(tmp_path, engine="batched", final_eval_games=40)
    summary = final_evaluation(config, HORSEMAN, progress=False)
    assert played == [] and summary["engine"] == "batched"
    rows = {r["lineup"][0]: r for r in summary["rows"]}
    assert {r["kind"] for r in rows.values()} == {"team"}
    focal = batched.evaluate("headless_horseman_v1", 3, "heuristic:focal", games=40, progress=False)
    assert rows["heuristic:focal"]["games"]["seed"] == list(range(40))
    assert rows["heuristic:focal"]["games"]["outcome"] == [1 if w else -1 for w in focal.won]
    assert rows["heuristic:focal"]["games"]["scares"] == focal.score.tolist()
    assert summary["paired"], "paired differences between teams on the same deals"
    reference = final_evaluation(
        horseman_config(tmp_path, name="ref", final_eval_games=40), HORSEMAN, 1, False
    )
    assert reference["engine"] == "reference" and played, "the reference run keeps its own cache"
