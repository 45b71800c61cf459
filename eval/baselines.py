"""Win rates and scores of baseline teams, with 95% confidence intervals.

    python -m eval.baselines [--env hocus_pocus_v0] [--players 2 4 6] [--games 2000] [--workers 2]

Every team plays the same seeds (0 .. games-1), so the figures do not depend on the number of
worker processes. Prints a Markdown table and writes it to ``runs/baselines/<env>.md`` (and, with
``--update-rules``, into the game's RULES.md).
"""

from __future__ import annotations

import argparse
import importlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tqdm import tqdm

import envs
from agents import HEURISTICS
from envs.core.docs import update_file
from eval.play import GameResult, play_team
from eval.stats import bootstrap_mean_interval, wilson_interval

CHUNK = 100


def _chunk(job: tuple[str, int, str, int, int]) -> tuple[tuple[str, int], list[GameResult]]:
    env_id, n, spec, start, stop = job
    return (spec, n), play_team(env_id, n, spec, range(start, stop))


def run(env_id: str, players: list[int], games: int, workers: int) -> dict:
    """(spec, players) -> list of GameResult for every baseline team of ``env_id``."""
    specs = ["random"] + [f"heuristic:{h}" for h in HEURISTICS.get(env_id, {})]
    jobs = [
        (env_id, n, spec, s, min(s + CHUNK, games))
        for spec in specs
        for n in players
        for s in range(0, games, CHUNK)
    ]
    results: dict[tuple[str, int], list[GameResult]] = {}
    with ProcessPoolExecutor(workers) as pool, tqdm(total=len(jobs) * CHUNK, unit="game") as bar:
        for key, chunk in pool.map(_chunk, jobs):
            results.setdefault(key, []).extend(chunk)
            bar.update(len(chunk))
    return results


def table(results: dict) -> str:
    """Markdown: team, players, games, win rate [95% CI], mean score [95% CI], mean steps."""
    rows = [
        "| team | players | games | win rate [95% CI] | mean stuns [95% CI] | mean steps |",
        "|---|---|---|---|---|---|",
    ]
    for (spec, n), games in sorted(results.items()):
        wins = sum(g.info["outcome"] == 1 for g in games)
        low, high = wilson_interval(wins, len(games))
        mean, mlow, mhigh = bootstrap_mean_interval([float(g.info["stuns"]) for g in games])
        steps = sum(g.steps for g in games) / len(games)
        rows.append(
            f"| {spec} | {n} | {len(games)} | {wins / len(games):.1%} "
            f"[{low:.1%}, {high:.1%}] | {mean:.2f} [{mlow:.2f}, {mhigh:.2f}] | "
            f"{steps:.0f} |"
        )
    return "\n".join(rows)


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
    text = table(run(args.env, args.players, args.games, args.workers))
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
