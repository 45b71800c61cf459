"""Imitation warm start: record a demonstrator's decisions, then clone them into the network.

:func:`collect` plays ``warm_start.games`` games of the training game through the single-agent
bridge (the options the training starts with, the config's opponent pool in a competitive game)
with ``warm_start.agent`` deciding for the learner, one agent object per seat, and keeps every
decision as a :class:`Demonstrations` record: observation, mask, action, critic input (``state()``
for a centralized critic, else the observation) and the discounted return from there on (the
learner's rewards, shaping included, discounted by ``gamma`` per decision). Observations are
stored sparse (a Hocus Pocus observation has about 5% non-zeros).

:func:`clone` trains a :class:`~cauldron.agents.torch_policy.PolicyNet` on them: cross-entropy of
the masked logits against the demonstrator's actions and, with ``warm_start.critic``, half the
squared error of the value against the return (weighted by ``vf_coef``). A feed-forward net learns
from shuffled single decisions. A recurrent net learns from whole *streams*, one seat's decisions in
one game in order, its memory starting at zeros as in play, the gradient flowing back through
the whole game (:func:`cauldron.train.sequences.unroll`); a batch holds about ``batch_size``
decisions' worth of streams. :func:`clone_sb3` does the same for MaskablePPO through its policy's
``evaluate_actions``. :func:`cloning_loss` is the auxiliary term the PyTorch trainer adds to
PPO's loss with weight :func:`bc_weight`: on random records, or for a recurrent net on windows
of ``seq_len`` consecutive decisions of a stream (:meth:`Demonstrations.windows`), each started
from the memory the clone had there (:meth:`Demonstrations.remember`, once after cloning), as
PPO's own sequences start from the memory stored in the rollout. A whole Voodoo Mania game is
about 330 of a seat's decisions: unrolled in every minibatch, it made training ten times slower.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from cauldron.agents import Agent, make_agent
from cauldron.agents.torch_policy import PolicyNet
from cauldron.train import curriculum, sequences
from cauldron.train.bridge import SingleAgentBridge, shaping
from cauldron.train.config import TrainConfig
from cauldron.train.vector import opponent_pool

SEED_OFFSET = 20_000  # demonstration games' seeds: apart from training (seed + i) and evaluation


class SparseRows:
    """Rows of a float32 matrix kept as their non-zeros (CSR); :meth:`dense` gives rows back."""

    def __init__(self, width: int) -> None:
        self.width = width
        self._columns: list[np.ndarray] = []
        self._values: list[np.ndarray] = []
        self.columns = torch.zeros(0, dtype=torch.int32)
        self.values = torch.zeros(0)
        self.starts = torch.zeros(1, dtype=torch.long)

    def append(self, row: np.ndarray) -> None:
        columns = np.flatnonzero(row)
        self._columns.append(columns.astype(np.int32))
        self._values.append(row[columns].astype(np.float32))

    def freeze(self) -> None:
        """Pack the appended rows (call once, before :meth:`dense`)."""
        lengths = torch.tensor([len(c) for c in self._columns], dtype=torch.long)
        self.starts = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
        self.columns = torch.from_numpy(np.concatenate(self._columns)).long()
        self.values = torch.from_numpy(np.concatenate(self._values))
        self._columns, self._values = [], []

    def __len__(self) -> int:
        return len(self.starts) - 1

    def dense(self, rows: torch.Tensor) -> torch.Tensor:
        """``[len(rows), width]`` float32: the rows ``rows`` in full."""
        lo, hi = self.starts[rows], self.starts[rows + 1]
        lengths = hi - lo
        owner = torch.repeat_interleave(torch.arange(len(rows)), lengths)
        offsets = torch.arange(int(lengths.sum())) - torch.repeat_interleave(
            lengths.cumsum(0) - lengths, lengths
        )
        flat = torch.repeat_interleave(lo, lengths) + offsets
        out = torch.zeros(len(rows), self.width)
        out[owner, self.columns[flat]] = self.values[flat]
        return out


@dataclass
class Demonstrations:
    """The demonstrator's decisions: ``obs`` and ``critic`` rows, ``masks`` ``[N, A]`` bool,
    ``actions`` ``[N]`` long, ``returns`` ``[N]`` float32, ``streams`` ``[M, L]`` long (each
    stream's records in order, one seat in one game, padded by repeating its last record) with
    ``lengths`` ``[M]``, each record's stream and place in it (``stream_of``, ``position``
    ``[N]``), the mean of each game's own numbers (``figures``, e.g. ``stuns``) over
    the games played, and for a recurrent net the memory before each decision ``[N, memory]``
    (:meth:`remember`)."""

    obs: SparseRows
    critic: SparseRows | None
    masks: torch.Tensor
    actions: torch.Tensor
    returns: torch.Tensor
    streams: torch.Tensor
    lengths: torch.Tensor
    stream_of: torch.Tensor
    position: torch.Tensor
    figures: dict[str, float]
    memory: torch.Tensor | None = None

    def __len__(self) -> int:
        return len(self.actions)

    def units(self, recurrent: bool) -> int:
        """How many units a pass shuffles: records, or streams for a recurrent net."""
        return len(self.streams) if recurrent else len(self)

    def per_batch(self, decisions: int, recurrent: bool) -> int:
        """Units in a batch of about ``decisions`` decisions (at least 1)."""
        if not recurrent:
            return decisions
        return max(1, round(decisions * len(self.streams) / len(self)))

    @torch.no_grad()
    def remember(self, net: PolicyNet, streams_per_pass: int = 256) -> None:
        """Store ``net``'s memory before each decision, running it along every stream from a
        zero memory."""
        device = next(net.parameters()).device
        memory = torch.zeros(len(self), net.recurrent)
        for lo in range(0, len(self.streams), streams_per_pass):
            picks = torch.arange(lo, min(lo + streams_per_pass, len(self.streams)))
            batch = self.batch(picks, recurrent=True)
            zeros = torch.zeros(len(picks), net.recurrent, device=device)
            resets = batch["resets"].to(device)
            after = sequences.memories(net, batch["obs"].to(device), zeros, resets, resets)
            before = torch.cat([zeros[:, None], after.reshape(*resets.shape, -1)[:, :-1]], 1)
            rows = self.streams[picks, : resets.shape[1]].reshape(-1)
            valid = batch["weight"].bool()
            memory[rows[valid]] = before.reshape(len(rows), -1).cpu()[valid]
        self.memory = memory

    def windows(self, count: int, length: int) -> dict[str, torch.Tensor]:
        """A batch (as :meth:`batch` gives) of ``count`` windows of ``length`` consecutive
        decisions of a stream, each from a random record on (cut at its stream's end), with
        ``start`` ``[count, memory]``, the stored memory before its first decision (draws from
        torch's global generator; needs :meth:`remember` first)."""
        if self.memory is None:
            raise ValueError("windows needs the memories: call remember(net) first")
        first = torch.randint(len(self), (count,))
        stream, position = self.stream_of[first], self.position[first]
        slots = position[:, None] + torch.arange(length)
        end = self.lengths[stream, None]
        rows = self.streams[stream[:, None], torch.minimum(slots, end - 1)].reshape(-1)
        valid = slots < end
        return self._dense(
            rows,
            valid.float().reshape(-1),
            resets=torch.zeros_like(valid),
            start=self.memory[first],
        )

    def batch(self, picks: torch.Tensor, recurrent: bool = False) -> dict[str, torch.Tensor]:
        """Records ``picks`` (or, ``recurrent``, streams ``picks``, stream-major, padded to the
        longest of them) as dense tensors: ``obs``, ``mask`` (float), ``action``, ``critic``,
        ``returns`` and ``weight`` (0 on a stream's padding), and for a recurrent batch
        ``resets`` ``[S, L]``, all False: each stream runs from a zero memory to its end."""
        if not recurrent:
            return self._dense(picks, torch.ones(len(picks)))
        longest = int(self.lengths[picks].max())
        valid = torch.arange(longest) < self.lengths[picks, None]
        rows = self.streams[picks, :longest].reshape(-1)
        return self._dense(rows, valid.float().reshape(-1), resets=torch.zeros_like(valid))

    def _dense(self, rows: torch.Tensor, weight: torch.Tensor, **extra: torch.Tensor) -> dict:
        obs = self.obs.dense(rows)
        return {
            "obs": obs,
            "mask": self.masks[rows].float(),
            "action": self.actions[rows],
            "critic": self.critic.dense(rows) if self.critic is not None else obs,
            "returns": self.returns[rows],
            "weight": weight,
            **extra,
        }


def collect(config: TrainConfig, quiet: bool = False) -> Demonstrations:
    """Play ``config.warm_start.games`` games with the demonstrator and record them (a progress
    bar counts the games unless ``quiet``)."""
    spec = config.warm_start
    if spec is None:
        raise ValueError("collect needs a config with warm_start")
    bridge = SingleAgentBridge(
        config.env,
        config.num_players,
        curriculum.options_at(config, 0),
        opponent_pool(config),
        seed=config.seed + SEED_OFFSET,
        reward_shaping=shaping(config),
    )
    obs_rows = SparseRows(bridge.observation_space.shape[0])
    critic_rows = SparseRows(bridge.state_space.shape[0]) if config.centralized_critic else None
    masks: list[np.ndarray] = []
    actions: list[int] = []
    returns: list[float] = []
    streams: list[int] = []
    totals: dict[str, float] = {}
    players: dict[int, Agent] = {}
    rng = np.random.default_rng(config.seed + SEED_OFFSET)
    seats = len(bridge.aec.possible_agents)
    for game in tqdm(range(spec.games), desc="warm start: recording", unit="game", disable=quiet):
        obs, _ = bridge.reset()
        for seat in range(seats):
            players.setdefault(seat, make_agent(spec.agent, config.env)).reset(
                int(rng.integers(2**31))
            )
        rewards: list[float] = []
        done = False
        while not done:
            mask = bridge.action_masks()
            obs_rows.append(obs)
            if critic_rows is not None:
                critic_rows.append(bridge.state())
            masks.append(mask)
            streams.append(game * seats + bridge.seat())
            action = int(players[bridge.seat()].act(obs, mask.astype(np.int8)))
            actions.append(action)
            obs, reward, term, trunc, info = bridge.step(action)
            rewards.append(float(reward))
            done = term or trunc
        returns.extend(_discounted(rewards, config.gamma))
        for name, value in info.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                totals[name] = totals.get(name, 0.0) + value
    obs_rows.freeze()
    if critic_rows is not None:
        critic_rows.freeze()
    return Demonstrations(
        obs=obs_rows,
        critic=critic_rows,
        masks=torch.from_numpy(np.stack(masks)),
        actions=torch.tensor(actions, dtype=torch.long),
        returns=torch.tensor(returns, dtype=torch.float32),
        **_streams(torch.tensor(streams, dtype=torch.long)),
        figures={name: total / spec.games for name, total in totals.items()},
    )


def _streams(stream: torch.Tensor) -> dict[str, torch.Tensor]:
    """From each record's stream id (records in play order): ``streams`` ``[M, L]``, each
    stream's records in order, padded by repeating its last one, ``lengths`` ``[M]``, and each
    record's ``stream_of`` and ``position`` ``[N]`` (its stream's index and its place in it)."""
    ids, order = torch.sort(stream, stable=True)
    _, lengths = torch.unique_consecutive(ids, return_counts=True)
    first = torch.cumsum(lengths, 0) - lengths
    slots = torch.minimum(torch.arange(int(lengths.max())), lengths[:, None] - 1)
    stream_of, position = torch.empty_like(stream), torch.empty_like(stream)
    stream_of[order] = torch.repeat_interleave(torch.arange(len(lengths)), lengths)
    position[order] = torch.arange(len(stream)) - torch.repeat_interleave(first, lengths)
    return {
        "streams": order[first[:, None] + slots],
        "lengths": lengths,
        "stream_of": stream_of,
        "position": position,
    }


def _discounted(rewards: list[float], gamma: float) -> list[float]:
    """The return from each decision on: ``r_t + gamma * r_{t+1} + ...``."""
    out, running = [], 0.0
    for reward in reversed(rewards):
        running = reward + gamma * running
        out.append(running)
    return out[::-1]


def actor_logits(net: PolicyNet, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """``net``'s masked logits on a :meth:`Demonstrations.batch` or ``windows``: record by
    record, or along each stream or window from its ``start`` memory (zeros if none)."""
    if "resets" not in batch:
        return net.masked_logits(batch["obs"], batch["mask"])[0]
    resets = batch["resets"]
    start = batch.get("start", torch.zeros(len(resets), net.recurrent, device=resets.device))
    return sequences.unroll(net, batch["obs"], batch["mask"], None, start, resets, resets)[0]


def _weighted_mean(values: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return (values * weight).sum() / weight.sum().clamp(min=1.0)


def cloning_loss(net: PolicyNet, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean cross-entropy of ``net``'s masked logits against the demonstrator's actions."""
    ce = torch.nn.functional.cross_entropy(
        actor_logits(net, batch), batch["action"], reduction="none"
    )
    return _weighted_mean(ce, batch["weight"])


def bc_weight(config: TrainConfig, step: int) -> float:
    """The auxiliary cloning weight at learner step ``step``: ``bc_coef`` falling linearly to 0
    at ``bc_steps``."""
    spec = config.warm_start
    if spec is None or not spec.bc_coef:
        return 0.0
    return spec.bc_coef * max(0.0, 1.0 - step / spec.bc_steps)


def _passes(
    demos: Demonstrations,
    config: TrainConfig,
    step: Callable[[dict[str, torch.Tensor]], tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
    report: Callable[[int, dict[str, float]], None],
) -> dict[str, float]:
    """``warm_start.epochs`` shuffled passes over ``demos`` in batches; ``step(batch)`` takes
    one gradient step and returns (cloning loss, value loss, agreement count); ``report(epoch,
    figures)`` after each pass. The last pass's figures."""
    spec = config.warm_start
    if spec is None:
        raise ValueError("cloning needs a config with warm_start")
    generator = torch.Generator().manual_seed(config.seed)
    recurrent = bool(config.recurrent)
    units, size = demos.units(recurrent), demos.per_batch(spec.batch_size, recurrent)
    figures: dict[str, float] = {}
    for epoch in range(spec.epochs):
        order = torch.randperm(units, generator=generator)
        sums = torch.zeros(3)
        for lo in range(0, units, size):
            batch = demos.batch(order[lo : lo + size], recurrent)
            ce, value_loss, agree = step(batch)
            decisions = batch["weight"].sum()
            sums += torch.stack([ce.detach() * decisions, value_loss.detach() * decisions, agree])
        loss, value_loss, agreement = (sums / len(demos)).tolist()
        figures = {"loss": loss, "value_loss": value_loss, "agreement": agreement}
        report(epoch, figures)
    return figures


def clone(
    net: PolicyNet,
    demos: Demonstrations,
    config: TrainConfig,
    report: Callable[[int, dict[str, float]], None],
) -> dict[str, float]:
    """Train ``net`` on ``demos`` (actor by cross-entropy, critic on the returns if
    ``warm_start.critic``); the last pass's ``loss``, ``value_loss`` and ``agreement`` (share
    of records where the most likely action is the demonstrator's)."""
    spec = config.warm_start
    if spec is None:
        raise ValueError("clone needs a config with warm_start")
    optimizer = torch.optim.Adam(net.parameters(), lr=spec.learning_rate)

    def step(batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, weight = actor_logits(net, batch), batch["weight"]
        ce = _weighted_mean(
            torch.nn.functional.cross_entropy(logits, batch["action"], reduction="none"), weight
        )
        error = 0.5 * (net.value(batch["critic"]) - batch["returns"]).pow(2)
        value_loss = _weighted_mean(error, weight)
        loss = ce + config.vf_coef * value_loss if spec.critic else ce
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
        optimizer.step()
        agree = (logits.argmax(-1) == batch["action"]).float()
        return ce, value_loss, (agree * weight).sum()

    return _passes(demos, config, step, report)


def clone_sb3(
    policy: Any,
    demos: Demonstrations,
    config: TrainConfig,
    report: Callable[[int, dict[str, float]], None],
) -> dict[str, float]:
    """:func:`clone` for an sb3-contrib ``MaskableActorCriticPolicy``: the negative
    log-likelihood of the demonstrator's actions under the masked distribution
    (``evaluate_actions`` with ``action_masks``) and, if ``warm_start.critic``, the value error,
    with the policy's own optimizer at ``warm_start.learning_rate``."""
    spec = config.warm_start
    if spec is None:
        raise ValueError("clone_sb3 needs a config with warm_start")
    optimizer = torch.optim.Adam(policy.parameters(), lr=spec.learning_rate)

    def step(batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        mask = batch["mask"].bool()
        with torch.no_grad():  # before the step, as clone does
            distribution = policy.get_distribution(batch["obs"], action_masks=mask.numpy())
            agree = (distribution.get_actions(deterministic=True) == batch["action"]).sum()
        values, log_prob, _ = policy.evaluate_actions(batch["obs"], batch["action"], mask)
        ce = -log_prob.mean()
        value_loss = 0.5 * (values.squeeze(-1) - batch["returns"]).pow(2).mean()
        loss = ce + config.vf_coef * value_loss if spec.critic else ce
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)
        optimizer.step()
        return ce, value_loss, agree.float()

    return _passes(demos, config, step, report)
