"""PPO on a batched competitive table (issue 15, part 4): the learner's decisions alone train the
policy and the critic, and their advantages are those of the single-agent view, where the
opponents' moves happen inside one step."""

from __future__ import annotations

import torch

from train.ppo import critic_loss, gae


def test_critic_loss_ignores_the_opponents_moves():
    """Rows where an opponent moves (weight 0) change neither the critic's loss nor its gradient:
    valued on them too, Hexenflug's critic blurred the learner's examinations with the
    opponent's, and the learner learnt to skip its own (9% against random after 131k steps, where
    the reference engine reached 71%)."""
    torch.manual_seed(0)
    weight = torch.tensor([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    returns = torch.randn(6)
    predicted = torch.randn(6, requires_grad=True)
    loss = critic_loss(predicted, returns, weight)
    loss.backward()
    assert torch.equal(predicted.grad[weight == 0], torch.zeros(3))
    moved = returns + 5.0 * (weight == 0)
    assert torch.isclose(critic_loss(predicted, moved, weight), loss)
    learner = weight == 1
    expected = 0.5 * (predicted[learner] - returns[learner]).pow(2).mean()
    assert torch.isclose(loss, expected)


def test_critic_loss_with_every_row_the_learners_is_the_mean_squared_error():
    """The reference engine and cooperative tables (every row the learner's): the plain loss."""
    predicted, returns = torch.randn(5), torch.randn(5)
    expected = 0.5 * (predicted - returns).pow(2).mean()
    assert torch.isclose(critic_loss(predicted, returns, torch.ones(5)), expected)


def single_agent_view(rewards, values, dones, learners, next_value, next_done, n):
    """Column ``n`` as the reference engine's learner sees it: one step per learner decision,
    the rewards up to its next decision (or the game's end) summed, ``done`` where a game began
    since its previous decision."""
    rows = learners[:, n].nonzero().flatten().tolist()
    steps = len(rewards)
    summed, began = [], []
    for k, t in enumerate(rows):
        end = rows[k + 1] if k + 1 < len(rows) else steps
        total = 0.0
        for u in range(t, end):
            total += float(rewards[u, n])
            following = next_done[n] if u == steps - 1 else dones[u + 1, n]
            if following:
                break
        summed.append(total)
        since = dones[t : t + 1, n] if k == 0 else dones[rows[k - 1] + 1 : t + 1, n]
        began.append(float(since.max()))
    after = torch.cat([dones[rows[-1] + 1 :, n], next_done[n : n + 1]])
    return (
        rows,
        torch.tensor(summed)[:, None],
        values[rows, n][:, None],
        torch.tensor(began)[:, None],
        float(after.max()),
    )


def test_advantages_at_the_learners_decisions_are_the_single_agent_views():
    """Discount and lambda apply on the way into the learner's decisions only, so each learner
    row's advantage equals CleanRL's GAE over its single-agent view (opponents' rewards, such as
    the end of a game on an opponent's move, summed into the learner's step)."""
    torch.manual_seed(1)
    steps, envs_, gamma, lam = 60, 8, 0.9, 0.7
    learners = (torch.rand(steps, envs_) < 0.5).float()
    learners[0] = 1.0
    dones = (torch.rand(steps, envs_) < 0.08).float()
    rewards = torch.randn(steps, envs_) * (torch.rand(steps, envs_) < 0.3)
    values = torch.randn(steps, envs_)
    next_value, next_done = torch.randn(envs_), torch.zeros(envs_)
    ours = gae(
        rewards, values, dones, learners, next_value, next_done, torch.ones(envs_), gamma, lam
    )
    for n in range(envs_):
        rows, summed, seen, began, done_after = single_agent_view(
            rewards, values, dones, learners, next_value, next_done, n
        )
        expected = gae(
            summed,
            seen,
            began,
            torch.ones_like(summed),
            next_value[n : n + 1],
            torch.tensor([done_after]),
            torch.ones(1),
            gamma,
            lam,
        )
        assert torch.allclose(ours[rows, n], expected[:, 0], atol=1e-5)
