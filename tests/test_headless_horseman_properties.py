"""Invariants of the Headless Horseman over random legal play."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.headless_horseman import components as C
from envs.headless_horseman.options import HeadlessHorsemanOptions
from envs.headless_horseman.rules import HeadlessHorsemanRules

games = st.fixed_dictionaries(
    {
        "n": st.integers(2, 4),
        "seed": st.integers(0, 2**31 - 1),
        "speed": st.sampled_from([2, 4]),
        "handless": st.sampled_from([(), (0,), (1,)]),
    }
)


@settings(max_examples=80, deadline=None)
@given(games)
def test_cards_conserved_ichabod_ahead_and_games_end(params):
    """The 30 cards are always all accounted for; after every turn Ichabod is ahead of the
    Horseman; every game ends within `bridge` turns (Ichabod moves forward every turn)."""
    options = HeadlessHorsemanOptions(speed_tile=params["speed"], handless_seats=params["handless"])
    rules = HeadlessHorsemanRules(params["n"], options)
    state = rules.new_game(np.random.default_rng(params["seed"]))
    rng = np.random.default_rng(params["seed"] + 1)
    for _ in range(2_000):
        cards = [c for h in state.hands for c in h] + state.draw_pile + state.discard + state.row
        assert sorted(cards) == list(range(C.NUM_CARDS))
        if rules.is_over(state):
            break
        turn = state.turns
        joint = [
            int(rng.choice(np.flatnonzero(rules.legal_mask_for(state, s))))
            for s in range(params["n"])
        ]
        before = state.ichabod
        rules.apply_joint(state, joint)
        assert state.ichabod >= before
        if state.turns > turn or rules.is_over(state):
            assert state.horseman < state.ichabod
    assert rules.is_over(state) and state.turns <= rules.board.bridge
