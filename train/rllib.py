"""``trainer: rllib``: PPO through RLlib's new API stack, on the same single-agent bridge as the
other trainers (:mod:`cauldron.train.bridge`).

* The games are :class:`cauldron.train.bridge.SingleAgentBridge` (one shared policy for every seat
of a
  cooperative game; the learner's rotated seat against the ``opponents`` pool in a competitive
  one), seen by RLlib as ``{"observations", "action_mask"}`` dicts and played by RLlib's
  ``ActionMaskingTorchRLModule`` (illegal actions' logits pushed to the float minimum).
* The network is ``hidden`` layers with tanh for the actor and, apart, for the critic, each with
  one linear head: the layout of :class:`cauldron.agents.torch_policy.PolicyNet`. So the weights are
  exported, at every evaluation and at the end, as Cauldron torch checkpoints (tensors and plain
  data, read with ``weights_only=True``): ``checkpoints/step_N.pt`` and ``final.pt``.
* ``final_rllib/`` is RLlib's own checkpoint of the algorithm (for RLlib tools). Restoring it
  runs RLlib's loader, which unpickles class and constructor files; nothing here reads it. It
  also holds ``cauldron_policy.pt`` (the export), which the ``rllib:<path>`` agent loads.
* Field mapping: ``num_envs`` games in all (split over ``num_env_runners``, or in the driver
  with 0 runners), ``rollout_steps`` per game and iteration, ``minibatches`` of the batch,
  ``epochs``, ``learning_rate``, ``gamma``, ``gae_lambda``, ``clip``, ``ent_coef``,
  ``vf_coef``, ``max_grad_norm``; ``self_play_every`` iterations between frozen snapshots of
  the learner joining every game's opponent pool (at most 5, the oldest replaced, as in the
  PyTorch trainer); ``num_learners`` learner processes (0: in the driver);
  ``ray_address`` a running cluster (none: a local Ray instance). PPO's KL penalty is off, as in
  the other trainers. ``eval_every`` counts training iterations.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from cauldron.agents import make_agent
from cauldron.agents.torch_policy import PolicyNet, TorchAgent, save_checkpoint
from cauldron.eval.executors import ray_session
from cauldron.train.bridge import SingleAgentBridge
from cauldron.train.config import RLLIB, TrainConfig
from cauldron.train.runlog import RunLog
from cauldron.train.vector import MAX_SNAPSHOTS

POLICY = "cauldron_policy.pt"  # the export inside RLlib's checkpoint folder
FINAL = "final_rllib"


class MaskedBridge(gym.Env):
    """A :class:`SingleAgentBridge` with dict observations for RLlib's masking module.

    ``env_config``: ``env_id``, ``num_players``, ``options``, ``opponents`` (agent specs) and
    ``seed``; each env runner (``worker_index``) plays other deals."""

    def __init__(self, env_config: dict[str, Any]) -> None:
        env_id = env_config["env_id"]
        pool = [
            lambda rng, spec=spec: make_agent(spec, env_id, int(rng.integers(2**31)))
            for spec in env_config["opponents"]
        ]
        seed = env_config["seed"] + 1_000_003 * getattr(env_config, "worker_index", 0)
        self.bridge = SingleAgentBridge(
            env_id, env_config["num_players"], env_config["options"], pool, seed=seed
        )
        inner = self.bridge.observation_space
        mask = gym.spaces.Box(0.0, 1.0, (self.bridge.action_space.n,), np.float32)
        self.observation_space = gym.spaces.Dict({"observations": inner, "action_mask": mask})
        self.action_space = self.bridge.action_space
        self.baselines, self.snapshots = len(pool), 0

    def add_snapshot(self, weights: dict[str, torch.Tensor], hidden: list[int]) -> None:
        """A frozen copy of the learner joins the opponent pool, replacing the oldest beyond
        :data:`cauldron.train.vector.MAX_SNAPSHOTS` (as in the PyTorch trainer)."""
        net = PolicyNet(self.bridge.observation_space.shape[0], self.action_space.n, hidden)
        net.load_state_dict(weights)
        net.eval()
        if self.snapshots >= MAX_SNAPSHOTS:
            self.bridge.opponents.pop(self.baselines)
        self.bridge.opponents.append(lambda rng: TorchAgent(net, "snapshot"))
        self.snapshots += 1

    def _dict(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {"observations": obs, "action_mask": self.bridge.action_masks().astype(np.float32)}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.bridge.reset(seed=seed)
        return self._dict(obs), info

    def step(self, action: int):
        obs, reward, terminated, truncated, info = self.bridge.step(int(action))
        return self._dict(obs), reward, terminated, truncated, info


def ppo_config(config: TrainConfig) -> Any:
    """The RLlib ``PPOConfig`` of a training config (see the module docstring)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    runners = config.num_env_runners
    batch = config.num_envs * config.rollout_steps
    return (
        PPOConfig()
        .environment(
            MaskedBridge,
            env_config={
                "env_id": config.env,
                "num_players": config.num_players,
                "options": config.options,
                "opponents": config.opponents,
                "seed": config.seed,
            },
            disable_env_checking=True,
        )
        .env_runners(
            num_env_runners=runners,
            num_envs_per_env_runner=config.num_envs // max(runners, 1),
            rollout_fragment_length=config.rollout_steps,
            num_cpus_per_env_runner=1,
        )
        .learners(num_learners=config.num_learners)
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=ActionMaskingTorchRLModule,
                model_config={
                    "fcnet_hiddens": list(config.hidden),
                    "fcnet_activation": "tanh",
                    "head_fcnet_hiddens": [],
                    "vf_share_layers": False,
                },
            )
        )
        .training(
            train_batch_size_per_learner=batch // max(config.num_learners, 1),
            minibatch_size=batch // config.minibatches // max(config.num_learners, 1),
            num_epochs=config.epochs,
            lr=config.learning_rate,
            gamma=config.gamma,
            lambda_=config.gae_lambda,
            clip_param=config.clip,
            entropy_coeff=config.ent_coef,
            vf_loss_coeff=config.vf_coef,
            grad_clip=config.max_grad_norm,
            use_kl_loss=False,
        )
        .debugging(seed=config.seed)
        .reporting(metrics_num_episodes_for_smoothing=100)
    )


