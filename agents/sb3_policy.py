"""Play a MaskablePPO policy saved by Stable-Baselines3, rebuilt from its weights."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from cauldron.agents.base import Thought, thought
from cauldron.agents.torch_policy import check_finite, load_weights
from cauldron.envs.core.errors import ConfigError

DEFAULT_ARCH = [64, 64]  # MaskablePPO's layers when the sidecar gives no net_arch


class SB3Agent:
    """The deterministic (most likely legal) action of a MaskablePPO policy; :meth:`explain`
    gives the distribution and value behind it."""

    def __init__(self, policy: MaskableActorCriticPolicy, name: str) -> None:
        self.policy, self.name = policy, name
        self._last: tuple[torch.Tensor, torch.Tensor, np.ndarray, int] | None = None

    @classmethod
    def from_weights(cls, weights: bytes, meta: dict, name: str) -> SB3Agent:
        """Rebuild the policy from the sidecar's sizes and ``policy.pth`` (``weights_only``),
        after checking that the sidecar's ``net_arch`` is well formed and declares as many
        weights as ``policy.pth`` holds (so a small file cannot make the network large)."""
        pi, vf = _layers(meta.get("net_arch"), name)
        obs_size, num_actions = meta["obs_size"], meta["num_actions"]
        state = load_weights(weights, f"{name.removeprefix('sb3:')!r} policy.pth")
        if not isinstance(state, dict) or not all(
            isinstance(v, torch.Tensor) for v in state.values()
        ):
            raise ConfigError(f"{name}: policy.pth must map names to tensors")
        check_finite(state, f"{name.removeprefix('sb3:')!r} policy.pth")
        declared = _weights(obs_size, pi, num_actions) + _weights(obs_size, vf, 1)
        stored = sum(tensor.numel() for tensor in state.values())
        if declared != stored:
            raise ConfigError(
                f"{name}: the sidecar's net_arch declares {declared:,} weights, policy.pth "
                f"holds {stored:,}"
            )
        policy = MaskableActorCriticPolicy(
            spaces.Box(0.0, 1.0, (obs_size,), np.float32),
            spaces.Discrete(num_actions),
            lambda _: 0.0,
            net_arch=meta.get("net_arch"),
        )
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
        """No memory between decisions (the last thought is forgotten)."""
        self._last = None

    @torch.no_grad()
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """What ``policy.predict(deterministic=True)`` returns (the mode of the masked
        distribution), keeping the distribution for :meth:`explain`."""
        obs, _ = self.policy.obs_to_tensor(observation)
        probs = self.policy.get_distribution(obs, action_mask.astype(bool)).distribution.probs[0]
        action = int(torch.argmax(probs))
        self._last = (obs.clone(), probs, np.array(action_mask), action)  # buffers may be reused
        return action

    @torch.no_grad()
    def explain(self) -> Thought | None:
        """The :class:`~cauldron.agents.base.Thought` of the last ``act`` (``None`` before any): the
        masked distribution's top actions and the critic's value of the observation."""
        if self._last is None:
            return None
        obs, probs, mask, action = self._last
        value = float(self.policy.predict_values(obs)[0, 0])
        return thought(probs.numpy(), mask, action, value)


def _layers(net_arch: Any, name: str) -> tuple[list[int], list[int]]:
    """The actor's and the critic's hidden layer sizes of a sidecar's ``net_arch``: a list of
    sizes (both networks), ``{"pi": [...], "vf": [...]}``, or none (:data:`DEFAULT_ARCH`)."""
    if net_arch is None:
        return DEFAULT_ARCH, DEFAULT_ARCH
    if isinstance(net_arch, dict) and set(net_arch) == {"pi", "vf"}:
        pi, vf = net_arch["pi"], net_arch["vf"]
    else:
        pi = vf = net_arch
    for sizes in (pi, vf):
        if not isinstance(sizes, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and 1 <= s < 2**31 for s in sizes
        ):
            raise ConfigError(
                f"{name}: the sidecar's net_arch must be a list of layer sizes (whole numbers "
                f'of at least 1) or {{"pi": [...], "vf": [...]}}, got {str(net_arch)[:100]}'
            )
    return pi, vf


def _weights(inputs: int, layers: list[int], outputs: int) -> int:
    """The number of weights of a fully connected network through ``layers``."""
    sizes = [inputs, *layers, outputs]
    return sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:], strict=True))
