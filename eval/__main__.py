"""Evaluate agents from a YAML config: ``cauldron eval configs/eval/<game>.yaml``.

A trained checkpoint in place of the config (``cauldron eval checkpoints/<name>.pt`` or
``<name>.zip``) replays its training run's final evaluation: the config is derived from what the
checkpoint records (:mod:`cauldron.eval.trained`).

Writes ``results.json``, ``report.md`` and PNG plots to ``<out>/<name>/`` and prints the main
table; a progress bar counts the games (``--quiet``: none). ``--quick`` (at most 200 games per
lineup) or ``--games N`` cuts a run short; the report then says that its figures are rougher.
``--update-rules`` also writes the main table into the game's RULES.md (baselines block).

One evaluation at a time writes a run folder (a second one into it stops at once), and every
file appears whole. An error prints one line (``--debug``: the full traceback first); Ctrl-C
stops the workers and prints ``interrupted``.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from cauldron.envs.core.docs import update_file
from cauldron.envs.core.errors import ConfigError, run_command
from cauldron.envs.core.folders import lock_folder
from cauldron.envs.docs import rules_md
from cauldron.eval import harness, report
from cauldron.eval.config import load_config, parse_config

QUICK_GAMES = 200


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="cauldron eval", description=__doc__.splitlines()[0])
    parser.add_argument(
        "config",
        help="YAML file (see configs/eval/), or a trained checkpoint (.pt, .zip) to replay its "
        "final evaluation (e.g. checkpoints/hocus_pocus_torch.pt)",
    )
    parser.add_argument("--workers", type=int, help="override the config's worker count")
    parser.add_argument(
        "--executor", choices=["local", "ray"], help="override the config's executor"
    )
    parser.add_argument(
        "--ray-address", help="executor ray: a running cluster (auto, HOST:PORT, ray://HOST:PORT)"
    )
    parser.add_argument("--out", help="override the config's output root")
    parser.add_argument("--games", type=int, help="override the config's games per lineup")
    parser.add_argument(
        "--split",
        help="play this split's deals from its first seed (dev or test; cauldron.eval.splits)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"at most {QUICK_GAMES} games per lineup (rougher figures, noted in the report)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--update-rules", action="store_true", help="write the main table into the game's RULES.md"
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on an error (an agent's, say), print the full traceback before the one-line message",
    )
    args = parser.parse_args(argv)
    try:
        return evaluate(args)
    except ConfigError:
        if args.debug:
            traceback.print_exc()
        raise


def evaluate(args: argparse.Namespace) -> dict:
    """Run the evaluation the parsed command line asks for; print its table."""
    config = load_config(args.config)
    asked = config.games
    games = args.games
    if args.quick:
        games = min(asked if games is None else games, QUICK_GAMES)
    overrides = {
        "workers": args.workers,
        "executor": args.executor,
        "ray_address": args.ray_address,
        "out": args.out,
        "games": games,
        "split": args.split,
    }
    if any(v is not None for v in overrides.values()):
        data = {**config.model_dump(), **{k: v for k, v in overrides.items() if v is not None}}
        if args.split is not None:
            data["seed"] = None
        config = parse_config(data, args.config)
    folder = Path(config.out) / config.name
    with lock_folder(folder):  # one evaluation at a time writes the folder
        summary = harness.summarize(config, harness.play_all(config, progress=not args.quiet))
        if config.games < asked:
            summary["note"] = (
                f"Cut short: {config.games} games per lineup instead of the config's {asked}; "
                "the figures are rougher (wider intervals) than a full run's."
            )
        path = report.write(summary, folder)
    table = report.main_table(summary) + (f"\n\n{summary['note']}" if "note" in summary else "")
    print(table)
    print(f"\nreport: {path}")
    if args.update_rules:
        update_file(rules_md(config.env), {"baselines": table})
    return summary


if __name__ == "__main__":
    try:
        run_command(main)
    except KeyboardInterrupt:  # Ctrl-C: the workers are stopped (cauldron.eval.executors)
        print("interrupted", file=sys.stderr)
        sys.exit(130)
