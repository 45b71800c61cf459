"""Batched policies: baselines and trained networks that choose for B games at once.

A batched policy maps tensors to tensors: ``act(observation [B, obs], mask [B, A] bool,
seat [B]) -> LongTensor[B]``, a legal action per row. Each game's heuristics live in
``agents/<game>_batched.py`` as ``HEURISTICS = {name: class}``, each class built as
``cls(num_players, device, generator)`` and tested there to choose what the reference heuristic
chooses. Specs are those of :func:`agents.make_agent`: ``random``, ``heuristic:<name>``,
``torch:<checkpoint>``.
"""

from __future__ import annotations

import copy
import importlib
from typing import Protocol

import torch

import envs
from agents.specs import OPTIONS, parse_spec
from agents.torch_policy import PolicyNet
from envs.core.errors import ConfigError


class BatchedPolicy(Protocol):
    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """A legal action per row."""


def draw_by_running_total(running: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """``[B]``: per row of ``running [B, A]`` (the running sums of non-negative weights), the
    first index whose running sum exceeds a uniform draw times the row's total, so index ``i``
    comes with probability weight ``i`` / total (a binary search; the last index at most)."""
    uniform = torch.rand(
        len(running), 1, generator=generator, device=running.device, dtype=torch.float64
    )
    target = (uniform * running[:, -1:]).to(running.dtype)  # integer sums: rounded down
    chosen = torch.searchsorted(running, target, right=True).squeeze(1)
    return chosen.clamp_(max=running.shape[1] - 1)


class BatchedRandom:
    """Uniformly random legal actions: per row, the ``k``-th legal action for ``k`` uniform in
    ``0 .. count - 1``, found by a binary search of the running count of legal actions. One
    random number per row, where keys for every action cost 3-15x more on the CPU at 31-329
    actions. A row without a legal action gets the last action."""

    def __init__(self, num_players: int, device: torch.device, generator: torch.Generator):
        self.generator = generator

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        width = torch.int16 if mask.shape[1] < 2**15 else torch.int32
        return draw_by_running_total(mask.view(torch.uint8).cumsum(1, dtype=width), self.generator)


class BatchedNet:
    """A policy network's most likely legal action per row (a frozen snapshot or checkpoint),
    or, given a ``generator`` (spec option ``sample=1``), an action drawn from its policy: the
    first action whose running probability exceeds a uniform draw, as :class:`BatchedRandom`."""

    def __init__(self, net: PolicyNet, generator: torch.Generator | None = None) -> None:
        if net.recurrent:
            raise ConfigError("recurrent networks cannot play as batched opponents yet")
        self.net, self.generator = net, generator

    @torch.no_grad()
    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        logits = self.net.masked_logits(observation, mask)[0]
        if self.generator is None:
            return logits.argmax(dim=1)
        running = torch.softmax(logits.double(), dim=1).cumsum(dim=1)
        return draw_by_running_total(running, self.generator)


def snapshot_policy(
    net: PolicyNet, device: torch.device, generator: torch.Generator | None = None
) -> BatchedNet:
    """A frozen copy of ``net`` as a batched policy (sampling from ``generator`` if given)."""
    frozen = copy.deepcopy(net).to(device).eval()
    for parameter in frozen.parameters():
        parameter.requires_grad_(False)
    return BatchedNet(frozen, generator)


def batched_heuristics(env_id: str) -> dict[str, type]:
    """The batched heuristics of ``env_id`` by name (empty if the game has none)."""
    game = envs.spec(env_id).module.split(".")[-1]
    try:
        module = importlib.import_module(f"agents.{game}_batched")
    except ModuleNotFoundError:
        return {}
    return module.HEURISTICS


def make_batched_agent(
    spec: str, env_id: str, num_players: int, device: torch.device, generator: torch.Generator
) -> BatchedPolicy:
    """A batched policy from an agent spec; a clear error for a spec with no batched form."""
    parsed = parse_spec(spec)
    sample = parsed.checked_sample(spec) if parsed.kind in OPTIONS else False
    if parsed.kind == "random":
        return BatchedRandom(num_players, device, generator)
    if parsed.kind == "heuristic":
        known = batched_heuristics(env_id)
        if parsed.target not in known:
            raise ConfigError(
                f"no batched heuristic {parsed.target!r} for {env_id}; batched heuristics: "
                f"{[f'heuristic:{k}' for k in known]}"
            )
        return known[parsed.target](num_players, device, generator)
    if parsed.kind == "torch":
        from agents.checkpoints import load_torch_agent

        agent = load_torch_agent(parsed.target, env_id)
        return snapshot_policy(agent.net, device, generator if sample else None)
    raise ConfigError(
        f"agent spec {spec!r} has no batched form; batched opponents are random, "
        f"heuristic:<name> and torch:<checkpoint>"
    )
