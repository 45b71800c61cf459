"""The results table of finished training runs: each trained agent beside the baselines.

    cauldron results runs/train/<run> [...] [--readme README.md] [--curves docs/training]
    cauldron results --across-seeds runs/train/<name>-seed0 runs/train/<name>-seed1 ...
    cauldron results --split test runs/train/<name>-seed0 ... [--games N] [--out DIR]

``--split dev`` (the default) reads each run's final evaluation (``evaluation/results.json``,
played on the dev split), its ``metrics.csv`` (steps trained) and its config. Cooperative games
compare team win rates (the trained policy in every seat, a random team, the best heuristic
team, each with the game's own figure such as stuns as a diagnostic); competitive games give
the trained seat's head-to-head win rate against random play and against the heuristic it
fares worst against. The verdict is the one rule of every table
(:func:`cauldron.eval.stats.verdict`): the paired difference of the game's measure on the same deals
(the trained team's win rate minus the best heuristic team's; the trained seat's won − lost) lies
above 0 (*yes*), below 0 (*no*) or neither (*not sure*). Wall-clock is from the run's
``config.yaml`` being written to its final checkpoint being written. ``--readme`` rewrites the
README's ``training`` block; ``--curves`` draws each run's learning curve there as ``<run name
without -seed>.png``. ``--across-seeds`` summarises finished runs of one config with different seeds
instead (:func:`seed_table`; ``cauldron train --seeds`` prints it after its runs), with each seed's
steps and a warning when the seeds' budgets differ or fewer than :data:`MIN_SEEDS` are given.
``--split test`` plays the runs (seeds of one torch config) on the test split instead, as the
README's rows (:func:`test_table`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from cauldron.envs.core.docs import update_file
from cauldron.envs.core.errors import ConfigError, run_command
from cauldron.eval import batched, splits
from cauldron.eval.harness import Lineup
from cauldron.eval.stats import MIN_SEEDS, bootstrap_mean_interval, verdict
from cauldron.train import readme_figures, runfolder
from cauldron.train.runlog import plot_learning_curve, read_metrics

FINALS = ("final.pt", "final.zip", "final_rllib")  # a finished run's checkpoint, by trainer
COOPERATIVE = (
    "| game | trainer | trained team [95% CI] | random team | best heuristic team [95% CI] "
    "| trained − heuristic win rate, paired [95% CI] | verdict | training | deals |"
    "\n|---|---|---|---|---|---|---|---|---|"
)
COMPETITIVE = (
    "| game | trainer | trained seat vs random [95% CI] | vs its hardest heuristic [95% CI] "
    "| won − lost, paired [95% CI] | verdict | training | deals |"
    "\n|---|---|---|---|---|---|---|---|"
)


def percent(rate: dict) -> str:
    return f"{100 * rate['rate']:.1f}% [{100 * rate['low']:.1f}, {100 * rate['high']:.1f}]"


def with_figure(rate: dict, row: dict) -> str:
    """A team's win rate, then the mean of the game's own figure (Hocus Pocus' stuns, the
    Horseman's scares) with its interval, when the evaluation measured one."""
    figures = [k for k, v in row.items() if isinstance(v, dict) and "mean" in v and k != "length"]
    text = percent(rate)
    for name in figures:
        figure = row[name]
        text += f"; {figure['mean']:.2f} {name} [{figure['low']:.2f}, {figure['high']:.2f}]"
    return text


@contextlib.contextmanager
def reading(folder: Path) -> Iterator[None]:
    """Read a run folder in the block: a missing folder, or a file missing or damaged in it, is
    a one-line :class:`ConfigError` naming the folder."""
    if not folder.is_dir():
        raise ConfigError(f"{str(folder)!r} is not a folder (a finished training run)")
    try:
        yield
    except ConfigError:
        raise
    except OSError as err:
        raise ConfigError(
            f"{str(folder)!r}: cannot read {err.filename or 'a file'} ({err.strerror})"
        ) from None
    except (
        ValueError,
        LookupError,
        TypeError,
        AttributeError,
        StopIteration,
        yaml.YAMLError,
    ) as err:
        detail = " ".join(str(err).split())[:200] or type(err).__name__
        raise ConfigError(
            f"{str(folder)!r} is not a finished training run with its final evaluation "
            f"(config.yaml, metrics.csv, final.pt or final.zip, evaluation/results.json): "
            f"{type(err).__name__}: {detail}"
        ) from None


def trained_rates(folder: Path) -> tuple[dict, dict, dict[str, dict]]:
    """A finished run's config, its final evaluation, and the trained agent's win rates (with
    intervals) that the tables compare: cooperative games, every team's (``lineup`` -> rate, the
    trained team's under its spec); competitive games, the trained seat's against each
    opponent (``opponent`` -> rate)."""
    with reading(folder):
        return _trained_rates(folder)


def _trained_rates(folder: Path) -> tuple[dict, dict, dict[str, dict]]:
    config = yaml.safe_load((folder / "config.yaml").read_text())
    if not isinstance(config, dict) or not {"env", "trainer", "num_players", "seed"} <= set(config):
        raise ValueError("config.yaml is not a train config")
    results = json.loads((folder / "evaluation" / "results.json").read_text())
    return config, results, evaluation_rates(results)


def evaluation_rates(results: dict) -> dict[str, dict]:
    """The rates :func:`trained_rates` describes, from an evaluation's ``results.json`` whose
    first agent is the trained one."""
    trained = results["config"]["agents"][0]
    rows = results["rows"]
    if results["cooperative"]:
        rates = {row["lineup"][0]: row["win"] for row in rows if len(row["lineup"]) == 1}
    else:
        rates = {
            next(a for a in row["lineup"] if a != trained): row["wins"][trained]
            for row in rows
            if trained in row["lineup"] and len(row["lineup"]) == 2
        }
    return rates


def training_cell(config: dict[str, Any], steps: int, minutes: float) -> str:
    """The "training" column: steps, minutes and threads, then what sets the run apart (the
    batched engine, a heuristic prior the trained agent contains)."""
    threads = config.get("threads") or "all"
    cell = f"{steps:,} steps, {minutes:.0f} min, {threads} thread{'s' * (threads != 1)}"
    if config.get("engine") == "batched":
        cell += ", batched engine"
    if config.get("prior"):
        cell += f", prior {config['prior']}"
    return cell


def run_row(folder: Path) -> tuple[bool, str]:
    """Whether the run's game is cooperative, and its table row."""
    with reading(folder):
        return _run_row(folder)


def _run_row(folder: Path) -> tuple[bool, str]:
    config, results, _ = _trained_rates(folder)
    steps = max(step for step, _, _ in read_metrics(folder / "metrics.csv"))
    final = next(p for p in (folder / "final.pt", folder / "final.zip") if p.is_file())
    minutes = (final.stat().st_mtime - (folder / "config.yaml").stat().st_mtime) / 60
    training = training_cell(config, steps, minutes)
    *comparison, deals = cells(results)
    row = "| " + " | ".join([game_name(config), config["trainer"], *comparison, training, deals])
    return results["cooperative"], row + " |"


def cells(results: dict) -> list[str]:
    """The comparison cells of a row, from an evaluation's ``results.json`` whose first agent is
    the trained one: cooperative, the trained, random and best heuristic teams, then the
    trained team's win rate minus the best heuristic team's on the same deals; competitive,
    the trained seat against random play and its hardest heuristic, then its won − lost
    against that heuristic. The verdict is the paired difference's
    (:func:`cauldron.eval.stats.verdict`), and the last cell names the deals (the split and the
    games)."""
    rates = evaluation_rates(results)
    trained = results["config"]["agents"][0]
    heuristics = {k: v for k, v in rates.items() if k.startswith("heuristic:")}
    config = results["config"]
    deals = f"{config.get('split', 'dev')} split, {config['games']:,} games"
    if results["cooperative"]:
        best = max(heuristics, key=lambda k: heuristics[k]["rate"])
        team = {row["lineup"][0]: row for row in results["rows"] if len(row["lineup"]) == 1}
        difference = paired_win(results, trained, best)
        return [
            with_figure(rates[trained], team[trained]),
            with_figure(rates["random"], team["random"]),
            f"{best}: {with_figure(heuristics[best], team[best])}",
            readme_figures.signed(difference),
            verdict(difference["low"], difference["high"]),
            deals,
        ]
    hardest = min(heuristics, key=lambda k: heuristics[k]["rate"])
    difference = won_minus_lost(results, trained, hardest)
    return [
        percent(rates["random"]),
        f"{hardest}: {percent(heuristics[hardest])}",
        readme_figures.signed(difference),
        verdict(difference["low"], difference["high"]),
        deals,
    ]


def paired_win(results: dict, trained: str, other: str) -> dict:
    """The trained team's win rate minus ``other``'s team's, deal by deal (the evaluation's
    paired differences)."""
    players = results["config"]["players"][0]
    mine, theirs = (Lineup("team", (a,), (players,)).label() for a in (trained, other))
    return next(
        p["win"]
        for p in results["paired"]
        if p["players"] == players and (p["a"], p["b"]) == (mine, theirs)
    )


def won_minus_lost(results: dict, trained: str, other: str) -> dict:
    """The trained seat's wins minus ``other``'s, game by game (a head-to-head row's paired
    difference, turned round when ``other`` is listed first)."""
    row = next(r for r in results["rows"] if set(r["lineup"]) == {trained, other})
    m = row["win_difference"]
    if row["lineup"][0] == trained:
        return m
    return {"mean": -m["mean"], "low": -m["high"], "high": -m["low"]}


def game_name(config: dict) -> str:
    return f"{config['env'].rsplit('_v', 1)[0]} ({config['num_players']}p)"


def finished_run(folder: Path) -> tuple[dict, dict, dict[str, dict], int]:
    """:func:`trained_rates` of a finished run folder, and the learner steps it trained (the
    last step in ``metrics.csv``); a one-line :class:`ConfigError` for an unfinished one."""
    with reading(folder):
        missing = [
            name
            for name, there in (
                ("a final checkpoint (final.pt, final.zip or final_rllib)", FINALS),
                ("metrics.csv", ("metrics.csv",)),
                ("evaluation/results.json (the final evaluation)", ("evaluation/results.json",)),
            )
            if not any((folder / path).exists() for path in there)
        ]
        if missing:
            raise ConfigError(
                f"{str(folder)!r} is not a finished training run: no {' and no '.join(missing)}; "
                "let it finish (resume: true) or leave it out"
            )
        steps = max(step for step, _, _ in read_metrics(folder / "metrics.csv"))
        return (*_trained_rates(folder), steps)


def seed_table(folders: list[Path]) -> str:
    """Finished runs of one config that differ only in their seed, summarised across the
    seeds: each win rate the final evaluations measured (the trained team's; the trained
    seat's against each opponent) per seed, its mean with a 95% percentile-bootstrap interval
    over the seeds (rough with few seeds: five or more are worth having; none over one seed),
    and each seed's steps. Warning lines follow the table when the seeds trained different
    numbers of steps or fewer than :data:`MIN_SEEDS` are given."""
    if len({folder.resolve() for folder in folders}) != len(folders):
        raise ConfigError(f"a run folder is given twice ({', '.join(map(str, folders))})")
    runs = [finished_run(folder) for folder in folders]
    ignored = (runfolder.MAY_CHANGE - {"lr_decay_steps"}) | {"seed"}
    first = runs[0][0]
    for folder, (config, *_) in zip(folders, runs, strict=True):
        differ = sorted(
            k
            for k in first.keys() | config.keys()
            if k not in ignored and first.get(k) != config.get(k)
        )
        if differ:
            raise ConfigError(
                f"{folder} differs from {folders[0]} in {', '.join(differ)}: "
                "not seeds of one config"
            )
    seeds = [config["seed"] for config, *_ in runs]
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"the runs share seeds ({seeds}): each seed once")
    measures: dict[str, list[float]] = {}
    for folder, (_, results, rates, _) in zip(folders, runs, strict=True):
        with reading(folder):
            found = seed_measures(results, rates)
        if measures and found.keys() != measures.keys():
            raise ConfigError(
                f"{folder}'s final evaluation measured {sorted(found)}, {folders[0]}'s "
                f"{sorted(measures)}: evaluate both again (cauldron train --evaluate-only)"
            )
        for measure, value in found.items():
            measures.setdefault(measure, []).append(value)
    steps = [run[3] for run in runs]
    steps_cell = ", ".join(f"{s:,}" for s in steps)
    lines = [
        "| game | trainer | seeds | measure | per seed | mean [95% CI over seeds] | steps |",
        "|---|---|---|---|---|---|---|",
    ]
    for measure, values in measures.items():
        per_seed = ", ".join(f"{100 * v:.1f}%" for v in values)
        lines.append(
            f"| {game_name(first)} | {first['trainer']} | {', '.join(map(str, seeds))} | "
            f"{measure} | {per_seed} | {mean_over_seeds(values)} | {steps_cell} |"
        )
    return "\n".join(lines + seed_warnings(seeds, steps))


