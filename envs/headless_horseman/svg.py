"""The Headless Horseman table drawn as SVG (``render_mode="svg"`` and ``"rgb_array"``).

The same table as the text :func:`~cauldron.envs.headless_horseman.render.render_table`, under the
same rule of what a seat sees: the track with its spaces, Ichabod and the Horseman; the Scare tokens
(face up in the order flipped, the others face down, their order unknown); the row; the piles'
sizes; every seat's hand, face up for the whole table (``seat`` None) and for its own seat, else
face down; every seat's choice in this play round, face down to the other seats until the row is
flipped; the team's figures, a legend, the last events and, once the game is over, the result.
The things a player acts on are drawn as targets (:meth:`Drawing.target`): a face-up hand card
(play it) and the draw pile (play its top card, for a seat that plays from the pile).
"""

from __future__ import annotations

from functools import lru_cache
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
from cauldron.envs.headless_horseman import actions as A
from cauldron.envs.headless_horseman import components as C
from cauldron.envs.headless_horseman.phases import Phase
from cauldron.envs.headless_horseman.render import event_text

if TYPE_CHECKING:
    from cauldron.envs.headless_horseman.rules import HeadlessHorsemanRules, State

LIGHT = "#f4efe0"  # text on the table
PANEL = "#24492d"  # a seat's panel
CELL, STEP, PER_ROW = 34, 37, 27  # a track space, its pitch, spaces per track row
LANE = 22  # room above a track row for the figures
ROW_WIDTH = 10 * (CARD_W + GAP)  # the row: up to 6 unmatched cards and one more round
TOP_COLOURS = ("#c0392b", "#e67e22", "#d4ac0d", "#27ae60", "#2e86c1", "#8e44ad")  # top 1..6
SPACE = {  # kind: (fill, ink, legend)
    "purple": ("#7b4fa0", "#ffffff", "Horseman's path"),
    "farm": ("#c8e0a8", INK, "Van Tassel Farm"),
    "blank": ("#e9dfc7", INK, "blank"),
    "scare": ("#e8833a", INK, "scare: flip a token"),
    "tree": ("#3f7d3a", "#ffffff", "tree: spin again"),
    "secret": ("#4a78c2", "#ffffff", "secret path"),
    "split": ("#8fd16a", INK, "Spinning Tree"),
    "green": ("#d6efc4", INK, "green path end"),
    "bridge": ("#8b5a2b", "#ffffff", "Covered Bridge"),
}
ICHABOD, HORSEMAN = ("#fff6c8", INK), ("#111111", "#ffffff")
PUMPKIN, TOKEN = "#f28c28", "#cfcfcf"
TOKEN_LABEL = ("P1", "P2", "P3", "P4", "owl", "toad", "crow", "bat")
RIDE = ("no ride", "H +1", "H +2", "H +3", "H spd")
RIDE_WORDS = ("no ride", "Horseman +1", "Horseman +2", "Horseman +3", "Horseman at speed")


def card_words(card: int) -> str:
    """A card as players say it: ``4, Horseman +1`` (its top number, then its ride)."""
    return f"{C.top_of(card)}, {RIDE_WORDS[C.bottom_of(card)]}"


def action_words(rules: HeadlessHorsemanRules, state: State, action: int) -> str:
    """``action`` as a player says it."""
    if action == A.PLAY_TOP:
        return "play the top card of the draw pile"
    return f"play {card_words(action - A.PLAY)}"


def outcome_words(rules: HeadlessHorsemanRules, state: State) -> str:
    """The result in words, once the game is over: won or lost, and why."""
    if state.outcome > 0:
        return "The team wins: Ichabod escapes over the Covered Bridge"
    return "The team loses: four pumpkins, the Horseman catches Ichabod"


def mind_shown(rules: HeadlessHorsemanRules, state: State, actor: int, seat: int) -> bool:
    """Whether ``seat`` sees all that ``actor`` sees, so that what ``actor`` thinks may be shown
    to it: only its own mind (hands and choices are secret)."""
    return actor == seat


def _spaces(board: C.Board) -> dict[int, tuple[str, str]]:
    """Every space's kind and its short label."""
    kinds = {s: ("purple", "") for s in range(board.horseman_start, board.farm)}
    kinds.update({s: ("blank", "") for s in range(board.farm, board.bridge + 1)})
    for k, end in enumerate(board.green_path_end, 1):
        kinds[end] = ("green", f"g{k}")
    kinds.update({s: ("scare", "!") for s in board.scare_spaces})
    kinds.update({s: ("tree", "T") for s in board.tree_spaces})
    kinds.update({s: ("secret", f"S→{end}") for s, end in board.secret_paths})
    kinds[board.split_tree] = ("split", "Y")
    kinds[board.farm] = ("farm", "Farm")
    kinds[board.bridge] = ("bridge", "B")
    return kinds


