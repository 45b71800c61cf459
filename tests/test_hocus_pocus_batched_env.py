"""Batched Hocus Pocus through ``cauldron.envs.make_batched``: game-length, stun and win
distributions equal to the reference's, the baselines equal to the reference heuristic, and the
BatchedEnv contract."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents import HEURISTICS
from cauldron.agents.batched import BatchedRandom
from cauldron.agents.hocus_pocus.heuristic import HocusPocusHeuristic
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus.phases import Phase
from tests.distributions import assert_same_means
from tests.test_hocus_pocus_batched import CONFIGS, POLICIES, config_id, mixed_policy, transitions

ENV = "hocus_pocus_v1"
CPU = torch.device("cpu")


# ----------------------------------------------------------------------------- distributions
def batched_games(n: int, policy: str, games: int, seed: int) -> np.ndarray:
    """``[games, 3]``: agent-steps, stuns and won of the first game in each of ``games`` rows
    (one game per row: short games are not over-counted)."""
    from cauldron.agents.hocus_pocus.batched import BatchedGreedy

    benv = envs.make_batched(ENV, num_players=n, batch_size=games)
    generator = torch.Generator().manual_seed(seed)
    player = (BatchedRandom if policy == "random" else BatchedGreedy)(n, CPU, generator)
    out = benv.reset(seed=seed)
    steps = torch.zeros(games, dtype=torch.int64)
    result = torch.full((games, 3), -1, dtype=torch.int64)
    while bool((result[:, 0] < 0).any()):
        out = benv.step(player.act(out["observation"], out["action_mask"], out["seat"]))
        steps += 1
        first = out["done"] & (result[:, 0] < 0)
        figures = out["figures"]
        row = torch.stack([steps, figures["stuns"], (figures["outcome"] == 1).long()], 1)
        result = torch.where(first[:, None], row, result)
    return result.numpy()


def reference_games(n: int, policy: str, games: int, seed: int) -> np.ndarray:
    """The same figures from the reference rules."""
    env = envs.make(ENV, num_players=n).unwrapped
    rules, encoder = env.rules, env.encoder
    rng = np.random.default_rng(seed)
    heuristic = HocusPocusHeuristic()
    rows = []
    for _ in range(games):
        state = rules.new_game(np.random.default_rng(int(rng.integers(2**31))), 0)
        steps = 0
        while not rules.is_over(state):
            mask = rules.legal_mask(state)
            if policy == "random":
                action = int(rng.choice(np.flatnonzero(mask)))
            else:
                action = heuristic.act(encoder.observe(state, state.actor), mask)
            rules.apply(state, action)
            steps += 1
        rows.append((steps, state.stuns, state.outcome == 1))
    return np.array(rows, dtype=float)


def compare_distributions(
    n: int, policy: str, games: int, confidence: float = 0.95, figures: int = 3, cases: int = 1
) -> None:
    """The first ``figures`` of game length, stuns and win rate agree (together over
    ``cases``)."""
    batched = batched_games(n, policy, games, seed=n)
    reference = reference_games(n, policy, games, seed=n)
    names = ("game length", "stuns", "win rate")[:figures]
    assert_same_means(
        {what: (batched[:, c], reference[:, c]) for c, what in enumerate(names)},
        confidence,
        cases,
    )


@pytest.mark.parametrize("n, policy, games", [(4, "random", 120), (3, "heuristic", 100)])
def test_game_length_stuns_and_wins_match_the_reference(n, policy, games):
    """Distributions over whole games (chance included): game length and stuns of random and
    greedy teams. A few hundred games: 99% together and no win rate (a 10% event) here, so
    that the default run is no lottery; the slow test compares all three over 10^4 games a
    side at every player count, 95% together."""
    compare_distributions(n, policy, games, confidence=0.99, figures=2)


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["random", "heuristic"])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_distributions_match_the_reference_over_ten_thousand_games(n, policy):
    compare_distributions(n, policy, 10_000, cases=10)


# ----------------------------------------------------------------------------- BatchedEnv
def play(benv, steps: int, seed: int) -> list[dict]:
    policy = BatchedRandom(benv.num_players, CPU, torch.Generator().manual_seed(seed))
    out = benv.reset(seed=seed)
    outs = [out]
    for _ in range(steps):
        out = benv.step(policy.act(out["observation"], out["action_mask"], out["seat"]))
        outs.append(out)
    return outs


def test_same_seed_same_batch():
    a = play(envs.make_batched(ENV, num_players=4, batch_size=8), 60, seed=5)
    b = play(envs.make_batched(ENV, num_players=4, batch_size=8), 60, seed=5)
    c = play(envs.make_batched(ENV, num_players=4, batch_size=8), 60, seed=6)
    for x, y in zip(a, b, strict=True):
        for key in ("observation", "action_mask", "seat", "reward", "done"):
            assert torch.equal(x[key], y[key]), key
    assert not torch.equal(a[-1]["observation"], c[-1]["observation"])
    assert all(bool(o["action_mask"].any(1).all()) for o in a)


def test_bad_actions_raise_naming_rows_and_change_no_game():
    benv = envs.make_batched(ENV, num_players=3, batch_size=4)
    out = benv.reset(seed=0)
    before = benv.state().clone()
    legal = out["action_mask"].int().argmax(1)
    for bad in (legal.float(), legal[:3], legal[:, None], legal.tolist(), legal.bool()):
        with pytest.raises(envs.IllegalActionError):
            benv.step(bad)
    illegal = legal.clone()
    illegal[1] = A.FINISH  # nothing to finish while asking
    illegal[3] = A.NUM_ACTIONS
    with pytest.raises(envs.IllegalActionError, match=r"rows \[1, 3\]"):
        benv.step(illegal)
    assert torch.equal(benv.state(), before)


def test_penalty_ends_only_the_offending_rows():
    benv = envs.make_batched(
        ENV, num_players=3, batch_size=4, illegal_action="penalty", illegal_reward=-5.0
    )
    out = benv.reset(seed=1)
    actions = out["action_mask"].int().argmax(1)
    actions[2] = A.BILLY  # a trick while asking
    before = copy.deepcopy(benv.game_state)
    out = benv.step(actions)
    assert out["done"].tolist() == [False, False, True, False]
    assert out["reward"][2].tolist() == [-5.0] * 3  # the team shares the penalty
    assert out["reward"][[0, 1, 3]].abs().sum() == 0
    assert (benv.game_state.phase[[0, 1, 3]] == Phase.ACT).all()  # they asked: now to act
    assert int(benv.game_state.phase[2]) == Phase.ASK and int(benv.game_state.turns[2]) == 1
    assert torch.equal(benv.game_state.questions[[0, 1, 3]], benv.game_state.questions[[0, 1, 3]])
    assert not before.questions.any() and not benv.game_state.questions[2].any()


@pytest.mark.parametrize(
    "kwargs",
    [{"batch_size": 0}, {"batch_size": 2.5}, {"num_players": 7}, {"sunrise": 2}, {"board": ()}],
)
def test_bad_configuration_raises_config_error(kwargs):
    with pytest.raises(envs.ConfigError):
        envs.make_batched(ENV, **{"batch_size": 4, **kwargs})


def test_auto_reset_reports_final_rewards_and_stuns():
    """End of the Game: a finished game's last step reports its shared reward (+1 won, -1
    lost) and its stuns; the row then holds a fresh deal (turn 1, nobody stunned)."""
    benv = envs.make_batched(ENV, num_players=2, batch_size=12, sunrise_steps=1)
    from cauldron.agents.hocus_pocus.batched import BatchedGreedy

    policy = BatchedGreedy(2, CPU, torch.Generator().manual_seed(0))
    out = benv.reset(seed=2)
    outcomes = set()
    for _ in range(120):
        out = benv.step(policy.act(out["observation"], out["action_mask"], out["seat"]))
        rows = out["done"].nonzero().flatten()
        if len(rows):
            outcome = out["figures"]["outcome"][rows]
            outcomes |= set(outcome.tolist())
            assert torch.equal(out["reward"][rows], outcome[:, None].float().expand(-1, 2))
            assert torch.equal(out["figures"]["stuns"][rows], (outcome == 1).long())
            assert (benv.game_state.turns[rows] == 1).all()
            assert (benv.game_state.stunned[rows] == -1).all()
    assert outcomes == {-1, 1}


def test_a_batch_of_4096_fits_in_two_gib():
    benv = envs.make_batched(ENV, num_players=6, batch_size=4096)
    out = benv.reset(seed=0)
    state = benv.game_state
    size = sum(getattr(state, f.name).nbytes for f in dataclasses.fields(state))
    size += sum(t.nbytes for t in out.values() if isinstance(t, torch.Tensor))
    assert size < 2**30 / 8


# ----------------------------------------------------------------------------- baselines
def own_play(n: int, options: dict, name: str, seed: int) -> tuple[list, list]:
    """Observations and masks of one reference game of ``heuristic:<name>`` in every seat, a
    random legal action one time in four (reaches rarer states)."""
    env = envs.make(ENV, num_players=n, **options).unwrapped
    rules, encoder = env.rules, env.encoder
    heuristic = HEURISTICS[ENV][name]()
    rng = np.random.default_rng(seed)
    state = rules.new_game(np.random.default_rng(seed), 0)
    observations, masks = [], []
    while not rules.is_over(state) and state.turns < 600:
        observation, mask = encoder.observe(state, state.actor), rules.legal_mask(state)
        observations.append(observation)
        masks.append(mask)
        if rng.random() < 0.25:
            rules.apply(state, int(rng.choice(np.flatnonzero(mask))))
        else:
            rules.apply(state, heuristic.act(observation, mask))
    return observations, masks


@pytest.mark.parametrize("name", ["greedy", "planner", "consensus"])
@pytest.mark.parametrize("index", range(len(CONFIGS)), ids=[config_id(c) for c in CONFIGS])
def test_batched_heuristics_pick_the_reference_heuristics_action(index, name):
    """On the observations and masks of reference games (random, greedy, mixed play and the
    heuristic's own), the batched heuristic picks exactly what the reference one picks, in
    every phase."""
    from cauldron.agents.hocus_pocus.batched import HEURISTICS as BATCHED

    n, options = CONFIGS[index]
    env = envs.make(ENV, num_players=n, **options).unwrapped
    observations, masks = own_play(n, options, name, seed=index)
    for policy in (POLICIES[index % len(POLICIES)], mixed_policy):
        for before, *_ in transitions(n, options, policy, games=1, seed=5):
            observations.append(env.encoder.observe(before, before.actor))
            masks.append(env.rules.legal_mask(before))
    heuristic = HEURISTICS[ENV][name]()
    expected = [heuristic.act(o, m) for o, m in zip(observations, masks, strict=True)]
    mask = torch.tensor(np.array(masks)).bool()
    got = BATCHED[name](n, CPU, torch.Generator()).act(
        torch.tensor(np.array(observations)), mask, torch.zeros(len(masks), dtype=torch.int64)
    )
    assert got.tolist() == expected
    assert mask.gather(1, got[:, None]).all()


def test_heuristics_are_registered_by_name():
    from cauldron.agents.batched import batched_heuristics
    from cauldron.agents.hocus_pocus.batched import BatchedGreedy
    from cauldron.agents.hocus_pocus.consensus_batched import BatchedConsensus
    from cauldron.agents.hocus_pocus.planner_batched import BatchedPlanner

    assert batched_heuristics(ENV) == {
        "greedy": BatchedGreedy,
        "planner": BatchedPlanner,
        "consensus": BatchedConsensus,
    }
