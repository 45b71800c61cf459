"""The four batched engines read alike: each ``envs/<game>/batched.py`` has the same sections,
in the same order, under the same header comments, so that one can be read by knowing another.

Module level: ``state`` (``BatchedState``), ``engine`` (the engine class), ``helpers`` (module
functions the engine uses), ``conversion`` (``from_reference``, ``to_reference``) and
``batched_game``. Inside the engine, after ``__init__``: ``reset`` (``new_games``), ``legal
moves`` (``legal_mask`` or ``legal_mask_for``), ``step`` (``apply`` or ``apply_joint``) and
``observation`` (``observe``, ``encode_state``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GAMES = ("hocus_pocus", "hexenflug", "voodoo_mania", "headless_horseman")
MODULE_SECTIONS = ["state", "engine", "helpers", "conversion", "batched_game"]
ENGINE_SECTIONS = ["reset", "legal moves", "step", "observation"]
HEADER = re.compile(r"^( *)# -{5,} (\S.*)$")
MODULE_HEADER = "# " + "-" * 69 + " "
ENGINE_HEADER = "    # " + "-" * 65 + " "
# a method each engine section must hold (either name, for the simultaneous games' engines)
HOLDS = {
    "reset": {"new_games"},
    "legal moves": {"legal_mask", "legal_mask_for"},
    "step": {"apply", "apply_joint"},
    "observation": {"observe"},
}


def sections(lines: list[str], indent: str) -> list[tuple[int, str]]:
    """``(line number, name)`` of the section headers at one indentation, in file order."""
    found = []
    for number, line in enumerate(lines, 1):
        match = HEADER.match(line)
        if match and match[1] == indent:
            assert line.startswith(MODULE_HEADER if not indent else ENGINE_HEADER), line
            found.append((number, match[2]))
    return found


def section_of(line: int, headers: list[tuple[int, str]]) -> str | None:
    above = [name for number, name in headers if number < line]
    return above[-1] if above else None


@pytest.mark.parametrize("game", GAMES)
def test_the_sections_come_in_the_agreed_order(game):
    path = ROOT / "envs" / game / "batched.py"
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text, str(path))
    top = {node.name: node for node in tree.body if hasattr(node, "name")}
    engine = top[ast.unparse(top["batched_game"].returns)]

    module = sections(lines, "")
    assert [name for _, name in module] == MODULE_SECTIONS
    assert section_of(top["BatchedState"].lineno, module) == "state"
    assert section_of(engine.lineno, module) == "engine"
    for name in ("from_reference", "to_reference"):
        assert section_of(top[name].lineno, module) == "conversion", name
    assert tree.body[-1] is top["batched_game"]
    assert section_of(top["batched_game"].lineno, module) == "batched_game"
    assert engine.end_lineno < top["from_reference"].lineno < top["to_reference"].lineno

    inside = sections(lines, " " * 4)
    assert [name for _, name in inside] == ENGINE_SECTIONS
    assert all(engine.lineno < number < engine.end_lineno for number, _ in inside)
    methods = {node.name: node.lineno for node in engine.body if hasattr(node, "name")}
    assert section_of(methods["__init__"], inside) is None
    for section, names in HOLDS.items():
        assert {section_of(methods[n], inside) for n in names & methods.keys()} == {section}
    assert section_of(methods["encode_state"], inside) == "observation"
