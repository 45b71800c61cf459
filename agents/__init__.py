"""Agents: one interface (:class:`cauldron.agents.base.Agent`) for baselines and trained
policies."""

from __future__ import annotations

from cauldron.agents.base import Agent
from cauldron.agents.checkpoints import load_sb3_agent, load_torch_agent
from cauldron.agents.heuristics import HEURISTICS
from cauldron.agents.hocus_pocus.heuristic import HocusPocusHeuristic
from cauldron.agents.random_agent import RandomAgent
from cauldron.agents.rllib_policy import load_rllib_agent
from cauldron.agents.specs import display_names, parse_spec
from cauldron.agents.user import AgentError, CheckedAgent, check_agent, load_python_agent
from cauldron.envs.core.errors import ConfigError


def make_agent(spec: str, env_id: str, seed: int | None = None) -> Agent:
    """The agent that a spec string names, ready to play ``env_id``.

    Evaluation configs, training configs (``opponents``, ``warm_start``, ``prior``) and the
    command lines take agents as these strings; the spec grammar is :mod:`cauldron.agents.specs`.

    Args:
        spec: one of
            ``random`` (uniform over the legal actions);
            ``heuristic:<name>`` (one of the game's heuristics, listed in its RULES.md);
            ``torch:<checkpoint.pt>[?sample=1]`` (a PyTorch PPO checkpoint, greedy unless
            ``sample=1``; :mod:`cauldron.agents.checkpoints`);
            ``sb3:<checkpoint.zip>`` (an SB3 MaskablePPO checkpoint with its
            ``.cauldron.json`` sidecar);
            ``rllib:<checkpoint>[?sample=1]`` (an RLlib export,
            :mod:`cauldron.agents.rllib_policy`);
            ``python:<package.module>:<Class>[?key=value&...]`` (your own class, called with the
            options as keyword arguments, read as YAML scalars; :mod:`cauldron.agents.user`).
        env_id: the registered environment id (``cauldron.envs.ids()``) the agent will play; a
            checkpoint must have been trained on it.
        seed: the seed of the random agent's generator; other agents are seeded by
            ``reset(seed)`` before every game.

    Returns:
        An object with ``reset(seed)`` and ``act(observation, action_mask) -> int``
        (:class:`cauldron.agents.base.Agent`); every seat needs its own.

    Raises:
        ConfigError: an unknown kind of spec, an unknown heuristic for ``env_id`` (the message
            lists the available ones), a bad option, a checkpoint that is missing, cannot be
            read, or was trained for another game or observation size, or a ``torch:`` or
            ``sb3:`` spec without the ``train`` extra installed.
        AgentError: a ``python:`` spec that cannot be imported or is not an agent.

    Example:
        ```python
        agent = make_agent("heuristic:greedy", "hocus_pocus_v1")
        agent.reset(seed=0)
        action = agent.act(obs["observation"], obs["action_mask"])
        ```
    """
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
