"""Training throughput: learner env-steps per second of both trainers on every game, beside
sb3-contrib MaskablePPO on PettingZoo's ``hanabi_v5`` measured in the same run, and what torch
threads do when another process loads the cores.

    cauldron train-bench [--steps 65536] [--repeats 3] [--quick]
                          [--hidden 256 256] [--threads 0] [--only "torch, batched"]

Rows are printed as they are measured. Each figure is the median over the repeats of a whole
training run of ``--steps`` learner steps (start-up of the games and the final checkpoint
included; imports and evaluation left out), two hidden layers of 128 and 4 epochs of 4
minibatches per update everywhere, on the default 1 torch thread (``--hidden`` sets our trainers'
layers, e.g. the shipped configs' 256 and 256, the peer keeping its 128; ``--threads 0`` gives
every row and the peer one thread per core; ``--only`` keeps the rows of the trainers named, beside
the peer):

* ``sb3`` rows and the Hanabi peer: 8 games in lockstep, rollouts of 128 (batch 1,024);
* ``torch @ sb3 settings``: the PyTorch trainer with those same settings;
* ``torch``: the PyTorch trainer with the settings its configs ship with: 64 games in lockstep,
  rollouts of 64 (batch 4,096);
* ``torch, batched``: the PyTorch trainer on the game's batched engine (``engine: batched``),
  1,024 games in lockstep, rollouts of 16 (batch 16,384); in a competitive game only the
  learner's decisions count (the share of table steps where the learner decided, from the run's
  ``train/learner_share``);
* ``torch, batched, bfloat16``: the same with ``precision: bfloat16`` (the network's products
  under autocast);
* ``rllib @ sb3 settings`` (last, where RLlib is installed): RLlib PPO sampling in the driver
  on the Headless Horseman.

The last column is the share of the PyTorch trainer's update time spent stepping the games,
opponents' choices included (its logged ``perf/game_share``): the rest is the network's math and
the trainer's own work, which no engine removes, so ``rate / (1 - share)`` bounds what a faster
engine could give.

The threads rows run the shipped ``torch`` settings on the Headless Horseman with 1 thread and
with one per core (``threads: 0``), each alone and beside a competing process that keeps one core
busy with numpy. ``--quick``: one repeat of 8,192 steps (rougher figures, a few minutes).

Hanabi is ``hanabi_v5.env()`` as PettingZoo ships it, through the same bridge (needs the
``bench`` extra, which brings OpenSpiel and Shimmy; without them the Hanabi row is left out,
saying why).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

from cauldron import envs
from cauldron.train import fit
from cauldron.train.config import parse_config
from cauldron.train.runlog import RunLog, read_metrics

OPPONENTS = {"hexenflug_v1": ["random"], "voodoo_mania_v1": ["random"]}
SB3_SETTINGS = {"num_envs": 8, "rollout_steps": 128}
SHIPPED_SETTINGS = {"num_envs": 64, "rollout_steps": 64}
BATCHED_SETTINGS = {"engine": "batched", "num_envs": 1024, "rollout_steps": 16}
TRAINERS = {
    "sb3": ("sb3", SB3_SETTINGS),
    "torch @ sb3 settings": ("torch", SB3_SETTINGS),
    "torch": ("torch", SHIPPED_SETTINGS),
    "torch, batched": ("torch", BATCHED_SETTINGS),
    "torch, batched, bfloat16": ("torch", {**BATCHED_SETTINGS, "precision": "bfloat16"}),
}
# The competing process: one core of numpy matrix products until it is stopped.
SPIN = "import numpy as np\na = np.random.rand(300, 300)\nwhile True:\n    a = np.tanh(a @ a / 300)"


def time_training(
    env_id: str,
    trainer: str,
    settings: dict,
    steps: int,
    seed: int,
    threads: int = 1,
    hidden: tuple[int, ...] = (128, 128),
) -> tuple[float, float | None]:
    """Learner steps per second of one training run, and the share of its updates' time
    spent stepping the games (the PyTorch trainer's ``perf/game_share``; None for others)."""
    with tempfile.TemporaryDirectory() as out:
        config = parse_config(
            {
                "env": env_id,
                "num_players": 2,
                "trainer": trainer,
                "total_steps": steps,
                "hidden": list(hidden),
                "seed": seed,
                "threads": threads,
                "eval_every": 10**6,
                "eval_games": 1,
                "opponents": OPPONENTS.get(env_id, []),
                "out": out,
                **settings,
            }
        )
        log = RunLog(config.folder, quiet=True, plot=False)
        start = time.perf_counter()
        fit(config, log)
        rate = steps / (time.perf_counter() - start)
        metrics = read_metrics(log.csv_path)
        shares = [v for _, k, v in metrics if k == "train/learner_share"]
        game = [v for _, k, v in metrics if k == "perf/game_share"]
        return rate * (statistics.mean(shares) if shares else 1.0), (
            statistics.mean(game) if game else None
        )


def time_sb3_hanabi(steps: int, seed: int) -> tuple[float, None]:
    """SB3 MaskablePPO's learner steps per second on ``hanabi_v5`` (two layers of 128)."""
    from pettingzoo.classic import hanabi_v5
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from cauldron.train.bridge import SingleAgentBridge

    vec = DummyVecEnv(
        [
            (lambda i=i: SingleAgentBridge("hanabi_v5", 2, seed=seed + i, aec=hanabi_v5.env()))
            for i in range(SB3_SETTINGS["num_envs"])
        ]
    )
    model = MaskablePPO(
        "MlpPolicy",
        vec,
        n_steps=SB3_SETTINGS["rollout_steps"],
        batch_size=256,
        n_epochs=4,
        seed=seed,
        device="cpu",
        policy_kwargs={"net_arch": [128, 128]},
    )
    start = time.perf_counter()
    model.learn(steps)
    return steps / (time.perf_counter() - start), None


@contextlib.contextmanager
def competing_process() -> Iterator[None]:
    """A process that keeps one core busy (single-threaded numpy) while the block runs."""
    single = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    spinner = subprocess.Popen([sys.executable, "-c", SPIN], env={**os.environ, **single})
    try:
        time.sleep(0.5)  # let it start spinning
        yield
    finally:
        spinner.terminate()
        spinner.wait()


def rows(
    steps: int, hidden: tuple[int, ...], threads: int, only: list[str] | None
) -> Iterator[tuple[str, str, Callable[[int], tuple[float, float | None]]]]:
    """``(trainer, env, measure(seed))`` for every row of the table (those of the trainers
    named in ``only``, when given, beside the peer), in print order."""
    try:
        from pettingzoo.classic import hanabi_v5

        hanabi_v5.env()
    except ImportError as err:
        print(f"(no hanabi_v5 peer row: {str(err).splitlines()[0]})", flush=True)
    else:
        yield "sb3", "hanabi_v5", lambda seed: time_sb3_hanabi(steps, seed)
    for env_id in envs.ids():
        for label, (trainer, settings) in TRAINERS.items():
            if settings.get("engine") == "batched" and env_id not in envs.batched_ids():
                continue
            if only is not None and label not in only:
                continue
            yield (
                label,
                env_id,
                lambda seed, e=env_id, t=trainer, s=settings: time_training(
                    e, t, s, steps, seed, threads, hidden
                ),
            )
    if only is not None:
        return
    horseman = "headless_horseman_v1"
    for count, name in ((1, "1 thread"), (0, f"{os.cpu_count()} threads")):
        for busy in (False, True):
            label = f"torch, {name}" + (", beside a busy process" if busy else "")

            def measure(
                seed: int, count: int = count, busy: bool = busy
            ) -> tuple[float, float | None]:
                with competing_process() if busy else contextlib.nullcontext():
                    return time_training(horseman, "torch", SHIPPED_SETTINGS, steps, seed, count)

            yield label, horseman, measure
    try:
        import ray.rllib  # noqa: F401  (the rllib extra, in its own environment)
    except ImportError as err:
        print(f"(no rllib row: {str(err).splitlines()[0]})", flush=True)
    else:
        yield "rllib @ sb3 settings", horseman, lambda seed: time_rllib(steps, seed)


def time_rllib(steps: int, seed: int) -> tuple[float, float | None]:
    """Learner steps per second of an RLlib run on a Ray instance started beforehand (its
    start-up left out; building the algorithm counted, like the other trainers' start-up)."""
    from cauldron.eval.executors import ray_session

    with ray_session(None, None, "trainer 'rllib'"):
        return time_training("headless_horseman_v1", "rllib", SB3_SETTINGS, steps, seed)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(
        prog="cauldron train-bench", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--steps", type=int, default=65_536)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help="1 repeat of 8,192 steps: rougher, a few minutes"
    )
    parser.add_argument(
        "--hidden", type=int, nargs="+", default=[128, 128], help="our trainers' hidden layers"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads of every row (0: one per core)"
    )
    parser.add_argument(
        "--only", nargs="+", choices=list(TRAINERS), help="only these trainers' rows, and the peer"
    )
    args = parser.parse_args(argv)
    steps, repeats = (8_192, 1) if args.quick else (args.steps, args.repeats)
    if args.quick:
        print(f"quick: {repeats} repeat of {steps:,} steps per row; the figures are rougher")
    for trainer in ("torch", "sb3"):  # imports and first-call costs stay out of the figures
        # (and the torch threads are set, for the peer too)
        time_training("headless_horseman_v1", trainer, SB3_SETTINGS, 1024, 0, args.threads)
    print("| trainer | env | learner steps/s (median) | × SB3 on hanabi_v5 | game's share |")
    print("|---|---|---|---|---|", flush=True)
    medians: dict[str, float] = {}
    for label, env_id, measure in rows(steps, tuple(args.hidden), args.threads, args.only):
        timings = [measure(seed) for seed in range(repeats)]
        rate = statistics.median(r for r, _ in timings)
        shares = [s for _, s in timings if s is not None]
        share = f"{statistics.median(shares):.0%}" if shares else "–"
        medians[f"{label} | {env_id}"] = rate
        peer = medians.get("sb3 | hanabi_v5")
        ratio = f"{rate / peer:.2f}" if peer else "–"
        print(f"| {label} | {env_id} | {rate:,.0f} | {ratio} | {share} |", flush=True)
    return medians


if __name__ == "__main__":
    main()
