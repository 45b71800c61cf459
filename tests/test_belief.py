"""The auxiliary belief target: a head on the actor's features predicts the
other seats' hidden hands from ``state()``, in training only."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents.torch_policy import PolicyNet, load_checkpoint
from cauldron.envs.core.errors import ConfigError
from cauldron.train import belief
from cauldron.train.config import parse_config


def played(env_id: str, num_players: int, steps: int, seed: int = 0):
    """An env after ``steps`` random legal moves."""
    env = envs.make(env_id, num_players=num_players)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return env


@pytest.mark.parametrize(
    ("env_id", "num_players"),
    [("hocus_pocus_v1", 4), ("hocus_pocus_v1", 2), ("headless_horseman_v1", 3)],
)
def test_targets_are_the_other_seats_hands_clockwise(env_id, num_players):
    env = played(env_id, num_players, steps=7)
    hands_now = [list(h) for h in env.unwrapped.game.hands]
    layout = belief.hand_layout(env_id, num_players)
    states = torch.as_tensor(np.stack([env.unwrapped.state()] * num_players))
    got = belief.targets(layout, states, torch.arange(num_players), None)
    assert got.shape == (num_players, (num_players - 1) * layout.per_seat)
    for seat in range(num_players):
        for k in range(1, num_players):
            other = (seat + k) % num_players
            block = got[seat, (k - 1) * layout.per_seat : k * layout.per_seat]
            assert sorted(block.nonzero().squeeze(1).tolist()) == sorted(hands_now[other])


def test_a_relabeling_gathers_each_hand_into_the_seats_view():
    layout = belief.HandLayout(start=1, per_seat=3, max_seats=3, players=2)
    states = torch.tensor([[9.0, 1, 0, 0, 0, 1, 1, 5, 5, 5]])  # seat 0: card 0; seat 1: 1 and 2
    relabel = torch.tensor([[2, 0, 1]])  # relabelled card j shows real card relabel[j]
    assert belief.targets(layout, states, torch.tensor([0]), None).tolist() == [[0, 1, 1]]
    assert belief.targets(layout, states, torch.tensor([0]), relabel).tolist() == [[1, 0, 1]]
    assert belief.targets(layout, states, torch.tensor([1]), None).tolist() == [[1, 0, 0]]


def test_figures_score_the_head_against_card_frequencies():
    target = torch.tensor([[1.0, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]])
    perfect = (target - 0.5) * 20  # logits that rank the held cards first
    figures = belief.figures(perfect, target, per_seat=4)
    assert figures["hit_rate"] == 1.0 and figures["bce"] < 1e-3
    # frequency ranks card 3 (always held) first, then card 0 (ties broken by index): 4 of 6
    assert figures["hit_rate_frequency"] == pytest.approx(4 / 6)
    freq = target.mean(0)
    expected = -(target * freq.log() + (1 - target) * (1 - freq).clamp(min=1e-6).log()).mean()
    assert figures["bce_frequency"] == pytest.approx(float(expected), rel=1e-4)


def test_public_hands_and_other_trainers_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="belief_coef: hexenflug_v1's hands are public"):
        belief.hand_layout("hexenflug_v1", 2)
    base = {"env": "headless_horseman_v1", "num_players": 3, "out": str(tmp_path)}
    with pytest.raises(ConfigError, match="belief_coef needs trainer 'torch'"):
        parse_config({**base, "trainer": "sb3", "belief_coef": 1.0})
    with pytest.raises(ConfigError, match="belief_coef"):
        parse_config({**base, "belief_coef": -1.0})
    with pytest.raises(ConfigError, match="belief_coef: hexenflug_v1's hands are public"):
        parse_config(
            {
                "env": "hexenflug_v1",
                "opponents": ["random"],
                "belief_coef": 1.0,
                "out": str(tmp_path),
            }
        )


@pytest.mark.parametrize("engine", ["reference", "batched"])
def test_a_run_learns_a_belief_that_stays_out_of_the_checkpoint(tmp_path, engine):
    """A short Horseman run: the head is trained (its figures are logged, finite, and beat the
    untrained head's loss of about log 2), its weights are in the resume state, not in the
    policy's checkpoint, and the policy is the plain actor (nothing reads the head)."""
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog

    run = parse_config(
        {
            "env": "headless_horseman_v1",
            "num_players": 3,
            "engine": engine,
            "num_envs": 16,
            "rollout_steps": 32,
            "total_steps": 16 * 32 * 6,
            "hidden": [32],
            "belief_coef": 1.0,
            "learning_rate": 3e-3,
            "eval_every": 3,
            "eval_games": 2,
            "out": str(tmp_path),
        }
    )
    final = train(run, RunLog(run.folder, quiet=True))
    rows = [line.split(",") for line in (run.folder / "metrics.csv").read_text().splitlines()[1:]]
    logged = {key: float(value) for _, key, value in rows if key.startswith("belief/")}
    names = {"bce", "bce_frequency", "hit_rate", "hit_rate_frequency"}
    assert set(logged) == {f"belief/{name}" for name in names}
    assert all(math.isfinite(v) for v in logged.values())
    assert logged["belief/bce"] < 0.6  # an untrained head's logits near 0: about log 2 = 0.69
    assert 0.0 <= logged["belief/hit_rate"] <= 1.0
    net, _ = load_checkpoint(final)
    assert not any("belief" in key for key in net.state_dict())
    state = torch.load(run.folder / "train_state.pt", weights_only=False)
    assert "belief" in state and "linear.weight" in state["belief"]


def test_features_are_what_the_logits_are_read_from():
    torch.manual_seed(0)
    obs, mask = torch.rand(5, 6), torch.ones(5, 4)
    for kwargs in [{}, {"recurrent": 7}]:
        net = PolicyNet(6, 4, [8], **kwargs)
        logits, memory, features = net.forward_actor(obs, mask)
        assert features.shape == (5, net.feature_size)
        assert torch.equal(logits, net.masked_logits(obs, mask)[0])
        head = net.head if kwargs else net.actor[1]
        torch.testing.assert_close(logits, head(features))
