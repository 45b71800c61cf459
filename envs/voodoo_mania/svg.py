"""Voodoo Mania drawn as SVG (``render_mode="svg"`` and ``"rgb_array"``), kept apart from the rules.

The picture holds what :func:`cauldron.envs.voodoo_mania.render.render_table` writes: the round,
tick and Voodoo pile (its size and the visible side of its top card), the wanted pair, and per seat
its points, cards held, own pile and hand, the last events, a legend and, once the game is over, the
result. A card is drawn with both faces side by side; a face has one row per ingredient, filled
in the colour it shows, and the missing pair as a dashed row in the missing colour (the
ingredient it lacks, named "no ..."). The hidden-information rule is the text view's: a seat sees
its own hand and only the sizes of the others' hands (face-down cards); nobody sees an own pile's
cards. In a seat's view the things it acts on are drawn as targets (:meth:`Drawing.target`): a
face of a hand card (play that side up) and the card's "cycle" strip under its faces (slide it
under the own pile); faces it may play now are outlined. Waiting is not drawn: a tick nobody
acts on is a wait.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from cauldron.envs.core.svg import (
    BACK,
    HIGHLIGHT,
    INK,
    PAPER,
    Drawing,
    plain,
    plural,
    seat_label,
    seat_name,
)
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C
from cauldron.envs.voodoo_mania.phases import Phase
from cauldron.envs.voodoo_mania.render import event_text, side_text

if TYPE_CHECKING:
    from cauldron.envs.voodoo_mania.rules import State, VoodooManiaRules

COLOUR = ("#d23c3c", "#f0c419", "#3a9d4a", "#3b73c9", "#8a4fbf")  # red yellow green blue purple
ON_COLOUR = (PAPER, INK, PAPER, PAPER, PAPER)  # legible text on each colour
LABEL = ("doll", "mask", "potion", "amulet", "top hat")  # the ingredients, short
PANEL, ACTING_PANEL, LIGHT = "#386b45", "#44784f", "#f5f0e1"
ROW_H = 13  # one ingredient row of a face
FACE_W, FACE_H = 76, 5 * ROW_H + 8  # one side of a card
STRIP_H = 18  # the cycle strip under a card's faces
CARD_W2, CARD_H2 = 2 * FACE_W + 12, FACE_H + 8 + STRIP_H  # a card with both sides
SMALL_W, SMALL_H = 34, 48  # a face-down hand card of another seat
PANEL_W = 3 * CARD_W2 + 2 * 6 + 16
PANEL_H = 26 + CARD_H2 + 8
EVENTS = 6  # the last events shown, as in the text view
CLOCK_IDLE = A.WAIT  # a real-time game: a page runs it on a clock, a tick let pass is a wait


@lru_cache(maxsize=4096)
def _face_body(rules: VoodooManiaRules, card: int, side: int) -> tuple[str, str]:
    """The rows of one side of ``card`` drawn at (0, 0), an SVG fragment that is the same in
    every frame (so drawn once), and the side's tooltip."""
    face = rules.deck[card][side]
    d = Drawing()
    shown = {pair // 5: pair % 5 for pair in face.shows}
    for ingredient in range(5):
        ry = 4 + ingredient * ROW_H
        colour = shown.get(ingredient)
        if colour is None:
            missing = COLOUR[face.missing % 5]
            d.rect(
                4,
                ry,
                FACE_W - 8,
                ROW_H - 2,
                PAPER,
                stroke=missing,
                rx=2,
                stroke_width="1.5",
                stroke_dasharray="3 2",
            )
            d.circle(10, ry + (ROW_H - 2) / 2, 3.5, missing)
            d.text(16, ry + 9, f"no {LABEL[ingredient]}", 8.5, INK, bold=True)
        else:
            d.rect(4, ry, FACE_W - 8, ROW_H - 2, COLOUR[colour], stroke=COLOUR[colour], rx=2)
            d.text(FACE_W / 2, ry + 9, LABEL[ingredient], 8.5, ON_COLOUR[colour], "middle")
    return "".join(d.parts), side_text(rules, card, side)


def _face(
    d: Drawing,
    x: float,
    y: float,
    rules: VoodooManiaRules,
    card: int,
    side: int,
    outline: bool = False,
    **attrs: str,
) -> None:
    """One side of ``card``: a row per ingredient in the colour it shows, the missing pair as a
    dashed row marked "no ..." with a dot of the missing colour; ``outline`` rings it (a side
    that may be played now); ``attrs`` go on the frame."""
    body, title = _face_body(rules, card, side)
    if outline:
        attrs.update(stroke=HIGHLIGHT, stroke_width="3")
    d.rect(x, y, FACE_W, FACE_H, PAPER, rx=4, title=title, **attrs)
    d.parts.append(f'<g transform="translate({x:g} {y:g})">{body}</g>')


def _card(
    d: Drawing,
    x: float,
    y: float,
    rules: VoodooManiaRules,
    card: int,
    playable: tuple[bool, bool] = (False, False),
    slot: int | None = None,
) -> None:
    """A hand card with both faces and a cycle strip; ``playable`` outlines the sides that may
    be played now; with ``slot`` (the viewer's own hand) the faces and the strip are targets."""
    d.rect(x, y, CARD_W2, CARD_H2, "#e7dcc3", rx=6)
    for side in (0, 1):
        play = [] if slot is None else [A.PLAY + 2 * slot + side]
        with d.target(play, "play this side up: " + side_text(rules, card, side)):
            _face(d, x + 4 + side * (FACE_W + 4), y + 4, rules, card, side, playable[side])
    with d.target([] if slot is None else [A.CYCLE + slot], "slide this card under your pile"):
        sy = y + FACE_H + 8
        d.rect(x + 4, sy, CARD_W2 - 8, STRIP_H - 4, "#cbbd9c", stroke="#a8987a", rx=3)
        d.text(x + CARD_W2 / 2, sy + 10, "cycle: under my pile", 9, INK, "middle")


def _panel(
    d: Drawing,
    x: float,
    y: float,
    rules: VoodooManiaRules,
    state: State,
    other: int,
    seat: int | None,
) -> None:
    """A seat's panel: name, points and cards held, own pile, and the hand (faces for the
    viewer's own seat or the whole table, face-down cards for the others)."""
    over = state.phase == Phase.OVER
    acting = not over and state.actor == other
    winner = over and not state.truncated and other in rules.winners(state)
    d.rect(
        x,
        y,
        PANEL_W,
        PANEL_H,
        ACTING_PANEL if acting else PANEL,
        stroke=HIGHLIGHT if acting or winner else INK,
        stroke_width="3" if acting or winner else "1",
    )
    hand, pile = state.hands[other], state.piles[other]
    name = seat_label(other, seat)
    d.text(x + 8, y + 18, name, 14, LIGHT, bold=True)
    tags = [f"points {state.scores[other]}", f"holds {len(hand) + len(pile)}", f"pile {len(pile)}"]
    if acting:
        tags.append("to act")
    elif other in state.pending and not over:
        tags.append("has chosen")
    if winner:
        tags.append("WINNER")
    d.text(
        x + 22 + len(name) * 8.6,
        y + 18,
        " · ".join(tags),
        12,
        HIGHLIGHT if acting or winner else LIGHT,
    )
    cy = y + 26
    if seat is None or seat == other:
        wanted = rules.wanted(state)
        for slot, card in enumerate(hand):
            playable = tuple(
                not over and (wanted in f.shows or f.missing == wanted) for f in rules.deck[card]
            )
            mine = slot if seat == other else None
            _card(d, x + 8 + slot * (CARD_W2 + 6), cy, rules, card, playable, mine)
        if not hand:
            d.text(x + 8, cy + 40, "no cards in hand", 12, LIGHT)
        return
    for slot in range(len(hand)):
        sx = x + 8 + slot * (SMALL_W + 6)
        d.rect(sx, cy + 8, SMALL_W, SMALL_H, BACK, title="a hidden hand card")
        d.rect(sx + 4, cy + 12, SMALL_W - 8, SMALL_H - 8, BACK, stroke="#c9b8e8", rx=3)
    held = plural(len(hand), "card") + " in hand (hidden)" if hand else "no cards in hand"
    d.text(x + 8 + 3 * (SMALL_W + 6) + 6, cy + 38, held, 12, LIGHT)


def _result(rules: VoodooManiaRules, state: State) -> str:
    """The banner's text once the game is over."""
    if state.truncated:
        return f"cut short after {state.tick} ticks: nobody wins"
    winners = rules.winners(state)
    names = ", ".join(seat_name(s) for s in winners)
    verb = "wins" if len(winners) == 1 else "share the win"
    return f"{names} {verb} with {state.scores[winners[0]]} points (fewest)"


def outcome_words(rules: VoodooManiaRules, state: State) -> str:
    """The result in words, once the game is over: who won, with how many points, or why
    nobody did."""
    return _result(rules, state)


def action_words(rules: VoodooManiaRules, state: State, action: int) -> str:
    """``action`` of the seat to act as a player says it: its card by the pairs its sides miss."""
    name = rules.action_name(action, state)
    if name.startswith("cycle "):
        return "slide " + name.removeprefix("cycle ") + " under your pile"
    return name


def mind_shown(rules: VoodooManiaRules, state: State, actor: int, seat: int) -> bool:
    """Whether ``seat`` sees all that ``actor`` sees, so that what ``actor`` thinks may be shown
    to it: only its own mind (hands are secret)."""
    return actor == seat


def svg_table(rules: VoodooManiaRules, state: State, seat: int | None) -> str:
    """The table as an SVG document; ``seat`` None: the whole table, else what that seat sees."""
    d = Drawing()
    columns = 1 if rules.num_players <= 2 else 2
    width = columns * PANEL_W + (columns - 1) * 10
    y = 10.0
    if state.phase == Phase.OVER:
        d.banner(10, y, width, _result(rules, state))
        y += 40
    d.text(
        10,
        y + 14,
        f"Voodoo Mania · round {min(state.round, C.ROUNDS - 1) + 1}/{C.ROUNDS} · tick {state.tick}",
        15,
        LIGHT,
        bold=True,
    )
    who = "whole table" if seat is None else f"{seat_name(seat)}'s view"
    d.text(10 + width, y + 14, who, 12, LIGHT, "end")
    y += 24
    # The Voodoo pile: a stack of backs under the visible side of its top card.
    card, side = state.voodoo[-1]
    depth = min(len(state.voodoo) - 1, 4)
    for k in range(depth, 0, -1):
        d.rect(10 + 3 * k, y + 3 * k, FACE_W, FACE_H, BACK, stroke="#c9b8e8", rx=4)
    _face(d, 10, y, rules, card, side)
    tx = 10 + FACE_W + 24
    d.text(tx, y + 16, "Voodoo pile: " + plural(len(state.voodoo), "card"), 13, LIGHT, bold=True)
    d.text(tx, y + 36, "wanted pair (missing on its top card):", 12, LIGHT)
    wanted = rules.wanted(state)
    name = C.pair_name(wanted)
    colour = wanted % 5
    d.rect(tx, y + 44, len(name) * 9 + 20, 26, COLOUR[colour], stroke=INK, rx=5)
    d.text(tx + 10, y + 62, name, 15, ON_COLOUR[colour], bold=True)
    y += FACE_H + 16
    for other in range(rules.num_players):
        row, col = divmod(other, columns)
        _panel(d, 10 + col * (PANEL_W + 10), y + row * (PANEL_H + 8), rules, state, other, seat)
    y += -(-rules.num_players // columns) * (PANEL_H + 8) + 6
    d.text(10, y + 12, "last events", 12, LIGHT, bold=True)
    for k, event in enumerate(state.log[-EVENTS:]):
        d.text(10, y + 28 + 15 * k, plain(event_text(rules, event)), 12, LIGHT)
    y += 28 + 15 * EVENTS
    d.rect(4, y - 4, width + 12, 40, LIGHT, stroke=LIGHT, rx=4)  # legible under the legend's ink
    y = d.legend(10, y, [(c, n) for c, n in zip(COLOUR, C.COLOURS, strict=True)]) + 6
    d.legend(
        10,
        y,
        [
            (PAPER, "dashed row: the missing pair"),
            (BACK, "hidden card"),
            (HIGHLIGHT, "to act · playable side · winner"),
        ],
    )
    return d.svg()
