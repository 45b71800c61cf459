"""Hexenflug components as data (defaults where the rulebook leaves them open).

Witch cards are numbered ``0..74``: ``card = colour * 15 + (value - 1)``; each 15 shows a black cat.
"""

from __future__ import annotations

COLOURS = ("black", "green", "orange", "pink", "white")
NUM_COLOURS = 5
MAX_VALUE = 15
NUM_CARDS = NUM_COLOURS * MAX_VALUE
MAX_PLAYERS = 5
BLACK_CAT_VALUE = 15
TOTAL_BOOKS = 45
# Setup: Spellbooks per colour in play (2 players: remove two of each, 3 players: one).
BOOKS_PER_COLOUR = {2: 7, 3: 8, 4: 9, 5: 9}
# Examination: cards discarded -> Spellbooks earned.
BOOKS_FOR_CARDS = {3: 1, 4: 2, 5: 3}
HAND_LIMIT_ON_CAT = 5  # Black Cat Cards: players with six or more discard down to five


def colour_of(card: int) -> int:
    return card // MAX_VALUE


def value_of(card: int) -> int:
    return card % MAX_VALUE + 1


def card_name(card: int) -> str:
    return f"{COLOURS[colour_of(card)]} {value_of(card)}"


def exhausted_colours_to_end(num_players: int) -> int:
    """End of the Game: 2 exhausted colours end a 2–3 player game, 3 a 4–5 player game."""
    return 2 if num_players <= 3 else 3
