"""Agents: one interface (:class:`agents.base.Agent`) for baselines and trained policies."""

from __future__ import annotations

from agents import hexenflug_heuristic
from agents.base import Agent
from agents.checkpoints import load_sb3_agent, load_torch_agent
from agents.headless_horseman_heuristic import HeadlessHorsemanHeuristic
from agents.hocus_pocus_heuristic import HocusPocusHeuristic
from agents.random_agent import RandomAgent
from agents.voodoo_mania_heuristic import ChainVoodoo, FastVoodoo
from envs.core.errors import ConfigError

HEURISTICS = {
    "hocus_pocus_v0": {"greedy": HocusPocusHeuristic},
    "headless_horseman_v0": {"focal": HeadlessHorsemanHeuristic},
    "voodoo_mania_v0": {"fast": FastVoodoo, "chain": ChainVoodoo},
    "hexenflug_v0": {
        "cautious": hexenflug_heuristic.cautious,
        "greedy": hexenflug_heuristic.greedy,
    },
}


def make_agent(spec: str, env_id: str, seed: int | None = None) -> Agent:
    """An agent from a spec string: ``random``, ``heuristic:<name>``, ``torch:<checkpoint>`` or
    ``sb3:<checkpoint>`` (trained checkpoints; see :mod:`agents.checkpoints`)."""
    if spec == "random":
        return RandomAgent(seed)
    kind, _, name = spec.partition(":")
    if kind == "torch":
        return load_torch_agent(name, env_id, seed)
    if kind == "sb3":
        return load_sb3_agent(name, env_id, seed)
    if kind == "heuristic":
        known = HEURISTICS.get(env_id, {})
        if name not in known:
            raise ConfigError(
                f"unknown heuristic {name!r} for {env_id}; available: "
                f"{[f'heuristic:{k}' for k in known]}"
            )
        return known[name]()
    raise ConfigError(
        f"unknown agent spec {spec!r}; use 'random', 'heuristic:<name>', 'torch:<path>' or "
        "'sb3:<path>'"
    )


__all__ = ["Agent", "HocusPocusHeuristic", "RandomAgent", "make_agent"]
