"""Train an agent from a YAML config, then evaluate it against the baselines.

    python -m train configs/train/quickstart.yaml [--quiet] [--set key=value ...]

The run folder ``<out>/<name>/`` receives the config, ``metrics.csv``, TensorBoard logs (``tb/``),
checkpoints, ``train_state.pt``, ``final.pt`` or ``final.zip``, and the final evaluation
(``evaluation/``: report, results and plots). The folder is locked while the run uses it; a fresh
run clears what a previous run left there, ``resume: true`` continues it
(:mod:`train.runfolder`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
import yaml

from agents import HEURISTICS
from envs.core.errors import ConfigError, run_command
from eval import harness, report
from eval.config import EvalConfig
from train import fit, runfolder
from train.config import TrainConfig, load_config, parse_config
from train.runlog import RunLog


def final_evaluation(config: TrainConfig, checkpoint: Path, workers: int | None = None) -> dict:
    """The trained agent beside every baseline, through the evaluation harness, on the seeds
    the baselines' reports use (from 0, like ``python -m eval``), so the trained agent and the
    baselines play the same deals. ``workers`` defaults to 2 processes, or 1 for fewer than
    100 games per pairing (starting the processes would take longer than the games)."""
    agents = [f"{config.trainer}:{checkpoint}", "random"]
    agents += [f"heuristic:{h}" for h in HEURISTICS.get(config.env, {})]
    if workers is None:
        workers = 1 if config.final_eval_games < 100 else 2
    eval_config = EvalConfig(
        env=config.env,
        players=[config.num_players],
        agents=agents,
        games=config.final_eval_games,
        seed=0,
        workers=workers,
        options=config.options,
        out=str(config.folder),
        name="evaluation",
    )
    summary = harness.summarize(eval_config, harness.play_all(eval_config))
    report.write(summary, config.folder / "evaluation")
    return summary


def overrides(pairs: list[str]) -> dict:
    """``["key=value", ...]`` as a dict, each value read as YAML (``64``, ``[256, 256]``)."""
    data = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set takes KEY=VALUE, got {pair!r}")
        data[key] = yaml.safe_load(value)
    return data


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m train", description=__doc__.splitlines()[0])
    parser.add_argument("config", help="YAML file (see configs/train/)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, value in YAML (e.g. --set total_steps=200000); repeatable",
    )
    args = parser.parse_args(argv)
    config = load_config(args.config)
    if args.set:
        config = parse_config({**config.model_dump(), **overrides(args.set)}, args.config)
    folder = config.folder
    if config.threads:
        torch.set_num_threads(config.threads)
    with runfolder.claim(config):
        (folder / "config.yaml").write_text(yaml.safe_dump(config.model_dump(), sort_keys=False))
        checkpoint = fit(config, RunLog(folder, quiet=args.quiet))
        summary = final_evaluation(config, checkpoint)
    print(report.main_table(summary))
    print(f"\ncheckpoint: {checkpoint}\nreport: {folder / 'evaluation' / 'report.md'}")
    return summary


if __name__ == "__main__":
    run_command(main)
