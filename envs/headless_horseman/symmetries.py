"""The relabelings of ``headless_horseman_v1`` (RULES.md, *Symmetries (Other-Play)*).

Every card has its own top and bottom numbers, so no card can be renamed; but the Scare tokens of
one kind are interchangeable: the rules only count the face-up pumpkins ("If all four Pumpkin
Scare tokens are ever face up ... the players lose") and no creature has an effect. A relabeling
permutes the four pumpkins among themselves and the four creatures among themselves, 4!·4! = 576
in all; it moves the observation's ``tokens_up`` and nothing else (actions and hands stay).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from itertools import permutations

import numpy as np

from cauldron.envs.core.layout import Layout
from cauldron.envs.core.symmetry import Symmetry, frozen, gather
from cauldron.envs.headless_horseman import actions as A
from cauldron.envs.headless_horseman import components as C
from cauldron.envs.headless_horseman.encoding import OBSERVATION_FIELDS
from cauldron.envs.headless_horseman.options import HeadlessHorsemanOptions

OBSERVATION = Layout(OBSERVATION_FIELDS)
PUMPKINS = sorted(C.PUMPKINS)
CREATURES = [t for t in range(len(C.TOKENS)) if t not in C.PUMPKINS]


def symmetries(num_players: int, options: HeadlessHorsemanOptions) -> list[Symmetry]:
    """The 576 permutations of the Scare tokens that keep each kind, the identity first; the
    same at every player count and option (none of them tells tokens of a kind apart)."""
    return list(_symmetries())


@functools.lru_cache(maxsize=1)
def _symmetries() -> tuple[Symmetry, ...]:
    return tuple(
        relabeling(pumpkins, creatures)
        for pumpkins in permutations(PUMPKINS)
        for creatures in permutations(CREATURES)
    )


def relabeling(pumpkins: Sequence[int], creatures: Sequence[int]) -> Symmetry:
    """The gather arrays of renaming pumpkin ``PUMPKINS[i]`` to ``pumpkins[i]`` and creature
    ``CREATURES[i]`` to ``creatures[i]``."""
    tokens = np.empty(len(C.TOKENS), dtype=np.int64)
    tokens[PUMPKINS + CREATURES] = [*pumpkins, *creatures]
    unchanged = [f.name for f in OBSERVATION.fields if f.name != "tokens_up"]
    observation = gather(OBSERVATION, {"tokens_up": [tokens]}, unchanged)
    if list(tokens) == list(range(len(C.TOKENS))):
        name = "identity"
    else:
        name = "tokens " + " ".join(
            f"{C.TOKENS[t]}->{C.TOKENS[tokens[t]]}" for t in range(len(C.TOKENS)) if tokens[t] != t
        )
    return frozen(name, observation, np.arange(A.NUM_ACTIONS), np.arange(C.NUM_CARDS))
