"""The web table: ``cauldron viewer FILE... -o games.html [--seat K]``.

Writes one self-contained HTML page (no server, no network) that draws every game of the record
files step by step: play/pause/step/scrub controls, a switch between the whole table and each
seat's private view (each seat labelled with its agent), the table drawn as SVG (the env's
``render_mode="svg"`` drawing, a seat's view its ``render_for(seat, "svg")``), the whole list of
moves and events as that view saw them (click one to go to its step), what the acting agent
thought when the record holds it (in the whole table and the actor's own view only), the rewards
and every seat's figures. Each record is replayed through the reference env (and checked) to
draw its tables, so the record itself stays small. A file that is missing, empty or not a record
stops the command with one line and no page; a game that cannot be replayed is listed with its
error instead.

The page's seat switch only filters what is shown: the page holds every view. ``--seat K``
writes a page that holds only what seat K could know (:func:`seat_part`): its own view of every
frame, the actions as it saw them, its own thoughts, no seed; twin games that differ in what it
could not see give the same page, byte for byte.

Page data (JSON inside the page): ``strings`` (every distinct SVG line, action and event text,
thought and figures panel, stored once) and ``games``: per game ``title``, ``env``, ``players``,
``source``, ``views`` (view names: ``table``, ``player_0``, ...; a seat's page: that seat's
only), ``seat`` (the seat of a seat's page, else ``null``), ``labels`` (per seat
``player_1 · heuristic:planner``, from the record's ``agents``), ``error`` (or ``null``) and per
frame (step 0 the deal, step k the table after the k-th decision):

* ``act``: ``null`` or ``[seat, action, name id, rewards or null]`` (in a seat's page action
  and name are ``null`` where the seat did not see the action);
* ``seen``: ``null`` or per view the id of the action's text as that view shows it (a secret
  action reads as its public text in the other seats' views, see :mod:`cauldron.envs.core.views`);
* ``events``: the ids of the public events the step added to the table's log;
* ``think``: ``null`` when no step of the game holds a thought, else per frame ``null`` or the
  id of :func:`cauldron.eval.replay.thought`'s text (``policy: play 4/1 62% · ... · value 0.41``),
  shown in view 0 and the actor's view only;
* ``panel``: ``[seat to act or null, id of the returns' JSON (rounded to 4 decimals), id of
  each seat's info JSON...]``, every seat's figures from the game state;
* ``svg``: per view, the frames' SVG as line ids (one element a line), each frame stored
  against the view's previous one or, for a seat's view, the whole table's frame of the same
  step (see :func:`delta`), so unchanged elements cost nothing.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cauldron.envs.core.errors import CauldronError, ConfigError, run_command
from cauldron.eval.records import GameRecord, check_output, read_games
from cauldron.eval.replay import Frame, describe, frames, thought

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


def encode_game(
    game: GameRecord, shown: list[Frame], strings: Strings, seat: int | None = None
) -> dict[str, Any]:
    """One game's page data (see the module docstring) from its replayed frames (drawn as SVG
    when they were replayed with ``svg=True``): every view, or with ``seat`` only what that seat
    could know (:func:`seat_part`)."""
    if seat is not None:
        return seat_part(game, shown, strings, seat)
    players = game.header["players"]
    acts, seen, thoughts = [], [], []
    for frame in shown:
        a = frame.action
        acts.append(None if a is None else [a["s"], a["a"], strings.id(a["n"]), a.get("r")])
        seen.append(None if a is None else [strings.id(t) for t in (frame.move, *frame.seen)])
        said = thought(frame)
        thoughts.append(strings.id(said) if said else None)
    return {
        **_heading(game),
        "views": ["table"] + [f"player_{i}" for i in range(players)],
        "seat": None,
        **_common(game, shown, strings),
        "act": acts,
        "seen": seen,
        "think": thoughts if any(t is not None for t in thoughts) else None,
        "svg": _pictures(shown, range(players + 1), strings, against_table=True),
    }


def seat_part(game: GameRecord, shown: list[Frame], strings: Strings, seat: int) -> dict[str, Any]:
    """A game's page data for ``seat`` alone, holding nothing hidden from it: no seed in the
    title (it would tell the deal), the seat's view only, each action as the seat saw it (its
    index and name only when the seat saw it in full) and the seat's own thoughts only."""
    acts, seen, thoughts = [], [], []
    for frame in shown:
        a = frame.action
        if a is None:
            acts.append(None)
            seen.append(None)
        else:
            known = frame.seen[seat] == frame.move
            named = [a["a"], strings.id(a["n"])] if known else [None, None]
            acts.append([a["s"], *named, a.get("r")])
            seen.append([strings.id(frame.seen[seat])])
        said = thought(frame) if a is not None and a["s"] == seat else ""
        thoughts.append(strings.id(said) if said else None)
    return {
        **_heading(game, seat),
        "views": [f"player_{seat}"],
        "seat": seat,
        **_common(game, shown, strings),
        "act": acts,
        "seen": seen,
        "think": thoughts if any(t is not None for t in thoughts) else None,
        "svg": _pictures(shown, [seat + 1], strings, against_table=False),
    }


