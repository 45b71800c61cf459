"""Recurrent PPO through time (``recurrent`` with ``seq_len`` and ``burn_in``): the rollout is cut
into per-seat sequences, the gradient flows along a sequence, and a memory task that a
feed-forward policy cannot solve is learnt by the real trainer.

The memory task is *Recall* (``recall_v0``), a two-seat cooperative game registered only while
a test runs (this module is its game module): the seats decide in turn; each seat's first
observation shows its own private cue (one of two), its next ``delay`` observations are blank,
and at its last decision (observation: "answer now") the team gets +1 if the seat names its
cue, -1 otherwise. Returns run from -2 to +2; a policy without memory scores 0 on average.
"""

from __future__ import annotations

import dataclasses
from enum import IntEnum
from typing import Any

import numpy as np
import pytest
import torch
from pettingzoo.utils import wrappers

from cauldron import envs
from cauldron.agents.torch_policy import PolicyNet, TorchAgent
from cauldron.envs.core.aec import CauldronAECEnv
from cauldron.envs.core.encoding import FlatEncoder
from cauldron.envs.core.layout import Field
from cauldron.envs.core.options import CommonOptions, option
from cauldron.envs.core.rules import PhasedRules
from cauldron.envs.registry import REGISTRY, EnvSpec
from cauldron.train import sequences, warm_start
from cauldron.train.bridge import SingleAgentBridge
from cauldron.train.config import parse_config
from cauldron.train.ppo import train
from cauldron.train.runlog import RunLog

torch.set_num_threads(1)


# ---------------------------------------------------------------------------- the Recall game
class Phase(IntEnum):
    PLAY = 0
    OVER = 1


@dataclasses.dataclass
class RecallState:
    cues: list[int]
    actor: int = 0
    turn: int = 0  # decisions made so far, all seats together
    correct: int = 0
    phase: Phase = Phase.PLAY


@dataclasses.dataclass(frozen=True)
class RecallOptions(CommonOptions):
    delay: int = option(3, "Blank decisions between a seat's cue and its answer.")


class RecallRules(PhasedRules):
    num_actions = 2

    def __init__(self, num_players: int, options: RecallOptions) -> None:
        self.num_players, self.delay = num_players, options.delay

    def new_game(self, rng: np.random.Generator, start_seat: int) -> RecallState:
        return RecallState(cues=rng.integers(2, size=self.num_players).tolist(), actor=start_seat)

    def decision(self, state: RecallState) -> int:
        """How many decisions the acting seat has made before this one."""
        return state.turn // self.num_players

    def legal_mask(self, state: RecallState) -> np.ndarray:
        return np.ones(2, np.int8)

    def apply(self, state: RecallState, action: int) -> np.ndarray:
        reward = 0.0
        if self.decision(state) == self.delay:
            right = action == state.cues[state.actor]
            state.correct += right
            reward = 1.0 if right else -1.0
        state.turn += 1
        state.actor = (state.actor + 1) % self.num_players
        if state.turn == self.num_players * (self.delay + 1):
            state.phase = Phase.OVER
        return np.full(self.num_players, reward)

    def action_name(self, action: int) -> str:
        return f"name cue {action}"

    def info(self, state: RecallState, seat: int) -> dict[str, Any]:
        return {"score": state.correct}


class RecallEncoder(FlatEncoder):
    observation_fields = [
        Field("cue", 2, "the seat's cue, at its first decision only"),
        Field("answer", 1, "1 at the seat's answering decision"),
    ]
    state_fields = observation_fields

    def _public(self, state: RecallState, out: np.ndarray, layout: Any, me: int) -> list[int]:
        return []

    def _own(self, state: RecallState, seat: int, offsets: dict[str, int]) -> list[int]:
        decision = self.rules.decision(state)
        if seat != state.actor or state.phase == Phase.OVER:
            return []
        if decision == 0:
            return [offsets["cue"] + state.cues[seat]]
        return [offsets["answer"]] if decision == self.rules.delay else []

    def _hidden(self, state: RecallState, out: np.ndarray, offsets: dict[str, int]) -> list[int]:
        return []


RECALL = EnvSpec("recall_v0", __name__, (2, 2), default_players=2, cooperative=True)


class raw_env(CauldronAECEnv):  # noqa: N801 (PettingZoo naming)
    rules_class = RecallRules
    encoder_class = RecallEncoder
    render_table = staticmethod(lambda rules, state, seat: f"turn {state.turn}")
    options_class = RecallOptions
    facts = RECALL


