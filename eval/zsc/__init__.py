"""Cooperative-AI protocol: self-play vs cross-play and ad-hoc teamwork of k training seeds.

    cauldron zsc configs/eval/hocus_pocus_zsc.yaml [--quick] [--games N] [--workers N]
                                                         [--checkpoints CKPT CKPT CKPT ...]

Each seed of the train config is a trained agent (a given checkpoint, its finished run, or
trained now with the config's step budget: :mod:`cauldron.eval.zsc.runs`). Before any work the
command prints an estimate of the whole run's time and how it was made. Every lineup below plays the
same seeded deals, seats rotating with the seed (:mod:`cauldron.eval.harness`):

* **self-play**: seed i in every seat;
* **cross-play**: seeds i and j (i ≠ j) share the table half and half: i in ⌈N/2⌉ seats, j in
  ⌊N/2⌋. At even N the split is symmetric (each unordered pair once); at odd N both ordered
  pairs are played (``i×2 + j`` and ``i + j×2`` at 3 players are separate compositions);
* **ad-hoc teamwork**: each seed as the focal agent in one seat with N−1 partners of one kind
  (the harness's focal-vs-background composition), and each partner's own team for reference.

The team score (``measure``: the game's own figure such as stuns, or the win rate) is compared
as the cross-play mean over the self-play mean (and their difference), with 95% intervals from
a two-stage paired bootstrap (:func:`cauldron.eval.stats.bootstrap_ratio_interval`: seeds or pairs,
then deals). ``out`` receives ``report.md``, ``results.json.xz`` (every game and the provenance),
``crossplay.png`` and ``adhoc.png``. The report warns when the seeds trained different numbers
of steps. ``--quick`` trains each seed a tenth of its steps (in run folders of their own: see
:func:`cauldron.eval.zsc.config.quick_config`), plays at most 100 games per composition, prints what
it changed, and the report says its figures are rougher.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from cauldron import envs
from cauldron.agents import display_names
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.folders import lock_folder
from cauldron.eval import harness
from cauldron.eval.config import EvalConfig, parse_config
from cauldron.eval.harness import Lineup
from cauldron.eval.play import GameResult
from cauldron.eval.provenance import provenance
from cauldron.eval.stats import bootstrap_ratio_interval
from cauldron.eval.zsc import batched, report
from cauldron.eval.zsc.config import QUICK_GAMES, ZscConfig, load_zsc_config, quick_config
from cauldron.eval.zsc.runs import (
    SeedRun,
    final_checkpoint,
    resumed_steps,
    seed_runs,
    speed,
    training_estimate,
)

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
                "ends": harness.ends(lineup, games, True),
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
        "engine": config.engine,
        "score": score,
        "measure": config.measure,
        "labels": labels,
        "runs": [
            {
                "seed": r.seed,
                "folder": str(r.folder),
                "agent": r.spec,
                "trained_now": r.trained_now,
                "given": r.given,
                "steps": r.steps,
            }
            for r in runs
        ],
        "warnings": budget_warnings(runs),
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


def budget_warnings(runs: list[SeedRun]) -> list[str]:
    """Warnings when the seeds' budgets are not known to be equal: steps that differ, or
    that neither a ``metrics.csv`` nor the checkpoint records."""
    out = []
    unknown = [r.seed for r in runs if r.steps is None]
    if unknown:
        out.append(
            f"Seeds {unknown}: steps unknown (no metrics.csv beside the checkpoint, and the "
            "checkpoint records none): the seeds' "
            "budgets cannot be compared."
        )
    steps = {r.seed: r.steps for r in runs if r.steps is not None}
    if len(set(steps.values())) > 1:
        listed = ", ".join(f"seed {k} {v:,}" for k, v in steps.items())
        out.append(
            f"The seeds trained different numbers of steps ({listed}); "
            "docs/benchmark_protocol.md asks for equal budgets."
        )
    return out


def duration(seconds: float) -> str:
    """A rough duration: seconds, minutes, or hours and minutes."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def estimate(config: ZscConfig, games: int, probe: bool = True) -> tuple[float, list[str]]:
    """The whole run's time in seconds, before any work, and lines saying how it was
    estimated: each seed to train (:func:`cauldron.eval.zsc.runs.training_estimate`, with a short
    training probe unless ``probe`` is off; given or finished seeds cost nothing), then the
    games of every composition at the configured seconds per game (each seat's agent
    weighing by its share of the seats) over the workers."""
    lines = []
    total = 0.0
    if config.checkpoints is None:
        trains = [config.train_config(seed) for seed in config.seeds]
        missing = [c for c in trains if not final_checkpoint(c).exists()]
        if missing:
            seconds, how = training_estimate(missing[0], [c.folder for c in trains], probe)
            left = [1 - resumed_steps(c) / c.total_steps for c in missing]
            total += seconds * sum(left)
            resumes = len(missing) - left.count(1)
            lines.append(
                f"training: {len(missing)} of {len(trains)} seeds to train"
                + (f" ({resumes} resuming: {sum(left):.1f} seeds' work left)" if resumes else "")
                + f", about {duration(seconds)} a whole seed ({how})"
            )
        else:
            lines.append("training: none (every seed's run is finished)")
    else:
        lines.append("training: none (checkpoints given)")
    figures, source = speed(config.env)
    seeds = [str(s) for s in config.seeds]
    played = plan(seeds, list(config.partners or []), config.num_players)
    compositions = f"{games * len(played):,} ({len(played)} compositions x {games})"
    if config.engine == "batched":
        seconds = games * len(played) * figures.batched_game
        where = f"on the batched engine at {figures.batched_game:g} s a game"
    else:
        per_game = sum(
            sum(
                k / lineup.players * (figures.trained_game if a in seeds else figures.baseline_game)
                for a, k in zip(lineup.agents, lineup.seats, strict=True)
            )
            for _, lineup in played
        )
        workers = min(config.workers, os.cpu_count() or 1)
        seconds = games * per_game / workers
        where = (
            f"on {workers} worker{'s' * (workers > 1)} at {figures.trained_game:g} s a game "
            f"with trained agents in every seat and {figures.baseline_game:g} s with baselines"
        )
    total += seconds
    lines.append(f"games: {compositions}, about {duration(seconds)} {where} ({source})")
    return total, [f"estimate: about {duration(total)} in all", *(f"  {x}" for x in lines)]


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
        "split": config.split,
        "seed": config.seed,
        "workers": config.workers,
        "options": options,
        "crossplay": "none",
        "out": config.out,
        "name": config.name,
    }
    return parse_config(data, "cauldron zsc")


