"""Errors raised by every Cauldron environment."""

from __future__ import annotations

import sys
from collections.abc import Callable


class CauldronError(ValueError):
    """Base class of Cauldron's input errors (a ``ValueError``)."""


class IllegalActionError(CauldronError):
    """An action that the current phase does not allow; the game is left unchanged."""

    def __init__(self, action: object, agent: str, phase: str, legal: list[str]) -> None:
        shown = ", ".join(legal[:20]) + (f", ... ({len(legal)} in all)" if len(legal) > 20 else "")
        super().__init__(
            f"illegal action {action!r} for {agent} in phase {phase!r}; legal actions: {shown}"
        )
        self.action = action
        self.agent = agent
        self.phase = phase
        self.legal = legal

    def __reduce__(self):
        """Pickle by the constructor's arguments, so the error crosses process boundaries."""
        return type(self), (self.action, self.agent, self.phase, self.legal)


class ConfigError(CauldronError):
    """A bad option, option value or player count given when an environment is made."""


def run_command(main: Callable[[], object]) -> None:
    """Run a command-line ``main``; a :class:`ConfigError` exits with its message, not a
    traceback."""
    try:
        main()
    except ConfigError as err:
        sys.exit(f"error: {err}")
