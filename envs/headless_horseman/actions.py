"""The action space of ``headless_horseman_v1``: ``Discrete(31)``."""

from __future__ import annotations

from cauldron.envs.headless_horseman import components as C

PLAY = 0  # 0–29: play card k from hand
PLAY_TOP = C.NUM_CARDS  # 30: play the top card of the draw pile (Less Strategy seats only)
NUM_ACTIONS = PLAY_TOP + 1

TABLE = (
    (PLAY, C.NUM_CARDS, "play card k", "Play card `k = (top − 1) · 5 + bottom` from the hand."),
    (PLAY_TOP, 1, "play the top card", "Less Strategy seats: play the draw pile's top card."),
)


def action_name(action: int) -> str:
    if action == PLAY_TOP:
        return "play the top card of the draw pile"
    if 0 <= action < C.NUM_CARDS:
        return f"play {C.card_name(action)}"
    raise ValueError(f"action {action} is outside 0..{NUM_ACTIONS - 1}")