def _common(game: GameRecord, shown: list[Frame], strings: Strings) -> dict[str, Any]:
    """What every seat may know of a game: its seats' agents, the public events and the
    figures."""
    panels = []
    for frame in shown:
        returns = [round(x, 4) for x in frame.returns]
        panels.append([frame.to_act, *(strings.id(_dumps(x)) for x in (returns, *frame.info))])
    return {
        "labels": [f"player_{i} · {agent}" for i, agent in enumerate(game.header["agents"])],
        "error": None,
        "events": [[strings.id(t) for t in frame.events] for frame in shown],
        "panel": panels,
    }


def _pictures(
    shown: list[Frame], drawn: Sequence[int], strings: Strings, against_table: bool
) -> list[list[Any]]:
    """The frames' SVG of the views ``drawn`` (indices into :attr:`Frame.svg`: 0 the table,
    ``1 + k`` seat k), each stored by :func:`delta`; a seat's view against the table's frame
    too when ``against_table`` (the table then comes first)."""
    pictures: list[list[Any]] = [[] for _ in drawn]
    before: list[list[int]] = [[] for _ in drawn]
    for frame in shown:
        if not frame.svg:
            continue
        for v, k in enumerate(drawn):
            ids = [strings.id(line) for line in frame.svg[k].split("\n")]
            table = before[0] if v and against_table else None
            pictures[v].append(delta(before[v], ids, table))
            before[v] = ids
    return pictures


def delta(before: list[int], ids: list[int], table: list[int] | None = None) -> int | list[int]:
    """A view's frame (its line ids) against the view's previous one, in the shortest of:
    ``0`` when the same; ``[-1, i, id, ...]`` (line ``i`` now reads ``id``) when as many lines,
    some changed; ``[-2, keep, drop, n, id_1 .. id_n, ...]`` (edits: copy ``keep`` lines, skip
    ``drop``, insert the ``n`` ids; then again; the rest of the previous lines follow); for a
    seat's view, given the whole ``table``'s line ids at the same step, ``[-3, -1 or -2, ...]``
    (one of those two forms against the table's frame instead); else ``ids`` itself."""
    if ids == before:
        return 0
    options = [ids, *changes(before, ids)]
    if table is not None:
        options += [[-3, *form] for form in changes(table, ids)]
    return min(options, key=len)


def changes(before: list[int], ids: list[int]) -> list[list[int]]:
    """The ``[-1, ...]`` form of :func:`delta` (when ``before`` and ``ids`` have as many lines)
    and its ``[-2, ...]`` form: the lines common to the start and to the end are kept, and the
    ones between matched by :class:`difflib.SequenceMatcher`."""
    forms = []
    if len(ids) == len(before):
        pairs = zip(before, ids, strict=True)
        forms.append([-1, *(x for i, (b, a) in enumerate(pairs) if a != b for x in (i, a))])
    return [*forms, edits(before, ids)]


