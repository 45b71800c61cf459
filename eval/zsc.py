"""Cooperative-AI protocol: self-play vs cross-play and ad-hoc teamwork of k training seeds.

    python -m eval.zsc configs/eval/hocus_pocus_zsc.yaml [--quick] [--games N] [--workers N]

Each seed of the train config is a trained agent (its finished run, or trained now:
:mod:`eval.zsc_runs`). Every lineup below plays the same seeded deals, seats rotating with the
seed (:mod:`eval.harness`):

* **self-play**: seed i in every seat;
* **cross-play**: seeds i and j (i ≠ j) share the table half and half: i in ⌈N/2⌉ seats, j in
  ⌊N/2⌋. At even N the split is symmetric (each unordered pair once); at odd N both ordered
  pairs are played (``i×2 + j`` and ``i + j×2`` at 3 players are separate compositions);
* **ad-hoc teamwork**: each seed as the focal agent in one seat with N−1 partners of one kind
  (the harness's focal-vs-background composition), and each partner's own team for reference.

The team score (``measure``: the game's own figure such as stuns, or the win rate) is compared
as the cross-play mean over the self-play mean (and their difference), with 95% intervals from
a two-stage paired bootstrap (:func:`eval.stats.bootstrap_ratio_interval`: seeds or pairs, then
deals). ``out`` receives ``report.md``, ``results.json`` (every game and the provenance),
``crossplay.png`` and ``adhoc.png``. ``--quick`` plays at most 100 games per composition and
the report says its figures are rougher.
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import envs
from agents import display_names
from envs.core.errors import ConfigError, run_command
from envs.core.folders import lock_folder
from eval import harness, zsc_report
from eval.config import EvalConfig, parse_config
from eval.harness import Lineup
from eval.play import GameResult
from eval.provenance import provenance
from eval.stats import bootstrap_ratio_interval
from eval.zsc_config import ZscConfig, load_zsc_config, parse_zsc_config
from eval.zsc_runs import SeedRun, seed_runs

QUICK_GAMES = 100
SELF, CROSS, ADHOC, PARTNER = "self-play", "cross-play", "ad-hoc", "partner team"


def split(n: int) -> tuple[int, int]:
    """Seats of the two seeds in a cross-play lineup: half and half, the first one the larger
    half at odd ``n``."""
    return (n + 1) // 2, n // 2


def plan(seeds: list[str], partners: list[str], n: int) -> list[tuple[str, Lineup]]:
    """Every (role, lineup) of the protocol at ``n`` players, in report order."""
    pairs = itertools.combinations if n % 2 == 0 else itertools.permutations
    return (
        [(SELF, Lineup("team", (s,), (n,))) for s in seeds]
        + [(CROSS, Lineup("crossplay", (a, b), split(n))) for a, b in pairs(seeds, 2)]
        + [(ADHOC, Lineup("crossplay", (s, p), (1, n - 1))) for p in partners for s in seeds]
        + [(PARTNER, Lineup("team", (p,), (n,))) for p in partners]
    )


def game_value(measure: str, score: str) -> Callable[[GameResult], float]:
    """The team score of one game: its win (1 or 0) or the game's own figure."""
    if measure == "win":
        return lambda g: float(g.info["outcome"] == 1)
    return lambda g: float(g.info[score])


def compare(numerator: list[list[float]], denominator: list[list[float]]) -> dict[str, Any]:
    """Means, ratio and difference with their two-stage bootstrap intervals, as plain data
    (``None`` for a ratio that is undefined because the self-play mean is 0)."""
    out = bootstrap_ratio_interval(np.array(numerator), np.array(denominator))
    return {
        key: {
            k: None if math.isnan(x) else x for k, x in zip(("mean", "low", "high"), v, strict=True)
        }
        for key, v in out.items()
    }


