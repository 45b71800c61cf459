"""cauldron.eval.voodoo_mania.information: chain with a tie-break by what it knows of the opponent's
hand."""

from __future__ import annotations

import pytest
import torch

from cauldron import envs
from cauldron.agents.voodoo_mania.batched import BatchedChain, follow_ups
from cauldron.agents.voodoo_mania.heuristic import LAYOUT
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania.encoding import SIDE
from cauldron.eval.voodoo_mania import information as info

ROWS, STEPS = 64, 400


def decisions(kind: str):
    """Yield (observation, mask, chain's action, the player's action) for seat 0 of ROWS
    games played by the player (seat 0) against chain (seat 1)."""
    benv = envs.make_batched(info.ENV_ID, 2, batch_size=ROWS)
    out = benv.reset(seed=3)
    player = info.InformedChain(kind, torch.zeros(ROWS, dtype=torch.int64))
    chain = BatchedChain(2, torch.device("cpu"), torch.Generator())
    for _ in range(STEPS):
        actions = chain.act(out["observation"], out["action_mask"], out["seat"])
        mine = (out["seat"] == 0).nonzero().squeeze(1)
        obs, mask = out["observation"][mine], out["action_mask"][mine]
        state = benv.state()[mine]
        chosen = player.act(mine, obs, mask, state)
        yield obs, mask, actions[mine], chosen
        actions[mine] = chosen
        out = benv.step(actions)


def test_chain_kind_is_chain():
    for _, _, chain_action, chosen in decisions("chain"):
        assert torch.equal(chosen, chain_action)


@pytest.mark.parametrize("kind", ["deck", "memory", "sight"])
def test_a_kind_only_breaks_chains_ties(kind):
    departures = 0
    for obs, mask, chain_action, chosen in decisions(kind):
        assert mask[torch.arange(len(chosen)), chosen].all()
        differ = chosen != chain_action
        departures += int(differ.sum())
        hand = obs[:, LAYOUT["hand"]].view(-1, 3, 2, SIDE)
        ups = follow_ups(hand, torch.arange(3))
        rows = differ.nonzero().squeeze(1)
        for action in (chain_action[rows], chosen[rows]):
            assert ((action >= A.PLAY) & (action < A.CYCLE)).all()
        assert torch.equal(ups[rows, chosen[rows] - A.PLAY], ups[rows, chain_action[rows] - A.PLAY])
    assert departures > 0


def test_memory_marks_the_pair_the_opponent_cycled_on():
    player = info.InformedChain("memory", torch.zeros(1, dtype=torch.int64))
    obs = torch.zeros(1, info.LAYOUT["own_choice"].stop)
    obs[0, LAYOUT["round"].start] = 1
    obs[0, LAYOUT["wanted"].start + 7] = 1
    player._remember(torch.tensor([0]), obs)
    assert (player.replaced[0] == info.FORGOTTEN).all()
    obs[0, LAYOUT["wanted"]] = 0
    obs[0, LAYOUT["wanted"].start + 12] = 1
    obs[0, LAYOUT["last_cyclers"].start + 1] = 1
    player._remember(torch.tensor([0]), obs)
    assert player.replaced[0, 7] == 1
    assert player.last_wanted[0] == 12
    obs[0, LAYOUT["last_cyclers"]] = 0
    obs[0, LAYOUT["last_player"].start + 2] = 1
    player._remember(torch.tensor([0]), obs)
    assert player.replaced[0, 7] == 2
    obs[0, LAYOUT["round"]] = torch.tensor([0.0, 1.0, 0.0])
    player._remember(torch.tensor([0]), obs)
    assert player.replaced[0, 7] == info.FORGOTTEN


@pytest.mark.heavy
def test_sight_of_the_opponents_hand_beats_chain():
    won, lost = info.play("sight", games=512, seed=1000)
    assert (won.double() - lost.double()).mean() > 0.08


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown kind 'peek'; kinds"):
        info.InformedChain("peek", torch.zeros(1, dtype=torch.int64))
