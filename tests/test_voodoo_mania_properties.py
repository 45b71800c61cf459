"""Invariants of Voodoo Mania over random legal play."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.voodoo_mania import components as C
from envs.voodoo_mania.options import VoodooManiaOptions
from envs.voodoo_mania.rules import VoodooManiaRules

games = st.fixed_dictionaries(
    {
        "n": st.integers(2, 6),
        "seed": st.integers(0, 2**31 - 1),
        "cycle_anytime": st.booleans(),
        "max_ticks": st.sampled_from([50, 3000]),
    }
)


@settings(max_examples=40, deadline=None)
@given(games)
def test_cards_conserved_rounds_end_and_games_last_three_rounds(params):
    """Within a round the dealt cards (hands, own piles, Voodoo pile) stay the same set and the
    rest stay out; every round ends; a game lasts exactly three rounds unless truncated."""
    options = VoodooManiaOptions(
        cycle_anytime=params["cycle_anytime"], max_ticks=params["max_ticks"]
    )
    rules = VoodooManiaRules(params["n"], options)
    state = rules.new_game(np.random.default_rng(params["seed"]))
    rng = np.random.default_rng(params["seed"] + 1)
    dealt_count = 1 + params["n"] * C.CARDS_PER_PLAYER[params["n"]]
    for _ in range(5_000):
        dealt = [c for h in state.hands for c in h] + [c for p in state.piles for c in p]
        dealt += [c for c, _ in state.voodoo]
        assert len(dealt) == dealt_count
        assert sorted(dealt + state.out) == list(range(C.NUM_CARDS))
        assert all(len(h) <= C.HAND_SIZE for h in state.hands)
        if rules.is_over(state):
            break
        joint = []
        for seat in range(params["n"]):
            legal = np.flatnonzero(rules.legal_mask_for(state, seat))
            moves = legal[legal > 0] if len(legal) > 1 and rng.random() < 0.9 else legal
            joint.append(int(rng.choice(moves)))
        rules.apply_joint(state, joint)
    assert rules.is_over(state)
    if rules.is_truncated(state):
        assert state.tick == params["max_ticks"] and state.round < C.ROUNDS
    else:
        assert state.round == C.ROUNDS and state.tick <= params["max_ticks"]