def summarize(
    config: ZscConfig,
    runs: list[SeedRun],
    results: dict[Lineup, list[GameResult]],
    eval_config: EvalConfig,
) -> dict[str, Any]:
    """Plain data: every lineup's row (harness columns and every game), the self-play and
    cross-play means with their ratio and difference, per seed, the cross-play matrix and the
    ad-hoc table; every figure with its 95% interval."""
    score = envs.spec(config.env).score
    value = game_value(config.measure, score)
    seeds = [r.spec for r in runs]
    played = plan(seeds, config.partners, config.num_players)
    values = {lineup: [value(g) for g in results[lineup]] for _, lineup in played}
    rows = []
    for role, lineup in played:
        games = results[lineup]
        rows.append(
            {
                "role": role,
                "kind": lineup.kind,
                "lineup": list(lineup.agents),
                "seats": list(lineup.seats),
                "label": lineup.label(),
                "players": lineup.players,
                "win": harness.rate(sum(g.info["outcome"] == 1 for g in games), len(games)),
                score: harness.mean([float(g.info[score]) for g in games]),
                "measure": harness.mean(values[lineup]),
                "length": harness.mean([float(g.steps) for g in games]),
                "games": harness.game_rows(lineup, games, True, score),
            }
        )
    by_role: dict[str, list[Lineup]] = {}
    for role, lineup in played:
        by_role.setdefault(role, []).append(lineup)
    selfplay = {lineup.agents[0]: values[lineup] for lineup in by_role[SELF]}
    cross = {lineup.agents: values[lineup] for lineup in by_role[CROSS]}
    per_seed = {
        s: compare([v for pair, v in cross.items() if s in pair], [selfplay[s]]) for s in seeds
    }
    adhoc = {}
    for p in config.partners:
        rows_p = [values[lineup] for lineup in by_role[ADHOC] if lineup.agents[1] == p]
        adhoc[p] = compare(rows_p, list(selfplay.values()))
    overall = compare(list(cross.values()), list(selfplay.values()))
    specs = seeds + config.partners
    labels = display_names(specs, {r.spec: f"seed {r.seed}" for r in runs})
    return {
        "config": config.model_dump(),
        "env": config.env,
        "players": config.num_players,
        "games": eval_config.games,
        "first_seed": eval_config.seed,
        "score": score,
        "measure": config.measure,
        "labels": labels,
        "runs": [
            {
                "seed": r.seed,
                "folder": str(r.folder),
                "agent": r.spec,
                "trained_now": r.trained_now,
                "steps": r.steps,
            }
            for r in runs
        ],
        "provenance": provenance({**config.model_dump(), "agents": specs}),
        "selfplay": overall["denominator"],
        "crossplay": overall["numerator"],
        "ratio": overall["ratio"],
        "difference": overall["difference"],
        "per_seed": per_seed,
        "matrix": matrix(seeds, values, played),
        "adhoc": adhoc,
        "rows": rows,
    }


def matrix(
    seeds: list[str],
    values: dict[Lineup, list[float]],
    played: list[tuple[str, Lineup]],
) -> list[list[float]]:
    """Mean team score by row seed (⌈N/2⌉ seats) and column seed (⌊N/2⌋ seats); the diagonal
    is self-play. At even N the matrix is symmetric."""
    cells = {}
    for role, lineup in played:
        if role == SELF:
            cells[lineup.agents * 2] = float(np.mean(values[lineup]))
        elif role == CROSS:
            cells[lineup.agents] = float(np.mean(values[lineup]))
            if lineup.seats[0] == lineup.seats[1]:
                cells[lineup.agents[::-1]] = cells[lineup.agents]
    return [[cells[a, b] for b in seeds] for a in seeds]


def evaluation_config(config: ZscConfig, runs: list[SeedRun], games: int) -> EvalConfig:
    """The harness config that seats the seeds' agents and the partners (checked like any
    evaluation config: every agent is loaded once)."""
    options = config.train_config(config.seeds[0]).options
    data = {
        "env": config.env,
        "players": [config.num_players],
        "agents": [r.spec for r in runs] + list(config.partners),
        "games": games,
        "seed": config.seed,
        "workers": config.workers,
        "options": options,
        "crossplay": "none",
        "out": config.out,
        "name": config.name,
    }
    return parse_config(data, "python -m eval.zsc")


def run(config: ZscConfig, games: int | None = None, quiet: bool = False) -> dict[str, Any]:
    """The whole protocol: the seeds' agents (trained where missing), every lineup, the report
    in ``config.out``; returns the summary (with a note when ``games`` cut the run short)."""
    folder = Path(config.out)
    with lock_folder(folder):  # one protocol at a time writes the folder
        runs = seed_runs(config, quiet)
        eval_config = evaluation_config(config, runs, config.games if games is None else games)
        lineups = [
            lineup
            for _, lineup in plan([r.spec for r in runs], config.partners, config.num_players)
        ]
        results = harness.play_all(eval_config, progress=not quiet, only=lineups)
        summary = summarize(config, runs, results, eval_config)
        if eval_config.games < config.games:
            summary["note"] = (
                f"Cut short: {eval_config.games} games per seat composition instead of the "
                f"config's {config.games}; the figures are rougher (wider intervals) than a full "
                "run's."
            )
        zsc_report.write(summary, folder)
    return summary


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m eval.zsc", description=__doc__.splitlines()[0])
    parser.add_argument("config", help="YAML file (see configs/eval/*_zsc.yaml)")
    parser.add_argument("--games", type=int, help="override the config's games per composition")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"at most {QUICK_GAMES} games per composition (rougher figures, noted in the report)",
    )
    parser.add_argument("--workers", type=int, help="override the config's worker count")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    config = load_zsc_config(args.config)
    if args.workers is not None:
        config = parse_zsc_config({**config.model_dump(), "workers": args.workers}, args.config)
    games = config.games if args.games is None else args.games
    if args.quick:
        games = min(games, QUICK_GAMES)
    if games < 1:
        raise ConfigError(f"--games must be at least 1, got {games}")
    summary = run(config, games, args.quiet)
    print(zsc_report.headline(summary))
    print(f"\nreport: {Path(config.out) / 'report.md'}")
    return summary


if __name__ == "__main__":
    run_command(main)
