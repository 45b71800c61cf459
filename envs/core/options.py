"""Typed, validated environment options.

Each game declares its options as a frozen dataclass whose fields carry a ``doc`` (and, for strings,
``choices``) in their metadata; :func:`parse_options` checks names, types and choices and names what
is allowed when something is wrong. :func:`options_table` renders the same fields for ``RULES.md``.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np

from cauldron.envs.core.errors import ConfigError

T = TypeVar("T")
# The magnitude a whole-number or a number option may have: far beyond any game's use, far from
# the overflow of the tensors and float32 sums that engines and trainers keep them in.
LIMITS = {int: 2**31 - 1, float: 1e6}


def option(
    default: Any, doc: str, choices: tuple[str, ...] | None = None, shaping: bool = False
) -> Any:
    """A dataclass field for an option, documented by ``doc`` and limited to ``choices``;
    ``shaping`` marks a reward added for learning that is not the game's own (evaluations that
    report the game's returns play without it: :func:`without_shaping`)."""
    meta = {"doc": doc, "choices": choices, "shaping": shaping}
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
    max_steps: int = option(
        20_000,
        "Agent-steps after which a game is truncated (reported as truncation, nobody wins). Far "
        "above any real game: the longest of 100 random games is under 1,200 agent-steps in "
        "every game but Voodoo Mania, whose own `max_ticks` clock ends a 6-player game by "
        "18,000.",
    )


def _plain(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers and lists as tuples, all the way down."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    return value


def _contains_bad_number(value: Any) -> bool:
    if isinstance(value, tuple):
        return any(_contains_bad_number(v) for v in value)
    return isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value))


def _type_ok(value: Any, annotation: Any) -> bool:
    """Whether ``value`` (already plain) fits ``annotation``: bools are not numbers, floats are
    finite, tuples hold numbers or tuples (never bools, NaN or infinities)."""
    if annotation is float:
        return (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        )
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation in (bool, str):
        return isinstance(value, annotation)
    if annotation is tuple or typing.get_origin(annotation) is tuple:
        return isinstance(value, tuple) and not _contains_bad_number(value)
    return True


def parse_options(cls: type[T], given: Mapping[str, Any]) -> T:
    """Build ``cls`` from ``given``; raise :class:`ConfigError` on a bad name, type, choice or
    magnitude (:data:`LIMITS`).

    Numpy scalars count as the Python numbers they hold and lists as tuples."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise ConfigError(f"unknown option(s) {unknown}; allowed options: {sorted(fields)}")
    values = {}
    for name, given_value in given.items():
        value = _plain(given_value)
        choices = fields[name].metadata.get("choices")
        if not _type_ok(value, hints[name]):
            kind = getattr(hints[name], "__name__", str(hints[name]))
            detail = " (finite)" if kind == "float" else ""
            detail = " of numbers (no bools, NaN or infinities)" if kind == "tuple" else detail
            raise ConfigError(
                f"option {name!r} must be of type {kind}{detail}, got {given_value!r} "
                f"({type(given_value).__name__})"
            )
        if choices and value not in choices:
            raise ConfigError(f"option {name!r} must be one of {list(choices)}, got {value!r}")
        limit = LIMITS.get(hints[name])
        if limit is not None and abs(value) > limit:
            raise ConfigError(
                f"option {name!r} must be from {-limit:,.0f} to {limit:,.0f}, got {value!r}"
            )
        values[name] = value
    options = cls(**values)
    if options.max_steps < 1:
        raise ConfigError(f"option 'max_steps' must be at least 1, got {options.max_steps}")
    return options


def without_shaping(cls: type, given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` options of the options class ``cls`` without its reward-shaping ones (those
    declared with ``option(..., shaping=True)``): the game with its own rewards only."""
    shaping = {f.name for f in dataclasses.fields(cls) if f.metadata.get("shaping")}
    return {name: value for name, value in given.items() if name not in shaping}


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
