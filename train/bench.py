"""Training throughput: learner env-steps per second of both trainers on every game, beside
sb3-contrib MaskablePPO on PettingZoo's ``hanabi_v5`` measured in the same run.

    python -m train.bench [--steps 65536] [--repeats 3]

Each figure is the median over the repeats of a whole training run of ``--steps`` learner steps
(start-up of the games and the final checkpoint included; imports and evaluation left out), two
hidden layers of 128 and 4 epochs of 4 minibatches per update everywhere:

* ``sb3`` rows and the Hanabi peer: 8 games in lockstep, rollouts of 128 (batch 1,024);
* ``torch @ sb3 settings``: the PyTorch trainer with those same settings;
* ``torch``: the PyTorch trainer with the settings its configs ship with: 64 games in lockstep,
  rollouts of 64 (batch 4,096).

Hanabi is ``hanabi_v5.env()`` as PettingZoo ships it, through the same bridge.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import envs
from train import fit
from train.config import parse_config
from train.runlog import RunLog

OPPONENTS = {"hexenflug_v0": ["random"], "voodoo_mania_v0": ["random"]}
SB3_SETTINGS = {"num_envs": 8, "rollout_steps": 128}
SHIPPED_SETTINGS = {"num_envs": 64, "rollout_steps": 64}
TRAINERS = {
    "sb3": ("sb3", SB3_SETTINGS),
    "torch @ sb3 settings": ("torch", SB3_SETTINGS),
    "torch": ("torch", SHIPPED_SETTINGS),
}


def time_training(env_id: str, trainer: str, settings: dict, steps: int, seed: int) -> float:
    """Learner steps per second of one training run."""
    with tempfile.TemporaryDirectory() as out:
        config = parse_config(
            {
                "env": env_id,
                "num_players": 2,
                "trainer": trainer,
                "total_steps": steps,
                "hidden": [128, 128],
                "seed": seed,
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
        return steps / (time.perf_counter() - start)


def time_sb3_hanabi(steps: int, seed: int) -> float:
    from pettingzoo.classic import hanabi_v5
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from train.bridge import SingleAgentBridge

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
    return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=65_536)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    for trainer in ("torch", "sb3"):  # imports and first-call costs stay out of the figures
        time_training("headless_horseman_v0", trainer, SB3_SETTINGS, 1024, 0)
    runs: dict[str, list[float]] = {}
    for repeat in range(args.repeats):
        runs.setdefault("sb3 | hanabi_v5", []).append(time_sb3_hanabi(args.steps, repeat))
        for env_id in envs.ids():
            for label, (trainer, settings) in TRAINERS.items():
                runs.setdefault(f"{label} | {env_id}", []).append(
                    time_training(env_id, trainer, settings, args.steps, repeat)
                )
    medians = {name: statistics.median(rates) for name, rates in runs.items()}
    peer = medians["sb3 | hanabi_v5"]
    print("| trainer | env | learner steps/s (median) | × SB3 on hanabi_v5 |")
    print("|---|---|---|---|")
    for name, rate in medians.items():
        trainer, env_id = name.split(" | ")
        print(f"| {trainer} | {env_id} | {rate:,.0f} | {rate / peer:.2f} |")
    return medians


if __name__ == "__main__":
    main()
