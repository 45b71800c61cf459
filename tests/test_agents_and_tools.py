"""Baseline agents, the game runner, the demo, the baselines table and the benchmark."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from agents import make_agent
from eval import baselines, bench, demo
from eval.play import play_team


@pytest.mark.parametrize(
    "env_id, spec",
    [(env_id, spec) for env_id in envs.ids() for spec in baselines.baseline_specs(env_id)],
)
def test_agents_only_choose_legal_actions(env_id, spec):
    env = envs.make(env_id, num_players=envs.spec(env_id).players[1])
    for agent in (make_agent(spec, env_id, seed=0),):
        for seed in range(5):
            env.reset(seed=seed)
            for name in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                action = agent.act(obs["observation"], obs["action_mask"])
                assert obs["action_mask"][action] == 1, name
                env.step(action)


def test_heuristic_team_stuns_more_than_random_team():
    """Known answer (components.md): random teams ~0 stuns, greedy teams ~0.7–0.8."""
    seeds = range(150)
    greedy = np.mean(
        [g.info["stuns"] for g in play_team("hocus_pocus_v0", 4, "heuristic:greedy", seeds)]
    )
    rand = np.mean([g.info["stuns"] for g in play_team("hocus_pocus_v0", 4, "random", seeds)])
    assert rand < 0.1 and greedy > 0.5


def test_same_seeds_same_games():
    a = play_team("hocus_pocus_v0", 3, "random", range(5))
    b = play_team("hocus_pocus_v0", 3, "random", range(5))
    assert a == b


def test_bad_agent_specs():
    with pytest.raises(envs.ConfigError, match="available: \\['heuristic:greedy'\\]"):
        make_agent("heuristic:clever", "hocus_pocus_v0")
    with pytest.raises(envs.ConfigError, match="unknown agent spec"):
        make_agent("alphazero", "hocus_pocus_v0")


def test_baselines_do_not_depend_on_worker_count():
    one = baselines.run("hocus_pocus_v0", [2], 200, workers=1)
    two = baselines.run("hocus_pocus_v0", [2], 200, workers=2)
    assert one == two
    table = baselines.table("hocus_pocus_v0", one)
    assert "| random | 2 | 200 |" in table and "heuristic:greedy" in table


def test_head_to_head_rotates_seats_and_counts_both_sides():
    assert baselines.seating(("a", "b"), 4, 0) == ["a", "b", "a", "b"]
    assert baselines.seating(("a", "b"), 4, 1) == ["b", "a", "b", "a"]
    assert baselines.seating(("a", "b"), 2, 3) == ["b", "a"]
    results = baselines.run("hexenflug_v0", [2], 40, workers=1)
    assert set(results) == {
        (("random", "heuristic:cautious"), 2),
        (("random", "heuristic:greedy"), 2),
        (("heuristic:cautious", "heuristic:greedy"), 2),
    }
    table = baselines.head_to_head_table(results)
    assert "| heuristic:cautious | heuristic:greedy | 2 | 40 |" in table


def test_hexenflug_heuristics_beat_random_head_to_head():
    results = baselines.run("hexenflug_v0", [2], 100, workers=1)
    for (pair, _), games in results.items():
        if pair[0] == "random":
            heuristic_wins = sum(
                any(baselines.seating(pair, 2, g.seed)[s] == pair[1] for s in g.info["winners"])
                for g in games
            )
            assert heuristic_wins > 65, pair


def test_demo_plays_a_game_to_the_end(capsys):
    info = demo.main(["--players", "3", "--seed", "1"])
    out = capsys.readouterr().out
    assert info["outcome"] in (-1, 1) and "Cauldron:" in out and "=== final ===" in out


def test_bench_prints_a_table_with_ratios(capsys):
    results = bench.main(["--steps", "300", "--repeats", "1"])
    out = capsys.readouterr().out
    assert "hocus_pocus_v0" in results and results["hocus_pocus_v0"]["median"] > 0
    assert "agent-steps/s" in out


def test_headless_horseman_heuristic_team_beats_random_team():
    """Calibration known answer: focal heuristic teams win about 80-90%, random teams under 20%."""
    seeds = range(150)
    wins = {
        spec: sum(g.info["outcome"] == 1 for g in play_team("headless_horseman_v0", 3, spec, seeds))
        for spec in ("random", "heuristic:focal")
    }
    assert wins["random"] < 45 and wins["heuristic:focal"] > 105


def test_voodoo_heuristics_beat_random_head_to_head():
    results = baselines.run("voodoo_mania_v0", [2], 30, workers=1)
    for (pair, _), games in results.items():
        if pair[0] == "random":
            heuristic_wins = sum(
                any(baselines.seating(pair, 2, g.seed)[s] == pair[1] for s in g.info["winners"])
                for g in games
            )
            assert heuristic_wins >= 25, pair