def env(num_players: int | None = None, render_mode: str | None = None, **options: Any):
    return wrappers.OrderEnforcingWrapper(raw_env(num_players, render_mode, **options))


@pytest.fixture
def recall(monkeypatch) -> str:
    """``recall_v0`` registered for the test."""
    monkeypatch.setitem(REGISTRY, RECALL.name, RECALL)
    return RECALL.name


# ---------------------------------------------------------------------------- a hand-made rollout
def interleaved_rollout() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``decides``, ``seats``, ``dones`` ``[T=8, N=2]``: env 0 is a cooperative table whose two
    seats alternate, with a new episode from step 5 (seat 1 moves first in it); env 1 is a batched
    competitive table where the learner (seat 1) decides at steps 1, 3, 4, 6 and an opponent
    (seat 0) elsewhere, with a new episode from step 4."""
    decides = torch.ones(8, 2, dtype=torch.bool)
    decides[[0, 2, 5, 7], 1] = False
    seats = torch.zeros(8, 2, dtype=torch.long)
    seats[:, 0] = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1])
    seats[:, 1] = torch.tensor([0, 1, 0, 1, 1, 0, 1, 0])
    dones = torch.zeros(8, 2)
    dones[5, 0] = dones[4, 1] = 1.0
    return decides, seats, dones


def streams(seqs: sequences.Sequences, weighted: bool = False) -> list[list[int]]:
    """Each sequence's rollout rows (``t * 2 + env``) at its valid (or loss-taking) slots."""
    keep = seqs.weight if weighted else seqs.valid
    return [r[k.bool()].tolist() for r, k in zip(seqs.rows, keep, strict=True)]


def test_sequences_follow_one_seat_and_never_cross_seats():
    decides, seats, dones = interleaved_rollout()
    seqs = sequences.cut(decides, seats, dones, seq_len=3, burn_in=0)
    # env 0, seat 0 decides at steps 0, 2, 4, 6; seat 1 at 1, 3, 5, 7 (rows t * 2 + 0); env 1's
    # learner (seat 1) at steps 1, 3, 4, 6 (rows t * 2 + 1); opponents' rows in no sequence
    assert streams(seqs) == [[0, 4, 8], [12], [2, 6, 10], [14], [3, 7, 9], [13]]
    for rows in streams(seqs):
        assert len({int(seats.reshape(-1)[r]) for r in rows}) == 1
        assert all(decides.reshape(-1)[r] for r in rows)
    assert seqs.rows.shape == (6, 3)
    assert seqs.valid.tolist() == [[1, 1, 1], [1, 0, 0]] * 3
    assert not seqs.burn.any()


def test_memory_resets_at_a_seats_first_decision_of_an_episode():
    decides, seats, dones = interleaved_rollout()
    for seq_len in (4, 2, 3):
        seqs = sequences.cut(decides, seats, dones, seq_len, burn_in=0)
        # env 0's episode begins at step 5 (seat 1, row 10): seat 0's first decision in it is
        # at step 6 (row 12); env 1's learner's at step 4 (row 9)
        assert sorted(seqs.rows[seqs.reset].tolist()) == [9, 10, 12]
    padded = seqs.valid == 0  # seq_len 3: streams of 4 decisions leave 2 slots of padding
    assert padded.sum() == 6
    assert not seqs.reset[padded].any() and not seqs.weight[padded].any()


def test_burn_in_decisions_precede_each_chunk_and_take_no_loss():
    decides, seats, dones = interleaved_rollout()
    seqs = sequences.cut(decides, seats, dones, seq_len=3, burn_in=1)
    # chunks of 2 trained decisions, each after (up to) one burn-in decision of its stream
    assert streams(seqs) == [[0, 4], [4, 8, 12], [2, 6], [6, 10, 14], [3, 7], [7, 9, 13]]
    assert streams(seqs, weighted=True) == [[0, 4], [8, 12], [2, 6], [10, 14], [3, 7], [9, 13]]
    trained = sorted(r for rows in streams(seqs, weighted=True) for r in rows)
    assert trained == sorted(decides.reshape(-1).nonzero().squeeze(1).tolist())  # once each


