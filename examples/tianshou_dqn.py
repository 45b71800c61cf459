"""Tianshou (2.x) DQN on a Cauldron game, against a random masked opponent.

    pip install -e ".[interop]"          # tianshou>=2
    python -m examples.tianshou_dqn --env hexenflug_v1 --steps 20000 [--threads 1]

Glue: Tianshou's ``PettingZooEnv`` wraps the AEC env as it is. It reads
``obs["observation"]`` and turns ``obs["action_mask"]`` into its ``mask``, which both its
Q-learning policy and its random opponent respect, so the default ``illegal_action="raise"``
can stay on: an illegal action would be a bug and should say so. Every seat must share one
observation and action space, as in every Cauldron game. The learner sits in ``player_0``;
rewards are read for that seat (``multi_agent_return_reduction``). Torch runs on ``threads``
threads (1 by default): small networks gain nothing from more, and on a busy machine torch's
default of one thread per core oversubscribes it (4–6 times slower).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from tianshou.algorithm import (
    DQN,
    MARLRandomDiscreteMaskedOffPolicyAlgorithm,
    MultiAgentOffPolicyAlgorithm,
)
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from cauldron import envs


def make_env(env_id: str, num_players: int) -> PettingZooEnv:
    return PettingZooEnv(envs.make(env_id, num_players=num_players))


def train(
    env_id: str = "hexenflug_v1",
    num_players: int = 2,
    steps: int = 20_000,
    num_envs: int = 4,
    hidden: tuple[int, ...] = (128, 128),
    seed: int = 0,
    threads: int = 1,
) -> dict[str, float]:
    """Train a DQN learner in seat 0 for about ``steps`` env steps (all seats' decisions) and
    return its best mean test reward (``num_envs`` test games after each epoch) and the number
    of env steps collected."""
    torch.set_num_threads(threads)
    np.random.seed(seed)
    torch.manual_seed(seed)
    probe = make_env(env_id, num_players)
    space = probe.observation_space["observation"]
    net = Net(state_shape=space.shape, action_shape=int(probe.action_space.n), hidden_sizes=hidden)
    learner = DQN(
        policy=DiscreteQLearningPolicy(
            model=net, action_space=probe.action_space, eps_training=0.1, eps_inference=0.0
        ),
        optim=AdamOptimizerFactory(lr=1e-3),
        gamma=0.99,
        n_step_return_horizon=1,
        target_update_freq=200,
    )
    others = [
        MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=probe.action_space)
        for _ in range(num_players - 1)
    ]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, *others], env=probe)
    training = DummyVectorEnv([lambda: make_env(env_id, num_players)] * num_envs)
    testing = DummyVectorEnv([lambda: make_env(env_id, num_players)] * num_envs)
    training.seed(seed)
    testing.seed(seed + 10_000)
    buffer = VectorReplayBuffer(max(steps, 1_000), num_envs)
    training_collector = Collector[CollectStats](
        algorithm, training, buffer, exploration_noise=True
    )
    testing_collector = Collector[CollectStats](algorithm, testing, exploration_noise=False)
    training_collector.reset()
    epoch_steps = min(steps, 5_000)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=training_collector,
            test_collector=testing_collector,
            max_epochs=max(1, steps // epoch_steps),
            epoch_num_steps=epoch_steps,
            collection_step_num_env_steps=10 * num_envs,
            test_step_num_episodes=num_envs,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.1,
            test_in_training=False,
            multi_agent_return_reduction=lambda returns: returns[:, 0],
        )
    )
    return {"test_reward": float(result.best_reward), "env_steps": float(result.train_step)}


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="hexenflug_v1", choices=envs.ids())
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    out = train(args.env, args.players, args.steps, threads=args.threads)
    print(out)
    return out


if __name__ == "__main__":
    main()
