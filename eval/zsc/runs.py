"""The trained agent of each seed: a given checkpoint, a finished run's final checkpoint, or a
run trained now; and how long the training will take.

Checkpoints given in the config (``checkpoints``, checked there) are played as they are: their
steps are read from a ``metrics.csv`` beside them where there is one, else from the checkpoint.

A seed's run folder is the one ``cauldron train <train config> --seeds ...`` writes
(``<out>/<stem>-seed<seed>/``). When its final checkpoint exists and the folder's
``config.yaml`` is the config asked for, it is used as it is; a folder trained with other
settings is refused, naming the fields, rather than silently compared or overwritten. A seed
stopped before its end (a ``train_state.pt``, no final checkpoint) goes on from its state
(``resume``), so a long table can train over several sittings. Only
:data:`MAY_DIFFER` may differ: the seeds of a comparison must have the same training budget
(``total_steps``, ``max_minutes``), even though a resume may change it. Otherwise the seed is
trained here, exactly as ``cauldron train`` would (progress bar, final evaluation and all).

:func:`training_estimate` gives a seed's training time before it starts: its step budget over
the learner steps per second measured in a run folder of the same config (``metrics.csv``'s
``perf/steps_per_second``), else by a probe of two updates, else configured in :data:`SPEEDS`;
plus the warm start and the final evaluation at :data:`SPEEDS`' seconds per game.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from cauldron.agents import HEURISTICS
from cauldron.agents.specs import parse_spec
from cauldron.agents.torch_policy import load_checkpoint
from cauldron.envs.core.errors import ConfigError
from cauldron.eval.zsc.config import ZscConfig
from cauldron.train.config import TrainConfig
from cauldron.train.runfolder import MAY_CHANGE, STATE
from cauldron.train.runlog import RunLog, read_metrics

FINAL = {"torch": "final.pt", "sb3": "final.zip", "rllib": "final_rllib"}
# Fields of a finished run that may differ from the config asked for: where it lives and how it
# used the machine and evaluated itself (cauldron.train.runfolder.MAY_CHANGE without the budget and
# the learning rate's cooldown).
MAY_DIFFER = MAY_CHANGE - {"total_steps", "lr_decay_steps", "max_minutes"}
RATE_KEY = "perf/steps_per_second"  # the trainers' logged learner steps per second
PROBE_UPDATES = 2  # a probe's length in updates (the last one's rate counts: the first warms up)


@dataclass(frozen=True)
class Speed:
    """How fast one game trains and plays on one core: learner steps per second of its
    shipped torch config, seconds per game with the trained network in every seat and with
    baselines only, and per warm-start game (recording and cloning); and seconds per game of
    a protocol lineup on the batched engine (``engine: batched``, a lineup's games at once)."""

    steps_per_second: float
    trained_game: float
    baseline_game: float
    warm_start_game: float
    batched_game: float


# On this release's machine (2 cores of an AMD EPYC, one busy with another run), at the shipped
# configs' settings and player counts: steps/s from their runs' metrics.csv (Hocus Pocus 4p and
# the Horseman 3p on the batched engine, Hocus Pocus with its factored head); games
# timed with the shipped checkpoints and the heuristics; Hocus Pocus' warm start (2,000 planner
# games recorded, 4 epochs of cloning) took 26 minutes beside other jobs, about half unloaded.
# Batched games: the PPO row of configs/eval/hocus_pocus_zsc.yaml (11,000 games, lineups of 500)
# took 122 s on one thread beside a test run (0.011 s a game), where the reference engine took
# 631 s on 2 workers beside two training runs. The Horseman's batched figure is not measured: its
# reference figure scaled as Hocus Pocus' is.
# A heavier load slows all of it (4-10x seen): the probe measures the training as it is now.
SPEEDS = {
    "hocus_pocus_v1": Speed(2_400, 0.8, 0.05, 0.4, 0.011),
    "headless_horseman_v1": Speed(6_700, 0.07, 0.015, 0.03, 0.01),
}
DEFAULT_SPEED = Speed(2_000, 0.5, 0.05, 0.1, 0.05)  # a game with no figures yet: a rough guess


def speed(env_id: str) -> tuple[Speed, str]:
    """The configured speed of a game and where it comes from."""
    if env_id in SPEEDS:
        return SPEEDS[env_id], f"configured for {env_id} in cauldron.eval.zsc.runs.SPEEDS"
    return DEFAULT_SPEED, f"a guess: no measured figures for {env_id}"


@dataclass(frozen=True)
class SeedRun:
    """One seed's trained agent: its run folder, agent spec, whether it was trained now and
    whether it was given as a checkpoint."""

    seed: int
    folder: Path
    spec: str
    trained_now: bool
    steps: int | None  # learner steps trained (the last step in metrics.csv; None: unknown)
    given: bool = False


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


def steps_trained(folder: Path) -> int | None:
    """The last learner step in ``folder``'s ``metrics.csv`` (None without one)."""
    metrics = read_metrics(folder / "metrics.csv")
    return max((row[0] for row in metrics), default=0) if metrics else None


def resumed_steps(config: TrainConfig) -> int:
    """The learner steps a stopped seed's saved state holds (0 when it starts afresh)."""
    if not (config.folder / STATE).is_file():
        return 0
    return min(steps_trained(config.folder) or 0, config.total_steps)


def measured_rate(folders: list[Path]) -> tuple[float, Path] | None:
    """The median learner steps per second logged in the first of ``folders`` that logged
    any, and that folder."""
    for folder in folders:
        rates = [v for _, k, v in read_metrics(folder / "metrics.csv") if k == RATE_KEY]
        if rates:
            return statistics.median(rates), folder
    return None


def final_evaluation_seconds(config: TrainConfig, figures: Speed) -> tuple[float, int]:
    """Seconds and games of a run's final evaluation (``cauldron.train.__main__.final_evaluation``):
    the lineups with the trained agent, its team and each of the B baselines (random, the
    heuristics, the config's opponents) at every split, 1 + B·(N − 1) lineups, on 2 workers
    from 100 games up. The baseline teams are played once and reused: left out."""
    baselines = len(dict.fromkeys(["random", *HEURISTICS.get(config.env, {}), *config.opponents]))
    mixed = baselines * (config.num_players - 1)
    per_game = figures.trained_game + mixed * (figures.trained_game + figures.baseline_game) / 2
    workers = 1 if config.final_eval_games < 100 else 2
    return config.final_eval_games * per_game / workers, config.final_eval_games * (1 + mixed)


def probe_rate(config: TrainConfig) -> float:
    """Learner steps per second of a short run of ``config`` now (:data:`PROBE_UPDATES`
    updates, no warm start, no evaluation, in a temporary folder), the machine's load
    included: the last update's logged rate, else the whole probe's."""
    from cauldron.train import fit

    batch = config.num_envs * config.rollout_steps
    with tempfile.TemporaryDirectory() as out:
        probe = config.model_copy(
            update={
                "total_steps": PROBE_UPDATES * batch,
                "max_minutes": 0,
                "warm_start": None,
                "eval_every": 10**9,
                "out": out,
            }
        )
        start = time.perf_counter()
        fit(probe, RunLog(probe.folder, quiet=True, plot=False))
        elapsed = time.perf_counter() - start
        rates = [v for _, k, v in read_metrics(probe.folder / "metrics.csv") if k == RATE_KEY]
    return rates[-1] if rates else probe.total_steps / elapsed


def training_estimate(
    config: TrainConfig, peers: list[Path], probe: bool = True
) -> tuple[float, str]:
    """Seconds to train one seed from scratch (warm start, steps, final evaluation), and how
    they were estimated: the steps at the rate measured in ``peers`` (run folders of the same
    config) where one logged it, else by a short probe (:func:`probe_rate`, unless ``probe``
    is off), else at the configured :func:`speed`. The warm start's and the final
    evaluation's games are at the configured seconds per game."""
    figures, source = speed(config.env)
    measured = measured_rate(peers)
    if measured:
        rate, folder = measured
        how = f"{rate:,.0f} steps/s measured in {folder} (median {RATE_KEY})"
    elif probe:
        rate = probe_rate(config)
        how = f"{rate:,.0f} steps/s measured now by a probe of {PROBE_UPDATES} updates"
    else:
        rate = figures.steps_per_second
        how = f"{rate:,.0f} steps/s {source}"
    seconds = config.total_steps / rate
    how = f"{config.total_steps:,} steps at {how}"
    if config.warm_start is not None:
        seconds += config.warm_start.games * figures.warm_start_game
        how += f", {config.warm_start.games:,} warm-start games"
    final_seconds, games = final_evaluation_seconds(config, figures)
    how += f", a final evaluation of {games:,} games; games at the speeds {source}"
    return seconds + final_seconds, how


def checkpoint_steps(spec: str) -> int | None:
    """The learner steps a ``torch:`` checkpoint records (``None`` for other agents and for
    checkpoints saved before they recorded it)."""
    parsed = parse_spec(spec)
    if parsed.kind != "torch":
        return None
    return load_checkpoint(Path(parsed.target))[1].get("steps")


def given_runs(config: ZscConfig) -> list[SeedRun]:
    """The seeds' agents from the config's checkpoints (checked when the config was read); their
    steps from a ``metrics.csv`` beside them, else from the checkpoint."""
    runs = []
    for seed, spec in zip(config.seeds, config.checkpoints or [], strict=True):
        folder = Path(parse_spec(spec).target).parent
        print(f"seed {seed}: using the given checkpoint {spec}", flush=True)
        steps = steps_trained(folder)
        if steps is None:
            steps = checkpoint_steps(spec)
        runs.append(SeedRun(seed, folder, spec, False, steps, given=True))
    return runs


def seed_runs(config: ZscConfig, quiet: bool = False) -> list[SeedRun]:
    """Every seed's trained agent: the given checkpoints, or else each seed's run, training the
    seeds that have no final checkpoint yet (one after another, each with its own progress bar
    unless ``quiet``), a stopped one from its saved state."""
    from cauldron.train.__main__ import run as train_run

    if config.checkpoints is not None:
        return given_runs(config)
    runs = []
    train_configs = [config.train_config(seed) for seed in config.seeds]  # all checked first
    for seed, train_config in zip(config.seeds, train_configs, strict=True):
        checkpoint = final_checkpoint(train_config)
        trained_now = not checkpoint.exists()
        if trained_now and resumed_steps(train_config):
            print(f"seed {seed}: resuming {train_config.folder}", flush=True)
            train_run(train_config.model_copy(update={"resume": True}), quiet)
        elif trained_now:
            print(f"seed {seed}: training {train_config.folder}", flush=True)
            train_run(train_config, quiet)
        else:
            check_same_config(train_config)
            print(f"seed {seed}: using {checkpoint}", flush=True)
        spec = f"{train_config.trainer}:{checkpoint}"
        steps = steps_trained(train_config.folder) or 0
        runs.append(SeedRun(seed, train_config.folder, spec, trained_now, steps))
    return runs