def mean_over_seeds(values: list[float]) -> str:
    """The mean with its bootstrap interval over the seeds, as a percentage (no interval over
    a single seed)."""
    if len(values) == 1:
        return "n/a (1 seed)"
    mean, low, high = bootstrap_mean_interval(values)
    return f"{100 * mean:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def seed_warnings(seeds: list[int], steps: list[int]) -> list[str]:
    """Warning lines: too few seeds for the protocol, or seeds with different budgets."""
    out = []
    if len(seeds) < MIN_SEEDS:
        out.append(
            f"warning: {len(seeds)} seed{'s' * (len(seeds) > 1)}; the protocol asks for at "
            f"least {MIN_SEEDS} (better 5), and an interval over fewer is not worth much"
        )
    if len(set(steps)) > 1:
        listed = ", ".join(f"seed {k} {s:,}" for k, s in zip(seeds, steps, strict=True))
        out.append(
            f"warning: the seeds trained different numbers of steps ({listed}); "
            "docs/benchmark_protocol.md asks for equal budgets (total_steps, max_minutes: 0)"
        )
    return [""] + out if out else []


def seed_measures(results: dict, rates: dict[str, dict]) -> dict[str, float]:
    """The win rates one seed's final evaluation measured: the trained team's (cooperative
    games), or the trained seat's against each opponent."""
    if results["cooperative"]:
        return {"trained team win rate": float(rates[results["config"]["agents"][0]]["rate"])}
    return {f"win rate vs {o}": float(rate["rate"]) for o, rate in sorted(rates.items())}


