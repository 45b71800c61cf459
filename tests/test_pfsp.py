"""Prioritized fictitious self-play on the batched engine: each new game draws
its opponent from the pool by how often the learner lost to it."""

from __future__ import annotations

import pytest
import torch

from cauldron.envs.core.errors import ConfigError
from cauldron.train.batched import BatchedGames
from cauldron.train.config import parse_config


def config(tmp_path, **extra):
    return parse_config(
        {
            "env": "hexenflug_v1",
            "num_players": 2,
            "engine": "batched",
            "num_envs": 512,
            "opponents": ["random", "heuristic:cautious", "heuristic:banker"],
            "opponent_sampling": "pfsp",
            "out": str(tmp_path),
            **extra,
        }
    )


def test_pfsp_draws_the_opponents_the_learner_loses_to_most_often(tmp_path):
    games = BatchedGames(config(tmp_path))
    games.reset([0])
    games.record = torch.tensor([[100.0, 0.0], [100.0, 50.0], [100.0, 98.0]])  # games, losses
    weights = games.opponent_weights()
    assert weights.tolist() == pytest.approx([(1 / 102) ** 2, (51 / 102) ** 2, (99 / 102) ** 2])
    games._draw_opponents(torch.ones(512, dtype=torch.bool))
    share = torch.bincount(games.opponent, minlength=3).float() / 512
    assert share[2] > 0.7 and share[0] < 0.02 and share[2] > share[1] > share[0]


def test_uniform_sampling_ignores_the_record(tmp_path):
    games = BatchedGames(config(tmp_path, opponent_sampling="uniform"))
    games.reset([0])
    games.record = torch.tensor([[100.0, 0.0], [100.0, 50.0], [100.0, 98.0]])
    assert games.opponent_weights().tolist() == [1.0, 1.0, 1.0]
    games._draw_opponents(torch.ones(512, dtype=torch.bool))
    assert torch.bincount(games.opponent, minlength=3).min() > 120


def test_ended_games_count_for_their_rows_opponent(tmp_path):
    games = BatchedGames(config(tmp_path, num_envs=4))
    games.reset([0])
    games.opponent = torch.tensor([0, 2, 2, 1])
    games._count_results(torch.tensor([True, True, True, False]), torch.tensor([1.0, -1.0, 1, -1]))
    assert games.record.tolist() == [[1.0, 0.0], [0.0, 0.0], [2.0, 1.0]]
    games.add_snapshot(games_net(games))
    assert games.record.shape == (4, 2) and games.record[3].tolist() == [0.0, 0.0]


def games_net(games):
    from cauldron.agents.torch_policy import PolicyNet

    return PolicyNet(games.observation_size, games.num_actions, [8])


def test_pfsp_learns_the_record_while_training_and_keeps_snapshots_in_step(tmp_path):
    """A short run (games cut at 30 steps, so that some end): the counts follow the games that
    ended, one row per snapshot."""
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog

    seen = []
    count = BatchedGames._count_results

    def spy(self, done, ret):
        count(self, done, ret)
        seen.append(self.record.clone())

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BatchedGames, "_count_results", spy)
        run = config(
            tmp_path,
            options={"max_steps": 30},
            num_envs=64,
            rollout_steps=16,
            total_steps=4096,
            minibatches=2,
            epochs=1,
            hidden=[16],
            self_play_every=1,
            eval_every=100,
            eval_games=2,
            final_eval_games=2,
        )
        train(run, RunLog(run.folder, quiet=True))
    assert seen, "no game ended"
    last = seen[-1]
    assert last.shape[0] > 3 and float(last[:, 0].sum()) >= 64
    assert bool((last[:, 1] <= last[:, 0]).all())


@pytest.mark.parametrize(
    "extra",
    [
        {"engine": "reference"},
        {"env": "headless_horseman_v1", "opponents": [], "num_players": 3},
    ],
)
def test_pfsp_needs_the_batched_engine_and_a_competitive_game(tmp_path, extra):
    with pytest.raises(ConfigError, match="opponent_sampling 'pfsp' needs engine 'batched'"):
        config(tmp_path, **extra)
