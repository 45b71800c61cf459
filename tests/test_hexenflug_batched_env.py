"""Batched Hexenflug through ``cauldron.envs.make_batched``: baselines equal to the reference
heuristics, game-length and winner distributions equal to the reference's, and the BatchedEnv
contract."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents.batched import BatchedRandom
from cauldron.agents.hexenflug.batched import (
    HEURISTICS,
    BatchedBanker,
    BatchedCautious,
    BatchedGreedy,
)
from cauldron.agents.hexenflug.heuristic import BankerHeuristic, cautious, greedy
from cauldron.envs.hexenflug import actions as A
from cauldron.envs.hexenflug.batched import from_reference, to_reference
from cauldron.envs.hexenflug.phases import Phase
from tests.distributions import assert_same_means
from tests.test_hexenflug_batched import canonical, engines, reference_states

CPU = torch.device("cpu")


# ----------------------------------------------------------------------------- baselines
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_batched_heuristics_choose_the_reference_action(n):
    """On the observations and masks of reference games (random and heuristic play, rare
    phases favoured), each batched heuristic picks exactly the reference heuristic's action."""
    rules, encoder, game = engines(n, {"beginner_crash_rule": n % 2 == 1})
    states = reference_states(rules, encoder, "random", 300, seed=n)
    states += reference_states(rules, encoder, "heuristic", 300, seed=n)
    batch = from_reference(states, CPU)
    seat = game.acting_seat(batch)
    obs, mask = game.observe(batch, seat), game.legal_mask(batch)
    pairs = (
        (cautious(), BatchedCautious),
        (greedy(), BatchedGreedy),
        (BankerHeuristic(), BatchedBanker),
    )
    for reference, batched in pairs:
        chosen = batched(n, CPU, torch.Generator()).act(obs, mask, seat)
        expected = [reference.act(o, m) for o, m in zip(obs.numpy(), mask.numpy(), strict=True)]
        assert chosen.tolist() == expected, reference.name
        assert mask.gather(1, chosen[:, None]).all()


def test_batched_random_draws_uniformly_among_legal_actions():
    """``random`` (cauldron.agents.batched.BatchedRandom, shared by every game) matches
    RandomAgent's distribution: on the widest mask of 200 Hexenflug states, repeated 20,000 times,
    every legal action's frequency lies within 3.5 standard errors of 1 / (number of legal actions),
    and no illegal one is drawn."""
    rules, encoder, game = engines(3, {})
    masks = game.legal_mask(from_reference(reference_states(rules, encoder, "random", 200, 1), CPU))
    mask = masks[masks.sum(1).argmax()].expand(20_000, -1)
    chosen = BatchedRandom(3, CPU, torch.Generator().manual_seed(0)).act(None, mask, None)
    counts = torch.bincount(chosen, minlength=mask.shape[1])
    legal = mask[0].nonzero().flatten()
    p = 1 / len(legal)
    half = 3.5 * (p * (1 - p) / 20_000) ** 0.5
    assert len(legal) >= 3 and counts[legal].sum() == 20_000
    assert ((counts[legal] / 20_000 - p).abs() <= half).all()


@pytest.mark.parametrize("n", [2, 4])  # both ends of the game: two and three colours exhausted
def test_batched_banker_chooses_the_reference_action_in_its_own_games(n):
    """Every state of two whole games of banker play (its examinations and skips, and the end
    of the game near the last colours' exhaustion): ``BatchedBanker`` picks ``heuristic:banker``'s
    action."""
    rules, encoder, game = engines(n, {})
    player, states = BankerHeuristic(), []
    for seed in range(2):
        state = rules.new_game(np.random.default_rng(seed), 0)
        while not rules.is_over(state):
            states.append(copy.deepcopy(state))
            rules.apply(
                state, player.act(encoder.observe(state, state.actor), rules.legal_mask(state))
            )
    batch = from_reference(states, CPU)
    seat = game.acting_seat(batch)
    obs, mask = game.observe(batch, seat), game.legal_mask(batch)
    chosen = BatchedBanker(n, CPU, torch.Generator()).act(obs, mask, seat)
    expected = [player.act(o, m) for o, m in zip(obs.numpy(), mask.numpy(), strict=True)]
    assert chosen.tolist() == expected
    examine = [s.phase == Phase.EXAMINE for s in states]
    skips = [e and a == A.SKIP for e, a in zip(examine, expected, strict=True)]
    assert any(skips) and sum(examine) > sum(skips)  # both branches of the banker were taken


