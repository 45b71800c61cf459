"""Hocus Pocus components as data (defaults where the rulebook leaves them open).

Cards are numbered ``0..49``: ``card = (colour * 5 + type) * 2 + copy``. Colours and types are
numbered in the orders below. Which cards carry an icon, the board and the spell deck are options
(see :class:`~cauldron.envs.hocus_pocus.options.HocusPocusOptions`) whose defaults live here.
"""

from __future__ import annotations

COLOURS = ("orange", "purple", "yellow", "green", "blue")
TYPES = ("Dead Man's Toe", "Dash of Pox", "Thine Own Tongue", "Newt Saliva", "Oil of Boil")
NUM_CARDS = 50
NUM_SPACES = 5
MAX_PLAYERS = 6

WITCHES = ("Sarah", "Mary", "Winifred")
SARAH, MARY, WINIFRED, ALL_THREE = 0, 1, 2, 3

# (colour, type) printed on the five Cauldron spaces, in space order.
DEFAULT_BOARD = ((4, 4), (0, 0), (1, 1), (2, 2), (3, 3))
# The first copy of these (colour, type) pairs shows Binx / the Spell Book.
DEFAULT_BINX = tuple((c, (c + 1) % 5) for c in range(5))
DEFAULT_SPELL_BOOK = tuple((c, (c + k) % 5) for c in range(5) for k in (2, 3))

# Spell name -> caster. The effect of each name is implemented in rules.py.
SPELL_CASTERS = {
    "Dance Until You Die": WINIFRED,
    "Amok Amok Amok": WINIFRED,
    "I Put a Spell on You": WINIFRED,
    "Book!": WINIFRED,
    "I Smell Children": MARY,
    "Sistahs!": MARY,
    "Hello, Binx": MARY,
    "Oh, Look!": MARY,
    "Come Little Children": SARAH,
    "Another Glorious Morning": SARAH,
    "Boys, Boys": SARAH,
    "Fly, My Pretty": SARAH,
    "Take Flight": ALL_THREE,
}
SPELL_NAMES = tuple(SPELL_CASTERS)
DEFAULT_SPELL_DECK = SPELL_NAMES

TRICKS = ("Circle of Salt", "Daylight Savings Time", "Billy Butcherson", "Burning Rain of Death")
SALT, DAYLIGHT, BILLY, BURNING_RAIN = range(4)


def hand_size(num_players: int) -> int:
    """Cards dealt to each player (Setup): 4 with 2–3 players, 3 with 4–6."""
    return 4 if num_players <= 3 else 3


def colour_of(card: int) -> int:
    return card // 10


def type_of(card: int) -> int:
    return (card // 2) % 5


def card_name(card: int) -> str:
    return f"{COLOURS[colour_of(card)]} {TYPES[type_of(card)]}#{card % 2}"
