"""The results table of finished training runs: each trained agent beside the baselines.

    python -m train.results runs/train/<run> [...] [--readme README.md] [--curves docs/training]

Reads each run's final evaluation (``evaluation/results.json``), its ``metrics.csv`` (steps
trained) and its config. Cooperative games compare team win rates (the trained policy in every
seat, a random team, the best heuristic team; "beats it?" is *yes* when the two intervals do not
overlap); competitive games give the trained seat's head-to-head win rate against random play and
against the heuristic it fares worst against (ties count as a win for both; *yes* when the
interval lies above 50%). Wall-clock is from the run's ``config.yaml`` being written to its
final checkpoint being written. ``--readme`` rewrites the README's ``training`` block;
``--curves`` draws each run's learning curve there as ``<game>_<trainer>.png``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from envs.core.docs import update_file
from train.runlog import plot_learning_curve, read_metrics

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


def verdict(low: float, high: float, line: float) -> str:
    """Whether a 95% interval lies above ``line`` (yes), below it (no) or across it (not sure)."""
    return "yes" if low > line else "no" if high < line else "not sure"


def run_row(folder: Path) -> tuple[bool, str]:
    """Whether the run's game is cooperative, and its table row."""
    config = yaml.safe_load((folder / "config.yaml").read_text())
    results = json.loads((folder / "evaluation" / "results.json").read_text())
    trained = results["config"]["agents"][0]
    steps = max(step for step, _, _ in read_metrics(folder / "metrics.csv"))
    final = next(p for p in (folder / "final.pt", folder / "final.zip") if p.is_file())
    minutes = (final.stat().st_mtime - (folder / "config.yaml").stat().st_mtime) / 60
    threads = config.get("threads") or "all"
    training = f"{steps:,} steps, {minutes:.0f} min, {threads} thread{'s' * (threads != 1)}"
    game = f"{config['env'].removesuffix('_v0')} ({config['num_players']}p)"
    rows = results["rows"]
    if results["cooperative"]:
        teams = {row["lineup"][0]: row["win"] for row in rows if len(row["lineup"]) == 1}
        heuristics = {k: v for k, v in teams.items() if k.startswith("heuristic:")}
        best = max(heuristics, key=lambda k: heuristics[k]["rate"])
        mine, theirs = teams[trained], heuristics[best]
        beats = verdict(mine["low"] - theirs["high"], mine["high"] - theirs["low"], 0.0)
        cells = [percent(mine), percent(teams["random"]), f"{best}: {percent(theirs)}", beats]
    else:
        against = {
            next(a for a in row["lineup"] if a != trained): row["wins"][trained]
            for row in rows
            if trained in row["lineup"] and len(row["lineup"]) == 2
        }
        heuristics = {k: v for k, v in against.items() if k.startswith("heuristic:")}
        hardest = min(heuristics, key=lambda k: heuristics[k]["rate"])
        versus = heuristics[hardest]
        cells = [
            percent(against["random"]),
            f"{hardest}: {percent(versus)}",
            verdict(versus["low"], versus["high"], 0.5),
        ]
    row = "| " + " | ".join([game, config["trainer"], *cells, training]) + " |"
    return results["cooperative"], row


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
    args = parser.parse_args(argv)
    text = table(args.runs)
    print(text)
    if args.readme:
        update_file(args.readme, {"training": text})
    if args.curves:
        args.curves.mkdir(parents=True, exist_ok=True)
        for folder in args.runs:
            config = yaml.safe_load((folder / "config.yaml").read_text())
            name = f"{config['env'].removesuffix('_v0')}_{config['trainer']}.png"
            plot_learning_curve(folder / "metrics.csv", args.curves / name)
    return text


if __name__ == "__main__":
    main()
