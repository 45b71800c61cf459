"""Invariants of Hocus Pocus over random legal play (hypothesis draws seeds, player counts and
options)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.encoding import Encoder
from cauldron.envs.hocus_pocus.options import HocusPocusOptions
from cauldron.envs.hocus_pocus.phases import Phase
from cauldron.envs.hocus_pocus.rules import HocusPocusRules
from tests.hocus_pocus_helpers import all_cards

MAX_STEPS = 5_000

games = st.fixed_dictionaries(
    {
        "n": st.integers(2, 6),
        "seed": st.integers(0, 2**31 - 1),
        "salt_immune": st.booleans(),
        "spells": st.lists(st.sampled_from(C.SPELL_NAMES), min_size=1, max_size=13)
        | st.just(C.SPELL_NAMES),
    }
)


def _random_game(params):
    options = HocusPocusOptions(
        spell_deck=tuple(params["spells"]), take_flight_ignores_salt=params["salt_immune"]
    )
    rules = HocusPocusRules(params["n"], options)
    rng = np.random.default_rng(params["seed"])
    state = rules.new_game(np.random.default_rng(params["seed"] + 1), 0)
    return rules, state, rng


@settings(max_examples=60, deadline=None)
@given(games)
def test_cards_are_never_created_or_lost_and_games_end(params):
    """The 50 Ingredient cards are always in exactly one place (hands, deck, Cauldron, discard,
    removed) and the Spell cards likewise; every game ends, won or lost."""
    rules, state, rng = _random_game(params)
    spell_count = len(params["spells"])
    for _ in range(MAX_STEPS):
        assert all_cards(state) == list(range(C.NUM_CARDS))
        in_play = [state.spell] if state.spell >= 0 else []
        assert len(state.spell_deck) + len(state.spell_discard) + len(in_play) == spell_count
        if rules.is_over(state):
            break
        mask = rules.legal_mask(state)
        assert mask.any(), f"no legal action in phase {state.phase.name}"
        rules.apply(state, int(rng.choice(np.flatnonzero(mask))))
    assert rules.is_over(state) and state.outcome in (-1, 1)
    assert state.sun == state.stuns <= rules.options.sunrise_steps


@settings(max_examples=40, deadline=None)
@given(games)
def test_every_unmasked_action_is_accepted_and_only_the_actor_has_choices(params):
    """Every unmasked action applies without error on a copy of the state, and the acting seat is
    the one whose hand the mask talks about in card-choosing phases."""
    import copy

    rules, state, rng = _random_game(params)
    for _ in range(300):
        if rules.is_over(state):
            break
        mask = rules.legal_mask(state)
        for action in rng.choice(np.flatnonzero(mask), min(4, int(mask.sum())), replace=False):
            rules.apply(copy.deepcopy(state), int(action))
        if state.phase in (Phase.DISCARD, Phase.SPELL_DISCARD, Phase.SPELL_PASS, Phase.BURN):
            chosen = {a - 260 for a in np.flatnonzero(mask) if 260 <= a < 310}
            assert chosen <= set(state.hands[state.actor])
        rules.apply(state, int(rng.choice(np.flatnonzero(mask))))


@settings(max_examples=30, deadline=None)
@given(games)
def test_observations_stay_in_bounds_and_state_encodes_every_hand(params):
    rules, state, rng = _random_game(params)
    layout = Encoder(rules).state_layout
    for _ in range(200):
        if rules.is_over(state):
            break
        for seat in range(params["n"]):
            obs = Encoder(rules).observe(state, seat)
            assert obs.min() >= 0.0 and obs.max() <= 1.0
            hand = np.flatnonzero(obs[Encoder(rules).observation_layout["hand"]])
            assert sorted(hand) == sorted(state.hands[seat])
        full = Encoder(rules).encode_state(state)
        assert full.min() >= 0.0 and full.max() <= 1.0
        hands = full[layout["hands"]].reshape(6, 50)
        assert all(
            sorted(np.flatnonzero(hands[s])) == sorted(state.hands[s]) for s in range(params["n"])
        )
        mask = rules.legal_mask(state)
        rules.apply(state, int(rng.choice(np.flatnonzero(mask))))


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("pick", [0, -1, None], ids=["lowest", "highest", "random"])
@pytest.mark.parametrize(
    "options",
    [{}, {"spell_deck": ("Take Flight",) * 3 + ("Oh, Look!",) * 2, "sunrise_steps": 5}],
    ids=["default", "repeats"],
)
def test_every_field_stays_in_its_box_over_whole_games(n, pick, options):
    """Every observation and ``state()`` lies in Box(0, 1) over whole games played by random and
    degenerate (always the lowest or the highest legal action) teams, at every player count."""
    rules = HocusPocusRules(n, HocusPocusOptions(**options))
    encoder = Encoder(rules)
    rng = np.random.default_rng(n)
    for seed in range(3):
        state = rules.new_game(np.random.default_rng(seed), 0)
        for _ in range(MAX_STEPS):
            vectors = [encoder.observe(state, seat) for seat in range(n)]
            vectors.append(encoder.encode_state(state))
            assert all(v.min() >= 0.0 and v.max() <= 1.0 for v in vectors)
            if rules.is_over(state):
                break
            legal = np.flatnonzero(rules.legal_mask(state))
            rules.apply(state, int(rng.choice(legal) if pick is None else legal[pick]))
        assert rules.is_over(state)
