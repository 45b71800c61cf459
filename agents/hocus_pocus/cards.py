"""What the Hocus Pocus heuristics share: the observation layout and card tables.

Questions are numbered as in the observation: 0–4 the colours, 5–9 the types, so a card's two
attributes are ``ATTRIBUTES[card] = (colour question, type question)``. The tables assume the
default components (``components.py``): which cards show the Spell Book, and the colour and type
printed on each Cauldron space.
"""

from __future__ import annotations

import numpy as np

from cauldron.envs.core.layout import Layout
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.encoding import OBSERVATION_FIELDS

LAYOUT = Layout(OBSERVATION_FIELDS)
CARDS = np.arange(C.NUM_CARDS)
# ATTRIBUTES[card] = (colour question, type question) in the 0..9 question numbering.
ATTRIBUTES = np.stack([CARDS // 10, 5 + (CARDS // 2) % 5], axis=1)
COLOUR, KIND = ATTRIBUTES[:, 0], ATTRIBUTES[:, 1]  # per card, its colour and its type question
# HAS[card, question]: the card has that colour or type.
HAS = np.zeros((C.NUM_CARDS, 10), bool)
HAS[CARDS[:, None], ATTRIBUTES] = True
IS_SPELL_BOOK = np.zeros(C.NUM_CARDS, bool)
for _colour, _kind in C.DEFAULT_SPELL_BOOK:
    IS_SPELL_BOOK[(_colour * 5 + _kind) * 2] = True
CAULDRON_SPELLS = {
    C.SPELL_NAMES.index(s) for s in ("Dance Until You Die", "Take Flight", "Book!", "Boys, Boys")
}
EMPTY = C.NUM_CARDS  # top index of empty space s is EMPTY + s
# TOP_HAS[top, question]: a top (card 0..49; 50..54 an empty space, which shares nothing) has it.
TOP_HAS = np.concatenate([HAS, np.zeros((C.NUM_SPACES, 10), bool)])
# FITS[top, card]: the card may be played onto that top (same colour or type; an empty space
# takes its printed colour or type).
_top_colour = np.concatenate([CARDS // 10, [c for c, _ in C.DEFAULT_BOARD]])
_top_type = np.concatenate([(CARDS // 2) % 5, [t for _, t in C.DEFAULT_BOARD]])
FITS = (_top_colour[:, None] == CARDS // 10) | (_top_type[:, None] == (CARDS // 2) % 5)
# KEYS[top, question, card]: the cards of that colour or type that may go onto that top.
KEYS = FITS[:, None, :] & HAS.T[None, :, :]


def top_cards(observation: np.ndarray) -> np.ndarray:
    """The top of each Cauldron space: its card id, or ``EMPTY + space`` for an empty space."""
    tops = observation[LAYOUT["pile_tops"]].reshape(C.NUM_SPACES, C.NUM_CARDS)
    return np.where(tops.any(1), tops.argmax(1), EMPTY + np.arange(C.NUM_SPACES))
