"""Train sb3-contrib MaskablePPO through the single-agent bridge.

The model is saved as ``final.zip`` with a ``final.zip.cauldron.json`` sidecar (env id, sizes,
network, player count, options) from which the ``sb3:`` agent rebuilds the policy out of its
weights alone. The train state for ``resume`` is saved as tensors and plain data
(:mod:`cauldron.train.runfolder`), and a resume builds a fresh MaskablePPO from the config and loads
them: SB3's own loader unpickles whatever the zip holds, so nothing here calls it.

``warm_start`` clones the demonstrator into the policy before ``learn`` (the auxiliary
``bc_coef`` term would need MaskablePPO's own ``train`` rewritten, so it is torch-only);
``curriculum`` rebuilds the games with the next stage's options after the rollout that crosses
a threshold.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from cauldron.agents.checkpoints import SB3_META
from cauldron.train import curriculum, runfolder, warm_start
from cauldron.train.bridge import SingleAgentBridge, shaping
from cauldron.train.config import TrainConfig
from cauldron.train.runlog import RunLog
from cauldron.train.vector import opponent_pool


class _Progress(BaseCallback):
    """Feeds the run log: returns after every rollout; every ``eval_every`` rollouts an
    evaluation, a checkpoint and the train state."""

    def __init__(
        self, config: TrainConfig, log: RunLog, returns: list[float], deadline: float
    ) -> None:
        super().__init__()
        self.config, self.log, self.returns, self.rollouts = config, log, returns, 0
        self.deadline = deadline
        self.out_of_time = False
        self.stage = 0

    def _on_step(self) -> bool:
        """Collect finished games' returns; once ``max_minutes`` have passed, stop at the first
        step after an update."""
        for info in self.locals.get("infos", []):
            if "episode_return" in info:
                self.returns.append(info["episode_return"])
        return not self.out_of_time

    def _on_rollout_end(self) -> None:
        self.rollouts += 1
        self._next_stage()
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
            result = evaluate_sb3(path, self.config, self.config.eval_games)
            self.log.scalars(self.num_timesteps, {f"eval/{k}": v for k, v in result.items()})
            save_state(self.model, self.config, self.returns)

    def _next_stage(self) -> None:
        """Rebuild every game with the curriculum's options once a threshold is crossed; the
        next rollout starts from fresh games (this one's advantages are already computed)."""
        stage = curriculum.stage_at(self.config, self.num_timesteps)
        if stage == self.stage:
            return
        self.stage = stage
        vec = self.training_env
        seed = runfolder.run_seed(self.config.seed, self.num_timesteps)
        vec.envs[:] = [make() for make in games(self.config, seed, self.num_timesteps)]
        self.model._last_obs = vec.reset()
        self.model._last_episode_starts = np.ones(vec.num_envs, dtype=bool)
        self.log.message(f"curriculum stage {stage} from step {self.num_timesteps:,}")


def games(config: TrainConfig, seed: int, step: int) -> list:
    """Factories of the ``num_envs`` training games, with the curriculum's options at ``step``."""
    pool = opponent_pool(config)
    options = curriculum.options_at(config, step)
    return [
        (
            lambda i=i: SingleAgentBridge(
                config.env,
                config.num_players,
                options,
                pool,
                seed=seed + i,
                reward_shaping=shaping(config),
            )
        )
        for i in range(config.num_envs)
    ]


def save(model: MaskablePPO, config: TrainConfig, path: Path) -> Path:
    """The model as an SB3 zip at ``path`` and its sidecar (what the ``sb3:`` agent reads),
    each written atomically."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.parent.mkdir(parents=True, exist_ok=True)
    with temporary.open("wb") as file:
        model.save(file)
    os.replace(temporary, path)
    meta = {
        "env_id": config.env,
        "obs_size": int(model.observation_space.shape[0]),
        "num_actions": int(model.action_space.n),
        "net_arch": list(config.hidden),
        "num_players": config.num_players,
        "options": config.options,
    }
    sidecar = path.with_name(path.name + SB3_META)
    temporary.write_text(json.dumps(meta))
    os.replace(temporary, sidecar)
    return path


def save_state(model: MaskablePPO, config: TrainConfig, returns: list[float]) -> None:
    """The train state (:mod:`cauldron.train.runfolder`) from the model's tensors and counters:
    policy and optimizer state, update count, recent returns. Never SB3's own pickle-based save."""
    runfolder.save_state(
        config,
        model.num_timesteps,
        {
            "policy": model.policy.state_dict(),
            "optimizer": model.policy.optimizer.state_dict(),
            "n_updates": model._n_updates,
            "recent_returns": torch.tensor(returns[-100:], dtype=torch.float64),
        },
    )


def evaluate_sb3(path: Path, config: TrainConfig, games: int) -> dict[str, float]:
    from cauldron.agents.checkpoints import load_sb3_agent
    from cauldron.train.ppo import evaluate

    agent = load_sb3_agent(str(path), config.env)  # memoryless: one object serves every seat
    return evaluate(lambda: agent, config, games, seed=config.seed + 10_000)


def build_model(config: TrainConfig, vec: DummyVecEnv, seed: int) -> MaskablePPO:
    """A fresh MaskablePPO on ``vec`` with the config's hyperparameters and network."""
    return MaskablePPO(
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
        seed=seed,
        device="cpu",
        policy_kwargs={"net_arch": list(config.hidden)},
    )


def train(config: TrainConfig, log: RunLog) -> Path:
    """Train MaskablePPO (built from the config, then given the saved tensors on a resume), log,
    checkpoint; return the final model's path."""
    deadline = config.deadline()  # the warm start counts towards max_minutes
    saved = runfolder.load_state(config)
    step = int(saved["step"]) if saved else 0
    seed = runfolder.run_seed(config.seed, step)
    vec = DummyVecEnv(games(config, seed, step))
    model = build_model(config, vec, seed)
    returns: list[float] = []
    demos = warm_start.collect(config, quiet=log.quiet) if config.warm_start and not saved else None
    if saved:
        model.policy.load_state_dict(saved["policy"])
        model.policy.optimizer.load_state_dict(saved["optimizer"])
        model.num_timesteps, model._n_updates = step, int(saved["n_updates"])
        returns = saved["recent_returns"].tolist()
    log.start(total=config.total_steps, done=step, deadline=deadline)
    if saved:
        log.message(f"resumed at step {step:,}")
    elif demos is not None:
        log.scalars(0, {f"warm_start/demo_{k}": v for k, v in demos.figures.items()})
        warm_start.clone_sb3(
            model.policy,
            demos,
            config,
            lambda epoch, figures: log.scalars(
                0, {f"warm_start/{k}": v for k, v in figures.items()} | {"warm_start/epoch": epoch}
            ),
        )
    progress = _Progress(config, log, returns, deadline)
    progress.stage = curriculum.stage_at(config, step)
    if config.total_steps > step:
        model.learn(
            config.total_steps - step,
            callback=progress,
            reset_num_timesteps=False,
        )
    save_state(model, config, returns)
    final = save(model, config, config.folder / "final.zip")
    log.finish()
    return final
