"""Hexenflug drawn as SVG (``render_mode="svg"`` and ``"rgb_array"``), kept apart from the rules.

The picture holds what :func:`cauldron.envs.hexenflug.render.render_table` writes: the draw pile
(face down, with its size), the discard pile's top card, the drawn card, the Spellbooks left, the
general display, and per seat its score, Spellbooks, layout rows and hand (every hand is public),
the last events, a legend and, once the game is over, the result. Only the draw pile's order is
hidden, and it is never drawn, so a seat's view differs from the whole table only in marking
that seat "(you)". Cards the turn player put into the layout this turn (as far as the event log
reaches), the cards it added to the display this turn and the cards chosen for an examination
are outlined. The things a player acts on are drawn as targets (:meth:`Drawing.target`): a
display card (take it), the draw pile (draw), the drawn card (place it), the display's free place
(add the drawn card to it), a hand card (choose it: examination or black-cat discard) and, on the
acting seat's panel, a colour row (land with it, examine it). Crashing, skipping and finishing an
examination have nothing drawn: a page names them in words (:func:`action_words`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cauldron.envs.core.svg import (
    BACK,
    CARD_H,
    CARD_W,
    GAP,
    HIGHLIGHT,
    INK,
    MUTED,
    PAPER,
    Drawing,
    plain,
    plural,
    seat_label,
    seat_name,
)
from cauldron.envs.hexenflug import actions as A
from cauldron.envs.hexenflug import components as C
from cauldron.envs.hexenflug.phases import Phase
from cauldron.envs.hexenflug.render import event_text

if TYPE_CHECKING:
    from cauldron.envs.hexenflug.rules import HexenflugRules, State

FACE = ("#2b2b2b", "#3f9e4d", "#ee8a22", "#e77fb3", "#f2f2ee")  # black green orange pink white
ON_FACE = (PAPER, PAPER, INK, INK, INK)  # legible text on each face
CHOSEN = "#4fc3f7"  # a card chosen for the examination
PANEL, ACTING_PANEL, LIGHT = "#386b45", "#44784f", "#f5f0e1"
MINI_W, MINI_H, MINI_STEP = 21, 26, 24  # the small cards of layouts and hands
ROW_STEP = 29  # one colour row of a seat's panel
BOOKS_X, LAYOUT_X, HAND_X = 170, 222, 600  # columns of a seat's panel
WIDTH = 1000  # the table's width (the display wraps inside it)
EVENTS = 6  # the last events shown, as in the text view


def _mini(d: Drawing, x: float, y: float, card: int, outline: str = "") -> None:
    """A small card: its colour, its value, a dot for a black cat; ``outline`` rings it."""
    colour, value = C.colour_of(card), C.value_of(card)
    if outline:
        d.rect(x - 2, y - 2, MINI_W + 4, MINI_H + 4, outline, stroke=outline, rx=5)
    d.rect(x, y, MINI_W, MINI_H, FACE[colour], rx=3, title=C.card_name(card))
    d.text(x + MINI_W / 2, y + 17, str(value), 11, ON_FACE[colour], "middle", bold=True)
    if value == C.BLACK_CAT_VALUE:
        d.circle(x + MINI_W - 4, y + 4, 2.5, INK, stroke=PAPER)


def _card(d: Drawing, x: float, y: float, card: int, note: str = "") -> None:
    """A full-size card: value, colour name and ``note`` below ("cat" on a black cat, a 15)."""
    colour, value = C.colour_of(card), C.value_of(card)
    note = "cat" if value == C.BLACK_CAT_VALUE else note
    d.card(x, y, FACE[colour], str(value), C.COLOURS[colour], note, title=C.card_name(card))


def _slot(d: Drawing, x: float, y: float, label: str) -> None:
    """An empty place for a card."""
    d.rect(x, y, CARD_W, CARD_H, "none", stroke=MUTED)
    d.text(x + CARD_W / 2, y + CARD_H / 2 + 4, label, 9, MUTED, "middle")


def _fresh_layout_cards(state: State) -> set[int]:
    """The cards the turn player placed or took into its layout this turn, read back from the
    log (which keeps at least its last 16 events) up to the end of the previous turn."""
    fresh: set[int] = set()
    for kind, seat, *rest in reversed(state.log):
        if kind in ("cat_discard", "reshuffle"):
            continue
        if seat != state.turn or kind not in ("draw", "place", "take", "display"):
            break
        if kind in ("place", "take"):
            fresh.add(rest[0])
    return fresh


def _result(rules: HexenflugRules, state: State) -> str:
    winners, scores = rules.winners(state), rules.scores(state)
    points = f"{scores[winners[0]]} point{'s' * (scores[winners[0]] != 1)}"
    if len(winners) == 1:
        return f"Game over: {seat_name(winners[0])} wins with {points}"
    names = ", ".join(seat_name(w) for w in winners)
    return f"Game over: shared win, {names} ({points})"


def outcome_words(rules: HexenflugRules, state: State) -> str:
    """The result in words, once the game is over: who won, with how many points."""
    return _result(rules, state)


def action_words(rules: HexenflugRules, state: State, action: int) -> str:
    """``action`` as a player says it (no numbers but the cards' values)."""
    if action < A.DRAW:
        return f"take {C.card_name(action - A.TAKE)} from the display"
    if A.LAND <= action < A.EXAMINE:
        return f"land with {C.COLOURS[action - A.LAND]}"
    if A.EXAMINE <= action < A.SKIP:
        return f"examine {C.COLOURS[action - A.EXAMINE]}"
    if A.CHOOSE <= action < A.FINISH:
        return f"choose {C.card_name(action - A.CHOOSE)}"
    return {
        A.DRAW: "draw a card",
        A.PLACE: "place the drawn card in your layout",
        A.DISPLAY: "add the drawn card to the display",
        A.CRASH: "crash",
        A.CRASH_KEEP: "crash and keep the drawn card",
        A.SKIP: "do not examine",
        A.FINISH: "finish the examination",
    }[action]


def mind_shown(rules: HexenflugRules, state: State, actor: int, seat: int) -> bool:
    """Whether ``seat`` sees all that ``actor`` sees, so that what ``actor`` thinks may be shown
    to it: always (every hand is public, the draw pile's order hidden from all)."""
    return True


def _top(d: Drawing, state: State, y: float) -> float:
    """The draw pile, the discard pile, the drawn card, the Spellbooks left and the display;
    returns the bottom edge."""
    with d.target([A.DRAW], "the draw pile: draw a card"):
        d.card(10, y + 16, "", face_down=True, title="the draw pile")
        d.text(
            10 + CARD_W / 2,
            y + 16 + CARD_H / 2 + 5,
            str(len(state.draw_pile)),
            14,
            PAPER,
            "middle",
            True,
        )
    d.text(10, y + 10, "draw pile", 11, LIGHT)
    d.text(76, y + 10, f"discard {len(state.discard)}", 11, LIGHT)
    if state.discard:
        _card(d, 76, y + 16, state.discard[-1])
    else:
        _slot(d, 76, y + 16, "empty")
    d.text(142, y + 10, "drawn", 11, LIGHT, bold=True)
    if state.drawn >= 0:
        with d.target([A.PLACE], "the drawn card: place it in your layout"):
            d.rect(138, y + 12, CARD_W + 8, CARD_H + 8, HIGHLIGHT, stroke=HIGHLIGHT, rx=8)
            _card(d, 142, y + 16, state.drawn)
    else:
        _slot(d, 142, y + 16, "none")
    d.text(206, y + 10, "Spellbooks left", 11, LIGHT)
    for colour, left in enumerate(state.supply):
        bx, by = 206 + (colour % 3) * 42, y + 18 + (colour // 3) * 30
        d.rect(bx, by, 16, 22, FACE[colour], rx=2, title=f"{C.COLOURS[colour]} Spellbooks left")
        d.text(bx + 20, by + 16, str(left), 13, LIGHT if left else MUTED, bold=True)
    dx0 = 350
    d.text(dx0, y + 10, f"display ({len(state.display)})", 11, LIGHT)
    per_line = (WIDTH - dx0) // (CARD_W + GAP)
    places = len(state.display) + (state.drawn >= 0)
    for i, card in enumerate(state.display):
        x = dx0 + (i % per_line) * (CARD_W + GAP)
        cy = y + 16 + (i // per_line) * (CARD_H + GAP)
        note = "added" if card in state.added else ""
        with d.target([A.TAKE + card], f"take {C.card_name(card)}"):
            if note:
                d.rect(x - 3, cy - 3, CARD_W + 6, CARD_H + 6, HIGHLIGHT, stroke=HIGHLIGHT, rx=8)
            _card(d, x, cy, card, note)
    if state.drawn >= 0:
        i = len(state.display)
        x, cy = dx0 + (i % per_line) * (CARD_W + GAP), y + 16 + (i // per_line) * (CARD_H + GAP)
        with d.target([A.DISPLAY], "add the drawn card to the display"):
            d.pad(x, cy, CARD_W, CARD_H)
            _slot(d, x, cy, "add here")
    lines = max(1, -(-places // per_line))
    return y + 16 + lines * (CARD_H + GAP)


def _seat(d: Drawing, rules: HexenflugRules, state: State, seat: int, you: bool, y: float) -> float:
    """One seat's panel: name, score, Spellbooks, layout rows and hand by colour; returns the
    bottom edge."""
    acting = seat == state.actor and state.phase != Phase.OVER
    height = 20 + C.NUM_COLOURS * ROW_STEP
    d.rect(6, y, WIDTH, height, ACTING_PANEL if acting else PANEL, HIGHLIGHT if acting else INK)
    hand, books = state.hands[seat], state.books[seat]
    d.text(16, y + 22, seat_label(seat, seat if you else None), 15, LIGHT, bold=True)
    d.text(16, y + 42, f"score {rules.scores(state)[seat]}", 14, HIGHLIGHT, bold=True)
    d.text(16, y + 60, plural(sum(books), "Spellbook"), 12, LIGHT)
    d.text(16, y + 77, plural(len(hand), "card") + " in hand", 12, LIGHT)
    over = state.phase == Phase.OVER
    mark = "winner" if over and seat in rules.winners(state) else "to act" if acting else ""
    if mark:
        d.rect(14, y + 88, 62, 20, HIGHLIGHT, stroke=HIGHLIGHT, rx=10)
        d.text(45, y + 102, mark, 12, INK, "middle", bold=True)
    if seat == state.turn and not over:
        d.text(16 + 70 * acting, y + 102, "turn", 12, LIGHT, bold=True)
    if seat == state.turn and state.phase == Phase.EXAM_BUILD:
        d.text(16, y + 122, f"examining {C.COLOURS[state.exam_colour]}", 11, CHOSEN, bold=True)
    for heading, hx in (("books", BOOKS_X), ("layout", LAYOUT_X), ("hand", HAND_X)):
        d.text(hx, y + 14, heading, 10, LIGHT)
    fresh = _fresh_layout_cards(state) if seat == state.turn else set()
    chosen = set(state.exam_cards) if seat == state.turn else set()
    by_colour: list[list[int]] = [[] for _ in range(C.NUM_COLOURS)]
    for card in sorted(hand):
        by_colour[C.colour_of(card)].append(card)
    rows = [A.LAND, A.EXAMINE] if acting else []
    for colour in range(C.NUM_COLOURS):
        ry = y + 19 + colour * ROW_STEP
        name = C.COLOURS[colour]
        with d.target([a + colour for a in rows], f"the {name} row: land with it or examine it"):
            if rows:
                d.pad(BOOKS_X - 4, ry, HAND_X - BOOKS_X - 8, ROW_STEP - 2)
            _row(d, state.layouts[seat][colour], books[colour], colour, fresh, ry)
        for i, card in enumerate(by_colour[colour]):
            ring = CHOSEN if card in chosen else ""
            with d.target([A.CHOOSE + card], f"choose {C.card_name(card)}"):
                _mini(d, HAND_X + i * MINI_STEP, ry, card, ring)
    return y + height


def _row(
    d: Drawing, layout: list[int], books: int, colour: int, fresh: set[int], ry: float
) -> None:
    """One colour row of a seat's panel: its Spellbooks and its layout cards."""
    d.rect(BOOKS_X, ry + 3, 14, 20, FACE[colour], rx=2, title=f"{C.COLOURS[colour]} Spellbooks")
    d.text(BOOKS_X + 19, ry + 18, str(books), 13, LIGHT if books else MUTED, bold=True)
    for i, card in enumerate(layout):
        _mini(d, LAYOUT_X + i * MINI_STEP, ry, card, HIGHLIGHT if card in fresh else "")


def svg_table(rules: HexenflugRules, state: State, seat: int | None) -> str:
    """The table as an SVG document, as ``seat`` sees it (``None``: all of it). Every hand is
    public, so every view shows every card but the draw pile's; a seat's own panel says "(you)"."""
    d = Drawing()
    d.width = WIDTH + 6
    phase = state.phase
    who = (
        "game over"
        if phase == Phase.OVER
        else f"{phase.name.lower()} · {seat_name(state.actor, seat)} to act"
    )
    d.text(10, 22, "Hexenflug", 18, LIGHT, bold=True)
    d.text(120, 22, f"turn {state.turns} · {who}", 14, LIGHT)
    y = 32.0
    if phase == Phase.OVER:
        d.banner(10, y, WIDTH - 4, _result(rules, state))
        y += 38
    y = _top(d, state, y + 4) + 6
    for other in range(rules.num_players):
        y = _seat(d, rules, state, other, other == seat, y) + 6
    for i, event in enumerate(state.log[-EVENTS:]):
        d.text(10, y + 16 + i * 16, "› " + plain(event_text(event)), 12, LIGHT)
    y += 16 + EVENTS * 16
    d.rect(6, y - 5, WIDTH, 24, PAPER, rx=4)
    d.legend(
        14,
        y,
        [(FACE[c], name) for c, name in enumerate(C.COLOURS)]
        + [
            (HIGHLIGHT, "to act / new this turn"),
            (CHOSEN, "chosen to examine"),
            (BACK, "draw pile"),
        ],
    )
    d.circle(WIDTH - 110, y + 6, 3, INK, stroke=PAPER)
    d.text(WIDTH - 102, y + 10.5, "black cat (15)", 11)
    return d.svg()