# RLlib's module parameters by PolicyNet's names: the hidden layers keep their indices (linear
# layers at 0, 2, ... between tanh), each head is one linear layer.
RENAMES = (
    ("encoder.actor_encoder.net.mlp.", "actor.0."),
    ("pi.net.mlp.0.", "actor.1."),
    ("encoder.critic_encoder.net.mlp.", "critic.0."),
    ("vf.net.mlp.0.", "critic.1."),
)


def module_weights(algo: Any) -> dict[str, np.ndarray]:
    """The learner's RLModule parameters (numpy arrays by RLlib's names), wherever the learner
    runs."""
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_RL_MODULE, DEFAULT_MODULE_ID

    path = f"{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}/{DEFAULT_MODULE_ID}"
    state = algo.learner_group.get_state(components=path)
    return state[COMPONENT_LEARNER][COMPONENT_RL_MODULE][DEFAULT_MODULE_ID]


def to_policy_net(weights: dict[str, np.ndarray], hidden: list[int]) -> PolicyNet:
    """A :class:`PolicyNet` with RLlib's weights (the same layers under other names)."""
    state = {
        ours + key[len(rllib) :]: torch.as_tensor(np.asarray(value))
        for key, value in weights.items()
        for rllib, ours in RENAMES
        if key.startswith(rllib)
    }
    obs_size = state["actor.0.0.weight"].shape[1]
    net = PolicyNet(obs_size, state["actor.1.weight"].shape[0], hidden)
    net.load_state_dict(state)
    net.eval()
    return net


