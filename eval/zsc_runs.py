"""The trained agent of each seed: a finished run's final checkpoint, or a run trained now.

A seed's run folder is the one ``python -m train <train config> --seeds ...`` writes
(``<out>/<stem>-seed<seed>/``). When its final checkpoint exists and the folder's
``config.yaml`` is the config asked for, it is used as it is; a folder trained with other
settings is refused, naming the fields, rather than silently compared or overwritten. Only
:data:`MAY_DIFFER` may differ: the seeds of a comparison must have the same training budget
(``total_steps``, ``max_minutes``), even though a resume may change it. Otherwise the seed is
trained here, exactly as ``python -m train`` would (progress bar, final evaluation and all).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from envs.core.errors import ConfigError
from eval.zsc_config import ZscConfig
from train.config import TrainConfig
from train.runfolder import MAY_CHANGE
from train.runlog import read_metrics

FINAL = {"torch": "final.pt", "sb3": "final.zip", "rllib": "final_rllib"}
# Fields of a finished run that may differ from the config asked for: where it lives and how it
# used the machine and evaluated itself (train.runfolder.MAY_CHANGE without the budget).
MAY_DIFFER = MAY_CHANGE - {"total_steps", "max_minutes"}


@dataclass(frozen=True)
class SeedRun:
    """One seed's trained agent: its run folder, agent spec and whether it was trained now."""

    seed: int
    folder: Path
    spec: str
    trained_now: bool
    steps: int  # learner steps trained (the last step in metrics.csv)


def final_checkpoint(config: TrainConfig) -> Path:
    """Where the trainer ``config.trainer`` leaves its final checkpoint in the run folder."""
    return config.folder / FINAL[config.trainer]


def check_same_config(config: TrainConfig) -> None:
    """Refuse a finished run folder trained with other settings than ``config``."""
    saved_file = config.folder / "config.yaml"
    if not saved_file.is_file():
        raise ConfigError(
            f"{config.folder} has a final checkpoint but no config.yaml: cannot tell how it "
            "was trained; delete the folder or name another with train_overrides.name"
        )
    saved = yaml.safe_load(saved_file.read_text()) or {}
    now = config.model_dump(mode="json")
    fields = TrainConfig.model_fields
    differ = sorted(
        k
        for k in now
        if k not in MAY_DIFFER
        # a field added since the run was saved counts as its default
        and saved.get(k, fields[k].get_default(call_default_factory=True)) != now[k]
    )
    if differ:
        raise ConfigError(
            f"{config.folder} was trained with other settings than the train config with "
            f"train_overrides (differing: {', '.join(differ)}); delete the folder, or name "
            "another with train_overrides.name"
        )


def seed_runs(config: ZscConfig, quiet: bool = False) -> list[SeedRun]:
    """Every seed's trained agent, training the seeds that have no final checkpoint yet (one
    after another, each with its own progress bar unless ``quiet``)."""
    from train.__main__ import run as train_run

    runs = []
    train_configs = [config.train_config(seed) for seed in config.seeds]  # all checked first
    for seed, train_config in zip(config.seeds, train_configs, strict=True):
        checkpoint = final_checkpoint(train_config)
        trained_now = not checkpoint.exists()
        if trained_now:
            print(f"seed {seed}: training {train_config.folder}", flush=True)
            train_run(train_config, quiet)
        else:
            check_same_config(train_config)
            print(f"seed {seed}: using {checkpoint}", flush=True)
        metrics = read_metrics(train_config.folder / "metrics.csv")
        steps = max((row[0] for row in metrics), default=0)
        spec = f"{train_config.trainer}:{checkpoint}"
        runs.append(SeedRun(seed, train_config.folder, spec, trained_now, steps))
    return runs
