"""Flat vector layouts made of named slices (OpenSpiel-style observers).

A :class:`Layout` is the single source of truth for an encoding: the encoder writes through its
slices and ``RULES.md`` shows :meth:`Layout.markdown`, which a test compares with the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import overload


@dataclass(frozen=True)
class Field:
    """One named piece of a flat vector: ``size`` entries meaning ``meaning``."""

    name: str
    size: int
    meaning: str


class Layout:
    """An ordered sequence of fields with their offsets: ``layout["name"]`` is that field's
    slice of the vector; ``layout[i]`` the i-th :class:`Field`, ``layout[i:j]`` a tuple of
    fields, ``len(layout)`` the number of fields and ``layout.size`` the vector's length."""

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

    @overload
    def __getitem__(self, key: str) -> slice: ...
    @overload
    def __getitem__(self, key: int) -> Field: ...
    @overload
    def __getitem__(self, key: slice) -> tuple[Field, ...]: ...

    def __getitem__(self, key: str | int | slice) -> slice | Field | tuple[Field, ...]:
        if isinstance(key, str):
            if key not in self.slices:
                raise KeyError(f"no field {key!r}; the fields are {list(self.slices)}")
            return self.slices[key]
        return self.fields[key]

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __contains__(self, item: object) -> bool:
        """A field's name or the :class:`Field` itself."""
        return item in self.slices or item in self.fields

    def __repr__(self) -> str:
        lines = [f"Layout({len(self.fields)} fields, {self.size} entries)"]
        for f in self.fields:
            where = self.slices[f.name]
            lines.append(f"  [{where.start}:{where.stop}] {f.name} ({f.size}): {f.meaning}")
        return "\n".join(lines)

    def markdown(self) -> str:
        """The layout as a Markdown table: index range, name, size, meaning."""
        rows = ["| index | name | size | meaning |", "|---|---|---|---|"]
        for f in self.fields:
            start = self.offsets[f.name]
            span = f"{start}" if f.size == 1 else f"{start}–{start + f.size - 1}"
            rows.append(f"| {span} | `{f.name}` | {f.size} | {f.meaning} |")
        rows.append(f"| | **total** | {self.size} | |")
        return "\n".join(rows)
