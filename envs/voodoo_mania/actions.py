"""The action space of ``voodoo_mania_v1``: ``Discrete(10)``, chosen every tick.

An action refers to a hand slot; given the game's state its name says the card in that slot by
its faces (:func:`face_action_name`): a side by the pair it misses, ``no purple top hat``.
"""

from __future__ import annotations

from collections.abc import Sequence

from cauldron.envs.voodoo_mania import components as C

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
        "side s up; normal if side s shows the wanted pair, Voodoo! if it misses it. "
        "Named in play by the card's faces: `play no red mask (other side no blue amulet)`.",
    ),
    (
        CYCLE,
        3,
        "cycle slot k",
        "Index `7 + k`: slide hand card k under the own pile, take the "
        "pile's top card (only with no playable card unless `cycle_anytime`). Also "
        "named in play by the card's faces: `cycle no red mask / no blue amulet`.",
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


def side_name(deck: tuple, card: int, side: int) -> str:
    """A side of a card by the pair it misses: ``no purple top hat``."""
    return f"no {C.pair_name(deck[card][side].missing)}"


def face_action_name(deck: tuple, hand: Sequence[int], wanted: int, action: int) -> str:
    """``action`` of a seat holding ``hand`` (card indices into ``deck``) while ``wanted`` is the
    wanted pair, its hand card named by the pairs its sides miss: ``play no purple top hat
    (other side no red mask)``, with ``: Voodoo!`` when that side misses the wanted pair;
    ``cycle no purple top hat / no red mask``. An empty slot keeps the slot's name."""
    if PLAY <= action < CYCLE:
        slot, side = divmod(action - PLAY, 2)
        if slot >= len(hand):
            return action_name(action)
        card = hand[slot]
        up, down = side_name(deck, card, side), side_name(deck, card, 1 - side)
        shout = ": Voodoo!" if deck[card][side].missing == wanted else ""
        return f"play {up} (other side {down}){shout}"
    if CYCLE <= action < NUM_ACTIONS and action - CYCLE < len(hand):
        card = hand[action - CYCLE]
        return f"cycle {side_name(deck, card, 0)} / {side_name(deck, card, 1)}"
    return action_name(action)
