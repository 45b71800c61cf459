"""Batched Voodoo Mania through ``cauldron.envs.make_batched``: baselines equal to the reference
heuristics, game-length and winner distributions equal to the reference's, and the BatchedEnv
contract."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents.batched import BatchedRandom
from cauldron.agents.voodoo_mania.batched import (
    HEURISTICS,
    BatchedBlocker,
    BatchedChain,
    BatchedFast,
)
from cauldron.agents.voodoo_mania.heuristic import BlockerVoodoo
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania.batched import from_reference
from tests.distributions import assert_same_means
from tests.test_voodoo_mania_batched import (
    CHAIN,
    FAST,
    chain_policy,
    make_game,
    random_policy,
    transitions,
)

ENV = "voodoo_mania_v1"
CPU = torch.device("cpu")
BLOCKER = BlockerVoodoo()


def blocker_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    return BLOCKER.act(obs, mask)


# ----------------------------------------------------------------------------- baselines
@pytest.mark.parametrize("n, options", [(2, {}), (3, {"cycle_anytime": True}), (5, {})])
def test_batched_heuristics_choose_the_reference_action(n, options):
    """On the observations and masks of reference games (random, chain and blocker play), each
    batched heuristic picks exactly the reference heuristic's action."""
    env, game = make_game(n, options)
    states = [s[0] for s in transitions(n, options, random_policy, 1, seed=n, most=300)]
    states += [s[0] for s in transitions(n, options, chain_policy, 1, seed=n, most=300)]
    states += [s[0] for s in transitions(n, options, blocker_policy, 1, seed=n, most=300)]
    batch = from_reference(states)
    seat = game.acting_seat(batch)
    obs, mask = game.observe(batch, seat), game.legal_mask(batch)
    pairs = ((FAST, BatchedFast), (BLOCKER, BatchedBlocker), (CHAIN, BatchedChain))
    for reference, batched in pairs:
        chosen = batched(n, CPU, torch.Generator()).act(obs, mask, seat)
        expected = [reference.act(o, m) for o, m in zip(obs.numpy(), mask.numpy(), strict=True)]
        assert chosen.tolist() == expected, reference.name
        assert mask.gather(1, chosen[:, None]).all()
    assert len(set(expected)) >= 5  # waits, plays and cycles were all asked for


def test_heuristics_are_registered_by_name():
    assert set(HEURISTICS) == {"fast", "chain", "blocker"}


# ----------------------------------------------------------------------------- distributions
def batched_games(n: int, policy: str, games: int, seed: int, options: dict) -> np.ndarray:
    """``[games, 3]``: agent-steps, seat 0's last reward and seat 0's points of the first game
    in each of ``games`` rows."""
    benv = envs.make_batched(ENV, num_players=n, batch_size=games, **options)
    generator = torch.Generator().manual_seed(seed)
    kind = {"random": BatchedRandom, "chain": BatchedChain, "fast": BatchedFast}[policy]
    player = kind(n, CPU, generator)
    out = benv.reset(seed=seed)
    steps = torch.zeros(games, dtype=torch.int64)
    result = torch.full((games, 3), -9.0)
    while bool((result[:, 0] < 0).any()):
        out = benv.step(player.act(out["observation"], out["action_mask"], out["seat"]))
        steps += 1
        first = out["done"] & (result[:, 0] < 0)
        points = out["figures"]["scores"][:, 0].float()
        row = torch.stack([steps.float(), out["reward"][:, 0], points], 1)
        result = torch.where(first[:, None], row, result)
    return result.numpy()


def reference_games(n: int, policy: str, games: int, seed: int, options: dict) -> np.ndarray:
    """The same figures from the reference rules."""
    env = envs.make(ENV, num_players=n, **options).unwrapped
    rules, encoder = env.rules, env.encoder
    rng = np.random.default_rng(seed)
    agent = {"chain": CHAIN, "fast": FAST}.get(policy)
    rows = []
    for _ in range(games):
        state = rules.new_game(np.random.default_rng(int(rng.integers(2**31))))
        steps, rewards = 0, (0.0,)
        while not rules.is_over(state):
            mask = rules.legal_mask(state)
            if agent is None:
                action = int(rng.choice(np.flatnonzero(mask)))
            else:
                action = agent.act(encoder.observe(state, state.actor), mask)
            rewards = rules.apply(state, action)
            steps += 1
        rows.append((steps, rewards[0], state.scores[0]))
    return np.array(rows, dtype=float)


