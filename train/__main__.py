"""Train an agent from a YAML config, then evaluate it against the baselines.

    cauldron train configs/train/quickstart.yaml [--quiet] [--set key=value ...] [--seeds 0,1,2]

The run folder ``<out>/<name>/`` (``name`` defaults to ``<config file stem>-seed<seed>``)
receives the config, ``metrics.csv``, TensorBoard logs (``tb/``), checkpoints,
``train_state.pt``, ``final.pt`` or ``final.zip``, and the final evaluation (``evaluation/``:
report, results and plots). The folder is locked while the run uses it; a fresh run clears what
a previous run left there (and refuses a folder with files no run marked as its own),
``resume: true`` continues it (:mod:`cauldron.train.runfolder`); Ctrl-C stops with one line saying
how to resume. ``--seeds`` runs the config once per seed, then prints a table across the seeds
(:mod:`cauldron.train.results`).
``--evaluate-only`` plays a finished run's final evaluation again, against today's baselines.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator

import yaml

from cauldron.envs.core.errors import ConfigError, run_command
from cauldron.eval import report
from cauldron.train import fit, results, runfolder
from cauldron.train.config import TrainConfig, load_config
from cauldron.train.final_evaluation import final_evaluation
from cauldron.train.runlog import RunLog


def run(config: TrainConfig, quiet: bool = False) -> dict:
    """One training run in its (locked) folder, then its final evaluation; the summary."""
    folder = config.folder
    with runfolder.claim(config):
        config_text = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
        (folder / "config.yaml").write_text(config_text)
        checkpoint = fit(config, RunLog(folder, quiet=quiet))
        summary = final_evaluation(config, checkpoint, progress=not quiet)
    print(report.main_table(summary))
    print(f"\ncheckpoint: {checkpoint}\nreport: {folder / 'evaluation' / 'report.md'}")
    return summary


def evaluate_again(config: TrainConfig) -> dict:
    """The final evaluation of a finished run once more (for instance after new baselines were
    added), into its ``evaluation/``; the training files stay as they are."""
    folder = config.folder
    final = next((p for p in (folder / "final.pt", folder / "final.zip") if p.is_file()), None)
    if final is None:
        raise ConfigError(
            f"--evaluate-only: {str(folder)!r} has no final.pt or final.zip; train it first"
        )
    with runfolder.claim(config, train=False):
        summary = final_evaluation(config, final)
    print(report.main_table(summary))
    print(f"\nreport: {folder / 'evaluation' / 'report.md'}")
    return summary


@contextlib.contextmanager
def interruptible(config: TrainConfig, evaluate_only: bool) -> Iterator[None]:
    """Ctrl-C in the block ends the command (exit status 130) with one line saying what the run
    folder keeps and how to go on, not a traceback."""
    try:
        yield
    except KeyboardInterrupt:
        folder = str(config.folder)
        if evaluate_only:
            what = "the evaluation is incomplete: run --evaluate-only again"
        elif (config.folder / runfolder.STATE).is_file():
            what = f"{folder} keeps the state of its last evaluation: add --set resume=true"
        else:
            what = f"{folder} holds no saved state yet: run again to start afresh"
        print(f"\ninterrupted: {what}", file=sys.stderr)
        raise SystemExit(130) from None


def check_installed(config: TrainConfig) -> None:
    """A :class:`ConfigError` saying what to install when ``trainer: sb3`` lacks
    Stable-Baselines3 or sb3-contrib (the ``train`` extra), before any run folder is touched."""
    if config.trainer != "sb3":
        return
    try:
        import sb3_contrib  # noqa: F401
        import stable_baselines3  # noqa: F401
    except ImportError as err:
        raise ConfigError(
            f"trainer 'sb3' needs stable-baselines3 and sb3-contrib: pip install -e '.[train]' "
            f"(missing: {err.name or err})"
        ) from None


def parse_seeds(text: str) -> list[int]:
    """``"0,1,2"`` as ``[0, 1, 2]``: distinct seeds of at least 0."""
    try:
        seeds = [int(part) for part in text.split(",")]
    except ValueError:
        raise ConfigError(f"--seeds takes comma-separated integers, got {text!r}") from None
    if len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise ConfigError(f"--seeds must be distinct and at least 0, got {text!r}")
    return seeds


def main(argv: list[str] | None = None) -> dict[str, dict]:
    """Run the config (or one run per seed of ``--seeds``, then the table across seeds); the
    final evaluation summaries by run folder."""
    parser = argparse.ArgumentParser(prog="cauldron train", description=__doc__.splitlines()[0])
    parser.add_argument("config", help="YAML file (see configs/train/)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, value in YAML (--set learning_rate=3e-4); a dotted key "
        "sets one environment option (--set options.speed_tile=4); repeatable",
    )
    parser.add_argument(
        "--seeds",
        metavar="S,S,...",
        help="one run per seed (folders <name>-seed<S>), then a table across the seeds",
    )
    parser.add_argument(
        "--evaluate-only",
        action="store_true",
        help="no training: evaluate the run folder's final checkpoint again (new baselines)",
    )
    args = parser.parse_args(argv)
    seeds: list[int | None] = [None]
    if args.seeds:
        seeds = list(parse_seeds(args.seeds))
    configs = [load_config(args.config, args.set, seed) for seed in seeds]  # all checked first
    for config in configs:
        check_installed(config)
    play = evaluate_again if args.evaluate_only else lambda config: run(config, args.quiet)
    summaries = {}
    for config in configs:
        with interruptible(config, args.evaluate_only):
            summaries[str(config.folder)] = play(config)
    if args.seeds:
        print("\n" + results.seed_table([config.folder for config in configs]))
    return summaries


if __name__ == "__main__":
    run_command(main)
