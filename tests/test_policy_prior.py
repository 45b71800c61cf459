"""A heuristic as a prior of the PyTorch policy (``prior``): the prior adds its weight
to exactly the heuristic's action, a strong prior plays the heuristic's moves, the learnt weight
survives a checkpoint, the trainer learns the weight, and configs that cannot have a prior are
refused naming the field."""

from __future__ import annotations

import pytest
import torch

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.agents.torch_policy import PolicyNet, save_checkpoint
from cauldron.envs.hocus_pocus import actions as A
from cauldron.train.config import parse_config
from cauldron.train.ppo import train
from cauldron.train.runlog import RunLog
from tests.test_factored_head import played_observations

HP = "hocus_pocus_v1"
PLANNER = "heuristic:planner"


def net(prior: str = "", weight: float = 0.0, head: str = "flat") -> PolicyNet:
    torch.manual_seed(0)
    return PolicyNet(1186, A.NUM_ACTIONS, [16], 0, 0, head, HP, prior, weight, 3)


@pytest.mark.parametrize("head", ["flat", "factored"])
def test_the_prior_adds_its_weight_to_the_heuristics_action_alone(head):
    obs, mask = played_observations(games=1)
    planner = make_agent(PLANNER, HP)
    pairs = zip(obs.numpy(), mask.numpy(), strict=True)
    expected = torch.tensor([planner.act(o, m) for o, m in pairs])
    with torch.no_grad():
        plain = net(head=head).masked_logits(obs, mask)[0]
        prior = net(PLANNER, 2.5, head).masked_logits(obs, mask)[0]
    bonus = torch.where(mask.bool(), prior - plain, 0.0)
    assert torch.allclose(bonus, 2.5 * torch.nn.functional.one_hot(expected, A.NUM_ACTIONS))
    assert mask.gather(1, expected[:, None]).all()


def test_a_strong_prior_plays_the_heuristics_moves_and_survives_a_checkpoint(tmp_path):
    """Weight 100: the greedy torch agent plays heuristic:planner's move at every decision of a
    3-player game; the checkpoint keeps the prior and the learnt weight; stored prior actions
    give the same logits as recomputed ones (what the PPO update relies on)."""
    strong = net(PLANNER, 100.0)
    with torch.no_grad():
        strong.prior_weight.fill_(77.0)
    path = tmp_path / "prior.pt"
    save_checkpoint(strong, HP, path)
    agent, planner = make_agent(f"torch:{path}", HP), make_agent(PLANNER, HP)
    assert agent.net.prior == PLANNER and float(agent.net.prior_weight.detach()) == 77.0
    env = envs.make(HP, num_players=3)
    env.reset(seed=5)
    decisions = 0
    for _name in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = agent.act(observation["observation"], observation["action_mask"])
        assert action == planner.act(observation["observation"], observation["action_mask"])
        env.step(action)
        decisions += 1
    assert decisions > 20
    obs, mask = played_observations(games=1)
    with torch.no_grad():
        stored = strong.prior_actions(obs, mask)
        assert torch.equal(
            strong.masked_logits(obs, mask)[0], strong.masked_logits(obs, mask, None, stored)[0]
        )


def test_the_trainer_learns_the_prior_weight_and_saves_it(tmp_path):
    config = parse_config(
        {
            "env": HP,
            "num_players": 2,
            "prior": PLANNER,
            "prior_weight": 4.0,
            "centralized_critic": True,
            "total_steps": 256,
            "num_envs": 2,
            "rollout_steps": 64,
            "minibatches": 2,
            "epochs": 2,
            "hidden": [16],
            "eval_every": 100,
            "eval_games": 1,
            "out": str(tmp_path),
        }
    )
    checkpoint = train(config, RunLog(config.folder, quiet=True, plot=False))
    saved = torch.load(checkpoint, weights_only=True)
    assert saved["prior"] == PLANNER and saved["prior_weight"] == 4.0  # the starting value
    assert float(saved["state_dict"]["prior_weight"]) != 4.0  # and the learnt one


@pytest.mark.parametrize(
    "extra, match",
    [
        (
            {"prior": "heuristic:nope"},
            r"prior 'heuristic:nope' is not a batched heuristic of hocus_pocus_v1; priors: "
            r"\['heuristic:greedy', 'heuristic:planner', 'heuristic:consensus'\]",
        ),
        ({"prior": "random"}, "prior 'random' is not a batched heuristic"),
        ({"prior": PLANNER, "trainer": "sb3"}, "prior needs trainer 'torch'"),
    ],
)
def test_a_prior_that_cannot_be_is_refused_naming_the_field(extra, match):
    with pytest.raises(envs.ConfigError, match=match):
        parse_config({"env": HP, **extra})


def test_the_results_table_names_the_prior_a_run_contains():
    from cauldron.train.results import training_cell

    cell = training_cell({"threads": 1, "prior": PLANNER}, 5_349_376, 61.2)
    assert cell == "5,349,376 steps, 61 min, 1 thread, prior heuristic:planner"
    batched = training_cell({"engine": "batched"}, 10, 1)
    assert batched == "10 steps, 1 min, all threads, batched engine"
