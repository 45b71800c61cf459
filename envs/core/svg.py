"""Tables drawn as SVG (``render_mode="svg"``) and as pictures (``render_mode="rgb_array"``).

A game's ``envs/<game>/svg.py`` defines ``svg_table(rules, state, seat) -> str`` (``seat`` None:
the whole table; a seat: what that seat sees, as its text ``render_table``) with a
:class:`Drawing`: cards drawn as cards, a legend, the scores and, once the game is over, a
banner. Every drawing uses the same sizes, colours and fonts (the constants below), stays
offline (no fonts, images or scripts fetched) and is plain SVG 1.1 that browsers, notebooks
(``_repr_svg_``) and :func:`rasterize` draw alike.

A thing a player acts on (a card in hand or on display, a pile, a board space, a seat) is drawn
inside :meth:`Drawing.target`: one ``<g data-action="a b ...">`` around all its shapes and text,
naming the actions that refer to it, so that a click anywhere on it reaches it (a page finds the
thing with ``closest("[data-action]")``). A thing drawn for one seat names only what that seat
may see.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import escape

import numpy as np

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
CARD_W, CARD_H = 44, 62  # a card's size in pixels
GAP = 6  # between cards
INK, PAPER, TABLE, MUTED = "#222222", "#fdfaf3", "#2f5d3a", "#8a8a8a"
BACK = "#5b3f8c"  # the back of a face-down card
HIGHLIGHT = "#f2c14e"  # the seat to act, a winner


@dataclass
class Drawing:
    """An SVG picture built element by element, in pixels from the top left corner; the
    ``width`` and ``height`` grow to hold whatever is drawn (see :meth:`svg`)."""

    width: int = 0
    height: int = 0
    parts: list[str] = field(default_factory=list)

    def _grow(self, right: float, bottom: float) -> None:
        self.width = max(self.width, int(right + 0.999))
        self.height = max(self.height, int(bottom + 0.999))

    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        fill: str,
        stroke: str = INK,
        rx: float = 6,
        title: str = "",
        **attrs: str,
    ) -> None:
        """A rounded rectangle; ``title`` becomes its tooltip; ``attrs`` are extra SVG
        attributes (``data_action="12"`` is written ``data-action="12"``)."""
        extra = "".join(f' {k.replace("_", "-")}="{escape(str(v))}"' for k, v in attrs.items())
        tip = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(
            f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="{rx:g}" '
            f'fill="{fill}" stroke="{stroke}"{extra}>{tip}</rect>'
        )
        self._grow(x + w, y + h)

    def circle(self, x: float, y: float, r: float, fill: str, stroke: str = INK) -> None:
        """A disc centred at (``x``, ``y``)."""
        self.parts.append(
            f'<circle cx="{x:g}" cy="{y:g}" r="{r:g}" fill="{fill}" stroke="{stroke}"/>'
        )
        self._grow(x + r, y + r)

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: float = 13,
        fill: str = INK,
        anchor: str = "start",
        bold: bool = False,
    ) -> None:
        """One line of text whose baseline starts (``anchor``: or is centred, or ends) at
        (``x``, ``y``)."""
        weight = ' font-weight="bold"' if bold else ""
        self.parts.append(
            f'<text x="{x:g}" y="{y:g}" font-size="{size:g}" fill="{fill}" '
            f'text-anchor="{anchor}"{weight}>{escape(text)}</text>'
        )
        self._grow(x + (len(text) * size * 0.6 if anchor == "start" else 0), y + size * 0.3)

    def card(
        self,
        x: float,
        y: float,
        colour: str,
        top: str = "",
        middle: str = "",
        bottom: str = "",
        face_down: bool = False,
        title: str = "",
        **attrs: str,
    ) -> None:
        """A card of :data:`CARD_W` × :data:`CARD_H` at (``x``, ``y``): a coloured face with up to
        three short lines (a value on top, an icon or name in the middle, a note below), or its
        back when ``face_down``."""
        if face_down:
            self.rect(x, y, CARD_W, CARD_H, BACK, title=title or "a face-down card", **attrs)
            self.rect(x + 5, y + 5, CARD_W - 10, CARD_H - 10, BACK, stroke="#c9b8e8", rx=3)
            return
        self.rect(x, y, CARD_W, CARD_H, colour, title=title, **attrs)
        self.rect(x + 3, y + 3, CARD_W - 6, CARD_H - 6, PAPER, stroke=colour, rx=4)
        big = 14 if len(top) <= 4 else 11  # a word on top, not just a value
        for line, dy, size in ((top, 18, big), (middle, 36, 10), (bottom, 53, 9)):
            if line:
                self.text(x + CARD_W / 2, y + dy, line, size, INK, "middle", bold=line is top)

    @contextmanager
    def target(self, actions: Iterable[int], title: str = "") -> Iterator[None]:
        """Everything drawn inside the ``with`` block is one thing a player acts on: a group
        whose ``data-action`` lists ``actions`` (space-separated, in order; a group for no
        action is not drawn as a target), ``title`` its tooltip."""
        ids = " ".join(str(int(a)) for a in actions)
        if not ids:
            yield
            return
        tip = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(f'<g class="target" data-action="{ids}">{tip}')
        yield
        self.parts.append("</g>")

    def pad(self, x: float, y: float, w: float, h: float) -> None:
        """An invisible rectangle that still takes clicks: the whole area of a target."""
        self.parts.append(
            f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" fill="#ffffff" '
            'fill-opacity="0"/>'
        )
        self._grow(x + w, y + h)

    def banner(self, x: float, y: float, w: float, text: str) -> None:
        """The end-of-game banner: ``text`` on a highlighted band ``w`` wide."""
        self.rect(x, y, w, 30, HIGHLIGHT, rx=4)
        self.text(x + w / 2, y + 20, text, 15, INK, "middle", bold=True)

    def legend(self, x: float, y: float, items: list[tuple[str, str]]) -> float:
        """A legend of (colour, meaning) swatches in one row from (``x``, ``y``); returns the
        bottom edge."""
        for colour, meaning in items:
            self.rect(x, y, 12, 12, colour, rx=2)
            self.text(x + 16, y + 10.5, meaning, 11)
            x += 16 + len(meaning) * 6.6 + 12
        return y + 14

    def svg(self, margin: int = 10, background: str = TABLE) -> str:
        """The whole picture as an SVG document, ``margin`` pixels around what was drawn, one
        element a line (so that a viewer can store a game's pictures line by line)."""
        w, h = self.width + margin, self.height + margin
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
            f'viewBox="0 0 {w} {h}" font-family="{FONT}">'
        )
        back = f'<rect width="{w}" height="{h}" fill="{background}"/>'
        return "\n".join([head, back, *self.parts, "</svg>"])


def rasterize(svg: str) -> np.ndarray:
    """An SVG document as an ``[H, W, 3]`` uint8 RGB image (resvg draws it; no network)."""
    import resvg_py
    from PIL import Image

    png = bytes(resvg_py.svg_to_bytes(svg_string=svg))
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)


def seat_name(seat: int, viewer: int | None = None) -> str:
    """A seat as a player says it: ``you`` for the ``viewer``, else ``player 2`` (counted
    from 1, as players count themselves)."""
    return "you" if seat == viewer else f"player {seat + 1}"


def seat_label(seat: int, viewer: int | None = None) -> str:
    """A seat's name on its panel: ``you (player 1)`` for the ``viewer``, else ``player 2``."""
    name = seat_name(seat)
    return f"you ({name})" if seat == viewer else name


def plural(count: int, word: str, many: str = "") -> str:
    """``1 card``, ``2 cards`` (``many``: the plural when it is not ``word`` + s)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def plain(text: str, viewer: int | None = None) -> str:
    """``text`` with every ``player_N`` said as a player says it (:func:`seat_name`)."""
    return re.sub(r"player_(\d+)", lambda m: seat_name(int(m[1]), viewer), text)
