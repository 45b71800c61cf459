"""Agents: one interface (:class:`agents.base.Agent`) for baselines and trained policies."""

from __future__ import annotations

from agents import hexenflug_heuristic
from agents.base import Agent
from agents.checkpoints import load_sb3_agent, load_torch_agent
from agents.headless_horseman_heuristic import HeadlessHorsemanHeuristic
from agents.hocus_pocus_heuristic import HocusPocusHeuristic
from agents.random_agent import RandomAgent
from agents.rllib_policy import load_rllib_agent
from agents.specs import display_names, parse_spec
from agents.user import AgentError, CheckedAgent, check_agent, load_python_agent
from agents.voodoo_mania_heuristic import ChainVoodoo, FastVoodoo
from envs.core.errors import ConfigError

HEURISTICS = {
    "hocus_pocus_v1": {"greedy": HocusPocusHeuristic},
    "headless_horseman_v1": {"focal": HeadlessHorsemanHeuristic},
    "voodoo_mania_v1": {"fast": FastVoodoo, "chain": ChainVoodoo},
    "hexenflug_v1": {
        "cautious": hexenflug_heuristic.cautious,
        "greedy": hexenflug_heuristic.greedy,
    },
}


OPTIONS = {"random": (), "heuristic": (), "torch": ("sample",), "sb3": (), "rllib": ("sample",)}


def make_agent(spec: str, env_id: str, seed: int | None = None) -> Agent:
    """An agent from a spec string (see :mod:`agents.specs`): ``random``,
    ``heuristic:<name>``, ``torch:<checkpoint>[?sample=1]``, ``sb3:<checkpoint>`` (trained
    checkpoints; see :mod:`agents.checkpoints`), ``rllib:<checkpoint>[?sample=1]``
    (:mod:`agents.rllib_policy`) or ``python:<package.module>:<Class>[?k=v&...]``
    (your own class, called with the options as keyword arguments; see :mod:`agents.user`)."""
    parsed = parse_spec(spec)
    if parsed.kind == "python":
        return load_python_agent(spec, parsed.target, parsed.options)
    unknown = sorted(set(parsed.options) - set(OPTIONS[parsed.kind]))
    if unknown:
        raise ConfigError(
            f"agent spec {spec!r}: unknown option(s) {unknown}; {parsed.kind} agents take "
            f"{list(OPTIONS[parsed.kind]) or 'none'}"
        )
    if parsed.kind == "random":
        return RandomAgent(seed)
    if parsed.kind in ("torch", "rllib"):
        sample = parsed.options.get("sample", False)
        if sample not in (0, 1):  # also True / False
            raise ConfigError(f"agent spec {spec!r}: sample must be 0 or 1, got {sample!r}")
        load = load_torch_agent if parsed.kind == "torch" else load_rllib_agent
        return load(parsed.target, env_id, seed, sample=bool(sample))
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
