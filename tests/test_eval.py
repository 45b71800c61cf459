"""The evaluation harness: configs, paired seeds, worker independence, reports; demo; bench."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cauldron import envs
from cauldron.agents import HEURISTICS
from cauldron.eval import __main__ as eval_cli
from cauldron.eval import bench, demo, harness, report
from cauldron.eval.config import load_config, parse_config
from cauldron.eval.provenance import provenance


def baseline_specs(env_id: str) -> list[str]:
    return ["random"] + [f"heuristic:{h}" for h in HEURISTICS.get(env_id, {})]


def config(env_id: str, players: list[int], games: int, workers: int = 1, **extra):
    data = {"env": env_id, "players": players, "games": games, "workers": workers}
    return parse_config({"agents": baseline_specs(env_id), **data, **extra})


def test_results_do_not_depend_on_worker_count():
    one_cfg = config("hocus_pocus_v1", [2], 30, workers=1)
    two_cfg = config("hocus_pocus_v1", [2], 30, workers=2)
    one = harness.summarize(one_cfg, harness.play_all(one_cfg))
    two = harness.summarize(two_cfg, harness.play_all(two_cfg))
    assert one["rows"] == two["rows"]
    assert "| random | 2 | 30 |" in report.team_table(one)


def test_paired_seeds_every_pairing_plays_the_same_deals():
    """Every lineup plays seeds seed .. seed + games - 1 (so the same deals)."""
    cfg = config("headless_horseman_v1", [2], 6, seed=40, agents=["random", "heuristic:focal"])
    results = harness.play_all(cfg)
    assert len(results) == 3  # two teams and one cross-play pairing
    assert {tuple(g.seed for g in games) for games in results.values()} == {tuple(range(40, 46))}


def test_seats_are_dealt_by_composition_and_rotated_by_seed():
    two = harness.Lineup("head_to_head", ("b", "a"), (2, 2))
    assert harness.seating(two, 0) == ["a", "b", "a", "b"]  # ties by spec, not by given order
    assert harness.seating(two, 1) == ["b", "a", "b", "a"]
    three = harness.Lineup("crossplay", ("a", "b"), (1, 3))
    assert harness.seating(three, 0) == ["b", "a", "b", "b"]
    assert harness.seating(three, 6) == ["b", "b", "b", "a"]
    assert harness.Lineup("crossplay", ("a", "b"), (2, 1)).label() == "a×2 + b"


def crossplay_cells(agents: list[str], mode: str = "all") -> dict:
    cfg = config("headless_horseman_v1", [3], 150, agents=agents, crossplay=mode)
    summary = harness.summarize(cfg, harness.play_all(cfg, progress=False))
    return {
        tuple(sorted(zip(r["lineup"], r["seats"], strict=True))): r["win"] for r in summary["rows"]
    }


def test_crossplay_at_three_players_reports_each_composition_whatever_the_agent_order():
    """Headless Horseman at 3 players: two focal heuristics with one random player win far more
    often than one focal heuristic with two random players; the cells are the same games when
    the config lists the agents the other way round."""
    forward = crossplay_cells(["random", "heuristic:focal"])
    backward = crossplay_cells(["heuristic:focal", "random"])
    assert forward == backward
    two_focal = forward[(("heuristic:focal", 2), ("random", 1))]
    one_focal = forward[(("heuristic:focal", 1), ("random", 2))]
    assert two_focal["high"] < forward[(("heuristic:focal", 3),)]["low"]
    assert one_focal["high"] < two_focal["low"]
    assert forward[(("random", 3),)]["high"] < one_focal["rate"]


def test_focal_mode_plays_one_agent_with_partners_of_one_kind_and_pairs_it_with_their_team():
    agents = ["random", "heuristic:greedy"]
    cfg = config("hocus_pocus_v1", [4], 10, crossplay="focal", agents=agents)
    summary = harness.summarize(cfg, harness.play_all(cfg, progress=False))
    assert [(r["label"], r["kind"]) for r in summary["rows"]] == [
        ("random×4", "team"),
        ("heuristic:greedy×4", "team"),
        ("random + heuristic:greedy×3", "crossplay"),
        ("heuristic:greedy + random×3", "crossplay"),
    ]
    assert [(p["a"], p["b"]) for p in summary["paired"]] == [
        ("random×4", "heuristic:greedy×4"),
        ("random + heuristic:greedy×3", "heuristic:greedy×4"),
        ("heuristic:greedy + random×3", "random×4"),
    ]
    table = report.crossplay_table(summary)
    assert "4 players: row agent in 1 seat, column agent in the other 3" in table
    assert "row agent in 2 seats" not in table


def test_paired_differences_are_per_deal_means():
    cfg = config("headless_horseman_v1", [2], 40, agents=["random", "heuristic:focal"])
    results = harness.play_all(cfg, progress=False)
    summary = harness.summarize(cfg, results)
    team = {a: harness.Lineup("team", (a,), (2,)) for a in cfg.agents}
    assert [(p["a"], p["b"]) for p in summary["paired"]] == [
        ("random×2", "heuristic:focal×2"),
        ("random + heuristic:focal", "heuristic:focal×2"),  # one random in a focal team
        ("random + heuristic:focal", "random×2"),  # one focal in a random team
    ]
    first = summary["paired"][0]
    wins = [
        sum(g.info["outcome"] == 1 for g in results[team[a]]) for a in ("random", "heuristic:focal")
    ]
    assert first["win"]["mean"] == pytest.approx((wins[0] - wins[1]) / 40)
    assert first["win"]["low"] <= first["win"]["mean"] <= first["win"]["high"]


def test_head_to_head_rates_every_agent_and_plays_both_ways_round_at_odd_counts():
    cfg = config(
        "hexenflug_v1", [2, 3], 20, agents=["random", "heuristic:cautious", "heuristic:greedy"]
    )
    summary = harness.summarize(cfg, harness.play_all(cfg, progress=False))
    assert [(r["lineup"], r["seats"]) for r in summary["rows"]][:4] == [
        (["random", "heuristic:cautious"], [1, 1]),
        (["random", "heuristic:greedy"], [1, 1]),
        (["heuristic:cautious", "heuristic:greedy"], [1, 1]),
        (["random", "heuristic:cautious"], [2, 1]),
    ]
    assert summary["rows"][4]["seats"] == [1, 2]
    for row in summary["rows"]:  # paired: per game, A won minus B won
        a, b = (row["wins"][s]["count"] for s in row["lineup"])
        assert row["win_difference"]["mean"] == pytest.approx((a - b) / 20)
    ratings = summary["ratings"]["2"]
    assert ratings["heuristic:cautious"]["mu"] > ratings["random"]["mu"]
    table = report.head_to_head_table(summary)
    assert "| heuristic:cautious | heuristic:greedy | 2 | 1 + 1 | 20 |" in table
    assert "| random | heuristic:cautious | 3 | 1 + 2 | 20 |" in table


@pytest.mark.parametrize(
    "env_id, games, at_least",
    [
        pytest.param("hexenflug_v1", 100, 65, marks=pytest.mark.heavy),
        pytest.param("voodoo_mania_v1", 30, 25, marks=pytest.mark.heavy),
    ],
)
def test_heuristics_beat_random_head_to_head(env_id, games, at_least):
    cfg = config(env_id, [2], games)
    for row in harness.summarize(cfg, harness.play_all(cfg))["rows"]:
        a, b = row["lineup"]
        if a == "random":
            assert row["wins"][b]["count"] >= at_least, row


def test_cli_writes_results_report_and_plots(tmp_path, capsys):
    path = tmp_path / "coop.yaml"
    path.write_text(
        "env: headless_horseman_v1\nplayers: [2]\nagents: [random, heuristic:focal]"
        f"\ngames: 20\nworkers: 1\nout: {tmp_path}\n"
    )
    summary = eval_cli.main([str(path)])
    folder = tmp_path / "coop"
    assert {p.name for p in folder.iterdir()} == {
        ".lock",  # held while an evaluation writes the folder
        "results.json",
        "report.md",
        "win_rates.png",
        "crossplay.png",
    }
    saved = json.loads((folder / "results.json").read_text())
    assert saved["rows"] == summary["rows"]
    assert "## Cross-play" in (folder / "report.md").read_text()
    assert (
        f"config hash `{saved['provenance']['config_hash'][:12]}`"
        in (folder / "report.md").read_text()
    )
    assert "| heuristic:focal | 2 | 20 |" in capsys.readouterr().out


def test_results_keep_every_game_and_their_provenance():
    cfg = config(
        "headless_horseman_v1", [3], 12, crossplay="focal", agents=["random", "heuristic:focal"]
    )
    results = harness.play_all(cfg, progress=False)
    summary = harness.summarize(cfg, results)
    row = next(r for r in summary["rows"] if r["label"] == "heuristic:focal + random×2")
    games = row["games"]
    assert games["seed"] == list(range(12))
    assert [sorted(s) for s in games["seating"]] == [[0, 1, 1]] * 12
    # random, focal, random (index 1, 0, 1), rotated by the seed
    assert games["seating"][:2] == [[1, 0, 1], [0, 1, 1]]
    assert sum(o == 1 for o in games["outcome"]) == row["win"]["count"]
    assert all(len(r) == 3 and len(set(r)) == 1 for r in games["returns"])  # one team reward
    assert len(games["scares"]) == len(games["steps"]) == 12
    text = report.dumps(summary)
    assert json.loads(text)["rows"] == summary["rows"]
    assert len(text.splitlines()) < 400  # one line per column, not per game
    p = summary["provenance"]
    assert p["config_hash"] == provenance(cfg.model_dump())["config_hash"]
    assert p["config_hash"] != provenance({**cfg.model_dump(), "seed": 1})["config_hash"]
    assert p["version"] and p["libraries"]["numpy"]
    assert p["git_commit"] is None or len(p["git_commit"]) == 40


@pytest.mark.parametrize("name", ["hocus_pocus", "hexenflug", "headless_horseman", "voodoo_mania"])
def test_shipped_configs_are_valid(name):
    cfg = load_config(f"configs/eval/{name}.yaml")
    assert (
        cfg.name == name and cfg.games >= 2000 and set(baseline_specs(cfg.env)) <= set(cfg.agents)
    )


@pytest.mark.parametrize(
    "data, match",
    [
        ({"gmaes": 10}, r"unknown key 'gmaes' \(allowed: env, players"),
        ({"games": 0}, "games: Input should be greater than or equal to 1"),
        ({"games": "10"}, "games: Input should be a valid integer"),
        ({"players": [9]}, r"players \[9\] outside 2..6"),
        ({"env": "chess_v6"}, "unknown environment id 'chess_v6'"),
        ({"agents": ["heuristic:nope"]}, "unknown heuristic 'nope'"),
        ({"agents": ["random", "random"]}, "agents must be distinct"),
        ({"options": {"sunrise_step": 2}}, "unknown option"),
        ({"players": [2, 2]}, r"players must be distinct counts, got \[2, 2\]"),
        ({"name": "../escape"}, "name: String should match pattern"),
        ({"name": "a..b"}, "may not contain '..'"),
        ({"name": "/tmp/x"}, "name: String should match pattern"),
        ({"games": 10**7}, "games: Input should be less than or equal to 1000000"),
        ({"seed": 2**64 - 1}, "seed: Input should be less than 2147483648"),
        ({"seed": 2**31 - 3}, "seeds 2,147,483,645–2,147,483,649 .* not all in split dev"),
        ({"workers": 0}, "workers: Input should be greater than or equal to 1"),
        ({"crossplay": True}, "crossplay: Input should be 'all', 'focal' or 'none'"),
    ],
)
def test_bad_configs_are_rejected_with_a_clear_message(data, match):
    base = {"env": "hocus_pocus_v1", "players": [2], "agents": ["random"], "games": 5}
    with pytest.raises(envs.ConfigError, match=match):
        parse_config({**base, **data})


def test_competitive_config_needs_two_agents_and_missing_file_is_clear(tmp_path):
    with pytest.raises(envs.ConfigError, match="at least two agents"):
        parse_config({"env": "hexenflug_v1", "players": [2], "agents": ["random"]})
    with pytest.raises(envs.ConfigError, match="not found"):
        load_config(tmp_path / "missing.yaml")


def write_config(tmp_path, text: str):
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    return path


def test_malformed_yaml_is_one_line_config_error(tmp_path):
    path = write_config(tmp_path, "env: [hocus_pocus_v1\nplayers: [2]\n")
    with pytest.raises(envs.ConfigError, match=r"not valid YAML at line 2, column 8") as err:
        load_config(path)
    assert "\n" not in str(err.value)


def test_cli_overrides_are_validated_and_output_checked_before_any_game(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    path = write_config(
        tmp_path, f"env: hocus_pocus_v1\nplayers: [2]\nagents: [random]\nout: {blocker}\n"
    )
    monkeypatch.setattr(harness, "play_all", lambda *a, **k: pytest.fail("games were played"))
    with pytest.raises(envs.ConfigError, match="workers: Input should be greater than or equal"):
        eval_cli.main([str(path), "--workers", "0"])
    with pytest.raises(envs.ConfigError, match=f"cannot write the output folder '{blocker}/cfg'"):
        eval_cli.main([str(path)])


def test_demo_plays_a_game_to_the_end(capsys):
    info = demo.main(["--players", "3", "--seed", "1"])
    out = capsys.readouterr().out
    assert info["outcome"] in (-1, 1) and "Cauldron:" in out and "=== final ===" in out


def test_demo_shows_every_tick_of_voodoo_mania(capsys):
    demo.main(["--env", "voodoo_mania_v1", "--players", "2", "--seed", "0"])
    out = capsys.readouterr().out
    ticks = {line.split("tick ")[1].split()[0] for line in out.splitlines() if " tick " in line}
    assert len(ticks) > 20
    assert "player_1: " in out and "=== final ===" in out


def test_quick_run_plays_fewer_games_and_says_so(tmp_path, capsys):
    path = write_config(
        tmp_path,
        "env: hocus_pocus_v1\nplayers: [2]\nagents: [random]\ngames: 5000\nworkers: 1\n"
        f"out: {tmp_path}\n",
    )
    summary = eval_cli.main([str(path), "--quick", "--games", "30"])
    assert summary["rows"][0]["win"]["games"] == 30
    assert "30 games per lineup instead of the config's 5000" in capsys.readouterr().out
    assert "figures are rougher" in (tmp_path / "cfg" / "report.md").read_text()


def test_bench_prints_a_table_with_ratios(capsys):
    results = bench.main(["--steps", "300", "--quick"])
    out = capsys.readouterr().out
    assert "Quick run (300 steps, one repeat): rough figures" in out
    assert "hocus_pocus_v1" in results and results["hocus_pocus_v1"]["median"] > 0
    assert "voodoo_mania_v1 [parallel]" in results and "agent-steps/s" in out


def test_batched_peak_memory_is_the_child_process_own():
    """``cauldron.eval.bench --batched`` reports a fresh process's own peak: launched from a process
    that holds 640 MB (as it does once Pgx is loaded), the child's figures stay those of torch, the
    imports and the engine, not the launcher's size."""
    from cauldron.eval.bench_batched import peak_memory_mib

    held = np.ones(80_000_000)  # 640 MB resident here
    peak, imports = peak_memory_mib("headless_horseman_v1", 2, 64, steps=2)
    assert held.sum() == 80_000_000
    assert 50 < imports <= peak < 500
