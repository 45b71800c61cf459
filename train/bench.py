"""Training throughput: learner env-steps per second of both trainers on every game, beside
sb3-contrib MaskablePPO on PettingZoo's ``hanabi_v5`` measured in the same run.

    python -m train.bench [--steps 16384] [--repeats 3]

Each figure is the median of the repeats of a whole training run of ``--steps`` learner steps
(8 games in lockstep, rollouts of 128, 4 epochs: the shipped configs' settings), updates
included, evaluation left out.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import envs
from train.config import parse_config
from train.runlog import RunLog

OPPONENTS = {"hexenflug_v0": ["random"], "voodoo_mania_v0": ["random"]}


def time_training(env_id: str, trainer: str, steps: int, seed: int) -> float:
    with tempfile.TemporaryDirectory() as out:
        config = parse_config(
            {
                "env": env_id,
                "num_players": 2,
                "trainer": trainer,
                "total_steps": steps,
                "num_envs": 8,
                "rollout_steps": 128,
                "hidden": [128, 128],
                "seed": seed,
                "eval_every": 10**6,
                "eval_games": 1,
                "opponents": OPPONENTS.get(env_id, []),
                "out": out,
            }
        )
        module = __import__(f"train.{'ppo' if trainer == 'torch' else 'sb3'}", fromlist=["train"])
        start = time.perf_counter()
        module.train(config, RunLog(config.folder, quiet=True))
        return steps / (time.perf_counter() - start)


def time_sb3_hanabi(steps: int, seed: int) -> float:
    from pettingzoo.classic import hanabi_v5
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from train.bridge import SingleAgentBridge

    vec = DummyVecEnv(
        [
            (lambda i=i: SingleAgentBridge("hanabi_v5", 2, seed=seed + i, aec=hanabi_v5.env()))
            for i in range(8)
        ]
    )
    model = MaskablePPO(
        "MlpPolicy",
        vec,
        n_steps=128,
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
    parser.add_argument("--steps", type=int, default=16_384)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    runs: dict[str, list[float]] = {}
    for repeat in range(args.repeats):
        runs.setdefault("sb3 MaskablePPO | hanabi_v5", []).append(
            time_sb3_hanabi(args.steps, repeat)
        )
        for env_id in envs.ids():
            for trainer in ("torch", "sb3"):
                runs.setdefault(f"{trainer} | {env_id}", []).append(
                    time_training(env_id, trainer, args.steps, repeat)
                )
    medians = {name: statistics.median(rates) for name, rates in runs.items()}
    peer = medians["sb3 MaskablePPO | hanabi_v5"]
    print("| trainer | env | learner steps/s (median) | × SB3 on hanabi_v5 |")
    print("|---|---|---|---|")
    for name, rate in medians.items():
        trainer, env_id = name.split(" | ")
        print(f"| {trainer} | {env_id} | {rate:,.0f} | {rate / peer:.2f} |")
    return medians


if __name__ == "__main__":
    main()
