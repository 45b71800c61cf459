"""Train sb3-contrib MaskablePPO through the single-agent bridge.

The model is saved as ``final.zip`` with a ``final.zip.cauldron.json`` sidecar (env id, sizes,
network) from which the ``sb3:`` agent rebuilds the policy out of its weights alone.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from agents.checkpoints import SB3_META
from train.bridge import SingleAgentBridge
from train.config import TrainConfig
from train.runlog import RunLog
from train.vector import opponent_pool


class _Progress(BaseCallback):
    """Feeds the run log: returns after every rollout, evaluation and checkpoints."""

    def __init__(self, config: TrainConfig, log: RunLog) -> None:
        super().__init__()
        self.config, self.log, self.returns, self.rollouts = config, log, [], 0
        self.deadline = config.deadline()
        self.out_of_time = False

    def _on_step(self) -> bool:
        """Collect finished games' returns; once ``max_minutes`` have passed, stop at the first
        step after an update."""
        for info in self.locals.get("infos", []):
            if "episode_return" in info:
                self.returns.append(info["episode_return"])
        return not self.out_of_time

    def _on_rollout_end(self) -> None:
        self.rollouts += 1
        self.out_of_time = time.perf_counter() > self.deadline
        if self.out_of_time:
            self.log.message(f"max_minutes reached after {self.num_timesteps:,} steps")
        recent = self.returns[-100:]
        self.log.scalars(
            self.num_timesteps, {"train/mean_return": float(np.mean(recent)) if recent else 0.0}
        )
        if self.rollouts % self.config.eval_every == 0:
            path = save(
                self.model,
                self.config,
                self.config.folder / "checkpoints" / f"step_{self.num_timesteps}.zip",
            )
            self.model.save(self.config.folder / "train_state.zip")
            result = evaluate_sb3(path, self.config, self.config.eval_games)
            self.log.scalars(self.num_timesteps, {f"eval/{k}": v for k, v in result.items()})


def save(model: MaskablePPO, config: TrainConfig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(path)
    space = model.observation_space
    meta = {
        "env_id": config.env,
        "obs_size": int(space.shape[0]),
        "num_actions": int(model.action_space.n),
        "net_arch": list(config.hidden),
    }
    path.with_name(path.name + SB3_META).write_text(json.dumps(meta))
    return path


def evaluate_sb3(path: Path, config: TrainConfig, games: int) -> dict[str, float]:
    from agents.checkpoints import load_sb3_agent
    from train.ppo import evaluate

    agent = load_sb3_agent(str(path), config.env)  # memoryless: one object serves every seat
    return evaluate(lambda: agent, config, games, seed=config.seed + 10_000)


def train(config: TrainConfig, log: RunLog) -> Path:
    pool = opponent_pool(config)
    vec = DummyVecEnv(
        [
            (
                lambda i=i: SingleAgentBridge(
                    config.env, config.num_players, config.options, pool, seed=config.seed + i
                )
            )
            for i in range(config.num_envs)
        ]
    )
    state = config.folder / "train_state.zip"
    if config.resume and state.is_file():
        model = MaskablePPO.load(state, env=vec)
        log.message(f"resumed at step {model.num_timesteps}")
    else:
        model = MaskablePPO(
            "MlpPolicy",
            vec,
            learning_rate=config.learning_rate,
            n_steps=config.rollout_steps,
            batch_size=config.num_envs * config.rollout_steps // config.minibatches,
            n_epochs=config.epochs,
            gamma=config.gamma,
            gae_lambda=config.gae_lambda,
            clip_range=config.clip,
            ent_coef=config.ent_coef,
            vf_coef=config.vf_coef,
            max_grad_norm=config.max_grad_norm,
            seed=config.seed,
            device="cpu",
            policy_kwargs={"net_arch": list(config.hidden)},
        )
    log.start(total=config.total_steps, done=model.num_timesteps)
    model.learn(
        config.total_steps - model.num_timesteps,
        callback=_Progress(config, log),
        reset_num_timesteps=False,
    )
    final = save(model, config, config.folder / "final.zip")
    log.finish()
    return final
