"""PPO on a batched competitive table: the learner's decisions alone train the
policy and the critic, and their advantages are those of the single-agent view, where the
opponents' moves happen inside one step."""

from __future__ import annotations

import torch

from cauldron.train.ppo import critic_loss, gae


def hexenflug_table(tmp_path, **settings):
    """A small PyTorch run on a batched 2-player Hexenflug table: 32 games, rollouts of 16."""
    from cauldron.train.config import parse_config

    return parse_config(
        {
            "env": "hexenflug_v1",
            "num_players": 2,
            "engine": "batched",
            "num_envs": 32,
            "rollout_steps": 16,
            "hidden": [16],
            "eval_every": 100,
            "eval_games": 1,
            "out": str(tmp_path),
            **settings,
        }
    )


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
    ours, settled = gae(
        rewards, values, dones, learners, next_value, next_done, torch.ones(envs_), gamma, lam
    )
    assert torch.equal(settled, torch.ones(steps, envs_))
    for n in range(envs_):
        rows, summed, seen, began, done_after = single_agent_view(
            rewards, values, dones, learners, next_value, next_done, n
        )
        expected, _ = gae(
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


def test_a_rollout_stopping_on_an_opponents_move_leaves_the_last_decision_out():
    """The rollout stops while the opponent moves: the learner's last decision has no next
    decision to bootstrap from (the critic never values the opponents' moves), so it and the
    steps after it are left out (advantage 0, settled 0), and the earlier decisions bootstrap from
    its value, as if the rollout had stopped at it. Bootstrapped from the unvalued opponent's
    position instead, Hexenflug's learner learnt to hand over its turn early."""
    torch.manual_seed(3)
    steps, gamma, lam = 7, 0.9, 0.7
    learners = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0])[:, None]
    rewards, values = torch.randn(steps, 1), torch.randn(steps, 1)
    dones = torch.zeros(steps, 1)
    ours, settled = gae(
        rewards,
        values,
        dones,
        learners,
        torch.tensor([50.0]),  # an opponent's position: must not leak in
        torch.tensor([0.0]),
        torch.tensor([0.0]),
        gamma,
        lam,
    )
    assert settled[:, 0].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert torch.equal(ours[3:], torch.zeros(4, 1))
    truncated, _ = gae(
        rewards[:3],
        values[:3],
        dones[:3],
        learners[:3],
        values[3],
        torch.tensor([0.0]),
        torch.tensor([1.0]),
        gamma,
        lam,
    )
    assert torch.allclose(ours[:3], truncated)


def test_a_game_ending_on_the_opponents_move_settles_the_last_decision():
    """A game that ends during the opponent's moves closes the learner's transition (the game's
    end pays its reward), even though the rollout stops on the next game's opponent move."""
    learners = torch.tensor([1.0, 0.0, 0.0, 0.0])[:, None]
    dones = torch.tensor([0.0, 0.0, 1.0, 0.0])[:, None]  # step 2 begins a new game
    rewards = torch.tensor([0.0, -1.0, 0.0, 0.0])[:, None]
    values = torch.tensor([0.3, 0.0, 0.0, 0.0])[:, None]
    zero = torch.tensor([0.0])
    ours, settled = gae(rewards, values, dones, learners, zero, zero, zero, 0.9, 0.7)
    assert settled[:, 0].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert torch.isclose(ours[0, 0], torch.tensor(-1.0 - 0.3))


def test_each_row_plays_its_own_opponents_choice_where_the_opponent_acts(tmp_path):
    """Where an opponent is to act, the row's action is its drawn pool member's choice for that
    row alone; where the learner is to act, the learner's action is played (opponents' choice
    0, ignored)."""
    from cauldron.train.batched import BatchedGames
    from cauldron.train.config import parse_config

    config = parse_config(
        {
            "name": "pool",
            "env": "hexenflug_v1",
            "num_players": 2,
            "engine": "batched",
            "num_envs": 32,
            "rollout_steps": 16,
            "out": str(tmp_path),
            "opponents": ["heuristic:cautious", "heuristic:greedy", "heuristic:banker"],
        }
    )
    games = BatchedGames(config)
    games.reset([0])
    generator = torch.Generator().manual_seed(0)
    checked = 0
    for _ in range(150):
        rows = games.rows
        chosen = games._opponent_actions()
        learner = rows["learner"].bool()
        assert torch.equal(chosen[learner], torch.zeros_like(chosen[learner]))
        for row in (~learner).nonzero().flatten().tolist():
            member = games.pool[int(games.opponent[row])]
            alone = member.act(
                rows["obs"][row : row + 1],
                rows["mask"][row : row + 1].bool(),
                rows["seat"][row : row + 1],
            )
            assert int(chosen[row]) == int(alone[0])
            assert bool(rows["mask"][row, chosen[row]])
            checked += 1
        keys = torch.rand(rows["mask"].shape, generator=generator)
        games.step(torch.where(rows["mask"].bool(), keys, -1.0).argmax(1))
    assert checked > 1000
    assert len(set(games.opponent.tolist())) == 3