def edits(before: list[int], ids: list[int]) -> list[int]:
    """The ``[-2, ...]`` form of :func:`delta` (see :func:`changes`)."""
    head = 0
    while head < min(len(before), len(ids)) and before[head] == ids[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(ids)) - head and before[-1 - tail] == ids[-1 - tail]:
        tail += 1
    old, new = before[head : len(before) - tail], ids[head : len(ids) - tail]
    out, keep = [-2], head
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            keep += i2 - i1
        else:
            out += [keep, i2 - i1, j2 - j1, *new[j1:j2]]
            keep = 0
    return out


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _heading(game: GameRecord, seat: int | None = None) -> dict[str, Any]:
    h = game.header
    return {
        "title": describe(game, seat),
        "env": h["env"],
        "players": h["players"],
        "source": game.source,
    }


def failed(title: str, error: str, source: str) -> dict[str, Any]:
    """A page entry for a game that cannot be drawn: its title and the error."""
    return {
        "title": title,
        "source": source,
        "error": error,
        "views": [],
        "act": [],
        "seen": [],
        "events": [],
        "svg": [],
    }


def page_data(paths: list[str | Path], seat: int | None = None) -> dict[str, Any]:
    """Every game of ``paths`` as page data, or with ``seat`` what that seat could know of each
    (:func:`seat_part`). Every file is read first: one that is missing, empty, unreadable or not
    a record is a :class:`RecordError`. A game that does not replay becomes an error entry
    beside the others, except in a seat's page (its error may name what the seat may not
    know): there it is an error too."""
    games = [game for path in paths for game in read_games(path)]
    if seat is not None:
        _check_seat(games, seat)
    strings, entries = Strings(), []
    for game in games:
        try:
            entries.append(encode_game(game, frames(game, svg=True), strings, seat))
        except CauldronError as err:  # a RecordError, or the env refusing the record's data
            if seat is not None:
                raise
            entries.append({**_heading(game), **failed(describe(game), str(err), game.source)})
    return {"strings": strings.items, "games": entries}


def _check_seat(games: list[GameRecord], seat: int) -> None:
    """:class:`ConfigError` unless ``seat`` is a seat of every game."""
    for game in games:
        players = game.header["players"]
        if not 0 <= seat < players:
            raise ConfigError(
                f"--seat must be a seat of every game, 0..{players - 1} in {game.source} "
                f"(line {game.line_of(None)}: {players} players), got {seat}"
            )


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


def write_page(
    paths: list[str | Path], out: str | Path, option: str = "the page", seat: int | None = None
) -> Path:
    """Write the viewer page of the record files ``paths`` (with ``seat``, that seat's page:
    :func:`page_data`) to ``out``, checked before the page is built (a file path, not a folder,
    whose folder exists or can be made; an error names it as ``option``). Nothing is written
    when the page cannot be built."""
    out = check_output(out, option)
    data = page_data(paths, seat)
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    try:
        part.write_text(render_page(data), encoding="utf-8")
        os.replace(part, out)  # a page written in part never replaces the one there
    except OSError as err:
        part.unlink(missing_ok=True)
        raise ConfigError(f"{option} {str(out)!r} cannot be written ({err.strerror})") from None
    return out


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(prog="cauldron viewer", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="record files (JSON Lines)")
    parser.add_argument("-o", "--out", default="games.html", help="the HTML page to write")
    parser.add_argument(
        "--seat",
        type=int,
        help="a page for this seat alone: its view, its thoughts, nothing hidden from it",
    )
    args = parser.parse_args(argv)
    path = write_page(args.files, args.out, "-o/--out", args.seat)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB); open it in a browser")
    return path


if __name__ == "__main__":
    run_command(main)
