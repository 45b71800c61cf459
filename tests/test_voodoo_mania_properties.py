"""Invariants of Voodoo Mania over random legal play."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C
from cauldron.envs.voodoo_mania.encoding import Encoder
from cauldron.envs.voodoo_mania.options import VoodooManiaOptions
from cauldron.envs.voodoo_mania.rules import VoodooManiaRules
from cauldron.eval.voodoo_mania import tick_stats

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
    rest stay out; a hand is short only while its own pile is empty; every round ends; a game
    lasts exactly three rounds unless truncated."""
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
        # a hand is short only while its own pile is empty (Setup: hands of three)
        piles = state.piles
        assert all(len(h) == C.HAND_SIZE for seat, h in enumerate(state.hands) if piles[seat])
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


def _voodoo_first(rules: VoodooManiaRules, state, seat: int, rng) -> int:
    """Seat 0 plays Voodoo! whenever it can (else any play, else its highest legal action); the
    others act only when seat 0 cannot play, so their piles and scores grow as far as they go."""
    plays = rules.plays(state, 0)
    legal = np.flatnonzero(rules.legal_mask_for(state, seat))
    if seat != 0:
        return A.WAIT if plays or len(legal) == 1 else int(legal[1])
    if plays:
        slot, side, _ = max(plays, key=lambda p: p[2])
        return A.PLAY + 2 * slot + side
    return int(legal[-1])


def _random(rules: VoodooManiaRules, state, seat: int, rng) -> int:
    legal = np.flatnonzero(rules.legal_mask_for(state, seat))
    return int(rng.choice(legal[legal > 0])) if len(legal) > 1 else A.WAIT


def _highest(rules: VoodooManiaRules, state, seat: int, rng) -> int:
    return int(np.flatnonzero(rules.legal_mask_for(state, seat))[-1])


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("policy", [_voodoo_first, _random, _highest])
@pytest.mark.parametrize("cycle_anytime", [False, True])
def test_observations_and_state_stay_in_their_box(n, policy, cycle_anytime):
    """Every observation and ``state()`` lies in Box(0, 1) over whole games (random play, and
    degenerate play that piles Voodoo! cards on waiting players), at every player count."""
    rules = VoodooManiaRules(n, VoodooManiaOptions(cycle_anytime=cycle_anytime, max_ticks=1500))
    encoder = Encoder(rules)
    rng = np.random.default_rng(n)
    for seed in range(2):
        state = rules.new_game(np.random.default_rng(seed))
        while True:
            vectors = [encoder.observe(state, seat) for seat in range(n)]
            vectors.append(encoder.encode_state(state))
            for vector in vectors:
                assert vector.min() >= 0.0 and vector.max() <= 1.0, (state.tick, state.scores)
            if rules.is_over(state):
                break
            rules.apply_joint(state, [policy(rules, state, seat, rng) for seat in range(n)])


def test_scores_beyond_three_full_deals_of_45_stay_in_their_box():
    """A two-player score can pass 135 (a round can leave up to 90 cards with one player): the
    score field is divided by 3 rounds · 90."""
    rules = VoodooManiaRules(2, VoodooManiaOptions())
    encoder = Encoder(rules)
    state = rules.new_game(np.random.default_rng(0))
    state.scores = [0, 200]
    obs = encoder.observe(state, 0)
    assert obs.max() <= 1.0
    assert obs[encoder.observation_layout["scores"]][1] == pytest.approx(200 / 270)


class _Waiter:
    def act(self, observation, action_mask) -> int:
        return A.WAIT


class _Eager:
    """Plays its first legal play at once, else cycles, else waits."""

    def act(self, observation, action_mask) -> int:
        return int(np.flatnonzero(action_mask)[-1 if not action_mask[1:7].any() else 1])


def test_tick_stats_count_contested_ticks_and_round_endings():
    """The RULES.md measurement: players who never play contest no tick and are truncated at
    ``max_ticks``; eager players contest some ticks, and every game ends in three rounds."""
    idle = tick_stats.measure(2, lambda seed: _Waiter(), games=1)
    assert (idle.ticks, idle.ticks_with_play, idle.contested) == (3000, 0, 0)
    assert (idle.rounds, idle.truncated) == (0, 1)
    eager = tick_stats.measure(3, lambda seed: _Eager(), games=2)
    assert 0 < eager.contested <= eager.ticks_with_play <= eager.ticks
    assert eager.rounds == 6 and eager.truncated == 0 and eager.stalled <= 6
