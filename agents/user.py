"""Your own agents: ``python:<package.module>:<Class>?key=value`` specs and agent objects.

``Class`` (a class or any factory function) is imported from an importable module and called
with the spec's options as keyword arguments; what it returns must have ``reset(seed)`` and
``act(observation, action_mask) -> int`` (:class:`cauldron.agents.base.Agent`). Every failure
(import, construction, a missing method, an exception inside ``reset`` or ``act``) is an
:class:`AgentError` that names the spec.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from cauldron.agents.base import Agent
from cauldron.envs.core.errors import ConfigError


class AgentError(ConfigError):
    """A user's agent could not be made or failed while playing; the message names it."""


def check_agent(obj: object, name: str) -> None:
    """Raise :class:`AgentError` unless ``obj`` has callable ``reset`` and ``act``."""
    missing = [m for m in ("reset", "act") if not callable(getattr(obj, m, None))]
    if missing:
        raise AgentError(
            f"agent {name!r} is a {type(obj).__name__}, not an agent: it has no "
            f"{' or '.join(missing)} method (an agent needs reset(seed) and "
            "act(observation, action_mask) -> int)"
        )


def load_python_agent(spec: str, target: str, options: dict[str, Any]) -> CheckedAgent:
    """Import ``module:attribute`` from ``target`` and call it with ``options``."""
    module_name, sep, attribute = target.rpartition(":")
    if not sep or not module_name or not attribute:
        raise AgentError(f"agent spec {spec!r}: use python:<package.module>:<Class>")
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # ImportError, or whatever the module raises at import
        raise AgentError(
            f"agent spec {spec!r}: cannot import {module_name!r} ({type(err).__name__}: {err}); "
            "the module must be importable (installed, or on PYTHONPATH)"
        ) from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise AgentError(
            f"agent spec {spec!r}: {module_name} has no class or function {attribute!r}"
        )
    try:
        agent = factory(**options)
    except Exception as err:
        raise AgentError(
            f"agent spec {spec!r}: {attribute}(**{options}) raised {type(err).__name__}: {err}"
        ) from None
    check_agent(agent, spec)
    return CheckedAgent(agent, spec)


class CheckedAgent:
    """Plays a user's agent and names it (spec or name) in any error it raises."""

    def __init__(self, inner: Agent, name: str) -> None:
        self.inner, self.name = inner, name

    def reset(self, seed: int | None = None) -> None:
        try:
            self.inner.reset(seed)
        except Exception as err:
            raise AgentError(f"agent {self.name!r} raised in reset: {_describe(err)}") from err

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        try:
            return self.inner.act(observation, action_mask)
        except Exception as err:
            raise AgentError(f"agent {self.name!r} raised in act: {_describe(err)}") from err


def _describe(err: Exception) -> str:
    return f"{type(err).__name__}: {err}"