def test_unrolled_sequences_reproduce_the_rollouts_memories():
    """Play the hand-made rollout as the trainer does (one memory per env and seat, zeroed when
    an episode ends), then cut and unroll: every decision's logits come out the same."""
    torch.manual_seed(0)
    decides, seats, dones = interleaved_rollout()
    steps, n_envs = decides.shape
    net = PolicyNet(3, 4, [8], recurrent=5)
    obs, mask = torch.rand(steps, n_envs, 3), torch.ones(steps, n_envs, 4)
    memory, memory_buf = torch.zeros(n_envs, 2, 5), torch.zeros(steps, n_envs, 5)
    played = torch.zeros(steps, n_envs, 4)
    rows = torch.arange(n_envs)
    with torch.no_grad():
        for t in range(steps):
            memory[dones[t].bool()] = 0.0  # the step before ended those games
            memory_buf[t] = memory[rows, seats[t]]
            played[t], updated = net.masked_logits(obs[t], mask[t], memory_buf[t])
            mine = decides[t]
            memory[rows[mine], seats[t][mine]] = updated[mine]
    for seq_len, burn_in in [(8, 0), (3, 0), (3, 1), (1, 0)]:
        seqs = sequences.cut(decides, seats, dones, seq_len, burn_in)
        idx = seqs.rows.reshape(-1)
        start = memory_buf.reshape(steps * n_envs, -1)[seqs.rows[:, 0]]
        logits, features = sequences.unroll(
            net, obs.reshape(-1, 3)[idx], mask.reshape(-1, 4)[idx], None, start, seqs.reset,
            seqs.burn,
        )  # fmt: skip
        valid = seqs.valid.reshape(-1).bool()
        expected = played.reshape(-1, 4)[idx]
        torch.testing.assert_close(logits[valid], expected[valid])
        assert features.shape == (len(idx), 5)  # the memories the logits were read from


def test_the_gradient_flows_back_to_a_sequences_first_step():
    torch.manual_seed(0)
    decides, seats, dones = interleaved_rollout()
    net = PolicyNet(3, 4, [8], recurrent=5)

    def gradient_at_first_step(seq_len: int, burn_in: int) -> torch.Tensor:
        """d(the loss at env 0 seat 0's step 4) / d(its observation at step 0), and with
        respect to the memory stored at its sequence's start."""
        obs = torch.rand(16, 3, requires_grad=True)
        seqs = sequences.cut(decides, seats, dones, seq_len, burn_in)
        start = torch.rand(len(seqs.rows), 5, requires_grad=True)
        idx = seqs.rows.reshape(-1)
        logits, _ = sequences.unroll(
            net, obs[idx], torch.ones(len(idx), 4), None, start, seqs.reset, seqs.burn
        )
        at = (idx == 8) & seqs.weight.reshape(-1).bool()  # row 8 = step 4, env 0 (seat 0)
        torch.log_softmax(logits[at], -1)[0, 1].backward()
        first = int(((seqs.rows == 8) & seqs.weight.bool()).any(1).nonzero())  # trains row 8
        return obs.grad[0].abs().sum(), start.grad[first].abs().sum()

    through_obs, through_start = gradient_at_first_step(seq_len=3, burn_in=0)
    assert through_obs > 0 and through_start > 0  # steps 0 -> 2 -> 4 of seat 0
    through_obs, through_start = gradient_at_first_step(seq_len=1, burn_in=0)
    assert through_obs == 0 and through_start > 0  # one-step truncation: start memory only
    through_obs, _ = gradient_at_first_step(seq_len=3, burn_in=2)
    assert through_obs == 0  # step 0 is burn-in for the chunk that trains step 4


def test_seq_len_and_burn_in_are_validated(recall, tmp_path):
    base = recall_config(tmp_path, recurrent=8, rollout_steps=16)
    with pytest.raises(envs.ConfigError, match=r"seq_len needs recurrent > 0"):
        parse_config({**base, "recurrent": 0, "seq_len": 4})
    with pytest.raises(envs.ConfigError, match=r"burn_in needs recurrent > 0"):
        parse_config({**base, "recurrent": 0, "burn_in": 1})
    with pytest.raises(envs.ConfigError, match=r"seq_len \(32\) must not exceed rollout_steps"):
        parse_config({**base, "seq_len": 32})
    with pytest.raises(envs.ConfigError, match=r"burn_in \(4\) must be below seq_len \(4\)"):
        parse_config({**base, "seq_len": 4, "burn_in": 4})
    parse_config({**base, "recurrent": 0})  # defaults need no memory