def _card(d: Drawing, x: float, y: float, card: int, note: str = "") -> None:
    """A face-up card: its top number (Ichabod's move) in the top colour, its bottom (the
    Horseman's ride) below; ``data-card`` and the tooltip carry its name."""
    top, bottom = C.top_of(card), C.bottom_of(card)
    d.card(
        x,
        y,
        TOP_COLOURS[top - 1],
        str(top),
        RIDE[bottom],
        note,
        title=card_words(card),
        data_card=C.card_name(card),
    )


def _place(board: C.Board, space: int, y: float) -> tuple[float, float]:
    """The top left corner of ``space`` on a track drawn from ``y``."""
    row, col = divmod(space - board.horseman_start, PER_ROW)
    return 10 + col * STEP, y + row * (CELL + LANE + 6) + LANE


@lru_cache(maxsize=16)
def _cells(board: C.Board, y: float) -> Drawing:
    """The track's spaces in rows of :data:`PER_ROW`, from the Horseman's start to the bridge
    (the same for every frame of a board, so drawn once)."""
    d, kinds = Drawing(), _spaces(board)
    for space in range(board.horseman_start, board.bridge + 1):
        x, top = _place(board, space, y)
        kind, label = kinds[space]
        fill, ink, meaning = SPACE[kind]
        d.rect(x, top, CELL, CELL, fill, rx=4, title=f"space {space}: {meaning}")
        d.text(x + CELL / 2, top + 11, str(space), 9, ink, "middle")
        if label:
            d.text(x + CELL / 2, top + 27, label, 10 if len(label) > 2 else 12, ink, "middle", True)
    return d


def _track(d: Drawing, board: C.Board, state: State, y: float) -> float:
    """The track with Ichabod and the Horseman above their spaces; returns the bottom edge."""
    cells = _cells(board, y)
    d.parts.extend(cells.parts)
    d.width, d.height = max(d.width, cells.width), max(d.height, cells.height)
    for space, colours, letter in ((state.ichabod, ICHABOD, "I"), (state.horseman, HORSEMAN, "H")):
        x, top = _place(board, space, y)
        d.circle(x + CELL / 2, top - 11, 9, colours[0])
        d.text(x + CELL / 2, top - 7, letter, 11, colours[1], "middle", bold=True)
    rows = (board.bridge - board.horseman_start) // PER_ROW + 1
    return y + rows * (CELL + LANE + 6)


def _tokens(d: Drawing, rules: HeadlessHorsemanRules, state: State, y: float) -> None:
    """The eight Scare tokens: face up in the order flipped, then the face-down ones."""
    for i, token in enumerate(state.tokens):
        x = 26 + i * 38
        if i < state.flipped:
            d.circle(x, y, 16, PUMPKIN if token in C.PUMPKINS else TOKEN)
            d.text(x, y + 4, TOKEN_LABEL[token], 10, INK, "middle", bold=True)
        else:
            d.circle(x, y, 16, BACK, stroke="#c9b8e8")
            d.text(x, y + 5, "?", 13, "#c9b8e8", "middle", bold=True)
    pumpkins = rules.pumpkins_up(state)
    d.text(
        26 + len(state.tokens) * 38,
        y + 5,
        f"scares {state.flipped} of {len(state.tokens)} face up · pumpkins {pumpkins} of "
        f"{len(C.PUMPKINS)} (all four lose)",
        14,
        LIGHT,
        bold=True,
    )


def _row(d: Drawing, state: State, y: float) -> None:
    """The row (cards face up this turn), or the last flipped row; the piles; the events."""
    last = next((e[1] for e in reversed(state.log) if e[0] == "row"), ())
    if state.row:
        cards, what = state.row, "row: no match yet, everyone plays again"
    else:
        cards, what = last, "last row flipped (matched, now discarded)" if last else "row: empty"
    x, size = 10, len(state.draw_pile)
    with d.target([A.PLAY_TOP], "the draw pile: play its top card"):
        d.card(x, y + 20, BACK, face_down=True, title="draw pile: " + plural(size, "card"))
        d.text(x + CARD_W / 2, y + 96, f"draw {size}", 11, LIGHT, "middle")
    x += CARD_W + GAP
    d.rect(x, y + 20, CARD_W, CARD_H, "none", stroke=LIGHT, stroke_dasharray="4 3")
    d.text(x + CARD_W / 2, y + 55, str(len(state.discard)), 14, LIGHT, "middle", True)
    d.text(x + CARD_W / 2, y + 96, "discard", 11, LIGHT, "middle")
    x += CARD_W + 20
    d.text(x, y + 12, what, 12, LIGHT, bold=True)
    pitch = min(CARD_W + GAP, ROW_WIDTH / max(len(cards), 1))
    for i, card in enumerate(cards):
        _card(d, x + i * pitch, y + 20, card)
    x += ROW_WIDTH + 16
    d.text(x, y + 12, "last events", 12, LIGHT, bold=True)
    for i, event in enumerate(state.log[-6:]):
        d.text(x, y + 30 + i * 14, plain(event_text(event)), 11, LIGHT)


