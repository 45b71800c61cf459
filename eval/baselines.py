"""Baseline figures with 95% confidence intervals.

    python -m eval.baselines --env hocus_pocus_v0 [--players 2 4 6] [--games 2000] [--workers 2]
    python -m eval.baselines --env hexenflug_v0 --players 2 4

Cooperative games: every baseline plays as a whole team. Competitive games: every pair of
baselines plays head to head, alternating seats (A, B, A, B, ...) and rotating them each game.
Every pairing plays the same seeds (0 .. games-1), so the figures do not depend on the number of
worker processes. Prints a Markdown table and writes it to ``runs/baselines/<env>.md`` (and, with
``--update-rules``, into the game's RULES.md).
"""

from __future__ import annotations

import argparse
import importlib
import itertools
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tqdm import tqdm

import envs
from agents import HEURISTICS, make_agent
from envs.core.docs import update_file
from eval.play import GameResult, play_game
from eval.stats import bootstrap_mean_interval, wilson_interval

CHUNK = 100


def baseline_specs(env_id: str) -> list[str]:
    return ["random"] + [f"heuristic:{h}" for h in HEURISTICS.get(env_id, {})]


def seating(specs: tuple[str, ...], num_players: int, seed: int) -> list[str]:
    """Seats for one game: the specs repeated in turn around the table, rotated by the seed."""
    base = [specs[i % len(specs)] for i in range(num_players)]
    shift = seed % num_players
    return base[shift:] + base[:shift]


def _chunk(job: tuple) -> tuple[tuple, list[GameResult]]:
    env_id, n, specs, start, stop = job
    env = envs.make(env_id, num_players=n)
    results = []
    for seed in range(start, stop):
        seats = seating(specs, n, seed)
        agents = {a: make_agent(s, env_id) for a, s in zip(env.possible_agents, seats, strict=True)}
        results.append(play_game(env, agents, seed))
    return (specs, n), results


def run(env_id: str, players: list[int], games: int, workers: int) -> dict:
    """(specs, players) -> games: teams for a cooperative game, pairs for a competitive one."""
    specs = baseline_specs(env_id)
    if envs.spec(env_id).cooperative:
        lineups = [(s,) for s in specs]
    else:
        lineups = list(itertools.combinations(specs, 2))
    jobs = [
        (env_id, n, lineup, s, min(s + CHUNK, games))
        for lineup in lineups
        for n in players
        for s in range(0, games, CHUNK)
    ]
    results: dict[tuple, list[GameResult]] = {}
    total = len(lineups) * len(players) * games
    with ProcessPoolExecutor(workers) as pool, tqdm(total=total, unit="game") as bar:
        for key, chunk in pool.map(_chunk, jobs):
            results.setdefault(key, []).extend(chunk)
            bar.update(len(chunk))
    return results


def team_table(results: dict, score: str) -> str:
    """Markdown: team, players, games, win rate [95% CI], mean ``info[score]`` [95% CI], mean
    steps."""
    rows = [
        f"| team | players | games | win rate [95% CI] | mean {score} [95% CI] | mean steps |",
        "|---|---|---|---|---|---|",
    ]
    for ((spec,), n), games in sorted(results.items()):
        wins = sum(g.info["outcome"] == 1 for g in games)
        low, high = wilson_interval(wins, len(games))
        mean, mlow, mhigh = bootstrap_mean_interval([float(g.info[score]) for g in games])
        steps = sum(g.steps for g in games) / len(games)
        rows.append(
            f"| {spec} | {n} | {len(games)} | {wins / len(games):.1%} "
            f"[{low:.1%}, {high:.1%}] | {mean:.2f} [{mlow:.2f}, {mhigh:.2f}] | "
            f"{steps:.0f} |"
        )
    return "\n".join(rows)


def head_to_head_table(results: dict) -> str:
    """Markdown: A vs B, players, games, A's and B's win rates [95% CI] (shared wins count for
    both), A's mean score margin over B [95% CI]."""
    rows = [
        "| A | B | players | games | A wins [95% CI] | B wins [95% CI] | "
        "A − B mean score [95% CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    for ((a, b), n), games in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        wins = {a: 0, b: 0}
        margins = []
        for g in games:
            seats = seating((a, b), n, g.seed)
            for spec in {seats[seat] for seat in g.info.get("winners", [])}:  # none if truncated
                wins[spec] += 1
            score = {a: [], b: []}
            for seat, s in enumerate(g.info["scores"]):
                score[seats[seat]].append(s)
            margins.append(sum(score[a]) / len(score[a]) - sum(score[b]) / len(score[b]))
        cells = []
        for spec in (a, b):
            low, high = wilson_interval(wins[spec], len(games))
            cells.append(f"{wins[spec] / len(games):.1%} [{low:.1%}, {high:.1%}]")
        mean, low, high = bootstrap_mean_interval(margins)
        rows.append(
            f"| {a} | {b} | {n} | {len(games)} | {cells[0]} | {cells[1]} | "
            f"{mean:+.2f} [{low:+.2f}, {high:+.2f}] |"
        )
    return "\n".join(rows)


def table(env_id: str, results: dict) -> str:
    spec = envs.spec(env_id)
    return team_table(results, spec.score) if spec.cooperative else head_to_head_table(results)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="hocus_pocus_v0", choices=envs.ids())
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--update-rules", action="store_true", help="also write the table into the game's RULES.md"
    )
    args = parser.parse_args(argv)
    text = table(args.env, run(args.env, args.players, args.games, args.workers))
    if args.update_rules:
        module = importlib.import_module(envs.spec(args.env).module)
        update_file(Path(module.__file__).with_name("RULES.md"), {"baselines": text})
    out = Path("runs/baselines") / f"{args.env}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(text)
    print(f"\nwritten to {out}")
    return text


if __name__ == "__main__":
    main()
