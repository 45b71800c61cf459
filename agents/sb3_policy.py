"""Play a MaskablePPO policy saved by Stable-Baselines3, rebuilt from its weights."""

from __future__ import annotations

import io

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy


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
        state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
        policy.load_state_dict(state)
        policy.set_training_mode(False)
        return cls(policy, name)

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        action, _ = self.policy.predict(
            observation, deterministic=True, action_masks=action_mask.astype(bool)
        )
        return int(action)
