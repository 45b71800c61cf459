"""The batched Voodoo Mania engine equals the reference rules.

Reference states reached by random and heuristic play are converted into tensor rows; every
chance-free AEC step (a tick with at most one play and no new deal) must give exactly the
reference's next state, rewards, observation, mask and ``state()``; a step with chance (a
contested tick, a new deal) must give one of the states the reference reaches (every play
priority enumerated; a new deal holds every card once, in the right counts); whole games must
agree in distribution. Section names are those of Voodoo Mania's rulebook.
"""

from __future__ import annotations

import copy
import dataclasses
import time

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents.voodoo_mania.heuristic import ChainVoodoo, FastVoodoo
from cauldron.envs.voodoo_mania import components as C
from cauldron.envs.voodoo_mania.batched import (
    batched_game,
    count_answers,
    from_reference,
    to_reference,
)

ENV = "voodoo_mania_v1"
CONFIGS = [
    (2, {}),
    (3, {}),
    (4, {}),
    (5, {}),
    (6, {}),
    (2, {"cycle_anytime": True, "reward": "per_round"}),
    (4, {"reward": "per_round"}),
    (3, {"cycle_anytime": True}),
    (2, {"max_ticks": 150}),
    (3, {"max_ticks": 120, "reward": "per_round"}),
    (2, {"max_ticks": 150, "reward": "per_round", "truncation": "loss"}),
    (3, {"reward": "per_tick"}),
    (2, {"max_ticks": 150, "reward": "per_tick"}),
    (2, {"max_idle_ticks": 3, "reward": "per_tick", "truncation": "loss"}),
]


def config_id(config: tuple[int, dict]) -> str:
    n, options = config
    return f"{n}p" + "".join(f"-{k}={v}" for k, v in options.items())


class NeedMore(Exception):
    """The scripted priorities ran out."""


class Script:
    """A stand-in generator. ``integers(1)`` (the priority of a lone play) is no chance; other
    draws come from ``priorities`` or, without them, from ``fallback``; ``used`` notes chance,
    ``dealt`` a new deal."""

    def __init__(self, priorities: tuple[int, ...] | None = None, fallback=None):
        self.priorities = None if priorities is None else list(priorities)
        self.fallback, self.used, self.dealt = fallback, False, False

    def integers(self, n: int) -> int:
        if n == 1:
            return 0
        self.used = True
        if self.dealt or self.priorities is None:  # a deal's side, or free play
            return int(self.fallback.integers(n))
        if not self.priorities:
            self.asked = n
            raise NeedMore
        return self.priorities.pop(0)

    def permutation(self, n: int) -> np.ndarray:
        self.used = self.dealt = True
        return self.fallback.permutation(n)