def compare_distributions(n: int, policy: str, games: int, options: dict, cases: int = 1) -> None:
    batched = batched_games(n, policy, games, n, options)
    reference = reference_games(n, policy, games, n, options)
    names = ["game length", "seat 0 reward", "seat 0 points"]
    assert_same_means(
        {what: (batched[:, c], reference[:, c]) for c, what in enumerate(names)}, cases=cases
    )


@pytest.mark.parametrize("policy, games", [("random", 200), ("chain", 80)])
def test_game_length_and_rewards_match_the_reference(policy, games):
    """Distributions (2 players, games cut at ``max_ticks=300`` so that both sides stay fast;
    whole games in the slow test): mean game length, seat 0's final reward (win, loss or the
    standing at the clock) and points agree with the reference's."""
    compare_distributions(2, policy, games, {"max_ticks": 300})


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["random", "fast", "chain"])
@pytest.mark.parametrize("n", [2, 4])
def test_game_length_and_winners_match_the_reference_at_scale(n, policy):
    """Whole games, 10^4 a side: mean game length, seat 0's win rate (reward) and points."""
    compare_distributions(n, policy, 10_000, {}, cases=6)


# ----------------------------------------------------------------------------- BatchedEnv
def test_same_seed_same_batch_and_masks_are_legal():
    a = envs.make_batched(ENV, num_players=3, batch_size=32)
    b = envs.make_batched(ENV, num_players=3, batch_size=32)
    out_a, out_b = a.reset(seed=5), b.reset(seed=5)
    g = torch.Generator().manual_seed(0)
    for _ in range(60):
        for key in ("observation", "action_mask", "seat", "reward", "done"):
            assert torch.equal(out_a[key], out_b[key]), key
        assert out_a["action_mask"][:, A.WAIT].all()
        actions = (torch.rand(32, A.NUM_ACTIONS, generator=g) * out_a["action_mask"]).argmax(1)
        out_a, out_b = a.step(actions), b.step(actions)
    assert torch.equal(a.state(), b.state())
    c = envs.make_batched(ENV, num_players=3, batch_size=32)
    assert not torch.equal(c.reset(seed=6)["observation"], a.reset(seed=5)["observation"])


