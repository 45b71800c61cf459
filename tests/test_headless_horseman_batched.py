"""The batched Headless Horseman engine equals the reference rules.

Reference states reached by random and heuristic play are converted into tensor rows; every
chance-free AEC step must give exactly the reference's next state, rewards, observation, mask and
``state()``; a step with chance must give one of the states the reference reaches with some spins
(all spin sequences enumerated); and whole games must agree in distribution. Rulebook sections are
those of Return of the Headless Horseman's rulebook.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents.batched import BatchedRandom, make_batched_agent
from cauldron.agents.headless_horseman.batched import HEURISTICS as BATCHED_HEURISTICS
from cauldron.agents.headless_horseman.batched import BatchedFocal
from cauldron.agents.headless_horseman.heuristic import HEURISTICS as REFERENCE_HEURISTICS
from cauldron.agents.headless_horseman.heuristic import HeadlessHorsemanHeuristic
from cauldron.envs.headless_horseman import actions as A
from cauldron.envs.headless_horseman import components as C
from cauldron.envs.headless_horseman.batched import batched_game, from_reference, to_reference
from cauldron.envs.headless_horseman.encoding import Encoder
from cauldron.envs.headless_horseman.options import HeadlessHorsemanOptions
from cauldron.envs.headless_horseman.phases import Phase
from cauldron.envs.headless_horseman.rules import HeadlessHorsemanRules
from tests.distributions import assert_same_means

ENV = "headless_horseman_v1"
CONFIGS = [
    (2, {}),
    (3, {}),
    (4, {}),
    (2, {"speed_tile": 4, "progress_reward": 0.5}),
    (3, {"handless_seats": (1,)}),
    (4, {"handless_seats": (0, 2), "speed_tile": 4}),
    (2, {"handless_seats": (0, 1)}),
    (3, {"reshuffle": True}),
]


def config_id(config: tuple[int, dict]) -> str:
    n, options = config
    return f"{n}p" + "".join(f"-{k}={v}" for k, v in options.items())


class NeedMore(Exception):
    """The scripted spinner ran out of spins."""


class Shuffled(Exception):
    """The reference shuffled (``reshuffle``): its outcomes are not enumerated."""


class Script:
    """A stand-in generator: spins come from ``spins``; it notes whether chance was drawn."""

    def __init__(self, spins: tuple[int, ...] = (), fallback: np.random.Generator | None = None):
        self.spins, self.used, self.fallback = list(spins), False, fallback

    def integers(self, n: int) -> int:
        self.used = True
        if self.fallback is not None:
            return int(self.fallback.integers(n))
        if not self.spins:
            raise NeedMore
        return self.spins.pop(0) - 1

    def permutation(self, n: int) -> np.ndarray:
        self.used = True
        if self.fallback is None:
            raise Shuffled
        return self.fallback.permutation(n)


def fields(state) -> dict:
    """A reference state's fields, without its generator and log."""
    out = {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    out.pop("rng"), out.pop("log")
    return out


def random_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


HEURISTIC = HeadlessHorsemanHeuristic()


def heuristic_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    return HEURISTIC.act(obs, mask)


def lowest_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(np.flatnonzero(mask)[0])


def transitions(
    n: int, options: dict, policy, games: int, seed: int, board: C.Board = C.BOARD
) -> list[tuple]:
    """``(state before, action, state after, rewards, used chance)`` of every AEC step of
    ``games`` reference games."""
    reference, _ = make_game(n, options, board)
    rules, encoder = reference.rules, reference.encoder
    rng = np.random.default_rng(seed)
    steps = []
    for game in range(games):
        state = rules.new_game(np.random.default_rng(seed * 1000 + game))
        while not rules.is_over(state):
            seat = state.actor
            action = policy(encoder.observe(state, seat), rules.legal_mask(state), rng)
            state.rng = None
            before = copy.deepcopy(state)
            state.rng = script = Script(fallback=rng)
            rewards = rules.apply(state, action)
            steps.append((before, action, copy.deepcopy(fields(state)), rewards, script.used))
    return steps


def reference_outcomes(rules, before, action: int) -> list[tuple[dict, tuple]]:
    """Every (next state, rewards) the reference can reach from ``before`` by ``action``,
    over all spin sequences (depth-first, a spin at a time)."""
    outcomes, prefixes = [], [()]
    while prefixes:
        spins = prefixes.pop()
        state = copy.deepcopy(before)
        state.rng = Script(spins)
        try:
            rewards = rules.apply(state, action)
        except NeedMore:
            prefixes.extend(spins + (s,) for s in C.SPINNER)
            continue
        outcomes.append((fields(state), rewards))
    return outcomes


def batched_step(game, steps: list[tuple], seed: int = 0):
    """Convert the ``before`` states, apply the actions batched; return the state and rewards."""
    state = from_reference([s[0] for s in steps])
    actions = torch.tensor([s[1] for s in steps])
    rewards = game.apply(state, actions, torch.Generator().manual_seed(seed))
    return state, rewards


def make_game(n: int, options: dict, board: C.Board = C.BOARD):
    """The reference (its ``rules`` and ``encoder``) and the batched engine, on ``board``."""
    rules = HeadlessHorsemanRules(n, HeadlessHorsemanOptions(**options), board)
    reference = SimpleNamespace(rules=rules, encoder=Encoder(rules))
    return reference, batched_game(reference, torch.device("cpu"))


# ----------------------------------------------------------------------------- conversion
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_conversion_round_trip_is_lossless(config):
    n, options = config
    steps = transitions(n, options, random_policy, games=3, seed=1)
    states = [s[0] for s in steps]
    batch = from_reference(states)
    for row, state in enumerate(states):
        assert fields(to_reference(batch, row, np.random.default_rng(0))) == fields(state)


def test_new_games_are_set_up_as_the_rulebook_says():
    """Set Up: Ichabod at the farm, the Horseman at his start, eight face-down tokens in a
    random order, four cards to each player with a hand, the rest in the draw pile."""
    env, game = make_game(3, {"handless_seats": (1,)})
    state = game.new_games(64, torch.Generator().manual_seed(0))
    for row in range(64):
        ref = to_reference(state, row, np.random.default_rng(0))
        assert [len(h) for h in ref.hands] == [4, 0, 4] and len(ref.draw_pile) == 22
        assert sorted(c for h in ref.hands for c in h) + sorted(ref.draw_pile) != []
        assert sorted([c for h in ref.hands for c in h] + ref.draw_pile) == list(range(30))
        assert sorted(ref.tokens) == list(range(8)) and ref.flipped == 0
        assert (ref.ichabod, ref.horseman, ref.phase) == (0, C.BOARD.horseman_start, Phase.PLAY)
    assert len({tuple(t) for t in state.tokens.tolist()}) > 50  # shuffled per game


# ----------------------------------------------------------------------------- transitions
def check_chance_free(n: int, options: dict, steps: list[tuple], board: C.Board = C.BOARD) -> int:
    """Every chance-free step of ``steps`` gives the reference's next state, rewards, acting
    observation, mask and ``state()``; returns how many were checked."""
    env, game = make_game(n, options, board)
    steps = [s for s in steps if not s[4]]
    state, rewards = batched_step(game, steps)
    observation = game.observe(state, game.acting_seat(state)).numpy()
    mask = game.legal_mask(state).numpy()
    full = game.encode_state(state).numpy()
    for row, (_, _, after, expected, _) in enumerate(steps):
        got = to_reference(state, row, np.random.default_rng(0))
        assert fields(got) == after, row
        assert rewards[row].tolist() == pytest.approx(list(expected), abs=1e-6)
        np.testing.assert_array_equal(observation[row], env.encoder.observe(got, got.actor))
        np.testing.assert_array_equal(mask[row], env.rules.legal_mask(got).astype(bool))
        np.testing.assert_array_equal(full[row], env.encoder.encode_state(got))
    return len(steps)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
@pytest.mark.parametrize("policy", [random_policy, heuristic_policy, lowest_policy])
def test_chance_free_steps_equal_the_reference(config, policy):
    """Every rule section without a spin: playing a card in AEC order, Flip and Match, Move
    Ichabod and his special spaces, Move the Headless Horseman and his scare, the discard pile
    flipped over, the end of the game; at every player count and variant."""
    n, options = config
    steps = transitions(n, options, policy, games=4, seed=2)
    assert check_chance_free(n, options, steps) > 60


def check_spins(n: int, options: dict, steps: list[tuple], board: C.Board = C.BOARD) -> int:
    """Every step of ``steps`` with chance gives a next state and rewards the reference
    reaches with some spins (with ``reshuffle``, the same cards, turns and choices); returns
    how many were checked."""
    env, game = make_game(n, options, board)
    steps = [s for s in steps if s[4]]
    state, rewards = batched_step(game, steps, seed=4)
    shuffles = 0
    for row, (before, action, after, _, _) in enumerate(steps):
        got = fields(to_reference(state, row, np.random.default_rng(0)))
        try:
            outcomes = reference_outcomes(env.rules, before, action)
        except Shuffled:  # the same cards in the same places, the piles' order aside
            cards = [c for h in got["hands"] for c in h] + got["draw_pile"] + got["discard"]
            assert sorted(cards + got["row"]) == list(range(30))
            assert (got["turns"], got["pending"]) == (after["turns"], after["pending"])
            shuffles += 1
            continue
        reached = [r for s, r in outcomes if s == got]
        assert reached, (row, got, [s for s, _ in outcomes][:3])
        assert rewards[row].tolist() == pytest.approx(list(reached[0]), abs=1e-6)
    assert shuffles < len(steps)
    return len(steps)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_steps_with_spins_reach_a_reference_outcome(config):
    """Tree, Split Path, "Ichabod!" draws and scares onto the Spinning Tree: the batched next
    state and rewards are among those the reference reaches with some spins (with
    ``reshuffle``, the shuffled piles hold the same cards and counts)."""
    n, options = config
    assert check_spins(n, options, transitions(n, options, random_policy, 5, seed=3)) >= 5


def test_other_boards_equal_the_reference():
    """The board is data: on the first-guess board (Horseman at -10, trees whose spins
    reach scare spaces and secret paths) chance-free steps and steps with spins agree too."""
    board = C.FIRST_GUESS_BOARD
    for n, policy in ((2, random_policy), (3, lowest_policy), (4, random_policy)):
        steps = transitions(n, {}, policy, 6, seed=n, board=board)
        assert check_chance_free(n, {}, steps, board) > 50
        assert check_spins(n, {}, steps, board) > 5


@pytest.mark.parametrize("config", CONFIGS[:3] + CONFIGS[5:7], ids=config_id)
def test_joint_steps_equal_the_reference_apply_joint(config):
    """``apply_joint`` (a whole play round at once, as the Parallel env plays it) equals the
    reference ``apply_joint`` on every chance-free round."""
    n, options = config
    env, game = make_game(n, options)
    rng = np.random.default_rng(8)
    rounds = []
    for before, *_ in transitions(n, options, random_policy, 10, seed=6):
        if before.actor != 0:
            continue
        joint = [random_policy(None, env.rules.legal_mask_for(before, s), rng) for s in range(n)]
        after = copy.deepcopy(before)
        after.rng = script = Script(fallback=rng)
        rewards = env.rules.apply_joint(after, joint)
        if not script.used:
            rounds.append((before, joint, fields(after), rewards))
    state = from_reference([r[0] for r in rounds])
    actions = torch.tensor([r[1] for r in rounds])
    rewards = game.apply_joint(state, actions, torch.Generator().manual_seed(0))
    for row, (_, _, after, expected) in enumerate(rounds):
        assert fields(to_reference(state, row, rng)) == after
        assert rewards[row].tolist() == pytest.approx(list(expected), abs=1e-6)
    assert len(rounds) > 25


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_many_chance_free_steps_equal_the_reference(config):
    """At least 10^5 chance-free states over all configurations (random, heuristic and
    lowest-card play)."""
    n, options = config
    start, checked, seed = time.perf_counter(), 0, 10
    while checked < 100_000 // len(CONFIGS):
        for policy in (random_policy, heuristic_policy, lowest_policy):
            checked += check_chance_free(n, options, transitions(n, options, policy, 40, seed))
            seed += 1
    print(f"{config_id(config)}: {checked} states in {time.perf_counter() - start:.1f} s")
    assert checked >= 100_000 // len(CONFIGS)


# ----------------------------------------------------------------------------- distributions
def play_reference(n: int, policy, games: int, seed: int) -> np.ndarray:
    """``[games, 3]``: agent-steps, won, scares of reference games."""
    env = envs.make(ENV, num_players=n).unwrapped
    rules, encoder = env.rules, env.encoder
    rng = np.random.default_rng(seed)
    rows = []
    for game in range(games):
        state = rules.new_game(np.random.default_rng(seed + game))
        steps = 0
        while not rules.is_over(state):
            obs = encoder.observe(state, state.actor)
            rules.apply(state, policy(obs, rules.legal_mask(state), rng))
            steps += 1
        rows.append((steps, state.outcome == 1, state.flipped))
    return np.array(rows, dtype=float)


def play_batched(n: int, agent: str, games: int, seed: int) -> np.ndarray:
    """``[games, 3]``: agent-steps, won, scares of the first game of each of ``games`` rows
    (one game per row: games that end early are not over-counted)."""
    benv = envs.make_batched(ENV, num_players=n, batch_size=games)
    policy = (BatchedRandom if agent == "random" else BatchedFocal)(
        n, benv.device, torch.Generator().manual_seed(seed)
    )
    out = benv.reset(seed=seed)
    result = torch.zeros(games, 3)
    finished = torch.zeros(games, dtype=torch.bool)
    steps = 0
    while not bool(finished.all()):
        out = benv.step(policy.act(out["observation"], out["action_mask"], out["seat"]))
        steps += 1
        first = out["done"] & ~finished
        figures = out["figures"]
        won = (figures["outcome"] == 1).float()
        row = torch.stack([torch.full_like(won, steps), won, figures["scares"].float()], 1)
        result[first] = row[first]
        finished |= first
    return result.numpy()


def check_distributions(n: int, agent: str, games: int, seed: int, cases: int = 1) -> None:
    policy = random_policy if agent == "random" else heuristic_policy
    reference = play_reference(n, policy, games, seed)
    batched = play_batched(n, agent, games, seed + 1)
    names = ["agent-steps", "win rate", "scares"]
    assert_same_means(
        {what: (batched[:, c], reference[:, c]) for c, what in enumerate(names)}, cases=cases
    )


@pytest.mark.parametrize("agent, games", [("random", 1000), ("heuristic", 400)])
def test_game_length_wins_and_scares_agree_with_the_reference(agent, games):
    """Distributions over whole games (chance included): game length, team win rate and
    scares of random and heuristic teams (3 players; the slow test plays 10^4)."""
    check_distributions(3, agent, games, seed=7)


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("agent", ["random", "heuristic"])
def test_distributions_agree_over_ten_thousand_games(n, agent):
    check_distributions(n, agent, 10_000, seed=11 * n, cases=6)


# ----------------------------------------------------------------------------- BatchedEnv
def test_same_seed_same_batch_and_masks_are_legal():
    a = envs.make_batched(ENV, num_players=3, batch_size=64)
    b = envs.make_batched(ENV, num_players=3, batch_size=64)
    out_a, out_b = a.reset(seed=5), b.reset(seed=5)
    g = torch.Generator().manual_seed(0)
    for _ in range(200):
        for key in ("observation", "action_mask", "seat", "reward", "done"):
            assert torch.equal(out_a[key], out_b[key]), key
        assert out_a["action_mask"].sum(dim=1).min() >= 1
        actions = (torch.rand(64, 31, generator=g) * out_a["action_mask"]).argmax(dim=1)
        out_a, out_b = a.step(actions), b.step(actions)
    assert torch.equal(a.state(), b.state())


@pytest.mark.parametrize(
    "bad, what",
    [
        (torch.zeros(8, dtype=torch.float32), "dtype"),
        (torch.zeros(7, dtype=torch.int64), "shape"),
        ([0] * 8, "list"),
    ],
)
def test_malformed_actions_raise_and_change_nothing(bad, what):
    benv = envs.make_batched(ENV, num_players=2, batch_size=8)
    benv.reset(seed=0)
    before = benv.state().clone()
    with pytest.raises(envs.IllegalActionError, match=what):
        benv.step(bad)
    assert torch.equal(benv.state(), before)


def test_illegal_rows_raise_naming_them_and_change_no_game():
    benv = envs.make_batched(ENV, num_players=2, batch_size=8)
    out = benv.reset(seed=0)
    actions = out["action_mask"].to(torch.int8).argmax(dim=1)
    not_held = (~out["action_mask"][3, :30]).nonzero()[0, 0]
    actions[3] = not_held
    actions[5] = A.PLAY_TOP  # every seat holds a hand: not allowed
    before = benv.state().clone()
    with pytest.raises(envs.IllegalActionError, match=r"rows \[3, 5\]"):
        benv.step(actions)
    assert torch.equal(benv.state(), before)


def test_penalty_ends_only_the_offending_rows():
    benv = envs.make_batched(
        ENV, num_players=3, batch_size=6, illegal_action="penalty", illegal_reward=-2.0
    )
    out = benv.reset(seed=1)
    actions = out["action_mask"].to(torch.int8).argmax(dim=1)
    actions[2] = A.PLAY_TOP
    out = benv.step(actions)
    assert out["done"].tolist() == [False, False, True, False, False, False]
    assert out["reward"][2].tolist() == [-2.0] * 3 and out["reward"][0].tolist() == [0.0] * 3
    assert out["seat"].tolist() == [1, 1, 0, 1, 1, 1]  # row 2 holds a fresh game


def test_bad_batch_size_and_unknown_options_raise_config_errors():
    with pytest.raises(envs.ConfigError, match="batch_size"):
        envs.make_batched(ENV, batch_size=0)
    with pytest.raises(envs.ConfigError, match="unknown option"):
        envs.make_batched(ENV, speed=4)
    with pytest.raises(envs.ConfigError, match="speed_tile"):
        envs.make_batched(ENV, speed_tile=3)


def test_auto_reset_reports_final_rewards_and_figures():
    """Ending the Game: a finished game reports +1 or -1 to every seat, its figures (outcome,
    scares, turns) before the new deal, and its row restarts at the farm."""
    benv = envs.make_batched(ENV, num_players=2, batch_size=32)
    out = benv.reset(seed=3)
    g = torch.Generator().manual_seed(0)
    finished = 0
    for _ in range(400):
        actions = (torch.rand(32, 31, generator=g) * out["action_mask"]).argmax(dim=1)
        out = benv.step(actions)
        done = out["done"]
        if done.any():
            outcome = out["figures"]["outcome"][done]
            assert set(outcome.tolist()) <= {-1, 1}
            assert torch.equal(out["reward"][done], outcome[:, None].float().expand(-1, 2))
            assert (out["figures"]["turns"][done] >= 1).all()
            ichabod = benv.game_state.ichabod[done]
            assert (ichabod == 0).all() and (benv.game_state.flipped[done] == 0).all()
            finished += int(done.sum())
    assert finished > 50


def test_a_batch_of_4096_fits_in_two_gib():
    game = make_game(4, {})[1]
    state = game.new_games(4096, torch.Generator().manual_seed(0))
    size = sum(t.element_size() * t.numel() for t in dataclasses.asdict(state).values())
    assert size < 2 * 2**30 / 100  # the state itself; observations add 4096 x 313 floats


# ----------------------------------------------------------------------------- baselines
@pytest.mark.parametrize("name", sorted(REFERENCE_HEURISTICS))
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_batched_heuristics_pick_the_reference_heuristics_action(config, name):
    """Each batched heuristic, on a batch of observations (from random, focal and its own
    play), picks what its reference heuristic picks on each one."""
    n, options = config
    reference = REFERENCE_HEURISTICS[name]()

    def own_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        return reference.act(obs, mask)

    env = envs.make(ENV, num_players=n, **options).unwrapped
    observations, masks = [], []
    for policy in (random_policy, heuristic_policy, own_policy):
        for before, *_ in transitions(n, options, policy, games=2, seed=5):
            observations.append(env.encoder.observe(before, before.actor))
            masks.append(env.rules.legal_mask(before))
    expected = [reference.act(o, m) for o, m in zip(observations, masks, strict=True)]
    got = BATCHED_HEURISTICS[name](n, torch.device("cpu")).act(
        torch.tensor(np.array(observations)),
        torch.tensor(np.array(masks)).bool(),
        torch.zeros(len(masks), dtype=torch.int64),
    )
    assert got.tolist() == expected


def test_the_heuristics_are_registered_by_name():
    """Every heuristic has a batched form under the same name."""
    assert set(REFERENCE_HEURISTICS) == set(BATCHED_HEURISTICS) == {"focal", "highest", "safe"}


def test_batched_random_is_uniform_over_the_legal_actions():
    """``BatchedRandom`` draws every legal action equally often (as ``RandomAgent``) and never
    an illegal one, on this game's masks; the same seed gives the same actions."""

    def seeded(seed: int) -> BatchedRandom:
        return BatchedRandom(3, torch.device("cpu"), torch.Generator().manual_seed(seed))

    mask = torch.zeros(20_000, 31, dtype=torch.bool)
    mask[:, [0, 7, 13, 29]] = True
    mask[::2, 30] = True  # half the rows have a fifth legal action
    seat = torch.zeros(20_000, dtype=torch.int64)
    actions = seeded(3).act(torch.zeros(20_000, 313), mask, seat)
    assert mask.gather(1, actions[:, None]).all()
    for rows, legal in (
        (slice(1, None, 2), [0, 7, 13, 29]),
        (slice(0, None, 2), [0, 7, 13, 29, 30]),
    ):
        counts = torch.bincount(actions[rows], minlength=31)[legal].double()
        expected = 10_000 / len(legal)
        sigma = math.sqrt(expected * (1 - 1 / len(legal)))
        assert ((counts - expected).abs() < 4 * sigma).all(), counts
    again = seeded(3).act(torch.zeros(20_000, 313), mask, seat)
    assert torch.equal(actions, again)


def test_batched_agent_specs_build_this_games_policies():
    """``heuristic:focal`` and ``random`` have batched forms for this game."""
    generator = torch.Generator().manual_seed(0)
    device = torch.device("cpu")
    assert isinstance(
        make_batched_agent("heuristic:focal", ENV, 3, device, generator), BatchedFocal
    )
    assert isinstance(make_batched_agent("random", ENV, 3, device, generator), BatchedRandom)