def test_updates_feed_the_network_the_learners_decisions_alone(tmp_path, monkeypatch):
    """On a competitive batched table the minibatches hold only the rows PPO learns from: the
    rows fed to the network with gradients (the updates) are the learner's settled decisions,
    about half of Hexenflug's table at 2 players, each once per epoch."""
    from cauldron.agents.torch_policy import PolicyNet
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog

    config = hexenflug_table(
        tmp_path, total_steps=512, epochs=2, minibatches=4, opponents=["random"]
    )
    fed = []
    original = PolicyNet.forward_actor

    def recording(self, obs, *args):
        if torch.is_grad_enabled():
            fed.append(len(obs))
        return original(self, obs, *args)

    monkeypatch.setattr(PolicyNet, "forward_actor", recording)
    train(config, RunLog(config.folder, quiet=True, plot=False))
    per_epoch = sum(fed) / 2
    assert len(fed) == 2 * 4 and per_epoch == int(per_epoch)
    assert 0.3 * 512 < per_epoch < 0.7 * 512


def test_the_opponents_values_cancel_out_of_the_learners_advantages():
    """An opponent's step enters one ``delta`` with + its value and the next with - (discount
    and trace 1 between them), so the trainer may leave the opponents' rows unvalued: any values
    there give the learner's decisions the same advantages."""
    torch.manual_seed(5)
    steps, envs_ = 50, 6
    learners = (torch.rand(steps, envs_) < 0.5).float()
    dones = (torch.rand(steps, envs_) < 0.1).float()
    rewards = torch.randn(steps, envs_) * (torch.rand(steps, envs_) < 0.3)
    values = torch.randn(steps, envs_)
    following = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    args = (torch.randn(envs_), torch.zeros(envs_), following, 0.95, 0.8)
    ours, settled = gae(rewards, values, dones, learners, *args)
    scrambled = torch.where(learners.bool(), values, 100.0 * torch.randn(steps, envs_))
    theirs, settled_too = gae(rewards, scrambled, dones, learners, *args)
    decided = (learners * settled).bool()
    assert torch.equal(settled, settled_too)
    assert decided.sum() > 100
    assert torch.allclose(ours[decided], theirs[decided], atol=1e-4)
    assert not torch.allclose(ours[~learners.bool()], theirs[~learners.bool()], atol=1e-4)


def test_the_rollout_runs_the_network_on_the_learners_rows_alone(tmp_path, monkeypatch):
    """On a competitive batched table the opponents' actions come from the pool, so the rollout
    asks the network (policy and critic) for the learner's rows alone: at every table step as
    many rows as the learner decides, about half of Hexenflug's table at 2 players."""
    from cauldron.agents.torch_policy import PolicyNet
    from cauldron.train.batched import BatchedGames
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog

    config = hexenflug_table(tmp_path, total_steps=1024, opponents=["heuristic:greedy"])
    events = []
    originals = {name: getattr(PolicyNet, name) for name in ("masked_logits", "value")}
    step = BatchedGames.step

    def recording(name):
        def call(self, rows, *args):
            if not torch.is_grad_enabled():
                events.append((name, len(rows)))
            return originals[name](self, rows, *args)

        return call

    def stepping(self, actions):
        events.append(("step", int(self.rows["learner"].sum())))
        return step(self, actions)

    for name in originals:
        monkeypatch.setattr(PolicyNet, name, recording(name))
    monkeypatch.setattr(BatchedGames, "step", stepping)
    train(config, RunLog(config.folder, quiet=True, plot=False))
    steps = [i for i, (name, _) in enumerate(events) if name == "step"]
    assert len(steps) == 1024 // 32
    for i in steps:  # the next value and the final evaluation come after the last step
        deciding = events[i][1]
        assert events[i - 2 : i] == [("masked_logits", deciding), ("value", deciding)]
    assert 0.3 * 1024 < sum(events[i][1] for i in steps) < 0.7 * 1024
