"""Generate the 91-card deck once (a default: the rulebook leaves it open) and write ``deck.json``.

    python -m cauldron.envs.voodoo_mania.make_deck   # writes the shipped file; the seed is fixed

Procedure: the 182 sides miss the 25 pairs in balance (18 pairs on 7 sides, 7 pairs on 8 sides,
the 7 drawn at random); the sides are shuffled into 91 cards whose two sides miss different pairs;
each side then shows the other four ingredients matched to the other four colours at random.
"""

from __future__ import annotations

import json

import numpy as np

from cauldron.envs.voodoo_mania.components import DECK_FILE, NUM_CARDS, NUM_PAIRS

SEED = 20130101


def generate(seed: int = SEED) -> list:
    """The deck as JSON-ready lists (see :mod:`cauldron.envs.voodoo_mania.components`)."""
    rng = np.random.default_rng(seed)
    heavy = set(rng.choice(NUM_PAIRS, 7, replace=False).tolist())
    missing = [p for p in range(NUM_PAIRS) for _ in range(8 if p in heavy else 7)]
    while True:
        order = rng.permutation(missing).tolist()
        firsts, seconds = order[:NUM_CARDS], order[NUM_CARDS:]
        if all(a != b for a, b in zip(firsts, seconds, strict=True)):
            break
    deck = []
    for pair_a, pair_b in zip(firsts, seconds, strict=True):
        deck.append([_side(pair_a, rng), _side(pair_b, rng)])
    return deck


def _side(missing: int, rng: np.random.Generator) -> list:
    ingredient, colour = divmod(missing, 5)
    others = [c for c in range(5) if c != colour]
    matched = rng.permutation(others).tolist()
    colours = []
    for i in range(5):
        colours.append(-1 if i == ingredient else matched.pop())
    return [missing, colours]


def dumps(deck: list) -> str:
    return "[\n" + ",\n".join(json.dumps(card) for card in deck) + "\n]\n"


if __name__ == "__main__":
    DECK_FILE.write_text(dumps(generate()))
    print(f"wrote {DECK_FILE}")
