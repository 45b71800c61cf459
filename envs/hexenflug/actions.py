"""The flat action space of ``hexenflug_v1`` (167 actions, the same for every player count)."""

from __future__ import annotations

from cauldron.envs.hexenflug import components as C

TAKE = 0  # 0–74: take card k from the display into the layout
DRAW = C.NUM_CARDS  # 75
PLACE = DRAW + 1  # 76: place the drawn card in the layout
DISPLAY = PLACE + 1  # 77: add the drawn card to the display
CRASH = DISPLAY + 1  # 78
CRASH_KEEP = CRASH + 1  # 79: crash keeping the drawn card (beginner rule)
LAND = CRASH_KEEP + 1  # 80–84: land with colour c
EXAMINE = LAND + C.NUM_COLOURS  # 85–89: examine colour c
SKIP = EXAMINE + C.NUM_COLOURS  # 90: no examination
CHOOSE = SKIP + 1  # 91–165: choose card k (examination or black-cat discard)
FINISH = CHOOSE + C.NUM_CARDS  # 166: complete the examination
NUM_ACTIONS = FINISH + 1

TABLE = (
    (TAKE, C.NUM_CARDS, "take card k", "Take display card k into the layout (phase `fly`)."),
    (DRAW, 1, "draw", "Draw the top card of the draw pile (phase `fly`)."),
    (PLACE, 1, "place", "Place the drawn card in its layout row (phase `drawn`)."),
    (DISPLAY, 1, "display", "Add the drawn card to the display, once per turn."),
    (CRASH, 1, "crash", "Only when already displayed and the card cannot be placed."),
    (CRASH_KEEP, 1, "crash, keep card", "Crash keeping the drawn card (beginner rule)."),
    (LAND, C.NUM_COLOURS, "land with colour c", "Soft: any layout colour; hard: a smallest."),
    (EXAMINE, C.NUM_COLOURS, "examine colour c", "Start an examination (phase `examine`)."),
    (SKIP, 1, "skip examination", "End the turn without examining."),
    (CHOOSE, C.NUM_CARDS, "choose card k", "Examination card or joker k, or a black-cat discard."),
    (FINISH, 1, "finish examination", "Discard the chosen 3–5 cards and take Spellbooks."),
)


def action_name(action: int) -> str:
    """A readable name for ``action``."""
    if action < DRAW:
        return f"take {C.card_name(action - TAKE)}"
    if LAND <= action < EXAMINE:
        return f"land with {C.COLOURS[action - LAND]}"
    if EXAMINE <= action < SKIP:
        return f"examine {C.COLOURS[action - EXAMINE]}"
    if CHOOSE <= action < FINISH:
        return f"choose {C.card_name(action - CHOOSE)}"
    names = {
        DRAW: "draw",
        PLACE: "place",
        DISPLAY: "display",
        CRASH: "crash",
        CRASH_KEEP: "crash, keep card",
        SKIP: "skip examination",
        FINISH: "finish examination",
    }
    if action in names:
        return names[action]
    raise ValueError(f"action {action} is outside 0..{NUM_ACTIONS - 1}")
