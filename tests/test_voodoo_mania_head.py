"""The factored head of Voodoo Mania (``head: factored``): features that count a play's
follow-ups as chain does, logits in the flat layout that follow the hand's slots, a checkpoint
that plays, and cloning that learns chain's choice between normal plays better than a flat head;
and the diagnostic that finds where a player departs from chain."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.agents.torch_policy import PolicyNet, save_checkpoint
from cauldron.agents.voodoo_mania.head import CYCLE_FEATURES, PLAY_FEATURES, VoodooManiaHead
from cauldron.agents.voodoo_mania.heuristic import LAYOUT
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C
from cauldron.eval.voodoo_mania import disagreement
from cauldron.train.config import parse_config
from cauldron.train.ppo import train
from cauldron.train.runlog import RunLog
from tests.test_factored_head import clone_agreements, played_observations

VM = "voodoo_mania_v1"


def factored(hidden: list[int] | None = None) -> PolicyNet:
    torch.manual_seed(0)
    return PolicyNet(LAYOUT.size, A.NUM_ACTIONS, hidden or [32], head="factored", env_id=VM)


def chain_decisions(games: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    """Observations and masks of every decision of ``games`` two-player games of chain."""
    return played_observations(games, 2, VM, "heuristic:chain")


def test_play_features_count_follow_ups_as_chain_does():
    """Game Play: a play leaves wanted the pair its side misses; the head's count of other hand
    cards that answer it (normal or Voodoo!) is chain's, at every legal play of real games,
    and splits into those that show it and those that miss it."""
    obs, mask = chain_decisions()
    play, cycle = factored().factored.features(obs)
    assert play.shape == (len(obs), 6, PLAY_FEATURES) and cycle.shape[2] == CYCLE_FEATURES
    checked = 0
    for row in range(len(obs)):
        for index in np.flatnonzero(mask[row, A.PLAY : A.CYCLE]):
            expected = disagreement.follow_ups(obs[row].numpy(), A.PLAY + int(index))
            assert play[row, index, 4] * 2 == expected
            assert play[row, index, 2] + play[row, index, 3] >= play[row, index, 4]
            checked += 1
    assert checked > 500
    kinds = obs[:, LAYOUT["hand_plays"]].reshape(-1, 6, 2)
    assert torch.equal(play[..., :2], kinds)


def test_logits_keep_the_flat_layout_and_mask():
    obs, mask = chain_decisions(games=1)
    with torch.no_grad():
        logits = factored().masked_logits(obs, mask)[0]
    assert logits.shape == (len(obs), A.NUM_ACTIONS) and torch.isfinite(logits).all()
    assert torch.equal(logits > -1e8, mask.bool())


def test_swapping_two_hand_slots_swaps_their_play_and_cycle_scores():
    """The plays and cycles are scored by networks shared over the slots: exchanging the cards
    in slots 0 and 2 (in the hand and its legal plays) exchanges their logits."""
    obs, mask = chain_decisions(games=1)
    net = factored()
    hand = obs[:, LAYOUT["hand"]].reshape(len(obs), 3, -1)
    plays = obs[:, LAYOUT["hand_plays"]].reshape(len(obs), 3, -1)
    swapped = obs.clone()
    swapped[:, LAYOUT["hand"]] = hand[:, [2, 1, 0]].flatten(1)
    swapped[:, LAYOUT["hand_plays"]] = plays[:, [2, 1, 0]].flatten(1)
    order = [0, 5, 6, 3, 4, 1, 2, 9, 8, 7]  # wait, plays by slot and side, cycles
    with torch.no_grad():
        hidden = net.encode(obs)  # the trunk's vector held fixed: only the head is shared
        logits = net.factored(obs, hidden, mask)
        moved = net.factored(swapped, hidden, mask[:, order])
    assert torch.allclose(moved, logits[:, order], atol=1e-6)


def test_checkpoint_round_trips_and_plays_as_a_torch_agent(tmp_path):
    net = factored()
    path = tmp_path / "voodoo.pt"
    save_checkpoint(net, VM, path)
    agent = make_agent(f"torch:{path}", VM)
    assert agent.net.config["head"] == "factored" and agent.net.config["env_id"] == VM
    obs, mask = chain_decisions(games=1)
    with torch.no_grad():
        assert torch.equal(agent.net.masked_logits(obs, mask)[0], net.masked_logits(obs, mask)[0])


def test_the_head_refuses_another_layout():
    with pytest.raises(envs.ConfigError, match=f"needs {LAYOUT.size} observation entries and 10"):
        VoodooManiaHead(16, 400, A.NUM_ACTIONS)


def test_the_batched_trainer_warm_starts_and_saves_a_factored_net(tmp_path):
    config = parse_config(
        {
            "env": VM,
            "num_players": 2,
            "head": "factored",
            "engine": "batched",
            "opponents": ["heuristic:chain"],
            "total_steps": 256,
            "num_envs": 4,
            "rollout_steps": 64,
            "minibatches": 2,
            "epochs": 1,
            "hidden": [16],
            "eval_every": 100,
            "eval_games": 1,
            "warm_start": {"agent": "heuristic:chain", "games": 1, "epochs": 1, "bc_coef": 0.5},
            "out": str(tmp_path),
        }
    )
    checkpoint = train(config, RunLog(config.folder, quiet=True, plot=False))
    saved = torch.load(checkpoint, weights_only=True)
    assert saved["head"] == "factored" and saved["env_id"] == VM
    assert make_agent(f"torch:{checkpoint}", VM).net.head_kind == "factored"


def test_cloning_chain_chooses_between_normal_plays_better_with_the_factored_head():
    """Two players, a tiny budget (10 games, 4 passes): on fresh games the factored clone makes
    chain's choice between several normal plays more often than a flat clone of the same size
    (measured: 81% against 58%)."""

    def several_normal(batch: dict) -> torch.Tensor:
        return torch.tensor(
            [
                disagreement.decision_kind(o.numpy(), m.numpy(), int(a)) == "several normal plays"
                for o, m, a in zip(batch["obs"], batch["mask"], batch["action"], strict=True)
            ]
        )

    agreement = clone_agreements(
        VM, {"agent": "heuristic:chain", "games": 10, "epochs": 4}, several_normal
    )
    assert agreement["factored"] > agreement["flat"] + 0.1, agreement


def test_the_disagreement_table_finds_where_a_player_parts_from_chain():
    """Chain against itself agrees everywhere; fast parts from it only where it has a choice
    (between normal plays, and when chain would call Voodoo!), and its departures between normal
    plays leave fewer follow-ups."""
    itself = disagreement.tally("heuristic:chain", games=2, quiet=True)
    assert itself.agreed == itself.decisions and not itself.departures
    fast = disagreement.tally("heuristic:fast", games=2, quiet=True)
    assert sum(fast.decisions.values()) > 300
    for kind in disagreement.KINDS[:3] + disagreement.KINDS[4:5]:
        assert fast.agreed[kind] == fast.decisions[kind], kind
    assert fast.agreed["several normal plays"] < fast.decisions["several normal plays"]
    assert set(fast.departures) == {"fewer"}
    report = disagreement.table(fast)
    assert "| several normal plays |" in report and "fewer 100%" in report


def test_the_disagreement_tool_refuses_no_games(capsys):
    with pytest.raises(SystemExit):
        disagreement.main(["heuristic:fast", "--games", "0"])
    assert "--games must be at least 1, got 0" in capsys.readouterr().err


def test_a_decision_kind_reads_the_legal_plays():
    """A hand whose every legal action is one cycle is forced; chain's Voodoo! against a normal
    play is told apart from its normal play."""
    obs = np.zeros(LAYOUT.size, np.float32)
    mask = np.zeros(A.NUM_ACTIONS, np.int8)
    mask[A.CYCLE] = 1
    assert disagreement.decision_kind(obs, mask, A.CYCLE) == "forced (one legal action)"
    mask[A.WAIT] = 1
    assert disagreement.decision_kind(obs, mask, A.CYCLE) == "stuck (cycle or wait)"
    plays = np.zeros((C.HAND_SIZE * 2, 2), np.float32)
    plays[0, 0] = plays[3, 1] = 1  # slot 0 side 0 normal, slot 1 side 1 Voodoo!
    obs[LAYOUT["hand_plays"]] = plays.ravel()
    mask[:] = 0
    mask[[A.WAIT, A.PLAY + 0, A.PLAY + 3]] = 1
    assert disagreement.decision_kind(obs, mask, A.PLAY + 3).endswith("chain calls Voodoo!")
    assert disagreement.decision_kind(obs, mask, A.PLAY).endswith("chain plays normal")
