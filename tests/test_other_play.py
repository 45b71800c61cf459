"""Other-Play in the torch trainer: each game and seat plays through its own
relabeling, drawn when the game starts; the games step with the real actions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.envs.core.errors import ConfigError
from cauldron.train.config import parse_config
from cauldron.train.other_play import OtherPlay


def test_a_relabelled_legal_action_is_a_real_legal_action():
    """Hocus Pocus at 3 players, every shift: the relabelled mask allows exactly the relabelled
    images of the real legal actions, and the mapped-back action is legal in the real game."""
    env = envs.make("hocus_pocus_v1", num_players=3)
    env.reset(seed=4)
    relabel = OtherPlay(
        "hocus_pocus_v1", 3, {}, n_envs=5, seats=3, device=torch.device("cpu"), seed=0
    )
    rng, moved = np.random.default_rng(0), False
    for _ in range(40):
        seen = env.observe(env.agent_selection)
        obs = torch.as_tensor(np.stack([seen["observation"]] * relabel.size))
        mask = torch.as_tensor(np.stack([seen["action_mask"]] * relabel.size)).float()
        every = torch.arange(relabel.size)
        view_obs, view_mask = relabel.view(every, obs, mask)
        assert bool((view_mask.sum(1) == mask.sum(1)).all())
        for g in range(relabel.size):
            for action in view_mask[g].nonzero().squeeze(1).tolist():
                real = relabel.real_actions(torch.tensor([g]), torch.tensor([action]))
                assert seen["action_mask"][int(real)] == 1
        moved = moved or any(not torch.equal(view_obs[g], obs[g]) for g in range(1, relabel.size))
        env.step(int(rng.choice(np.flatnonzero(seen["action_mask"]))))
    assert moved  # the shifts do change what a seat sees


def test_every_game_and_seat_draws_its_own_relabeling_anew_when_a_game_starts():
    relabel = OtherPlay(
        "hocus_pocus_v1", 4, {}, n_envs=256, seats=4, device=torch.device("cpu"), seed=1
    )
    first = relabel.drawn.clone()
    counts = torch.bincount(first.reshape(-1), minlength=relabel.size)
    assert bool((counts > 120).all())  # 1,024 draws spread over the five shifts
    assert bool((first != first[:, :1]).any(1).float().mean() > 0.9)  # seats differ in a game
    relabel.redraw(torch.tensor([3, 7]))
    unchanged = torch.ones(256, dtype=torch.bool)
    unchanged[[3, 7]] = False
    assert torch.equal(relabel.drawn[unchanged], first[unchanged])
    assert not torch.equal(relabel.drawn[[3, 7]], first[[3, 7]])
    seat = torch.randint(4, (256,))
    assert torch.equal(relabel.current(seat), relabel.drawn[torch.arange(256), seat])


@pytest.mark.parametrize("engine", ["reference", "batched"])
def test_a_run_plays_through_relabelings_and_redraws_them_at_each_new_game(tmp_path, engine):
    """A short Hocus Pocus run (games cut short by sunrise_steps 1 so that some end): it trains,
    every game started draws anew, and the steps carried only real legal actions (an illegal one
    raises in the games)."""
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog

    redrawn = []
    redraw = OtherPlay.redraw

    def spy(self, rows):
        redrawn.append(len(rows))
        redraw(self, rows)

    run = parse_config(
        {
            "env": "hocus_pocus_v1",
            "num_players": 2,
            "engine": engine,
            "options": {"sunrise_steps": 1},
            "num_envs": 8,
            "rollout_steps": 64,
            "total_steps": 8 * 64 * 4,
            "hidden": [16],
            "other_play": True,
            "belief_coef": 0.5,
            "eval_every": 4,
            "eval_games": 1,
            "out": str(tmp_path),
        }
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OtherPlay, "redraw", spy)
        train(run, RunLog(run.folder, quiet=True))
    assert redrawn[0] == 8  # the first draw, every game
    assert sum(redrawn[1:]) > 0  # games ended and drew anew
    assert (run.folder / "final.pt").is_file()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"env": "voodoo_mania_v1", "opponents": ["random"]}, "other_play: voodoo_mania_v1 has no"),
        ({"trainer": "sb3"}, "other_play needs trainer 'torch'"),
        ({"options": {"binx_cards": [[0, 1]]}}, "other_play"),
    ],
)
def test_other_play_is_refused_where_it_has_no_meaning(tmp_path, extra, message):
    base = {"env": "hocus_pocus_v1", "num_players": 2, "other_play": True, "out": str(tmp_path)}
    with pytest.raises(ConfigError, match=message):
        parse_config({**base, **extra})
