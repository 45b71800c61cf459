"""Agent spec strings: ``kind:target?key=value&key=value``, and their short display names.

``random``, ``heuristic:<name>``, ``torch:<checkpoint.pt>`` (option ``sample``),
``sb3:<checkpoint.zip>``, ``rllib:<checkpoint folder or .pt>`` (option ``sample``) and
``python:<package.module>:<Class>`` (any options become keyword arguments of ``Class``).
Option values are read as YAML scalars: ``sample=1``, ``sample=true``, ``temperature=0.5``,
``name=bold``. A target may not contain ``?``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import yaml

from cauldron.envs.core.errors import ConfigError

KINDS = ("random", "heuristic", "torch", "sb3", "rllib", "python")
FORMS = (
    "'random', 'heuristic:<name>', 'torch:<path>[?sample=1]', 'sb3:<path>', "
    "'rllib:<path>[?sample=1]' or "
    "'python:<package.module>:<Class>[?key=value&...]'"
)


OPTIONS = {"random": (), "heuristic": (), "torch": ("sample",), "sb3": (), "rllib": ("sample",)}
"""The options each kind takes (a ``python`` agent takes any: they are its keyword arguments)."""


@dataclass(frozen=True)
class Spec:
    """A parsed agent spec: its kind, its target (name, path or import path) and options."""

    kind: str
    target: str
    options: dict[str, Any] = field(default_factory=dict)

    def checked_sample(self, spec: str) -> bool:
        """The ``sample`` option (0 or 1, default 0), after refusing any option this kind
        does not take; a :class:`ConfigError` naming ``spec`` otherwise."""
        unknown = sorted(set(self.options) - set(OPTIONS[self.kind]))
        if unknown:
            raise ConfigError(
                f"agent spec {spec!r}: unknown option(s) {unknown}; {self.kind} agents take "
                f"{list(OPTIONS[self.kind]) or 'none'}"
            )
        sample = self.options.get("sample", False)
        if sample not in (0, 1):  # also True / False
            raise ConfigError(f"agent spec {spec!r}: sample must be 0 or 1, got {sample!r}")
        return bool(sample)


def parse_spec(spec: str) -> Spec:
    """Split ``spec`` into kind, target and options; a clear error for a malformed one."""
    if not isinstance(spec, str) or not spec:
        raise ConfigError(f"an agent spec must be a non-empty string, got {spec!r}; use {FORMS}")
    body, _, query = spec.partition("?")
    kind, sep, target = body.partition(":")
    if kind not in KINDS or (kind == "random") == bool(sep):
        raise ConfigError(f"unknown agent spec {spec!r}; use {FORMS}")
    if kind != "random" and not target:
        raise ConfigError(f"agent spec {spec!r} names no {kind} target; use {FORMS}")
    options: dict[str, Any] = {}
    for pair in query.split("&") if query else []:
        key, eq, value = pair.partition("=")
        if not eq or not key.isidentifier():
            raise ConfigError(
                f"agent spec {spec!r}: option {pair!r} is not key=value (key a Python name)"
            )
        try:
            options[key] = yaml.safe_load(value) if value else ""
        except yaml.YAMLError:
            options[key] = value
    return Spec(kind, target, options)


def display_name(spec: str) -> str:
    """A short name for plots and tables: a checkpoint's last folder and file
    (``torch:my_run/final.pt``), a Python agent's class (``python:Bold?depth=2``); any other
    name as it is (agents given as objects are named by their key)."""
    try:
        parsed = parse_spec(spec)
    except ConfigError:
        return spec
    query = spec.partition("?")[2]
    suffix = f"?{query}" if query else ""
    if parsed.kind in ("torch", "sb3", "rllib"):
        parts = PurePath(parsed.target).parts[-2:]
        return f"{parsed.kind}:{'/'.join(parts)}{suffix}"
    if parsed.kind == "python":
        return f"python:{parsed.target.rpartition(':')[2]}{suffix}"
    return spec


def display_names(specs: list[str], given: dict[str, str] | None = None) -> dict[str, str]:
    """Display name of every spec: ``given`` where set, else :func:`display_name`, else (when
    two short names would collide) the full spec."""
    given = given or {}
    short = {s: given.get(s) or display_name(s) for s in specs}
    taken = list(short.values())
    return {s: n if taken.count(n) == 1 or s in given else s for s, n in short.items()}
