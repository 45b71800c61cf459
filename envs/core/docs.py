"""Generated blocks in ``RULES.md`` files.

A block sits between ``<!-- BEGIN name -->`` and ``<!-- END name -->``; :func:`fill_blocks`
rewrites every block from the code, and the docs test checks that the file is up to date.
"""

from __future__ import annotations

import re
from pathlib import Path

from cauldron.envs.core.layout import Field, Layout
from cauldron.envs.core.options import options_table

BLOCK = re.compile(r"(<!-- BEGIN (\w+) -->\n)(.*?)(<!-- END \2 -->)", re.S)


def fill_blocks(text: str, blocks: dict[str, str]) -> str:
    """``text`` with each block named in ``blocks`` replaced; every such name must appear."""
    missing = set(blocks) - {m.group(2) for m in BLOCK.finditer(text)}
    if missing:
        raise ValueError(
            f"the text lacks generated blocks {sorted(missing)} "
            "(<!-- BEGIN name --> ... <!-- END name -->)"
        )

    def replace(m: re.Match) -> str:
        if m.group(2) not in blocks:
            return m.group(0)
        return m.group(1) + blocks[m.group(2)].strip() + "\n" + m.group(4)

    return BLOCK.sub(replace, text)


def update_file(path: Path, blocks: dict[str, str]) -> bool:
    """Rewrite the blocks of ``path``; return whether anything changed."""
    old = path.read_text()
    try:
        new = fill_blocks(old, blocks)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    if new != old:
        path.write_text(new)
    return new != old


def action_table(ranges: tuple[tuple[int, int, str, str], ...]) -> str:
    """A Markdown action table from (first index, count, name, meaning) rows."""
    rows = ["| index | action | meaning |", "|---|---|---|"]
    for start, size, name, meaning in ranges:
        span = f"{start}" if size == 1 else f"{start}–{start + size - 1}"
        rows.append(f"| {span} | {name} | {meaning} |")
    return "\n".join(rows)


def standard_blocks(
    actions: tuple[tuple[int, int, str, str], ...],
    observation_fields: list[Field],
    state_fields: list[Field],
    options_class: type,
) -> dict[str, str]:
    """The generated blocks every game's RULES.md has: actions, observation, state, options."""
    return {
        "actions": action_table(actions),
        "observation": Layout(observation_fields).markdown(),
        "state": Layout(state_fields).markdown(),
        "options": options_table(options_class),
    }


def write_blocks(path: Path, blocks: dict[str, str]) -> None:
    """Command-line entry of a game's docs module: rewrite its blocks and say so."""
    print(f"{path}: {'updated' if update_file(path, blocks) else 'up to date'}")