def export(algo: Any, config: TrainConfig, path: Path, step: int) -> PolicyNet:
    """Write the policy's weights after ``step`` learner steps at ``path`` as a Cauldron torch
    checkpoint; the network."""
    net = to_policy_net(module_weights(algo), list(config.hidden))
    meta = {
        "num_players": config.num_players,
        "options": config.options,
        "trainer": "rllib",
        "steps": step,
    }
    save_checkpoint(net, config.env, path, meta)
    return net


def scalars(result: dict[str, Any]) -> dict[str, float]:
    """What the run log keeps of one RLlib iteration's results."""
    runners, learner = result["env_runners"], result["learners"].get("default_policy", {})
    out = {
        "train/mean_return": runners.get("episode_return_mean", float("nan")),
        "perf/learner_steps_per_second": runners.get("num_env_steps_sampled", 0)
        / max(result["time_this_iter_s"], 1e-9),
        "loss/policy": learner.get("policy_loss", float("nan")),
        "loss/value": learner.get("vf_loss", float("nan")),
        "loss/entropy": learner.get("entropy", float("nan")),
    }
    return {key: float(value) for key, value in out.items()}


def add_snapshot(algo: Any, net: PolicyNet, hidden: list[int]) -> None:
    """Freeze ``net`` into the opponent pool of every game of every env runner (self-play)."""
    weights = {k: v.detach().clone() for k, v in net.state_dict().items()}

    def freeze(runner: Any) -> None:
        if runner.env is None:  # the driver's runner, when remote runners sample
            return
        for env in runner.env.unwrapped.envs:
            env.unwrapped.add_snapshot(weights, hidden)

    algo.env_runner_group.foreach_env_runner(freeze, local_env_runner=True)


def checkpoint_and_evaluate(algo: Any, config: TrainConfig, log: RunLog, step: int) -> None:
    """Export ``checkpoints/step_<step>.pt`` and log its evaluation
    (:func:`cauldron.train.ppo.evaluate`, ``eval_games`` games against the baselines)."""
    from cauldron.train.ppo import evaluate

    net = export(algo, config, config.folder / "checkpoints" / f"step_{step}.pt", step)
    seed = config.seed + 10_000 + step
    outcome = evaluate(lambda: TorchAgent(net, "learner"), config, config.eval_games, seed)
    log.scalars(step, {f"eval/{k}": v for k, v in outcome.items()})


def train(config: TrainConfig, log: RunLog) -> Path:
    """Train, log, export and evaluate every ``eval_every`` iterations; save RLlib's checkpoint
    with the export inside (``final_rllib/``) and return its path (an ``rllib:`` agent)."""
    final = config.folder / FINAL
    shutil.rmtree(final, ignore_errors=True)
    with ray_session(config.ray_address, None, RLLIB):
        algo = ppo_config(config).build_algo()
        try:
            log.start(total=config.total_steps)
            deadline, step, iteration = config.deadline(), 0, 0
            while step < config.total_steps:
                result = algo.train()
                iteration += 1
                step = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
                log.scalars(step, scalars(result))
                if config.self_play_every and iteration % config.self_play_every == 0:
                    net = to_policy_net(module_weights(algo), list(config.hidden))
                    add_snapshot(algo, net, list(config.hidden))
                out_of_time = time.perf_counter() > deadline
                if iteration % config.eval_every == 0 or step >= config.total_steps or out_of_time:
                    checkpoint_and_evaluate(algo, config, log, step)
                if out_of_time:
                    log.message(f"max_minutes reached after {step:,} steps")
                    break
            export(algo, config, config.folder / "final.pt", step)
            algo.save_to_path(str(final.resolve()))
            shutil.copyfile(config.folder / "final.pt", final / POLICY)
        finally:
            algo.stop()
    log.finish()
    return final
