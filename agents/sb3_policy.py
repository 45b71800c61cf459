"""Play a MaskablePPO policy saved by Stable-Baselines3, rebuilt from its weights."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from agents.torch_policy import load_weights
from envs.core.errors import ConfigError


class SB3Agent:
    """The deterministic (most likely legal) action of a MaskablePPO policy."""

    def __init__(self, policy: MaskableActorCriticPolicy, name: str) -> None:
        self.policy, self.name = policy, name

    @classmethod
    def from_weights(cls, weights: bytes, meta: dict, name: str) -> SB3Agent:
        """Rebuild the policy from the sidecar's sizes and ``policy.pth`` (``weights_only``)."""
        observation_space = spaces.Box(0.0, 1.0, (meta["obs_size"],), np.float32)
        action_space = spaces.Discrete(meta["num_actions"])
        policy = MaskableActorCriticPolicy(
            observation_space,
            action_space,
            lambda _: 0.0,
            net_arch=meta.get("net_arch"),
        )
        state = load_weights(weights, f"{name.removeprefix('sb3:')!r} policy.pth")
        try:
            policy.load_state_dict(state)
        except (RuntimeError, TypeError, AttributeError) as err:
            first = str(err).splitlines()[0]
            raise ConfigError(
                f"{name}: policy.pth does not fit the sidecar's network ({first})"
            ) from None
        policy.set_training_mode(False)
        return cls(policy, name)

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        action, _ = self.policy.predict(
            observation, deterministic=True, action_masks=action_mask.astype(bool)
        )
        return int(action)