# ---------------------------------------------------------------------------- the memory task
def recall_config(tmp_path, **extra) -> dict:
    return {
        "name": f"recall-{extra.get('recurrent', 0)}-{extra.get('seq_len', 16)}",
        "env": "recall_v0",
        "num_players": 2,
        "total_steps": 4096,
        "num_envs": 8,
        "rollout_steps": 32,
        "minibatches": 2,
        "epochs": 4,
        "learning_rate": 3e-3,
        "hidden": [16],
        "eval_every": 1000,
        "eval_games": 2,
        "out": str(tmp_path),
        **extra,
    }


def mean_return(checkpoint, games: int = 200) -> float:
    """The greedy policy's mean team return (one memory per seat)."""
    from cauldron.agents.torch_policy import load_checkpoint

    net = load_checkpoint(checkpoint)[0]
    bridge = SingleAgentBridge("recall_v0", 2, seed=123)
    total = 0.0
    for _ in range(games):
        obs, _ = bridge.reset()
        players: dict[int, TorchAgent] = {}
        done = False
        while not done:
            player = players.setdefault(bridge.seat(), TorchAgent(net, "learner"))
            obs, reward, term, trunc, _ = bridge.step(player.act(obs, bridge.action_masks()))
            total += reward
            done = term or trunc
    return total / games


def trained_return(tmp_path, **extra) -> float:
    config = parse_config(recall_config(tmp_path, **extra))
    return mean_return(train(config, RunLog(config.folder, quiet=True)))


def test_recall_needs_a_memory_trained_through_time(recall, tmp_path):
    """Cue, 2 blank decisions, answer: feed-forward stays at chance (0); recurrent with seq_len
    8 >= delay + 1 = 4 of a seat's decisions gets both seats' answers right."""
    assert abs(trained_return(tmp_path)) < 0.5
    assert trained_return(tmp_path, recurrent=16, seq_len=8) > 1.8


@pytest.mark.slow
def test_a_long_recall_needs_the_gradient_through_time(recall, tmp_path):
    """8 blank decisions between cue and answer: the memory trained from each decision's
    stored memory alone (seq_len 1, truncation after one step) stays at chance, trained
    through sequences of 16 it learns the task (about 25 s of CPU each)."""
    slow = {"recurrent": 16, "total_steps": 24_576, "learning_rate": 2e-3, "options": {"delay": 8}}
    assert abs(trained_return(tmp_path, seq_len=1, **slow)) < 0.5
    assert trained_return(tmp_path, seq_len=16, **slow) > 1.8


# ---------------------------------------------------------------------------- cloning with memory
class RecallOracle:
    """Names its cue at the answer: what a demonstrator with a memory does."""

    def reset(self, seed: int | None = None) -> None:
        self.cue = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if observation[:2].any():
            self.cue = int(observation[1])
        return self.cue


def oracle_demonstrations(monkeypatch, tmp_path, games: int, **extra):
    """The config (``warm_start`` of ``games`` oracle games) and the oracle's recorded games."""
    spec = {"agent": "random", "games": games, "epochs": 30, "batch_size": 64, "critic": False}
    config = parse_config(recall_config(tmp_path, warm_start=spec, **extra))
    monkeypatch.setattr(warm_start, "make_agent", lambda spec, env: RecallOracle())
    return config, warm_start.collect(config, quiet=True)


def test_demonstrations_keep_each_seats_decisions_of_a_game_in_order(recall, monkeypatch, tmp_path):
    """Recall at 2 players, delay 3: a game is 8 decisions, 4 a seat, the seats alternating;
    every record is in exactly one stream, each stream is one seat's 4 in play order."""
    _, demos = oracle_demonstrations(monkeypatch, tmp_path, games=5)
    assert len(demos) == 40 and demos.streams.shape == (10, 4)
    assert demos.lengths.tolist() == [4] * 10
    assert sorted(demos.streams.reshape(-1).tolist()) == list(range(40))
    for rows in demos.streams.tolist():
        assert rows == sorted(rows) and len({r % 2 for r in rows}) == 1
        assert all(b - a == 2 for a, b in zip(rows, rows[1:], strict=False))
    # a cue is a stream's first observation, the answer flag its last
    obs = demos.batch(torch.arange(10), recurrent=True)["obs"].reshape(10, 4, -1)
    assert obs[:, 0, :2].sum(-1).eq(1).all() and obs[:, 3, 2].eq(1).all()