def test_table(folders: list[Path], games: int, out: Path) -> str:
    """The runs (seeds of one torch config, :data:`MIN_SEEDS` or more) played on the test
    split by ``cauldron eval-batched`` into ``out/<name>/``, as the README's rows
    (:mod:`cauldron.train.readme_figures`): against the best heuristic team of their final
    evaluation (cooperative), or against random play and every heuristic (competitive)."""
    runs = [finished_run(folder) for folder in folders]
    config, results, rates, _ = runs[0]
    heuristics = sorted(k for k in rates if k.startswith("heuristic:"))
    if results["cooperative"]:
        against = [max(heuristics, key=lambda k: rates[k]["rate"])]
    else:
        against = [*heuristics, "random"]
    finals = [folder / "final.pt" for folder in folders]
    if not all(final.is_file() for final in finals):
        raise ConfigError("--split test plays torch runs (final.pt) on the batched engine")
    row = readme_figures.BenchmarkRow(
        name=config["name"].rsplit("-seed", 1)[0],
        env=config["env"],
        players=config["num_players"],
        config=f"{folders[0] / 'config.yaml'}",
        budget=", ".join(f"{run[3]:,}" for run in runs) + " learner steps",
        seeds=[str(final) for final in finals],
        against=against,
    )
    batched.main(row.argv(games, out))
    played = json.loads((out / row.name / "results.json").read_text())
    return "\n".join([readme_figures.HEADER, *readme_figures.rendered(row, played)])


