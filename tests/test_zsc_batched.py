"""The cooperative-AI protocol on the batched engine (``engine: batched``): the harness's
lineups and seatings on the batched engine's deals, each game as ``cauldron.eval.batched`` plays it,
the report and the methods table saying which engine played, and the configs it refuses."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from cauldron import envs
from cauldron.eval import batched as eval_batched
from cauldron.eval import zsc
from cauldron.eval.harness import Lineup, seating
from cauldron.eval.zsc import batched
from cauldron.eval.zsc import methods as zsc_methods
from cauldron.eval.zsc import report as zsc_report
from cauldron.eval.zsc.config import parse_zsc_config
from tests.test_zsc import HH_SB3, protocol, train_file  # noqa: F401  (a fixture)

HP = "hocus_pocus_v1"
FOCAL = "python:tests.batched_python_agents:Reference?env=hocus_pocus_v1&name=greedy"


def test_a_whole_team_plays_the_games_eval_batched_plays():
    """A team lineup is ``cauldron.eval.batched``'s team evaluation: the same games, game by
    game."""
    team = Lineup("team", ("heuristic:planner",), (4,))
    played = batched.play(HP, 4, [team], games=40, seed=7, options={}, progress=False)[team]
    reference = eval_batched.evaluate(HP, 4, "heuristic:planner", games=40, seed=7, progress=False)
    assert [g.seed for g in played] == list(range(7, 47))
    assert [g.info["stuns"] for g in played] == reference.score.tolist()
    assert [g.info["outcome"] == 1 for g in played] == reference.won.tolist()
    assert [g.steps for g in played] == reference.steps.tolist()


def test_mixed_lineups_seat_each_agent_as_the_harness_does(monkeypatch):
    """Seats rotate with the seed as in the harness, and the results do not depend on how many
    games step at once."""
    adhoc = Lineup("crossplay", ("heuristic:planner", "random"), (1, 3))
    whole = batched.play(HP, 4, [adhoc], games=12, seed=0, options={}, progress=False)[adhoc]
    assert [g.seating for g in whole] == [tuple(seating(adhoc, s)) for s in range(12)]
    assert {g.seating.index("heuristic:planner") for g in whole} == {0, 1, 2, 3}
    monkeypatch.setattr(batched, "CHUNK", 5)
    chunked = batched.play(HP, 4, [adhoc], games=12, seed=0, options={}, progress=False)[adhoc]
    assert [(g.info, g.steps) for g in chunked] == [(g.info, g.steps) for g in whole]


def test_the_seat_owner_decides_every_move():
    """Beside three random players a planner stuns more than a fourth random player does, and
    less than a whole planner team: the lineup's agents act in their own seats."""
    games = 150
    lineups = [
        Lineup("team", ("random",), (4,)),
        Lineup("crossplay", ("heuristic:planner", "random"), (1, 3)),
        Lineup("crossplay", ("heuristic:planner", "random"), (3, 1)),
        Lineup("team", ("heuristic:planner",), (4,)),
    ]
    results = batched.play(HP, 4, lineups, games=games, seed=0, options={}, progress=False)
    stuns = [np.mean([g.info["stuns"] for g in results[lineup]]) for lineup in lineups]
    assert stuns == sorted(stuns) and stuns[0] < stuns[1] < stuns[3]


def test_a_python_agent_plays_row_by_row_beside_batched_ones():
    adhoc = Lineup("crossplay", (FOCAL, "heuristic:greedy"), (1, 3))
    team = Lineup("team", ("heuristic:greedy",), (4,))
    results = batched.play(HP, 4, [adhoc, team], games=16, seed=3, options={}, progress=False)
    # the python agent is the reference greedy heuristic: the same games as greedy's team
    assert [g.info for g in results[adhoc]] == [g.info for g in results[team]]


def test_a_protocol_on_the_batched_engine_reports_it_and_methods_refuse_mixing(
    train_file,  # noqa: F811
    tmp_path,
    capsys,
):
    summaries = {}
    for engine in ("batched", "reference"):
        out = tmp_path / engine
        path = tmp_path / f"{engine}.yaml"
        path.write_text(yaml.safe_dump(protocol(train_file, engine=engine, out=str(out))))
        summaries[engine] = zsc.main([str(path), "--quiet"])
        assert summaries[engine]["engine"] == engine
        assert zsc_report.load(out)["engine"] == engine
    out = capsys.readouterr().out
    assert "games: 40 (10 compositions x 4), about 1 s on the batched engine at 0.01 s" in out
    report = (tmp_path / "batched" / "report.md").read_text()
    assert "on the batched engine (other deals than the harness's" in report
    assert "on the reference engine" in (tmp_path / "reference" / "report.md").read_text()
    rows = summaries["batched"]["rows"]
    assert all(len(row["games"]["seed"]) == 4 for row in rows)
    with pytest.raises(envs.ConfigError, match="engine is 'reference', A's is 'batched'"):
        zsc_methods.main(
            [f"A={tmp_path / 'batched'}", f"B={tmp_path / 'reference'}", "--out", str(tmp_path)]
        )


@pytest.mark.parametrize(
    "extra, match",
    [
        ({"partners": [f"sb3:{HH_SB3}"]}, f"engine 'batched', partner 'sb3:{HH_SB3}': agent"),
        ({"train_overrides": {"trainer": "sb3"}}, "engine 'batched' plays torch checkpoints only"),
        ({"engine": "gpu"}, "engine: Input should be 'reference' or 'batched'"),
    ],
)
def test_bad_batched_configs_are_refused_naming_the_field(train_file, extra, match):  # noqa: F811
    data = protocol(train_file, engine="batched") | extra
    with pytest.raises(envs.ConfigError) as caught:
        parse_zsc_config(data, "zsc.yaml")
    assert match in str(caught.value)
