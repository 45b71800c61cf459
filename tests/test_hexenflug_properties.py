"""Invariants of Hexenflug over random legal play (hypothesis draws seeds, counts and options)."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cauldron.envs.hexenflug import components as C
from cauldron.envs.hexenflug.options import HexenflugOptions
from cauldron.envs.hexenflug.rules import HexenflugRules

games = st.fixed_dictionaries(
    {
        "n": st.integers(2, 5),
        "seed": st.integers(0, 2**31 - 1),
        "beginner": st.booleans(),
        "books": st.sampled_from([0, 1, 3, 9]),
    }
)


def _setup(params):
    options = HexenflugOptions(
        beginner_crash_rule=params["beginner"], books_per_colour=params["books"]
    )
    rules = HexenflugRules(params["n"], options)
    state = rules.new_game(np.random.default_rng(params["seed"]), 0)
    return rules, state, np.random.default_rng(params["seed"] + 1)


def _witch_cards(state) -> list[int]:
    cards = [c for h in state.hands for c in h] + state.display + state.draw_pile + state.discard
    cards += [c for lay in state.layouts for row in lay for c in row]
    return sorted(cards + ([state.drawn] if state.drawn >= 0 else []))


@settings(max_examples=50, deadline=None)
@given(games)
def test_cards_and_books_conserved_layouts_ascending_and_games_end(params):
    """The 75 Witch cards and 45 Spellbooks are always all accounted for, every layout row is
    one colour in strictly ascending values, and every game ends."""
    rules, state, rng = _setup(params)
    for _ in range(20_000):
        assert _witch_cards(state) == list(range(C.NUM_CARDS))
        owned = sum(map(sum, state.books))
        assert sum(state.supply) + owned + state.removed_books == C.TOTAL_BOOKS
        for layout in state.layouts:
            for colour, row in enumerate(layout):
                assert all(C.colour_of(c) == colour for c in row)
                values = [C.value_of(c) for c in row]
                assert values == sorted(set(values))
        if rules.is_over(state):
            break
        mask = rules.legal_mask(state)
        assert mask.any(), f"no legal action in phase {state.phase.name}"
        rules.apply(state, int(rng.choice(np.flatnonzero(mask))))
    assert rules.is_over(state)


@settings(max_examples=30, deadline=None)
@given(games)
def test_every_unmasked_action_is_accepted(params):
    rules, state, rng = _setup(params)
    for _ in range(400):
        if rules.is_over(state):
            break
        legal = np.flatnonzero(rules.legal_mask(state))
        for action in rng.choice(legal, min(4, len(legal)), replace=False):
            rules.apply(copy.deepcopy(state), int(action))
        rules.apply(state, int(rng.choice(legal)))
