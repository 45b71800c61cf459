"""Build Hocus Pocus states by hand for scenario tests."""

from __future__ import annotations

import numpy as np

from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.options import HocusPocusOptions
from cauldron.envs.hocus_pocus.phases import Phase
from cauldron.envs.hocus_pocus.rules import HocusPocusRules, State


def card(colour: str, kind: str, copy: int = 1) -> int:
    """Card id of a (colour, type) copy; copy 1 never carries an icon."""
    return (C.COLOURS.index(colour) * 5 + C.TYPES.index(kind)) * 2 + copy


def play(c: int, space: int) -> int:
    return A.PLAY + 5 * c + space


def choose(c: int) -> int:
    return A.CHOOSE + c


def table(
    n: int = 3,
    hands: list[list[int]] | None = None,
    piles: list[list[int]] | None = None,
    deck: list[int] | None = None,
    spells: list[str] | None = None,
    turn: int = 0,
    phase: Phase = Phase.ACT,
    **options,
) -> tuple[HocusPocusRules, State]:
    """Rules and a state with exactly these hands, piles and deck (top = last); every other card is
    out of the game. ``spells`` lists the Spell deck from bottom to top (default: one Another
    Glorious Morning...)."""
    rules = HocusPocusRules(n, HocusPocusOptions(**options))
    state = rules.new_game(np.random.default_rng(0), turn)
    state.hands = [list(h) for h in (hands or [[] for _ in range(n)])]
    state.piles = [list(p) for p in (piles or [[] for _ in range(C.NUM_SPACES)])]
    state.deck = list(deck or [])
    placed = {c for h in state.hands for c in h} | {c for p in state.piles for c in p}
    placed |= set(state.deck)
    state.removed = [c for c in range(C.NUM_CARDS) if c not in placed]
    if spells is not None:
        state.spell_deck = [rules.spell_names.index(s) for s in spells]
    state.turn = state.actor = turn
    state.phase = phase
    return rules, state


def all_cards(state: State) -> list[int]:
    """Every Ingredient card wherever it lies (set-aside cards are still in hands)."""
    cards = [c for h in state.hands for c in h] + [c for p in state.piles for c in p]
    return sorted(cards + state.deck + state.discard + state.removed)


def legal(rules: HocusPocusRules, state: State) -> set[int]:
    return set(np.flatnonzero(rules.legal_mask(state)).tolist())