def table(folders: list[Path]) -> str:
    """A cooperative and a competitive table (each only if some run needs it)."""
    rows = [run_row(folder) for folder in folders]
    parts = []
    for cooperative, header in ((True, COOPERATIVE), (False, COMPETITIVE)):
        mine = [row for coop, row in rows if coop == cooperative]
        if mine:
            parts.append("\n".join([header, *mine]))
    return "\n\n".join(parts)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(prog="cauldron results", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders")
    parser.add_argument("--readme", type=Path, help="write the table into this file's block")
    parser.add_argument("--curves", type=Path, help="draw the learning curves in this folder")
    parser.add_argument(
        "--across-seeds",
        action="store_true",
        help="the runs are seeds of one config: print their table across the seeds",
    )
    parser.add_argument(
        "--split",
        default=splits.TRAINING_SPLIT,
        help="dev: the runs' final evaluations; test: play the runs (seeds of one torch config) "
        "on the test split with cauldron.eval.batched, as the README's rows",
    )
    parser.add_argument("--games", type=int, default=5000, help="--split test: games per row")
    parser.add_argument(
        "--out", type=Path, default=Path("runs/results"), help="--split test: the reports' root"
    )
    args = parser.parse_args(argv)
    splits.get(args.split)
    if args.split != splits.TRAINING_SPLIT:
        if args.across_seeds or args.readme or args.curves:
            raise ConfigError(
                "--split test prints the README's rows: no --across-seeds, --readme or --curves"
            )
        text = test_table(args.runs, args.games, args.out)
        print(text)
        return text
    if args.across_seeds:
        text = seed_table(args.runs)
        print(text)
        return text
    text = table(args.runs)
    print(text)
    if args.readme:
        update_file(args.readme, {"training": text})
    if args.curves:
        args.curves.mkdir(parents=True, exist_ok=True)
        for folder in args.runs:
            with reading(folder):
                config = yaml.safe_load((folder / "config.yaml").read_text())
                name = f"{config['name'].rsplit('-seed', 1)[0]}.png"
                plot_learning_curve(folder / "metrics.csv", args.curves / name)
    return text


if __name__ == "__main__":
    run_command(main)
