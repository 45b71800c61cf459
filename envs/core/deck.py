"""Deck helpers. The top of a deck is the end of its list; shuffles take an explicit generator."""

from __future__ import annotations

import numpy as np


def shuffled(cards: list[int], rng: np.random.Generator) -> list[int]:
    """A new list holding ``cards`` in an order drawn from ``rng``."""
    return [cards[i] for i in rng.permutation(len(cards))]


def draw(deck: list[int], count: int) -> list[int]:
    """Remove and return up to ``count`` cards from the top of ``deck`` (fewer if it runs out)."""
    taken = deck[len(deck) - count :] if count <= len(deck) else deck[:]
    del deck[len(deck) - len(taken) :]
    taken.reverse()
    return taken