def test_streams_of_unequal_length_are_padded_and_weigh_nothing():
    """Streams of 3, 1 and 2 records (ids in play order): padding repeats a stream's last
    record and takes weight 0, so every record counts once."""
    layout = warm_start._streams(torch.tensor([7, 5, 7, 9, 7, 9]))
    assert layout["streams"].tolist() == [[1, 1, 1], [0, 2, 4], [3, 5, 5]]
    assert layout["lengths"].tolist() == [1, 3, 2]
    assert layout["stream_of"].tolist() == [1, 0, 1, 2, 1, 2]
    assert layout["position"].tolist() == [0, 0, 1, 0, 2, 1]


def test_windows_start_from_the_memory_the_net_had_there(recall, monkeypatch, tmp_path):
    """The cloning term inside PPO: a window of a stream, started from the stored memory,
    gives the logits the net gives playing the stream from its start, decision by decision."""
    _, demos = oracle_demonstrations(monkeypatch, tmp_path, games=6, recurrent=16)
    torch.manual_seed(0)
    net = PolicyNet(3, 2, [16], recurrent=16)
    with pytest.raises(ValueError, match="call remember"):
        demos.windows(4, 3)
    demos.remember(net)
    played = torch.zeros(len(demos), 2)
    with torch.no_grad():
        for rows, length in zip(demos.streams, demos.lengths, strict=True):
            memory = None
            for row in rows[:length]:
                batch = demos.batch(row[None])
                torch.testing.assert_close(
                    demos.memory[row], torch.zeros(16) if memory is None else memory[0]
                )
                played[row], memory = net.masked_logits(batch["obs"], batch["mask"], memory)
        torch.manual_seed(1)
        window = demos.windows(20, 3)
        logits = warm_start.actor_logits(net, window)
    torch.manual_seed(1)
    first = torch.randint(len(demos), (20,))
    valid = window["weight"].bool()
    expected = (first[:, None] + 2 * torch.arange(3)).reshape(-1)  # a seat every 2 records
    assert valid.sum() < 60  # some windows reach their stream's end
    assert window["obs"].shape == (60, 3)
    torch.testing.assert_close(logits[valid], played[expected[valid]])


def test_a_recurrent_clone_learns_what_only_memory_tells(recall, monkeypatch, tmp_path):
    """Cloning the oracle: the answer depends on the cue 3 decisions earlier. A recurrent clone
    (whole streams through time) names the cue at every answer of fresh games; a feed-forward
    clone cannot do better than chance there."""
    config, demos = oracle_demonstrations(monkeypatch, tmp_path, games=200, recurrent=16)
    fresh = oracle_demonstrations(monkeypatch, tmp_path, games=100, recurrent=16, seed=9)[1]
    streams = torch.arange(len(fresh.streams))
    right = {}
    for memory in (16, 0):
        torch.manual_seed(0)
        net = PolicyNet(3, 2, [16], recurrent=memory)
        cfg = config.model_copy(update={"recurrent": memory})
        figures = warm_start.clone(net, demos, cfg, lambda epoch, figures: None)
        batch = fresh.batch(streams, recurrent=bool(memory))
        with torch.no_grad():
            best = warm_start.actor_logits(net, batch).argmax(-1)
        answers = batch["obs"][:, 2] == 1
        right[memory] = float((best == batch["action"])[answers].float().mean())
        assert 0 <= figures["agreement"] <= 1
    assert right[16] > 0.95 and right[0] < 0.7, right


def test_a_recurrent_run_warm_starts_and_keeps_cloning_under_ppo(recall, monkeypatch, tmp_path):
    """A recurrent config with a warm start and bc_coef (the cloning loss on whole streams
    inside PPO's): 512 steps of PPO from the clone end with a recurrent checkpoint that still
    answers both cues (PPO alone needs 4,096 steps, test above)."""
    spec = {"agent": "random", "games": 100, "epochs": 30, "batch_size": 64, "critic": False}
    monkeypatch.setattr(warm_start, "make_agent", lambda spec, env: RecallOracle())
    extra = {"recurrent": 16, "seq_len": 8, "total_steps": 512, "learning_rate": 1e-3}
    config = parse_config(recall_config(tmp_path, warm_start={**spec, "bc_coef": 1.0}, **extra))
    checkpoint = train(config, RunLog(config.folder, quiet=True))
    assert torch.load(checkpoint, weights_only=True)["recurrent"] == 16
    assert mean_return(checkpoint) > 1.8