@pytest.mark.parametrize(
    "bad, what",
    [
        (torch.zeros(8, dtype=torch.float32), "dtype"),
        (torch.zeros(7, dtype=torch.int64), "shape"),
        (torch.zeros(8, 1, dtype=torch.int64), "shape"),
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
    actions = torch.zeros(8, dtype=torch.int64)
    actions[3] = 12  # outside the action space
    illegal = (~out["action_mask"][5]).nonzero()[0, 0]
    actions[5] = illegal
    before = benv.state().clone()
    with pytest.raises(envs.IllegalActionError, match=r"rows \[3, 5\]"):
        benv.step(actions)
    assert torch.equal(benv.state(), before)


def test_penalty_ends_only_the_offending_rows():
    """``illegal_action="penalty"``: the offending seat alone gets ``illegal_reward`` (a
    competitive game), only that row's game ends and is dealt anew."""
    benv = envs.make_batched(
        ENV, num_players=3, batch_size=6, illegal_action="penalty", illegal_reward=-2.0
    )
    out = benv.reset(seed=1)
    actions = torch.zeros(6, dtype=torch.int64)
    actions[2] = (~out["action_mask"][2]).nonzero()[0, 0]
    out = benv.step(actions)
    assert out["done"].tolist() == [False, False, True, False, False, False]
    assert out["reward"][2].tolist() == [-2.0, 0.0, 0.0]
    assert out["reward"][0].tolist() == [0.0] * 3
    assert out["seat"].tolist() == [1, 1, 0, 1, 1, 1]  # row 2 holds a fresh game


def test_bad_batch_size_and_unknown_options_raise_config_errors():
    with pytest.raises(envs.ConfigError, match="batch_size"):
        envs.make_batched(ENV, batch_size=0)
    with pytest.raises(envs.ConfigError, match="unknown option"):
        envs.make_batched(ENV, cycle=True)
    with pytest.raises(envs.ConfigError, match="max_ticks"):
        envs.make_batched(ENV, max_ticks=0)
    with pytest.raises(envs.ConfigError, match="reward"):
        envs.make_batched(ENV, reward="points")


def test_auto_reset_reports_final_rewards_and_figures():
    """End of the Game: a finished game reports +1 to each winner (fewest points) and -1 to
    the others, its figures (points after three rounds, winners) before the new deal, and its
    row restarts at round 0 with fresh hands. The rows start from reference games' last
    ticks."""
    steps = transitions(2, {}, chain_policy, games=6, seed=8)
    ends = [i for i, s in enumerate(steps) if s[2]["phase"] == 1]
    states = [steps[i - 30][0] for i in ends]
    benv = envs.make_batched(ENV, num_players=2, batch_size=len(states))
    benv.reset(seed=3)
    benv.game_state = from_reference(states)
    out = {"observation": benv.game.observe(benv.game_state, benv.game_state.actor)}
    out["action_mask"], out["seat"] = benv.game.legal_mask(benv.game_state), benv.game_state.actor
    player = BatchedFast(2, CPU, torch.Generator())
    finished = torch.zeros(len(states), dtype=torch.bool)
    for _ in range(3000):
        out = benv.step(player.act(out["observation"], out["action_mask"], out["seat"]))
        done = out["done"]
        if done.any():
            figures = out["figures"]
            assert (figures["round"][done] == 3).all()
            winners = figures["winners"][done]
            assert torch.equal(out["reward"][done], torch.where(winners, 1.0, -1.0))
            scores = figures["scores"][done]
            assert torch.equal(winners, scores == scores.min(1, keepdim=True).values)
            state = benv.game_state
            assert (state.round[done] == 0).all() and (state.tick[done] == 0).all()
            assert (state.scores[done] == 0).all() and (state.pile_size[done] == 42).all()
            finished |= done
        if finished.all():
            break
    assert finished.all() and len(states) == 6


def test_max_ticks_truncates_and_ranks_the_standing():
    """``max_ticks``: the game is cut short, reported as truncated, and paid by the standing
    (points plus cards held: fewest win, ties shared); no winners in the figures."""
    benv = envs.make_batched(ENV, num_players=2, batch_size=16, max_ticks=5)
    out = benv.reset(seed=0)
    for _ in range(9):
        out = benv.step(torch.zeros(16, dtype=torch.int64))  # everybody waits
        assert not out["done"].any()
    out = benv.step(torch.zeros(16, dtype=torch.int64))
    assert out["done"].all() and out["truncated"].all()
    assert not out["figures"]["winners"].any()
    cards = out["figures"]["cards"]
    best = cards == cards.amin(1, keepdim=True)
    assert torch.equal(out["reward"], torch.where(best, 1.0, -1.0))


def test_truncation_loss_pays_every_player_minus_one():
    """Option ``truncation="loss"``: a game cut short at ``max_ticks`` pays −1 to every seat."""
    benv = envs.make_batched(
        ENV, num_players=3, batch_size=8, max_ticks=4, reward="per_round", truncation="loss"
    )
    benv.reset(seed=1)
    for _ in range(12):
        out = benv.step(torch.zeros(8, dtype=torch.int64))  # everybody waits
    assert out["done"].all() and out["truncated"].all()
    assert torch.equal(out["reward"], torch.full((8, 3), -1.0))


def test_joint_step_equals_the_aec_cycle():
    """``apply_joint`` (the Parallel env's tick) gives what the AEC order gives."""
    _, game = make_game(3, {})
    state = game.new_games(64, torch.Generator().manual_seed(0))
    other = dataclasses.replace(state, **{k: v.clone() for k, v in vars(state).items()})
    g = torch.Generator().manual_seed(1)
    joint = []
    for _ in range(3):
        mask = game.legal_mask(state)
        joint.append((torch.rand(mask.shape, generator=g) * mask).argmax(1))
        rewards = game.apply(state, joint[-1], torch.Generator().manual_seed(2))
    joint_rewards = game.apply_joint(other, torch.stack(joint, 1), torch.Generator().manual_seed(2))
    assert torch.equal(rewards, joint_rewards)
    for name, value in vars(state).items():
        assert torch.equal(value, getattr(other, name)), name


def test_a_batch_of_4096_fits_in_two_gib():
    _, game = make_game(6, {})
    state = game.new_games(4096, torch.Generator().manual_seed(0))
    size = sum(t.element_size() * t.numel() for t in vars(state).values())
    assert size < 2 * 2**30 / 20  # the state itself; state() adds 4096 x 2596 floats
