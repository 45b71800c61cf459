"""Agents: one interface (:class:`agents.base.Agent`) for baselines and trained policies."""

from __future__ import annotations

from agents.base import Agent
from agents.checkpoints import load_sb3_agent, load_torch_agent
from agents.heuristics import HEURISTICS
from agents.hocus_pocus.heuristic import HocusPocusHeuristic
from agents.random_agent import RandomAgent
from agents.rllib_policy import load_rllib_agent
from agents.specs import display_names, parse_spec
from agents.user import AgentError, CheckedAgent, check_agent, load_python_agent
from envs.core.errors import ConfigError


def make_agent(spec: str, env_id: str, seed: int | None = None) -> Agent:
    """An agent from a spec string (see :mod:`agents.specs`): ``random``,
    ``heuristic:<name>``, ``torch:<checkpoint>[?sample=1]``, ``sb3:<checkpoint>`` (trained
    checkpoints; see :mod:`agents.checkpoints`), ``rllib:<checkpoint>[?sample=1]``
    (:mod:`agents.rllib_policy`) or ``python:<package.module>:<Class>[?k=v&...]``
    (your own class, called with the options as keyword arguments; see :mod:`agents.user`)."""
    parsed = parse_spec(spec)
    if parsed.kind == "python":
        return load_python_agent(spec, parsed.target, parsed.options)
    sample = parsed.checked_sample(spec)
    if parsed.kind == "random":
        return RandomAgent(seed)
    if parsed.kind in ("torch", "rllib"):
        load = load_torch_agent if parsed.kind == "torch" else load_rllib_agent
        return load(parsed.target, env_id, seed, sample=sample)
    if parsed.kind == "sb3":
        return load_sb3_agent(parsed.target, env_id, seed)
    known = HEURISTICS.get(env_id, {})
    if parsed.target not in known:
        raise ConfigError(
            f"unknown heuristic {parsed.target!r} for {env_id}; available: "
            f"{[f'heuristic:{k}' for k in known]}"
        )
    return known[parsed.target]()


__all__ = [
    "Agent",
    "AgentError",
    "CheckedAgent",
    "HocusPocusHeuristic",
    "RandomAgent",
    "check_agent",
    "display_names",
    "make_agent",
]
