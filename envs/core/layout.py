"""Flat vector layouts made of named slices (OpenSpiel-style observers).

A :class:`Layout` is the single source of truth for an encoding: the encoder writes through its
slices and ``RULES.md`` shows :meth:`Layout.markdown`, which a test compares with the file.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """One named piece of a flat vector: ``size`` entries meaning ``meaning``."""

    name: str
    size: int
    meaning: str


class Layout:
    """An ordered list of fields with their offsets; ``layout["name"]`` is that field's slice."""

    def __init__(self, fields: list[Field]) -> None:
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate field names in layout: {names}")
        self.fields = tuple(fields)
        self.offsets: dict[str, int] = {}
        self.slices: dict[str, slice] = {}
        offset = 0
        for f in fields:
            self.offsets[f.name] = offset
            self.slices[f.name] = slice(offset, offset + f.size)
            offset += f.size
        self.size = offset

    def __getitem__(self, name: str) -> slice:
        return self.slices[name]

    def markdown(self) -> str:
        """The layout as a Markdown table: index range, name, size, meaning."""
        rows = ["| index | name | size | meaning |", "|---|---|---|---|"]
        for f in self.fields:
            start = self.offsets[f.name]
            span = f"{start}" if f.size == 1 else f"{start}–{start + f.size - 1}"
            rows.append(f"| {span} | `{f.name}` | {f.size} | {f.meaning} |")
        rows.append(f"| | **total** | {self.size} | |")
        return "\n".join(rows)
