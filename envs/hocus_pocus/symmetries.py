"""The relabelings of ``hocus_pocus_v1`` (RULES.md, *Symmetries (Other-Play)*).

A relabeling renames the colours by a permutation π and the types by a permutation τ at once:
card ``(c, t, copy)`` becomes ``(π(c), τ(t), copy)``, the question about colour ``c`` (type
``t``) becomes the one about ``π(c)`` (``τ(t)``), and the space printed ``(c, t)`` becomes the
one printed ``(π(c), τ(t))``. The rules cannot tell the difference when the board, the Binx
cards and the Spell Book cards are mapped onto themselves: every other rule speaks of "one
colour", "one type" or "five colours", never of a particular one. With the default components
those (π, τ) are exactly the shifts ``c -> c + r``, ``t -> t + r`` (mod 5), r = 0..4. Seats,
Spells, Trick tokens and witches keep their names.

The one place the symmetry is not exact: *Book!* and *Boys, Boys* break ties among the tallest
piles by the lower space index, which a relabeling of the spaces does not preserve.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence
from itertools import permutations

import numpy as np

from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.layout import Field, Layout
from cauldron.envs.core.symmetry import Symmetry, frozen, gather, inverse
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.encoding import OBSERVATION_FIELDS
from cauldron.envs.hocus_pocus.options import HocusPocusOptions

CARD_FIELDS = (
    "binx_hand",
    "binx_set_aside",
    "discard_pile",
    "removed_cards",
    "hand",
    "set_aside",
    "handed_card",
    "received_card",
)
SPACE_CARD_FIELDS = ("pile_tops", "buried_cards")
SPACE_FIELDS = ("pile_sizes",)
SEAT_QUESTION_FIELDS = ("questions_asked", "answers_yes", "answers_no")
UNCHANGED_FIELDS = (
    "phase",
    "num_players",
    "turn_player",
    "actor",
    "hand_sizes",
    "binx_holder",
    "deck_size",
    "no_questions",
    "stunned",
    "sun",
    "tricks_used",
    "trick_this_turn",
    "spell_deck_size",
    "spells_discarded",
    "current_spell",
    "swap_partner",
    "discards_made",
    "burns_left",
    "handed_to",
    "received_from",
)
OBSERVATION = Layout(OBSERVATION_FIELDS)
# The action space as a layout of A.TABLE's ranges (first index, size, name, meaning).
ACTIONS = Layout([Field(name, size, meaning) for _, size, name, meaning in A.TABLE])
ACTION_NAME = {start: name for start, _, name, _ in A.TABLE}


def symmetries(num_players: int, options: HocusPocusOptions) -> list[Symmetry]:
    """The relabelings (π, τ) that map the board, the Binx cards and the Spell Book cards of
    ``options`` onto themselves, the identity first; a ``ConfigError`` naming ``other_play``
    when only the identity does. The same at every player count (the encodings are padded)."""
    return list(_symmetries(options.board, options.binx_cards, options.spell_book_cards))


@functools.lru_cache(maxsize=16)
def _symmetries(board: tuple, binx: tuple, book: tuple) -> tuple[Symmetry, ...]:
    found = []
    for colours in permutations(range(5)):
        for types in permutations(range(5)):
            spaces = space_images(board, colours, types)
            if spaces is not None and keeps(binx, colours, types) and keeps(book, colours, types):
                found.append(relabeling(colours, types, spaces))
    if len(found) == 1:
        raise ConfigError(
            "other_play: hocus_pocus_v1 has no symmetries: no renaming of the colours and the "
            "types maps these options' board, binx_cards and spell_book_cards onto themselves"
        )
    return tuple(found)


def keeps(pairs: tuple, colours: Sequence[int], types: Sequence[int]) -> bool:
    """Whether renaming colours and types maps the set of (colour, type) ``pairs`` onto itself."""
    given = {tuple(p) for p in pairs}
    return {(colours[c], types[t]) for c, t in given} == given


def space_images(board: tuple, colours: Sequence[int], types: Sequence[int]) -> list[int] | None:
    """Where each space goes: the space printed with the renamed pair of its own (the k-th space
    printed with a pair goes to the k-th printed with its image); ``None`` when the renamed board
    is not the board."""
    printed = defaultdict(list)
    for space, (c, t) in enumerate(board):
        printed[(c, t)].append(space)
    taken: dict[tuple[int, int], int] = defaultdict(int)
    images = []
    for c, t in board:
        target = (colours[c], types[t])
        if taken[target] == len(printed[target]):
            return None
        images.append(printed[target][taken[target]])
        taken[target] += 1
    return images


def relabeling(colours: Sequence[int], types: Sequence[int], spaces: Sequence[int]) -> Symmetry:
    """The gather arrays of renaming colour ``c`` to ``colours[c]``, type ``t`` to ``types[t]``
    and space ``s`` to ``spaces[s]``."""
    cards = np.arange(C.NUM_CARDS)
    colour, kind, copy = cards // 10, (cards // 2) % 5, cards % 2
    card = (np.asarray(colours)[colour] * 5 + np.asarray(types)[kind]) * 2 + copy
    questions = [*colours, *(5 + t for t in types)]
    seats = range(C.MAX_PLAYERS)
    observation = gather(
        OBSERVATION,
        {
            **{name: [card] for name in CARD_FIELDS},
            **{name: [spaces, card] for name in SPACE_CARD_FIELDS},
            **{name: [spaces] for name in SPACE_FIELDS},
            **{name: [seats, questions] for name in SEAT_QUESTION_FIELDS},
        },
        UNCHANGED_FIELDS,
    )
    relabelled = {A.ASK: [colours], A.ASK + 5: [types], A.PLAY: [card, spaces], A.CHOOSE: [card]}
    action = gather(
        ACTIONS,
        {ACTION_NAME[start]: axes for start, axes in relabelled.items()},
        [name for start, name in ACTION_NAME.items() if start not in relabelled],
    )
    return frozen(name_of(colours, types), observation, action, inverse(card))


def name_of(colours: Sequence[int], types: Sequence[int]) -> str:
    """``identity``, ``shift r`` (colours and types both + r), or the images of both."""
    colours, types = tuple(colours), tuple(types)
    if colours == types and all((colours[0] + c) % 5 == colours[c] for c in range(5)):
        return "identity" if colours[0] == 0 else f"shift {colours[0]}"
    return f"colours {''.join(map(str, colours))} types {''.join(map(str, types))}"
