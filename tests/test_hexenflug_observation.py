"""Hexenflug's observation and ``state()``: every public fact encoded, every value in its Box.

Rulebook sections are those of Hexenflug's rulebook; the layout is RULES.md's table.
"""

from __future__ import annotations

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.core.layout import Layout
from cauldron.envs.hexenflug import components as C
from cauldron.envs.hexenflug.encoding import OBSERVATION_FIELDS, STATE_FIELDS, Encoder
from tests.test_hexenflug_rules import GREEN, ORANGE, PINK, W, table

OBS = Layout(OBSERVATION_FIELDS)
STATE = Layout(STATE_FIELDS)


def test_scores_are_normalised_by_the_true_maximum():
    """Scoring: 1 point per Spellbook and 1 per complete set, so with 9 Spellbooks per colour one
    player can reach 45 + 9 = 54; the score field divides by that maximum and stays in [0, 1]."""
    rules, state = table(n=4, books={0: [9] * 5})
    assert rules.scores(state)[0] == 54
    encoder = Encoder(rules)
    for vector, layout in ((encoder.observe(state, 0), OBS), (encoder.encode_state(state), STATE)):
        assert vector[layout["scores"]][0] == 1.0
        assert vector.max() <= 1.0
    rules, state = table(n=2, books={1: [1, 1, 1, 1, 2]})  # 7 per colour: maximum 42
    assert Encoder(rules).observe(state, 0)[OBS["scores"]][1] == pytest.approx(7 / 42)


def test_every_hand_and_the_player_count_are_observed():
    """Landing, Crash (beginner rule), Examination and Black Cat Cards move cards into and out of
    hands face up, so every hand is public: each seat's hand appears at its relative seat; the
    number of players is one-hot (2–5); only the draw pile stays hidden."""
    hands = [[W(GREEN, 3)], [W(PINK, 7), W(PINK, 9)], [W(ORANGE, 1)]]
    rules, state = table(n=3, hands=hands)
    encoder = Encoder(rules)
    obs = encoder.observe(state, 1)
    seen = obs[OBS["hands"]].reshape(C.MAX_PLAYERS, C.NUM_CARDS)
    for seat, hand in enumerate(hands):
        assert np.flatnonzero(seen[(seat - 1) % 3]).tolist() == sorted(hand)
    assert not seen[3:].any()
    assert obs[OBS["num_players"]].tolist() == [0, 1, 0, 0]
    full = encoder.encode_state(state)
    assert np.array_equal(full[: OBS.size][OBS["hands"]], encoder.observe(state, 0)[OBS["hands"]])
    assert np.flatnonzero(full[STATE["draw_pile_cards"]]).tolist() == sorted(state.draw_pile)


def _random(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def _lowest(rng: np.random.Generator, mask: np.ndarray) -> int:
    """The degenerate policy: it never lands and crashes forever."""
    return int(np.flatnonzero(mask)[0])


OPTION_SETS = [
    {},
    {"beginner_crash_rule": True, "books_per_colour": 9},
    {"books_per_colour": 1},
    {"beginner_crash_rule": True, "books_per_colour": 3, "reward": "score_margin"},
]


@pytest.mark.parametrize("policy", [_random, _lowest], ids=["random", "lowest_legal"])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_observations_and_state_stay_in_their_box(n, policy):
    """Every observation and ``state()`` lies in its ``Box(0, 1)`` over long games (bounded by
    ``max_steps``) of random and lowest-legal play, at every player count and option set."""
    for k, options in enumerate(OPTION_SETS):
        env = envs.make("hexenflug_v1", num_players=n, max_steps=1_000, **options)
        env.reset(seed=10 * n + k)
        rng = np.random.default_rng(k)
        obs_space, state_space = env.observation_space("player_0")["observation"], env.state_space
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            assert obs_space.contains(obs["observation"]), (agent, env.unwrapped.game.phase)
            assert state_space.contains(env.state())
            env.step(None if term or trunc else policy(rng, obs["action_mask"]))
