"""Recurrent policies as batched agents: one memory per row and seat, the
same decisions as the per-game ``torch:`` agent, cleared when a row's game starts again."""

from __future__ import annotations

import numpy as np
import torch

from cauldron import envs
from cauldron.agents.batched import BatchedNet, make_batched_agent
from cauldron.agents.torch_policy import PolicyNet, TorchAgent, save_checkpoint
from cauldron.eval import batched

ENV = "voodoo_mania_v1"


def recurrent_net(seed: int = 0, env_id: str = ENV) -> PolicyNet:
    torch.manual_seed(seed)
    env = envs.make(env_id, num_players=3)
    obs = env.observation_space("player_0")["observation"].shape[0]
    net = PolicyNet(obs, env.action_space("player_0").n, [16], recurrent=8)
    for parameter in net.parameters():
        parameter.data.normal_(0.0, 0.5)  # far from uniform logits, so memories change choices
    return net.eval()


def test_a_recurrent_batched_net_decides_as_per_game_agents_with_their_own_memories():
    """Every row and seat of a 3-player batch played by one recurrent :class:`BatchedNet`,
    asked about changing subsets of rows, equals a per-game :class:`TorchAgent` per row and
    seat fed the same observations."""
    net = recurrent_net()
    rows, players = 6, 3
    policy = BatchedNet(net)
    policy.begin(list(range(rows)))
    agents = {(r, s): TorchAgent(net, "torch:test") for r in range(rows) for s in range(players)}
    for agent in agents.values():
        agent.reset(0)
    benv = envs.make_batched(ENV, players, batch_size=rows)
    out = benv.reset(seed=3)
    differ = 0
    for step in range(60):
        chosen = out["action_mask"].to(torch.int8).argmax(1)
        asked = torch.arange(rows)[torch.arange(rows) % 2 == step % 2]  # half the rows a step
        obs, mask, seat = (out[k][asked] for k in ("observation", "action_mask", "seat"))
        actions = policy.act_rows(asked, obs, mask.bool(), seat)
        for i, row in enumerate(asked.tolist()):
            agent = agents[row, int(seat[i])]
            expected = agent.act(obs[i].numpy(), mask[i].numpy().astype(np.int8))
            assert int(actions[i]) == expected, (step, row)
        fresh = TorchAgent(net, "torch:test")
        fresh.reset(0)
        differ += sum(
            int(actions[i]) != fresh.act(obs[i].numpy(), mask[i].numpy().astype(np.int8))
            for i in range(len(asked))
        )
        chosen[asked] = actions
        out = benv.step(chosen)
    assert differ > 0, "the memory never changed a decision: the test would not see it lost"


def test_forget_clears_a_rows_memories_and_begin_every_row():
    net = recurrent_net(1)
    policy = BatchedNet(net)
    benv = envs.make_batched(ENV, 2, batch_size=4)
    out = benv.reset(seed=0)
    for _ in range(5):
        out = benv.step(policy.act(out["observation"], out["action_mask"].bool(), out["seat"]))
    assert bool(policy.memory[1].abs().sum() > 0)
    policy.forget(torch.tensor([False, True, False, False]))
    assert bool(policy.memory[1].abs().sum() == 0) and bool(policy.memory[0].abs().sum() > 0)
    policy.begin()
    assert policy.memory is None


def test_eval_batched_plays_a_recurrent_checkpoint_and_its_results_do_not_depend_on_chunk(
    tmp_path,
):
    horseman = "headless_horseman_v1"  # short games
    path = tmp_path / "recurrent.pt"
    save_checkpoint(recurrent_net(2, horseman), horseman, path)
    spec = f"torch:{path}"
    assert isinstance(make_batched_agent(spec, horseman, 3, torch.device("cpu"), None), BatchedNet)
    small = batched.evaluate(horseman, 3, spec, games=40, chunk=7, progress=False)
    large = batched.evaluate(horseman, 3, spec, games=40, chunk=40, progress=False)
    assert np.array_equal(small.won, large.won) and np.array_equal(small.score, large.score)


def test_a_recurrent_snapshot_plays_as_a_training_opponent_with_memories_per_row(tmp_path):
    """The batched trainer's opponent pool: a recurrent snapshot of the learner answers for the
    rows it plays in, keeps their memories, and forgets a row's when its game ends."""
    from cauldron.train.batched import BatchedGames
    from cauldron.train.config import parse_config

    config = parse_config(
        {
            "env": ENV,
            "num_players": 2,
            "engine": "batched",
            "num_envs": 4,
            "recurrent": 8,
            "opponents": ["random"],
            "out": str(tmp_path),
        }
    )
    games = BatchedGames(config)
    games.reset([0])
    games.add_snapshot(recurrent_net(3))
    snapshot = games.pool[-1]
    games.opponent[:] = len(games.pool) - 1  # every row's opponent is the snapshot
    for _ in range(30):
        games.step(games.rows["mask"].to(torch.int8).argmax(1))
    played = snapshot.memory.abs().sum(dim=(1, 2)) > 0
    assert bool(played.all()), "the snapshot kept a memory for every row it played in"
    games._draw_opponents(torch.tensor([True, False, False, False]))  # row 0's game ended
    assert bool(snapshot.memory[0].abs().sum() == 0) and bool(snapshot.memory[1].abs().sum() > 0)
