"""RLlib (new API stack) PPO with action masking on a Cauldron game, one policy for every seat.

    pip install "ray[rllib]"     # its own environment: it pins an older gymnasium
    python -m examples.rllib_ppo --env headless_horseman_v1 --iterations 20 [--threads 1]

Glue:
- RLlib's ``ActionMaskingTorchRLModule`` reads ``{"observations", "action_mask"}`` (a float
  mask), where Cauldron gives ``{"observation", "action_mask"}`` (int8): :class:`CauldronRLlibEnv`
  renames the key and casts the mask.
- RLlib's env checker steps with actions drawn without the mask, and Cauldron rejects an
  illegal action (``illegal_action="raise"``, the default). Keep ``raise`` and turn the checker
  off (``disable_env_checking=True``); or, to keep the checker, make the env with
  ``illegal_action="penalty"`` (the game ends with ``illegal_reward``), which then also hides
  a masking bug behind a reward.
- Turn-based play: only the seat to act gets an observation; every seat gets its reward when it
  next acts or when the game ends (the AEC env keeps each seat's sum since its last action).
- Sampling and learning run in the driver on ``threads`` torch threads (1 by default): torch's
  default of one thread per core oversubscribes a busy machine.
"""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from cauldron import envs


class CauldronRLlibEnv(MultiAgentEnv):
    """A Cauldron AEC game as an RLlib ``MultiAgentEnv`` (``env_config``: ``env_id``,
    ``num_players`` and any game options)."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        env_id = config.pop("env_id", "headless_horseman_v1")
        self.env = envs.make(env_id, num_players=config.pop("num_players", 2), **config)
        self.agents = self.possible_agents = list(self.env.possible_agents)
        inner = self.env.observation_space(self.agents[0])
        mask = gym.spaces.Box(0.0, 1.0, inner["action_mask"].shape, np.float32)
        space = gym.spaces.Dict({"observations": inner["observation"], "action_mask": mask})
        self.observation_spaces = dict.fromkeys(self.agents, space)
        self.action_spaces = {a: self.env.action_space(a) for a in self.agents}

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {
            "observations": obs["observation"],
            "action_mask": obs["action_mask"].astype(np.float32),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.env.reset(seed=seed)
        agent = self.env.agent_selection
        return {agent: self._observe(agent)}, {agent: {}}

    def step(self, action_dict: dict[str, int]):
        self.env.step(int(action_dict[self.env.agent_selection]))
        obs, rewards, terminated, truncated, infos = {}, {}, {}, {}, {}
        while self.env.agents:  # the next seat to act, or every seat once the game is over
            agent = self.env.agent_selection
            _, reward, term, trunc, info = self.env.last()
            obs[agent], rewards[agent] = self._observe(agent), reward
            terminated[agent], truncated[agent], infos[agent] = term, trunc, info
            if not (term or trunc):
                break
            self.env.step(None)
        terminated["__all__"] = not self.env.agents and not any(truncated.values())
        truncated["__all__"] = not self.env.agents and any(truncated.values())
        return obs, rewards, terminated, truncated, infos


def config(env_id: str, num_players: int, batch: int = 2_000, hidden: int = 128) -> PPOConfig:
    """PPO with one shared, masked policy for every seat, sampling in the driver process."""
    return (
        PPOConfig()
        .environment(
            CauldronRLlibEnv,
            env_config={"env_id": env_id, "num_players": num_players},
            disable_env_checking=True,
        )
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent, *a, **k: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"head_fcnet_hiddens": [hidden, hidden]},
                    )
                }
            )
        )
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=batch, minibatch_size=min(batch, 256), num_epochs=2)
    )


def train(
    env_id: str = "headless_horseman_v1",
    num_players: int = 2,
    iterations: int = 20,
    batch: int = 2_000,
    hidden: int = 128,
    threads: int = 1,
) -> list[float]:
    """Train for ``iterations`` on ``threads`` torch threads and return each iteration's mean
    episode return (all seats)."""
    import ray
    import torch

    torch.set_num_threads(threads)
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    algo = config(env_id, num_players, batch, hidden).build_algo()
    returns = []
    try:
        for _ in range(iterations):
            result = algo.train()
            returns.append(float(result["env_runners"].get("episode_return_mean", float("nan"))))
    finally:
        algo.stop()
    return returns


def main(argv: list[str] | None = None) -> list[float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="headless_horseman_v1", choices=envs.ids())
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    returns = train(args.env, args.players, args.iterations, threads=args.threads)
    print("mean episode return per iteration:", [round(r, 3) for r in returns])
    return returns


if __name__ == "__main__":
    main()
