"""The action space of ``voodoo_mania_v1``: ``Discrete(10)``, chosen every tick."""

from __future__ import annotations

WAIT = 0
PLAY = 1  # 1–6: play hand slot k with side s up: 1 + 2k + s
CYCLE = 7  # 7–9: slide hand slot k under the own pile and take the pile's top card
NUM_ACTIONS = 10

TABLE = (
    (WAIT, 1, "wait", "Do nothing this tick."),
    (
        PLAY,
        6,
        "play slot k, side s",
        "Index `1 + 2k + s`: lay hand card k on the Voodoo pile with "
        "side s up; normal if side s shows the wanted pair, Voodoo! if it misses it.",
    ),
    (
        CYCLE,
        3,
        "cycle slot k",
        "Index `7 + k`: slide hand card k under the own pile, take the "
        "pile's top card (only with no playable card unless `cycle_anytime`).",
    ),
)


def action_name(action: int) -> str:
    if action == WAIT:
        return "wait"
    if PLAY <= action < CYCLE:
        slot, side = divmod(action - PLAY, 2)
        return f"play slot {slot} side {side}"
    if CYCLE <= action < NUM_ACTIONS:
        return f"cycle slot {action - CYCLE}"
    raise ValueError(f"action {action} is outside 0..{NUM_ACTIONS - 1}")
