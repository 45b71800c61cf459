"""The batched engine's per-row seeds (``reset(seeds)``: a random stream per row, a row's games
independent of the rows around it) and numpy actions in ``step``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents.batched import draw_by_running_total
from cauldron.envs.core.batched import RowStreams, row_seeds
from cauldron.envs.core.errors import ConfigError

GAMES = [  # env, players, options, steps (the row's first game ends well before)
    ("hocus_pocus_v1", 4, {}, 400),
    ("headless_horseman_v1", 3, {"reshuffle": True}, 400),
    ("hexenflug_v1", 3, {}, 700),
    ("voodoo_mania_v1", 2, {}, 1000),
]


def trajectory(env_id: str, players: int, options: dict, seeds: list[int], row: int, steps: int):
    """Row ``row``'s observations, rewards and ends over ``steps`` steps of a batch reset with
    ``seeds``, every row playing random legal actions from its own stream."""
    benv = envs.make_batched(env_id, players, batch_size=len(seeds), **options)
    out = benv.reset(seed=seeds)
    agent = RowStreams(row_seeds(seeds, len(seeds)), salt=9)
    seen = []
    for _ in range(steps):
        running = out["action_mask"].view(torch.uint8).cumsum(1, dtype=torch.int32)
        out = benv.step(draw_by_running_total(running, agent))
        seen.append((out["observation"][row], out["reward"][row], out["done"][row]))
    return seen


@pytest.mark.parametrize("env_id, players, options, steps", GAMES)
def test_a_row_plays_the_same_games_whatever_rows_surround_it(env_id, players, options, steps):
    """Seed 7 in row 2 of 5 rows or in row 0 of 2: the same observations, rewards and ends,
    step by step into the row's next game (auto-reset deals from the row's stream too)."""
    a = trajectory(env_id, players, options, [3, 11, 7, 0, 2**64 - 1], 2, steps)
    b = trajectory(env_id, players, options, [7, 12], 0, steps)
    assert any(bool(done) for *_, done in a[:-20])  # the row went on into a second game
    for (obs_a, rew_a, done_a), (obs_b, rew_b, done_b) in zip(a, b, strict=True):
        assert torch.equal(obs_a, obs_b) and torch.equal(rew_a, rew_b) and done_a == done_b
    c = trajectory(env_id, players, options, [8, 12], 0, steps)
    assert any(not torch.equal(x[0], y[0]) for x, y in zip(a, c, strict=True))  # another seed


def test_an_integer_seed_still_seeds_the_batch_generator():
    """(The state encoding leaves out the draw pile's order: the tests read the pile.)"""
    benv = envs.make_batched("hexenflug_v1", 2, batch_size=4)
    benv.reset(seed=5)
    first = benv.game_state.draw_pile.clone()
    assert benv.chance is benv.generator
    benv.reset(seed=np.int64(5))
    assert torch.equal(benv.game_state.draw_pile, first)
    benv.reset(seed=[5, 5, 5, 6])
    pile = benv.game_state.draw_pile
    assert not torch.equal(pile, first)
    assert torch.equal(pile[0], pile[2]) and not torch.equal(pile[0], pile[3])


def test_streams_advance_only_for_the_rows_that_use_a_draw():
    streams = RowStreams(torch.tensor([1, 2, 3]))
    first = streams.rand((3, 4), rows=torch.tensor([True, False, True]))
    second = streams.rand((3, 4))
    assert torch.equal(first[1], second[1]) and not torch.equal(first[0], second[0])
    view = streams.take(torch.tensor([2]))
    assert not torch.equal(view.rand((1, 4))[0], second[2])  # the view shares the counters
    values = RowStreams(torch.arange(200)).rand((200, 500))
    assert float(values.min()) >= 0 and float(values.max()) < 1
    assert abs(float(values.mean()) - 0.5) < 0.01
    spins = RowStreams(torch.arange(300)).randint(3, (300, 100))
    shares = torch.bincount(spins.flatten(), minlength=3) / spins.numel()
    assert len(shares) == 3 and ((shares - 1 / 3).abs() < 0.02).all()
    with pytest.raises(ValueError, match="shape"):
        streams.rand((2, 4))


@pytest.mark.parametrize(
    "seeds, match",
    [
        ([1, 2], "one seed per row \\(3\\), got 2"),
        ([1, -2, 3], "got -2 in row 1"),
        ([1, True, 3], "got True in row 1"),
        ([1, 2.0, 3], "got 2.0 in row 1"),
        ([1, 2**64, 3], "from 0 to 2\\*\\*64 - 1"),
    ],
)
def test_bad_row_seeds_are_refused_before_anything_changes(seeds, match):
    benv = envs.make_batched("hexenflug_v1", 2, batch_size=3)
    benv.reset(seed=1)
    before = benv.state().clone()
    with pytest.raises(ConfigError, match=match):
        benv.reset(seed=seeds)
    assert torch.equal(benv.state(), before) and benv.chance is benv.generator


def test_numpy_actions_play_as_tensors_do():
    """An integer numpy array of shape [B] is the same move as the tensor; other shapes and
    dtypes are refused with one clear error and change nothing."""
    a = envs.make_batched("voodoo_mania_v1", 3, batch_size=6)
    b = envs.make_batched("voodoo_mania_v1", 3, batch_size=6)
    out_a, out_b = a.reset(seed=list(range(6))), b.reset(seed=list(range(6)))
    for _ in range(30):
        legal = out_a["action_mask"].int().argmax(1)
        out_a = a.step(legal)
        out_b = b.step(legal.numpy().astype(np.int32))
        assert torch.equal(out_a["observation"], out_b["observation"])
        assert torch.equal(out_a["reward"], out_b["reward"])
    before = b.state().clone()
    legal = out_b["action_mask"].int().argmax(1).numpy()
    for bad, problem in [
        (legal.astype(np.float64), "numpy array of dtype float64"),
        (legal.astype(bool), "numpy array of dtype bool"),
        (legal[:3], "numpy array of shape \\(3,\\)"),
        (legal[:, None], "numpy array of shape \\(6, 1\\)"),
    ]:
        with pytest.raises(envs.IllegalActionError, match=problem) as caught:
            b.step(bad)
        assert "integer numpy array" in str(caught.value)
    assert torch.equal(b.state(), before)
