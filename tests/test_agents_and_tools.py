"""Baseline agents, the game runner, the demo, the baselines table and the benchmark."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from agents import HocusPocusHeuristic, RandomAgent, make_agent
from eval import baselines, bench, demo
from eval.play import play_team


def test_agents_only_choose_legal_actions():
    env = envs.make("hocus_pocus_v0", num_players=5)
    for agent in (RandomAgent(0), HocusPocusHeuristic()):
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
    table = baselines.table(one)
    assert "| random | 2 | 200 |" in table and "heuristic:greedy" in table


def test_demo_plays_a_game_to_the_end(capsys):
    info = demo.main(["--players", "3", "--seed", "1"])
    out = capsys.readouterr().out
    assert info["outcome"] in (-1, 1) and "Cauldron:" in out and "=== final ===" in out


def test_bench_prints_a_table_with_ratios(capsys):
    results = bench.main(["--steps", "300", "--repeats", "1"])
    out = capsys.readouterr().out
    assert "hocus_pocus_v0" in results and results["hocus_pocus_v0"]["median"] > 0
    assert "agent-steps/s" in out
