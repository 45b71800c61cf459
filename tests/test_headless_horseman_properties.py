"""Invariants of the Headless Horseman over random legal play."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cauldron.envs.headless_horseman import components as C
from cauldron.envs.headless_horseman.encoding import Encoder
from cauldron.envs.headless_horseman.options import HeadlessHorsemanOptions
from cauldron.envs.headless_horseman.rules import HeadlessHorsemanRules

games = st.fixed_dictionaries(
    {
        "n": st.integers(2, 4),
        "seed": st.integers(0, 2**31 - 1),
        "speed": st.sampled_from([2, 4]),
        "handless": st.sampled_from([(), (0,), (1,)]),
        "reshuffle": st.booleans(),
    }
)


@settings(max_examples=80, deadline=None)
@given(games)
def test_cards_conserved_ichabod_ahead_and_games_end(params):
    """The 30 cards are always all accounted for; after every turn Ichabod is ahead of the
    Horseman; every game ends within `bridge` turns (Ichabod moves forward every turn)."""
    options = HeadlessHorsemanOptions(
        speed_tile=params["speed"],
        handless_seats=params["handless"],
        reshuffle=params["reshuffle"],
    )
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


def _random(legal: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(legal))


def _lowest(legal: np.ndarray, rng: np.random.Generator) -> int:
    return int(legal[0])


def _highest(legal: np.ndarray, rng: np.random.Generator) -> int:
    return int(legal[-1])


OPTION_SETS = [
    {},
    {"speed_tile": 4},
    {"handless_seats": (0,)},
    {"handless_seats": (0, 1)},
    {"reshuffle": True, "speed_tile": 4},
]


TABLES = [
    (n, options)
    for n in (2, 3, 4)
    for options in OPTION_SETS
    if all(s < n for s in options.get("handless_seats", ()))
]


@pytest.mark.parametrize("policy", [_random, _lowest, _highest])
@pytest.mark.parametrize("n, options", TABLES, ids=str)
def test_observations_and_state_stay_in_their_box(n, policy, options):
    """Every seat's observation and ``state()`` lies in Box(0, 1) after every AEC step of whole
    games (random play, and degenerate play that always picks the lowest or highest legal
    card), at every player count and option, with at most one 1 in every one-hot field."""
    rules = HeadlessHorsemanRules(n, HeadlessHorsemanOptions(**options))
    encoder = Encoder(rules)
    one_hot = ("ichabod", "horseman")
    rng = np.random.default_rng(n)
    for seed in range(3):
        state = rules.new_game(np.random.default_rng(seed))
        while True:
            vectors = [encoder.observe(state, seat) for seat in range(n)]
            vectors.append(encoder.encode_state(state))
            for vector in vectors:
                assert vector.min() >= 0.0 and vector.max() <= 1.0, (state.ichabod, state.rounds)
                assert all(vector[encoder.state_layout[f]].sum() == 1 for f in one_hot)
            if rules.is_over(state):
                break
            rules.apply(state, policy(np.flatnonzero(rules.legal_mask(state)), rng))