def fields(state) -> dict:
    """A reference state's fields, without its generator and log."""
    out = {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    out.pop("rng"), out.pop("log")
    return out


def random_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


FAST, CHAIN = FastVoodoo(), ChainVoodoo()


def fast_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    return FAST.act(obs, mask)


def chain_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    return CHAIN.act(obs, mask)


def transitions(n: int, options: dict, policy, games: int, seed: int, most: int = 10**9):
    """``(state before, action, state after, rewards, used chance)`` of the AEC steps of
    ``games`` reference games (at most ``most`` steps of each)."""
    env = envs.make(ENV, num_players=n, **options).unwrapped
    rules, encoder = env.rules, env.encoder
    rng = np.random.default_rng(seed)
    steps = []
    for game in range(games):
        state = rules.new_game(np.random.default_rng(seed * 1000 + game))
        for _ in range(most):
            if rules.is_over(state):
                break
            action = policy(encoder.observe(state, state.actor), rules.legal_mask(state), rng)
            state.rng = None
            before = copy.deepcopy(state)
            state.rng = script = Script(fallback=rng)
            rewards = rules.apply(state, action)
            steps.append((before, action, copy.deepcopy(fields(state)), rewards, script.used))
    return steps


def make_game(n: int, options: dict):
    env = envs.make(ENV, num_players=n, **options).unwrapped
    return env, batched_game(env, torch.device("cpu"))


def batched_step(game, steps: list[tuple], seed: int = 0):
    """Convert the ``before`` states, apply the actions batched; return the state and rewards."""
    state = from_reference([s[0] for s in steps])
    actions = torch.tensor([s[1] for s in steps])
    rewards = game.apply(state, actions, torch.Generator().manual_seed(seed))
    return state, rewards


# ----------------------------------------------------------------------------- conversion
@pytest.mark.parametrize("config", CONFIGS[:6], ids=config_id)
def test_conversion_round_trip_is_lossless(config):
    n, options = config
    steps = transitions(n, options, random_policy, games=1, seed=1, most=600)
    states = [s[0] for s in steps]
    batch = from_reference(states)
    for row, state in enumerate(states):
        assert fields(to_reference(batch, row, np.random.default_rng(0))) == fields(state)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_new_games_are_set_up_as_the_rulebook_says(n):
    """Setup: one card starts the Voodoo pile, each own pile gets 45 / 30 / 22 / 18 / 15 cards of
    which three go into the hand, the rest stay out; every card once; shuffled per game."""
    env, game = make_game(n, {})
    state = game.new_games(64, torch.Generator().manual_seed(0))
    deal = C.CARDS_PER_PLAYER[n]
    for row in range(64):
        ref = to_reference(state, row, np.random.default_rng(0))
        assert [len(h) for h in ref.hands] == [3] * n
        assert [len(p) for p in ref.piles] == [deal - 3] * n and len(ref.voodoo) == 1
        cards = [c for h in ref.hands for c in h] + [c for p in ref.piles for c in p]
        assert sorted(cards + ref.out + [ref.voodoo[0][0]]) == list(range(C.NUM_CARDS))
        assert (ref.round, ref.tick, ref.scores, ref.pending) == (0, 0, [0] * n, {})
    assert len({tuple(t) for t in state.hands[:, 0].tolist()}) > 60
    assert 10 < int(state.voodoo[:, 0].remainder(2).sum()) < 54  # a random side up


# ----------------------------------------------------------------------------- transitions
def check_chance_free(n: int, options: dict, steps: list[tuple]) -> int:
    """Every chance-free step of ``steps`` gives the reference's next state, rewards, acting
    observation, mask and ``state()``; returns how many were checked."""
    env, game = make_game(n, options)
    steps = [s for s in steps if not s[4]]
    state, rewards = batched_step(game, steps)
    observation = game.observe(state, game.acting_seat(state)).numpy()
    mask = game.legal_mask(state).numpy()
    full = game.encode_state(state).numpy()
    for row, (_, _, after, expected, _) in enumerate(steps):
        got = to_reference(state, row, np.random.default_rng(0))
        assert fields(got) == after, row
        assert state.answers[row].tolist() == count_answers(got), row
        assert rewards[row].tolist() == pytest.approx(list(expected), abs=1e-6)
        np.testing.assert_array_equal(observation[row], env.encoder.observe(got, got.actor))
        np.testing.assert_array_equal(mask[row], env.rules.legal_mask(got).astype(bool))
        np.testing.assert_array_equal(full[row], env.encoder.encode_state(got))
    return len(steps)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
@pytest.mark.parametrize("policy", [random_policy, chain_policy])
def test_chance_free_steps_equal_the_reference(config, policy):
    """Game Play without chance: choices in AEC order, cycling, a lone normal play and Voodoo!
    (cards slid under the others' piles, short hands topped up), the played slot refilled, the
    stalled table, End of the Round and Recording Points in the last round, End of the Game,
    ``max_ticks``; at every player count and option."""
    n, options = config
    steps = transitions(n, options, policy, games=1, seed=2, most=30 * n)
    assert check_chance_free(n, options, steps) > 20


def test_round_ends_and_truncation_are_among_the_checked_steps():
    """The checked steps include the end of a game (final round or ``max_ticks``) and Voodoo!
    calls, so those rules are proved, not only ordinary ticks."""
    steps = transitions(2, {"max_ticks": 150}, random_policy, games=1, seed=3)
    for seed in range(5):  # a game whose last tick has a lone play
        steps += transitions(2, {}, chain_policy, games=1, seed=seed)
        if not steps[-1][4]:
            break
    free = [s for s in steps if not s[4]]
    assert any(s[2]["phase"] == 1 and not s[2]["truncated"] for s in free)
    assert any(s[2]["truncated"] for s in free)
    assert any(s[2]["last_voodoo"] and s[2]["actor"] == 0 for s in free)
    assert check_chance_free(2, {}, [s for s in free if not s[2]["truncated"]]) > 300


def reference_outcomes(rules, before, action: int, rng) -> list[tuple[dict, tuple, bool]]:
    """Every (next state, rewards, new deal) the reference reaches from ``before`` by
    ``action``, over all play priorities (a new deal drawn from ``rng``)."""
    outcomes, prefixes = [], [()]
    while prefixes:
        priorities = prefixes.pop()
        state = copy.deepcopy(before)
        state.rng = script = Script(priorities, fallback=rng)
        try:
            rewards = rules.apply(state, action)
        except NeedMore:
            prefixes.extend(priorities + (p,) for p in range(script.asked))
            continue
        outcomes.append((fields(state), rewards, script.dealt))
    return outcomes


DEALT_FIELDS = ("hands", "piles", "voodoo", "out")


@pytest.mark.parametrize("config", CONFIGS[:7], ids=config_id)
def test_steps_with_chance_reach_a_reference_outcome(config):
    """Contested ticks (one play wins by priority, the others stay in hand) and new deals:
    the batched next state and rewards are among those the reference reaches with some
    priority; after a new deal every card is there once, three in each hand, the own piles
    and the Voodoo pile in their Setup sizes."""
    n, options = config
    env, game = make_game(n, options)
    steps = [s for s in transitions(n, options, fast_policy, 2, seed=4, most=400) if s[4]]
    assert len(steps) >= 10
    state, rewards = batched_step(game, steps, seed=5)
    rng = np.random.default_rng(6)
    deals = 0
    for row, (before, action, *_) in enumerate(steps):
        got = fields(to_reference(state, row, np.random.default_rng(0)))
        matched = False
        for after, expected, dealt in reference_outcomes(env.rules, before, action, rng):
            if dealt:
                same = {k: v for k, v in got.items() if k not in DEALT_FIELDS}
                if same != {k: v for k, v in after.items() if k not in DEALT_FIELDS}:
                    continue
                cards = [c for h in got["hands"] for c in h] + [c for p in got["piles"] for c in p]
                assert sorted(cards + got["out"] + [got["voodoo"][0][0]]) == list(range(91))
                assert [len(h) for h in got["hands"]] == [3] * n
                assert [len(p) for p in got["piles"]] == [len(p) for p in after["piles"]]
                assert state.answers[row].tolist() == count_answers(to_reference(state, row, None))
                deals += 1
            elif got != after:
                continue
            assert rewards[row].tolist() == pytest.approx(list(expected), abs=1e-6)
            matched = True
            break
        assert matched, (row, action)
    assert deals >= 1 or n >= 5  # rounds of five or six players outlast these steps


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_many_chance_free_steps_equal_the_reference(config):
    """At least 10^5 chance-free states over all configurations (random, fast and chain
    play)."""
    n, options = config
    start, checked = time.perf_counter(), 0
    games = 15 if "max_ticks" in options else 6  # games cut short give fewer states each
    for seed, policy in enumerate([random_policy, fast_policy, chain_policy]):
        steps = transitions(n, options, policy, games, 10 + seed, most=4000 // n)
        checked += check_chance_free(n, options, steps)
    print(f"{config_id(config)}: {checked} states in {time.perf_counter() - start:.1f} s")
    assert checked >= 100_000 // len(CONFIGS)
