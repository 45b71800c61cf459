"""Train an agent from a YAML config, then evaluate it against the baselines.

    python -m train configs/train/quickstart.yaml [--quiet]

The run folder ``<out>/<name>/`` receives the config, ``metrics.csv``, TensorBoard logs (``tb/``),
checkpoints, ``final.pt`` or ``final.zip``, and the final evaluation (``evaluation/``: report,
results and plots).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from agents import HEURISTICS
from envs.core.errors import ConfigError
from eval import harness, report
from eval.config import EvalConfig
from train.config import TrainConfig, load_config, parse_config
from train.runlog import RunLog


def final_evaluation(config: TrainConfig, checkpoint: Path, workers: int = 2) -> dict:
    """The trained agent beside every baseline, through the evaluation harness."""
    agents = [f"{config.trainer}:{checkpoint}", "random"]
    agents += [f"heuristic:{h}" for h in HEURISTICS.get(config.env, {})]
    eval_config = EvalConfig(
        env=config.env,
        players=[config.num_players],
        agents=agents,
        games=config.final_eval_games,
        seed=1_000_000,
        workers=workers,
        options=config.options,
        out=str(config.folder),
        name="evaluation",
    )
    summary = harness.summarize(eval_config, harness.play_all(eval_config))
    report.write(summary, config.folder / "evaluation")
    return summary


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m train", description=__doc__.splitlines()[0])
    parser.add_argument("config", help="YAML file (see configs/train/)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--total-steps", type=int, help="override the config's step budget")
    parser.add_argument("--name", help="override the config's run name")
    parser.add_argument("--final-eval-games", type=int, help="override the final evaluation")
    args = parser.parse_args(argv)
    config = load_config(args.config)
    overrides = {
        "total_steps": args.total_steps,
        "name": args.name,
        "final_eval_games": args.final_eval_games,
    }
    if any(v is not None for v in overrides.values()):
        data = {**config.model_dump(), **{k: v for k, v in overrides.items() if v is not None}}
        config = parse_config(data, args.config)
    folder = config.folder
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(yaml.safe_dump(config.model_dump(), sort_keys=False))
    log = RunLog(folder, quiet=args.quiet)
    if config.trainer == "torch":
        from train.ppo import train
    else:
        from train.sb3 import train
    checkpoint = train(config, log)
    summary = final_evaluation(config, checkpoint)
    print(report.main_table(summary))
    print(f"\ncheckpoint: {checkpoint}\nreport: {folder / 'evaluation' / 'report.md'}")
    return summary


if __name__ == "__main__":
    try:
        main()
    except ConfigError as err:
        sys.exit(f"error: {err}")
