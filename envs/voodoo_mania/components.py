"""Voodoo Mania components as data (defaults where the rulebook leaves them open).

A *pair* is an (ingredient, colour) combination numbered ``ingredient * 5 + colour``. Each of the
91 cards has two sides; a side shows four pairs (each ingredient once, each colour once) and
misses one pair. The deck is generated once by :mod:`cauldron.envs.voodoo_mania.make_deck` and
shipped as ``deck.json``, one line per card: ``[[missing, [colour of ingredient 0..4, or -1]], <side
1>]``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

INGREDIENTS = ("Voodoo doll", "mask", "magic potion", "amulet", "top hat")
COLOURS = ("red", "yellow", "green", "blue", "purple")
NUM_PAIRS = 25
NUM_CARDS = 91
HAND_SIZE = 3
MAX_PLAYERS = 6
ROUNDS = 3
# Setup: cards dealt to each player's own pile (one more card starts the Voodoo pile).
CARDS_PER_PLAYER = {2: 45, 3: 30, 4: 22, 5: 18, 6: 15}
DECK_FILE = Path(__file__).with_name("deck.json")


@dataclass(frozen=True)
class Side:
    """One side of a card: the missing pair and the four pairs it shows."""

    missing: int
    shows: frozenset[int]


@cache
def load_deck(path: Path = DECK_FILE) -> tuple[tuple[Side, Side], ...]:
    """The shipped deck: one (side 0, side 1) tuple per card."""
    cards = []
    for card in json.loads(path.read_text()):
        sides = []
        for missing, colours in card:
            shows = frozenset(i * 5 + c for i, c in enumerate(colours) if c >= 0)
            sides.append(Side(missing, shows))
        cards.append(tuple(sides))
    return tuple(cards)


def pair_name(pair: int) -> str:
    return f"{COLOURS[pair % 5]} {INGREDIENTS[pair // 5]}"
