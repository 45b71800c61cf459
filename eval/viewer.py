"""The web table: ``python -m eval.viewer FILE... -o games.html``.

Writes one self-contained HTML page (no server, no network) that draws every game of the record
files step by step: play/pause/step/scrub controls, a switch between the whole table and each
seat's private view, the action taken with its name, the rewards and every seat's figures. Each
record is replayed through the reference env (and checked) to draw its tables, so the record
itself stays small. A game or file that cannot be replayed is listed with its error instead.

Page data (JSON inside the page): ``strings`` (every distinct text line, action name and figures
panel, stored once) and ``games``: per game ``title``, ``env``, ``players``, ``views`` (view
names: ``table``, ``player_0``, ...), ``error`` (or ``null``) and per frame ``act`` (``null`` or
``[seat, action, name id, rewards or null]``), ``seen`` (``null`` or per view the id of the
action's text as that view shows it: a secret action reads as its public text in the other seats'
views, see :mod:`envs.core.views`), ``panel`` (``[seat to act or null, id of the returns' JSON,
id of each seat's info JSON...]``, every seat's figures from the game state) and per view
``text`` (see :func:`delta`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from envs.core.errors import CauldronError, run_command
from eval.records import GameRecord, RecordError, check_output, read_games
from eval.replay import Frame, describe, frames

ASSETS = Path(__file__).with_name("viewer_assets")


class Strings:
    """A table of distinct strings; ``id(s)`` is the index of ``s`` (added on first use)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.items: list[str] = []

    def id(self, text: str) -> int:
        if text not in self.index:
            self.index[text] = len(self.items)
            self.items.append(text)
        return self.index[text]


def encode_game(game: GameRecord, shown: list[Frame], strings: Strings) -> dict[str, Any]:
    """One game's page data (see the module docstring) from its replayed frames."""
    players = game.header["players"]
    views: list[list[Any]] = [[] for _ in range(players + 1)]
    previous: list[list[int]] = [[] for _ in range(players + 1)]
    acts, seen, panels = [], [], []
    for frame in shown:
        for v, text in enumerate((frame.table, *frame.views)):
            ids = [strings.id(line) for line in text.split("\n")]
            views[v].append(delta(previous[v], ids))
            previous[v] = ids
        a = frame.action
        acts.append(None if a is None else [a["s"], a["a"], strings.id(a["n"]), a.get("r")])
        seen.append(None if a is None else [strings.id(t) for t in (frame.move, *frame.seen)])
        figures = [frame.returns, *frame.info]
        panels.append([frame.to_act, *(strings.id(_dumps(x)) for x in figures)])
    return {
        **_heading(game),
        "views": ["table"] + [f"player_{i}" for i in range(players)],
        "error": None,
        "act": acts,
        "seen": seen,
        "panel": panels,
        "text": views,
    }


def delta(before: list[int], ids: list[int]) -> int | list[int]:
    """A view's frame against the previous one: ``0`` when the same, ``[-1, i, id, ...]`` (the
    changed line numbers and their line ids) when only some lines of as many changed, else
    ``ids`` itself."""
    if ids == before:
        return 0
    if len(ids) == len(before):
        changed = [
            x for i, (b, a) in enumerate(zip(before, ids, strict=True)) if a != b for x in (i, a)
        ]
        if len(changed) < len(ids):
            return [-1, *changed]
    return ids


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _heading(game: GameRecord) -> dict[str, Any]:
    h = game.header
    return {
        "title": describe(game),
        "env": h["env"],
        "players": h["players"],
        "source": game.source,
    }


def failed(title: str, error: str, source: str) -> dict[str, Any]:
    """A page entry for a game or file that cannot be drawn: its title and the error."""
    return {
        "title": title,
        "source": source,
        "error": error,
        "views": [],
        "act": [],
        "seen": [],
        "text": [],
    }


def page_data(paths: list[str | Path]) -> dict[str, Any]:
    """Every game of ``paths`` as page data; an unreadable file (missing, not UTF-8, not a
    record) and a game that does not replay become error entries beside the others."""
    strings, games = Strings(), []
    for path in paths:
        try:
            records = read_games(path)
        except RecordError as err:
            games.append(failed(f"{path} (unreadable)", str(err), str(path)))
            continue
        for game in records:
            try:
                games.append(encode_game(game, frames(game), strings))
            except CauldronError as err:  # a RecordError, or the env refusing the record's data
                games.append({**_heading(game), **failed(describe(game), str(err), game.source)})
    return {"strings": strings.items, "games": games}


# Characters that JSON may hold as they are but a page's script element may not: ``<`` (which
# opens ``</script>`` or ``<!--``), ``>`` and ``&``. Every other character outside ASCII, the
# line separators U+2028 and U+2029 among them, is escaped by ``json.dumps`` itself.
SCRIPT_ESCAPES = str.maketrans({c: f"\\u{ord(c):04x}" for c in "<>&"})


def embed(data: Any) -> str:
    """``data`` as JSON text safe inside a ``<script>`` element: ASCII only, with ``<``, ``>``
    and ``&`` as ``\\uXXXX`` escapes, which ``JSON.parse`` reads back as the same characters."""
    return json.dumps(data, separators=(",", ":")).translate(SCRIPT_ESCAPES)


def render_page(data: dict[str, Any]) -> str:
    """The HTML page: the template with the style, the script and ``data`` inlined."""
    payload = embed(data)
    page = (ASSETS / "viewer.html").read_text(encoding="utf-8")
    for mark, text in (
        ("/*STYLE*/", (ASSETS / "viewer.css").read_text(encoding="utf-8")),
        ("/*SCRIPT*/", (ASSETS / "viewer.js").read_text(encoding="utf-8")),
        ("/*DATA*/", payload),
    ):
        before, found, after = page.partition(mark)
        if not found:
            raise RuntimeError(f"viewer template lacks {mark}")
        page = before + text + after
    return page


def write_page(paths: list[str | Path], out: str | Path, option: str = "the page") -> Path:
    """Write the viewer page of the record files ``paths`` to ``out``, checked before the page
    is built (a file path, not a folder, whose folder exists or can be made; an error names it
    as ``option``)."""
    out = check_output(out, option)
    data = page_data(paths)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_page(data), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(
        prog="python -m eval.viewer", description=__doc__.splitlines()[0]
    )
    parser.add_argument("files", nargs="+", help="record files (JSON Lines)")
    parser.add_argument("-o", "--out", default="games.html", help="the HTML page to write")
    args = parser.parse_args(argv)
    path = write_page(args.files, args.out, "-o/--out")
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB); open it in a browser")
    return path


if __name__ == "__main__":
    run_command(main)
