"""The results table of finished training runs: each trained agent beside the baselines.

    python -m train.results runs/train/<run> [...] [--readme README.md] [--curves docs/training]
    python -m train.results --across-seeds runs/train/<name>-seed0 runs/train/<name>-seed1 ...

Reads each run's final evaluation (``evaluation/results.json``), its ``metrics.csv`` (steps
trained) and its config. Cooperative games compare team win rates (the trained policy in every
seat, a random team, the best heuristic team, each with the game's own figure such as stuns;
"beats it?" is *yes* when the two win-rate intervals do not overlap); competitive games give
the trained seat's head-to-head win rate against random play and against the heuristic it fares
worst against (ties count as a win for both; *yes* when the interval lies above 50%).
Wall-clock is from the run's ``config.yaml`` being written to its final checkpoint being
written. ``--readme`` rewrites the README's ``training`` block;
``--curves`` draws each run's learning curve there as ``<run name without -seed>.png``.
``--across-seeds`` summarises finished runs of one config with different seeds instead
(:func:`seed_table`; ``python -m train --seeds`` prints it after its runs), with each seed's
steps and a warning when the seeds' budgets differ or fewer than :data:`MIN_SEEDS` are given.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from envs.core.docs import update_file
from envs.core.errors import ConfigError, run_command
from eval.stats import MIN_SEEDS, bootstrap_mean_interval
from train import runfolder
from train.runlog import plot_learning_curve, read_metrics

FINALS = ("final.pt", "final.zip", "final_rllib")  # a finished run's checkpoint, by trainer
COOPERATIVE = (
    "| game | trainer | trained team [95% CI] | random team | best heuristic team [95% CI] "
    "| beats it? | training |\n|---|---|---|---|---|---|---|"
)
COMPETITIVE = (
    "| game | trainer | trained seat vs random [95% CI] | vs its hardest heuristic [95% CI] "
    "| beats it? | training |\n|---|---|---|---|---|---|"
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


def verdict(low: float, high: float, line: float) -> str:
    """Whether a 95% interval lies above ``line`` (yes), below it (no) or across it (not sure)."""
    return "yes" if low > line else "no" if high < line else "not sure"


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
    row = "| " + " | ".join([game_name(config), config["trainer"], *cells(results), training])
    return results["cooperative"], row + " |"


def cells(results: dict) -> list[str]:
    """The comparison cells of a row, from an evaluation's ``results.json`` whose first agent is
    the trained one: cooperative, the trained, random and best heuristic teams and the verdict;
    competitive, the trained seat against random play and its hardest heuristic, and the
    verdict."""
    rates = evaluation_rates(results)
    trained = results["config"]["agents"][0]
    heuristics = {k: v for k, v in rates.items() if k.startswith("heuristic:")}
    if results["cooperative"]:
        best = max(heuristics, key=lambda k: heuristics[k]["rate"])
        mine, theirs = rates[trained], heuristics[best]
        beats = verdict(mine["low"] - theirs["high"], mine["high"] - theirs["low"], 0.0)
        team = {row["lineup"][0]: row for row in results["rows"] if len(row["lineup"]) == 1}
        return [
            with_figure(mine, team[trained]),
            with_figure(rates["random"], team["random"]),
            f"{best}: {with_figure(theirs, team[best])}",
            beats,
        ]
    hardest = min(heuristics, key=lambda k: heuristics[k]["rate"])
    versus = heuristics[hardest]
    return [
        percent(rates["random"]),
        f"{hardest}: {percent(versus)}",
        verdict(versus["low"], versus["high"], 0.5),
    ]


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
                f"{sorted(measures)}: evaluate both again (python -m train --evaluate-only)"
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders")
    parser.add_argument("--readme", type=Path, help="write the table into this file's block")
    parser.add_argument("--curves", type=Path, help="draw the learning curves in this folder")
    parser.add_argument(
        "--across-seeds",
        action="store_true",
        help="the runs are seeds of one config: print their table across the seeds",
    )
    args = parser.parse_args(argv)
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