def _seat(
    d: Drawing, rules: HeadlessHorsemanRules, state: State, seat: int, viewer: int | None, x, y
) -> None:
    """One seat's panel: its name and hand size, its hand (face down unless the viewer may see
    it) and its choice in this play round (face down to the other seats)."""
    over = state.phase == Phase.OVER
    acting = not over and state.actor == seat
    hand, choice = state.hands[seat], state.pending.get(seat)
    shown = viewer is None or viewer == seat
    width = 16 + 4 * (CARD_W + GAP) + 10 + CARD_W
    stroke = {"stroke": HIGHLIGHT, "stroke_width": "3"} if acting else {"stroke": MUTED}
    d.rect(x, y, width, CARD_H + 48, PANEL, **stroke)
    tag = " · plays from the pile" if seat in rules.handless else ""
    d.text(x + 8, y + 17, seat_label(seat, viewer), 14, HIGHLIGHT if acting else LIGHT, bold=True)
    d.text(x + 84, y + 17, plural(len(hand), "card") + tag, 11, LIGHT)
    held = list(hand)
    if choice is not None and choice != A.PLAY_TOP:
        held.remove(choice)
    pitch = min(CARD_W + GAP, 4 * (CARD_W + GAP) / max(len(held), 1))
    for i, card in enumerate(sorted(held) if shown else held):
        cx = x + 8 + i * pitch
        if shown:
            with d.target([A.PLAY + card], "play " + card_words(card)):
                _card(d, cx, y + 26, card)
        else:
            d.card(cx, y + 26, BACK, face_down=True, title=f"a card in {seat_name(seat)}'s hand")
    cx = x + width - 8 - CARD_W
    if choice is None:
        d.rect(cx, y + 26, CARD_W, CARD_H, "none", stroke=LIGHT, stroke_dasharray="4 3")
        note = "to act" if acting else ("" if over else "to choose")
    elif choice == A.PLAY_TOP:
        d.card(cx, y + 26, BACK, face_down=True, title="the draw pile's top card")
        note = "pile's top"
    elif shown:
        _card(d, cx, y + 26, choice, "secret")
        note = "chosen"
    else:
        d.card(cx, y + 26, BACK, face_down=True, title=f"{seat_name(seat)}'s choice, face down")
        note = "chosen"
    d.text(cx + CARD_W / 2, y + CARD_H + 42, note, 11, HIGHLIGHT if acting else LIGHT, "middle")


SPACE_KEY = [(fill, meaning) for fill, _, meaning in SPACE.values()]
FIGURE_KEY = [
    (ICHABOD[0], "I Ichabod"),
    (HORSEMAN[0], "H Headless Horseman"),
    (PUMPKIN, "pumpkin token"),
    (TOKEN, "other token"),
    (BACK, "face down"),
    *zip(TOP_COLOURS, (f"top {t}" for t in range(1, 7)), strict=True),
]
# As wide as Drawing.legend draws the longer row
KEY_WIDTH = max(sum(28 + len(m) * 6.6 for _, m in key) for key in (SPACE_KEY, FIGURE_KEY))


def _legend(d: Drawing, y: float, speed: int) -> None:
    d.rect(4, y - 6, max(d.width - 4, KEY_WIDTH + 6), 58, PAPER, stroke=MUTED, rx=4)
    y = d.legend(10, d.legend(10, y, SPACE_KEY) + 8, FIGURE_KEY)
    d.text(
        10,
        y + 14,
        f"A card: its top number moves Ichabod when two row cards match (the lowest match); "
        f"H +n moves the Horseman n spaces, H spd {speed}.",
        11,
    )


def svg_table(rules: HeadlessHorsemanRules, state: State, seat: int | None) -> str:
    """The table as ``seat`` sees it (None: the whole table), as an SVG document."""
    board, d = rules.board, Drawing()
    over = state.phase == Phase.OVER
    status = "game over" if over else f"{seat_name(state.actor, seat)} to act"
    view = "whole table" if seat is None else f"{seat_name(seat)}'s view"
    d.text(
        10,
        18,
        f"Return of the Headless Horseman · turn {state.turns}, play round {state.rounds} · "
        f"{status} · {view}",
        15,
        LIGHT,
        bold=True,
    )
    y = 28.0
    if over:
        d.banner(10, y, PER_ROW * STEP - 3, outcome_words(rules, state))
        y += 36
    y = _track(d, board, state, y)
    behind = state.ichabod - state.horseman
    d.text(
        10,
        y + 12,
        f"Ichabod on {state.ichabod} of {board.bridge} · Horseman on {state.horseman} "
        f"({behind} behind) · Speed tile {rules.options.speed_tile}",
        13,
        LIGHT,
        bold=True,
    )
    _tokens(d, rules, state, y + 40)
    _row(d, state, y + 64)
    y += 182
    panel = 16 + 5 * (CARD_W + GAP) + 14
    for other in range(rules.num_players):
        _seat(d, rules, state, other, seat, 10 + other * panel, y)
    _legend(d, y + CARD_H + 60, rules.options.speed_tile)
    return d.svg()