def run(config: ZscConfig, games: int | None = None, quiet: bool = False) -> dict[str, Any]:
    """The whole protocol: the seeds' agents (trained where missing), every lineup, the report
    in ``config.out``; returns the summary (with a note when ``games`` cut the run short)."""
    folder = Path(config.out)
    games = config.games if games is None else games
    with lock_folder(folder):  # one protocol at a time writes the folder
        print("\n".join(estimate(config, games)[1]), flush=True)
        runs = seed_runs(config, quiet)
        eval_config = evaluation_config(config, runs, games)
        lineups = [
            lineup
            for _, lineup in plan([r.spec for r in runs], config.partners, config.num_players)
        ]
        if config.engine == "batched":
            results = batched.play(
                config.env,
                config.num_players,
                lineups,
                eval_config.games,
                eval_config.seed,
                eval_config.options,
                progress=not quiet,
            )
        else:
            results = harness.play_all(eval_config, progress=not quiet, only=lineups)
        summary = summarize(config, runs, results, eval_config)
        if eval_config.games < config.games:
            summary["note"] = (
                f"Cut short: {eval_config.games} games per seat composition instead of the "
                f"config's {config.games}; the figures are rougher (wider intervals) than a full "
                "run's."
            )
        for warning in summary["warnings"]:
            print(f"warning: {warning}", flush=True)
        report.write(summary, folder)
    return summary


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="cauldron zsc", description=__doc__.splitlines()[0])
    parser.add_argument("config", help="YAML file (see configs/eval/*_zsc.yaml)")
    parser.add_argument("--games", type=int, help="override the config's games per composition")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a tenth of each seed's training steps (in its own run folders) and at most "
        f"{QUICK_GAMES} games per composition (rougher figures, noted in the report)",
    )
    parser.add_argument(
        "--checkpoints",
        nargs="+",
        metavar="CKPT",
        help="finished checkpoints (torch:<file>, sb3:<file>, or a .pt / .zip path), one per "
        "seed in order: played instead of training",
    )
    parser.add_argument("--workers", type=int, help="override the config's worker count")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    given = {"workers": args.workers, "checkpoints": args.checkpoints}
    config = load_zsc_config(args.config, {k: v for k, v in given.items() if v is not None})
    games = config.games if args.games is None else args.games
    if games < 1:
        raise ConfigError(f"--games must be at least 1, got {games}")
    if args.quick:
        config, changes = quick_config(config)
        changes.append(f"games per composition {games:,} -> {min(games, QUICK_GAMES):,}")
        games = min(games, QUICK_GAMES)
        print("--quick: " + "; ".join(changes), flush=True)
    summary = run(config, games, args.quiet)
    print(report.headline(summary))
    print(f"\nreport: {Path(config.out) / 'report.md'}")
    return summary
