"""The batched Hocus Pocus engine equals the reference rules.

Reference states reached by random and heuristic play are converted into tensor rows; every
chance-free AEC step must give exactly the reference's next state, rewards, observation, mask and
``state()``; a step with chance (the end-of-round shuffle, the Spell deck reshuffle, *I Put a
Spell on You*) must give a state the reference could reach (the same cards in the same places
but for the shuffled or passed ones); and whole games must agree in distribution. Rulebook
sections are those of Hocus Pocus: The Game's rulebook.
"""

from __future__ import annotations

import copy
import dataclasses
import time

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents.hocus_pocus.heuristic import HocusPocusHeuristic
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.batched import batched_game, from_reference, to_reference
from cauldron.envs.hocus_pocus.phases import Phase
from tests.hocus_pocus_helpers import card, play, table

ENV = "hocus_pocus_v1"
SUB_DECISIONS = ("Oh, Look!", "Come Little Children", "Fly, My Pretty", "I Put a Spell on You")
CONFIGS = [
    (2, {}),
    (3, {}),
    (4, {}),
    (5, {}),
    (6, {}),
    (3, {"salt_after_trick": True, "take_flight_ignores_salt": True, "stun_reward": 0.25}),
    (4, {"match_reward": 0.5, "sunrise_steps": 1}),
    (2, {"spell_deck": SUB_DECISIONS + ("Take Flight", "Oh, Look!"), "match_reward": 1.0}),
    (
        5,
        {
            "spell_deck": ("Book!", "Boys, Boys", "Dance Until You Die", "Take Flight") * 2,
            "binx_cards": ((0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (0, 1)),
            "board": ((0, 0), (0, 1), (0, 2), (1, 0), (1, 1)),
        },
    ),
    (6, {"spell_deck": SUB_DECISIONS, "sunrise_steps": 2}),
]


def config_id(config: tuple[int, dict]) -> str:
    n, options = config
    return f"{n}p" + "".join(f"-{k}" for k in options)


class Watch:
    """A generator that notes whether chance was drawn (it draws from ``rng``)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng, self.used = rng, False

    def integers(self, *args, **kwargs):
        self.used = True
        return self.rng.integers(*args, **kwargs)

    def permutation(self, *args, **kwargs):
        self.used = True
        return self.rng.permutation(*args, **kwargs)


def fields(state) -> dict:
    """A reference state's fields, without its generator and log (questions as a list)."""
    out = {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    out.pop("rng"), out.pop("log")
    out["questions"] = out["questions"].tolist()
    return out


HEURISTIC = HocusPocusHeuristic()


def random_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def heuristic_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    return HEURISTIC.act(obs, mask)


def mixed_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """The heuristic, but a random legal action one time in four (reaches rarer states)."""
    if rng.random() < 0.25:
        return random_policy(obs, mask, rng)
    return HEURISTIC.act(obs, mask)


POLICIES = [random_policy, heuristic_policy, mixed_policy]


def make_game(n: int, options: dict):
    env = envs.make(ENV, num_players=n, **options).unwrapped
    return env, batched_game(env, torch.device("cpu"))


def transitions(n: int, options: dict, policy, games: int, seed: int) -> list[tuple]:
    """``(state before, action, state after, rewards, used chance)`` of every AEC step of
    ``games`` reference games."""
    env = envs.make(ENV, num_players=n, **options).unwrapped
    rules, encoder = env.rules, env.encoder
    rng = np.random.default_rng(seed)
    steps = []
    for game in range(games):
        state = rules.new_game(np.random.default_rng(seed * 1000 + game), game % n)
        while not rules.is_over(state) and state.turns < 600:
            action = policy(encoder.observe(state, state.actor), rules.legal_mask(state), rng)
            state.rng = None
            before = copy.deepcopy(state)
            state.rng = watch = Watch(rng)
            rewards = rules.apply(state, action)
            steps.append((before, action, copy.deepcopy(fields(state)), rewards, watch.used))
    return steps


def batched_step(game, steps: list[tuple], seed: int = 0):
    """Convert the ``before`` states, apply the actions batched; return the state and rewards."""
    state = from_reference([s[0] for s in steps], game)
    actions = torch.tensor([s[1] for s in steps])
    rewards = game.apply(state, actions, torch.Generator().manual_seed(seed))
    return state, rewards


# ----------------------------------------------------------------------------- conversion
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_conversion_round_trip_is_lossless(config):
    n, options = config
    _, game = make_game(n, options)
    states = [s[0] for s in transitions(n, options, mixed_policy, games=1, seed=1)]
    batch = from_reference(states, game)
    for row, state in enumerate(states):
        assert fields(to_reference(batch, row, np.random.default_rng(0))) == fields(state)


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
    for row, (before, action, after, expected, _) in enumerate(steps):
        got = to_reference(state, row, np.random.default_rng(0))
        assert fields(got) == after, (row, env.rules.action_name(action), before.phase)
        assert rewards[row].tolist() == pytest.approx(list(expected), abs=1e-6)
        np.testing.assert_array_equal(observation[row], env.encoder.observe(got, got.actor))
        np.testing.assert_array_equal(mask[row], env.rules.legal_mask(got).astype(bool))
        np.testing.assert_array_equal(full[row], env.encoder.encode_state(got))
    return len(steps)


@pytest.mark.parametrize("index", range(len(CONFIGS)), ids=[config_id(c) for c in CONFIGS])
def test_chance_free_steps_equal_the_reference(index):
    """Every rule section without chance: Ask One Question, Play One Ingredient Card, Binx,
    Spell Book, every Spell's effect, every Trick token, the discards, passes and swaps, Stunning
    A Witch, the failed play and the lost game; at every player count and variant (random,
    greedy and mixed play in turn; the slow test plays all three everywhere)."""
    n, options = CONFIGS[index]
    steps = transitions(n, options, POLICIES[index % len(POLICIES)], games=1, seed=2)
    assert check_chance_free(n, options, steps) > 40


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_many_chance_free_steps_equal_the_reference(config):
    """At least 10^5 chance-free states over all configurations (random, greedy and mixed
    play)."""
    n, options = config
    start, checked, share = time.perf_counter(), 0, 100_000 // len(CONFIGS)
    for seed in range(10, 40):  # 20 games a seed; about 6 seeds reach the share
        policy = POLICIES[seed % len(POLICIES)]
        checked += check_chance_free(n, options, transitions(n, options, policy, 20, seed))
        if checked >= share:
            break
    print(f"{config_id(config)}: {checked} states in {time.perf_counter() - start:.1f} s")
    assert checked >= share


class Steer:
    """A generator for the reference that makes the random choices the batched engine made:
    *I Put a Spell on You* passes the cards the batched row passed (``handed``)."""

    def __init__(self, state, passed: dict[int, int]) -> None:
        self.state, self.passed, self.calls = state, passed, 0

    def integers(self, k: int) -> int:
        seats = [s for s, h in enumerate(self.state.hands) if h]
        seat = seats[self.calls]
        self.calls += 1
        return self.state.hands[seat].index(self.passed[seat])


def steered_shuffle(targets: list[list[int]]):
    """``rules.shuffled`` that orders its cards as one of ``targets`` (the batched piles)."""

    def shuffled(cards: list[int], rng) -> list[int]:
        for target in targets:
            if sorted(target) == sorted(cards):
                return sorted(cards, key=target.index)
        raise AssertionError(f"the batched engine shuffled other cards than {sorted(cards)}")

    return shuffled


def check_steered(env, game, befores: list, actions: list[int], monkeypatch) -> list:
    """Apply ``actions`` batched to the converted ``befores``; each row must hold every card
    once and equal the reference's next state under the same chance (shuffles ordered as the
    batched rows, I Put a Spell on You passing the same cards), with equal rewards,
    observation, mask and ``state()``. Returns the reference next states."""
    import cauldron.envs.hocus_pocus.rules as rules_module

    state = from_reference(befores, game)
    rewards = game.apply(state, torch.tensor(actions), torch.Generator().manual_seed(4))
    observation = game.observe(state, game.acting_seat(state)).numpy()
    mask = game.legal_mask(state).numpy()
    full = game.encode_state(state).numpy()
    results = []
    for row, (before, action) in enumerate(zip(befores, actions, strict=True)):
        got = to_reference(state, row, np.random.default_rng(0))
        cards = [c for h in got.hands for c in h] + [c for p in got.piles for c in p]
        assert sorted(cards + got.deck + got.discard + got.removed) == list(range(C.NUM_CARDS))
        drawn = [got.spell] if got.spell >= 0 else got.spell_discard[-1:]
        targets = [got.deck, got.spell_deck + drawn]
        reference = copy.deepcopy(before)
        passed = {s: card for s, (card, _) in enumerate(got.handed)}
        reference.rng = Steer(reference, passed)
        with monkeypatch.context() as patch:
            patch.setattr(rules_module, "shuffled", steered_shuffle(targets))
            expected = env.rules.apply(reference, action)
        assert fields(got) == fields(reference), (row, env.rules.action_name(action))
        assert rewards[row].tolist() == pytest.approx(list(expected), abs=1e-6)
        np.testing.assert_array_equal(observation[row], env.encoder.observe(got, got.actor))
        np.testing.assert_array_equal(mask[row], env.rules.legal_mask(got).astype(bool))
        np.testing.assert_array_equal(full[row], env.encoder.encode_state(got))
        results.append(reference)
    return results


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_steps_with_chance_reach_a_reference_outcome(config, monkeypatch):
    """End of Round (the deck shuffled with Binx and Spell Book cards), the Spell deck
    reshuffled, I Put a Spell on You: the batched next state holds the same cards and is the
    state the reference reaches with the same shuffles and random cards."""
    n, options = config
    env, game = make_game(n, options)
    steps = [s for s in transitions(n, options, mixed_policy, games=5, seed=3) if s[4]]
    assert len(steps) >= 3
    check_steered(env, game, [s[0] for s in steps], [s[1] for s in steps], monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_many_steps_with_chance_reach_a_reference_outcome(config, monkeypatch):
    n, options = config
    env, game = make_game(n, options)
    for seed, policy in enumerate(POLICIES):
        steps = [s for s in transitions(n, options, policy, 40, 20 + seed) if s[4]]
        check_steered(env, game, [s[0] for s in steps], [s[1] for s in steps], monkeypatch)


def test_stun_choice_and_a_stun_uncovered_by_a_spell(monkeypatch):
    """Stunning A Witch: five tops of one type in five colours wait for the choice of Mary or
    Winifred (both choices end the round); Boys, Boys uncovering five tops of one colour stuns
    Sarah (a Spell that changed the Cauldron); the last stun wins (End of the Game)."""
    toe = [card(c, "Dead Man's Toe") for c in C.COLOURS]
    rules, choice = table(
        3,
        hands=[[toe[3], card("blue", "Dash of Pox")], [], []],
        piles=[[toe[4]], [toe[0]], [toe[1]], [toe[2]], []],
        deck=[0, 2, 4, 6],
    )
    orange = [card("orange", t) for t in C.TYPES]
    _, uncovered = table(
        3,
        hands=[[], [], [card("blue", "Oil of Boil")]],
        piles=[
            [orange[4], card("purple", "Dash of Pox")],
            [orange[0]],
            [orange[1]],
            [orange[2]],
            [orange[3]],
        ],
        deck=[card("green", "Newt Saliva")],
        spells=["Boys, Boys"],
    )
    uncovered.tricks_used[C.SALT] = True
    env, game = make_game(3, {})
    (waiting,) = check_steered(env, game, [choice], [play(toe[3], 4)], monkeypatch)
    assert waiting.phase == Phase.STUN_CHOICE
    won = copy.deepcopy(waiting)
    won.sun = 2
    after = check_steered(
        env,
        game,
        [waiting, waiting, uncovered, won],
        [A.STUN_MARY, A.STUN_WINIFRED, A.REVEAL_SPELL, A.STUN_WINIFRED],
        monkeypatch,
    )
    assert [s.stunned for s in after] == [C.MARY, C.WINIFRED, C.SARAH, C.WINIFRED]
    assert [s.outcome for s in after] == [0, 0, 0, 1]