def test_heuristics_are_registered_by_name():
    assert set(HEURISTICS) == {"cautious", "greedy", "banker"}


# ----------------------------------------------------------------------------- distributions
def batched_games(n: int, policy: str, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Agent-steps and seat 0's reward of the first game in each of ``games`` rows."""
    benv = envs.make_batched("hexenflug_v1", num_players=n, batch_size=games)
    generator = torch.Generator().manual_seed(seed)
    if policy == "random":
        players = [BatchedRandom(n, CPU, generator)] * 2
    else:
        players = [BatchedCautious(n, CPU, generator), BatchedGreedy(n, CPU, generator)]
    out = benv.reset(seed=seed)
    steps = torch.zeros(games, dtype=torch.int64)
    length = torch.full((games,), -1)
    reward = torch.zeros(games)
    while bool((length < 0).any()):
        obs, mask, seat = out["observation"], out["action_mask"], out["seat"]
        actions = torch.where(
            seat % 2 == 0, players[0].act(obs, mask, seat), players[1].act(obs, mask, seat)
        )
        out = benv.step(actions)
        steps += 1
        first = out["done"] & (length < 0)
        length = torch.where(first, steps, length)
        reward = torch.where(first, out["reward"][:, 0], reward)
    return length.numpy(), reward.numpy()


def reference_games(n: int, policy: str, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The same figures from the reference rules."""
    rules, encoder, _ = engines(n, {})
    rng = np.random.default_rng(seed)
    players = [cautious(), greedy()]
    lengths, rewards = [], []
    for _ in range(games):
        state = rules.new_game(np.random.default_rng(int(rng.integers(2**31))), 0)
        steps, reward = 0, (0.0,)
        while not rules.is_over(state):
            mask = rules.legal_mask(state)
            if policy == "random":
                action = int(rng.choice(np.flatnonzero(mask)))
            else:
                observation = encoder.observe(state, state.actor)
                action = players[state.actor % 2].act(observation, mask)
            reward = rules.apply(state, action)
            steps += 1
        lengths.append(steps)
        rewards.append(reward[0])
    return np.array(lengths), np.array(rewards)


def compare_distributions(n: int, policy: str, games: int, cases: int = 1) -> None:
    length, reward = batched_games(n, policy, games, seed=n)
    ref_length, ref_reward = reference_games(n, policy, games, seed=n)
    assert_same_means(
        {"game length": (length, ref_length), "seat 0 wins": (reward == 1.0, ref_reward == 1.0)},
        cases=cases,
    )


def test_game_length_and_winners_match_the_reference():
    """Distributions (random play, 2 players, 100 games a side): mean game length and seat 0's
    win rate agree (heuristic play, slower in the reference, and 10^4 games: the slow test)."""
    compare_distributions(2, "random", 100)


@pytest.mark.slow
@pytest.mark.parametrize(
    "n, policy", [(2, "random"), (3, "random"), (4, "random"), (5, "random"), (2, "heuristic")]
)
def test_game_length_and_winners_match_the_reference_at_scale(n, policy):
    """Distributions over 10^4 games a side (the reference heuristics take ~20 minutes a case,
    so heuristic play is checked at 2 players)."""
    compare_distributions(n, policy, 10_000, cases=5)


# ----------------------------------------------------------------------------- BatchedEnv
def play(benv, steps: int, seed: int, until_done: bool = False) -> list[dict]:
    """The outputs of ``steps`` random steps (or fewer: up to the first finished game)."""
    policy = BatchedRandom(benv.num_players, CPU, torch.Generator().manual_seed(seed))
    out = benv.reset(seed=seed)
    outs = [out]
    for _ in range(steps):
        out = benv.step(policy.act(out["observation"], out["action_mask"], out["seat"]))
        outs.append(out)
        if until_done and bool(out["done"].any()):
            break
    return outs


def test_same_seed_same_batch():
    a = play(envs.make_batched("hexenflug_v1", num_players=4, batch_size=16), 100, seed=5)
    b = play(envs.make_batched("hexenflug_v1", num_players=4, batch_size=16), 100, seed=5)
    c = play(envs.make_batched("hexenflug_v1", num_players=4, batch_size=16), 100, seed=6)
    assert all(torch.equal(x["observation"], y["observation"]) for x, y in zip(a, b, strict=True))
    assert not torch.equal(a[-1]["observation"], c[-1]["observation"])


def test_bad_actions_raise_naming_rows_and_change_no_game():
    benv = envs.make_batched("hexenflug_v1", num_players=2, batch_size=4)
    out = benv.reset(seed=0)
    before = benv.state().clone()
    legal = out["action_mask"].int().argmax(1)
    for bad in (legal.float(), legal[:3], legal[:, None], legal.tolist(), legal.bool()):
        with pytest.raises(envs.IllegalActionError):
            benv.step(bad)
    illegal = legal.clone()
    illegal[2] = 166  # finish examination: not legal at the start
    with pytest.raises(envs.IllegalActionError, match=r"rows \[2\]"):
        benv.step(illegal)
    assert torch.equal(benv.state(), before)


def test_penalty_ends_only_the_offending_rows():
    benv = envs.make_batched(
        "hexenflug_v1", num_players=3, batch_size=4, illegal_action="penalty", illegal_reward=-5.0
    )
    out = benv.reset(seed=1)
    actions = out["action_mask"].int().argmax(1)
    actions[1] = 166
    before = copy.deepcopy(benv.game_state)
    out = benv.step(actions)
    assert out["done"].tolist() == [False, True, False, False]
    assert out["reward"][1].tolist() == [-5.0, 0.0, 0.0]
    assert out["reward"][[0, 2, 3]].abs().sum() == 0
    assert int(benv.game_state.pile_size[0]) == int(before.pile_size[0]) - 1  # drew a card


@pytest.mark.parametrize(
    "kwargs",
    [{"batch_size": 0}, {"batch_size": 2.5}, {"num_players": 6}, {"colour_blind": True}],
)
def test_bad_configuration_raises_config_error(kwargs):
    with pytest.raises(envs.ConfigError):
        envs.make_batched("hexenflug_v1", **{"batch_size": 4, **kwargs})


def test_auto_reset_reports_final_rewards_and_scores():
    """A finished game's last step reports its rewards (±1, a winner among them), the final
    scores and the winners (those paid +1); the row then holds a fresh game (a full draw pile,
    turn 1)."""
    benv = envs.make_batched("hexenflug_v1", num_players=2, batch_size=16, max_steps=5_000)
    outs = play(benv, 3_000, seed=2, until_done=True)
    ended = [(o, o["done"].nonzero().flatten()) for o in outs[1:] if o["done"].any()]
    assert ended
    out, rows = ended[0]
    rewards = out["reward"][rows]
    assert ((rewards == 1.0) | (rewards == -1.0)).all() and (rewards == 1.0).any(1).all()
    scores = out["figures"]["scores"][rows]
    assert (scores.amax(1) > 0).all()
    assert torch.equal(out["figures"]["winners"][rows], rewards == 1.0)  # info["winners"]
    assert not out["figures"]["winners"][~out["done"]].any()  # none in a game still going
    assert not out["truncated"][rows].any()
    assert out is outs[-1]  # the rows were dealt again: the next game's first observation
    assert (benv.game_state.pile_size[rows] == 75).all() and (
        benv.game_state.turns[rows] == 1
    ).all()
    assert (out["observation"][rows, benv.game.layout["draw_pile_size"]] == 1.0).all()


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_new_games_are_reference_deals(n):
    """Setup (a chance step): each dealt row is a state the reference deals, its draw pile a
    permutation of the 75 Witch cards and the Spellbooks removed by player count."""
    rules, _, game = engines(n, {})
    start = torch.tensor([0, n - 1, 1, 0])
    batch = game.new_games(4, torch.Generator().manual_seed(n), start)
    for row in range(4):
        got = to_reference(batch, row, np.random.default_rng(0))
        expected = rules.new_game(np.random.default_rng(row), int(start[row]))
        assert sorted(got.draw_pile) == list(range(75))
        got.draw_pile = expected.draw_pile
        assert canonical(got) == canonical(expected)
    assert len({tuple(batch.draw_pile[r].tolist()) for r in range(4)}) == 4


def test_lowest_legal_policy_is_truncated_at_max_steps():
    """The degenerate policy that never lands ends every row at ``max_steps``,
    reported as truncation."""
    benv = envs.make_batched("hexenflug_v1", num_players=2, batch_size=8, max_steps=300)
    out = benv.reset(seed=0)
    for _ in range(300):
        out = benv.step(out["action_mask"].to(torch.int8).argmax(1))
    assert out["done"].all() and out["truncated"].all()
    assert (out["reward"] == 0).all()
