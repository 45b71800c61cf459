"""Typed, validated environment options.

Each game declares its options as a frozen dataclass whose fields carry a ``doc`` (and, for strings,
``choices``) in their metadata; :func:`parse_options` checks names, types and choices and names what
is allowed when something is wrong. :func:`options_table` renders the same fields for ``RULES.md``.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from envs.core.errors import ConfigError

T = TypeVar("T")


def option(default: Any, doc: str, choices: tuple[str, ...] | None = None) -> Any:
    """A dataclass field for an option, documented by ``doc`` and limited to ``choices``."""
    meta = {"doc": doc, "choices": choices}
    if isinstance(default, (list, dict, set)):
        raise TypeError("option defaults must be immutable")
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class CommonOptions:
    """Options every Cauldron environment accepts."""

    illegal_action: str = option(
        "raise",
        "What an illegal action does: `raise` an `IllegalActionError` and leave the game "
        "unchanged, "
        "or `penalty`: the acting agent gets `illegal_reward` and the game terminates.",
        choices=("raise", "penalty"),
    )
    illegal_reward: float = option(-1.0, "Reward of the agent whose illegal action ends the game.")
    start_seat: str = option(
        "first",
        "Who starts: `first` (seat 0, for the rulebook's start-player rule) or `random`.",
        choices=("first", "random"),
    )


def _type_ok(value: Any, annotation: Any) -> bool:
    if annotation is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation in (bool, str):
        return isinstance(value, annotation)
    origin = typing.get_origin(annotation)
    if origin is tuple:
        return isinstance(value, (tuple, list))
    return True


def parse_options(cls: type[T], given: Mapping[str, Any]) -> T:
    """Build ``cls`` from ``given``; raise :class:`ConfigError` on a bad name, type or choice."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise ConfigError(f"unknown option(s) {unknown}; allowed options: {sorted(fields)}")
    values = {}
    for name, value in given.items():
        choices = fields[name].metadata.get("choices")
        if not _type_ok(value, hints[name]):
            raise ConfigError(
                f"option {name!r} must be of type {getattr(hints[name], '__name__', hints[name])}, "
                f"got {value!r} ({type(value).__name__})"
            )
        if choices and value not in choices:
            raise ConfigError(f"option {name!r} must be one of {list(choices)}, got {value!r}")
        values[name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


def options_table(cls: type) -> str:
    """A Markdown table of the options of ``cls``: name, default, meaning."""
    rows = ["| option | default | meaning |", "|---|---|---|"]
    for f in dataclasses.fields(cls):
        choices = f.metadata.get("choices")
        extra = f" One of {', '.join(f'`{c}`' for c in choices)}." if choices else ""
        default = f.default
        shown = (
            f"`{default!r}`"
            if not isinstance(default, tuple) or len(repr(default)) < 40
            else ("see *Defaults*")
        )
        rows.append(f"| `{f.name}` | {shown} | {f.metadata['doc']}{extra} |")
    return "\n".join(rows)
