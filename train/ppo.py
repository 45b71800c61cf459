"""Proximal Policy Optimization with action masks for Cauldron games, in one file (after
CleanRL's ``ppo.py``).

:func:`train` is the loop: :func:`start_run` builds the :class:`Run` (the :class:`Learner`, the
games, the generators, the :class:`Rollout` records), then every update switches the curriculum
stage (:func:`next_stage`), plays a rollout (:func:`play_rollout`), estimates the advantages
(:func:`estimate_advantages`), updates the network (:func:`ppo_update`), logs
(:func:`log_update`) and, every ``eval_every`` updates, evaluates and saves (:func:`save_progress`).

* One masked categorical policy with shared parameters plays every seat it controls (all seats of
  a cooperative game; its own seat, rotated each episode, against an opponent pool in a
  competitive one) through :class:`cauldron.train.bridge.SingleAgentBridge`.
* ``num_envs`` games are stepped in lockstep (:class:`cauldron.train.vector.VectorGames`, optionally
in
  ``workers`` processes); each step runs the network once on the batch and samples every game's
  action with the Gumbel-max trick.
* ``max_minutes``: training stops after the first update past that time, and saves as usual.
* ``resume``: a batched run goes on from the saved games, generators, memories, snapshots and
  PFSP record (:func:`batched_state`), so it ends as the run never stopped; a run on the
  reference engine deals new games.
* ``lr_decay_steps``: Adam's step size falls linearly to 0 over the last steps of
  ``total_steps`` (:func:`learning_rate_at`), constant before.
* ``centralized_critic``: the value head reads the game's full ``state()`` (cooperative games),
  the policy still reads only the player's observation.
* ``self_play_every``: frozen snapshots of the policy join the opponent pool (or the partners').
* ``partners`` (cooperative games, batched engine): the seats beside the learner's own are played
  by members drawn from a population (:mod:`cauldron.train.partners`); their decisions carry
  ``learner`` = 0, as opponents' do, unless the member is the learner itself.
* ``recurrent``: the actor carries a GRU memory, one per env and seat (a shared team policy never
  passes one seat's private observations to another), reset when a game ends. The update
  back-propagates through time, truncated at ``seq_len`` decisions: each env and seat's
  decisions in the rollout are cut into sequences (:mod:`cauldron.train.sequences`), each started
  from the memory stored at its first step, with the memory reset where an episode begins inside
  it; minibatches are whole sequences, and :func:`cauldron.train.sequences.unroll` runs the GRU over
  them with the gradient flowing through every step. The first ``burn_in`` steps of a
  sequence (the decisions just before its own, when the stream has them) only warm the memory
  with the current weights: no loss, no gradient.
* ``warm_start``: before the first update, the network clones a demonstrator's recorded
  decisions (:mod:`cauldron.train.warm_start`); with ``bc_coef`` the cloning loss stays in PPO's
  loss, annealed to 0.
* ``curriculum``: the games are rebuilt with each stage's options at the first update that
  starts at or past the stage's threshold (:mod:`cauldron.train.curriculum`).
* ``precision: bfloat16``: the network's forward passes (rollout and update) run under
  autocast; logits and values are cast back to float32 before sampling and the losses.
* ``engine: batched``: the games are a batched tensor engine
(:class:`cauldron.train.batched.BatchedGames`)
  on ``device``, where every row steps at every step; rows where an opponent decides carry
  ``learner`` = 0. The network runs on the learner's rows alone, discounts apply only at the
  learner's decisions, and the policy and the critic train on those alone: the same returns as
  the single-agent view of the reference engine, where opponents move inside one step. A
  rollout that stops while opponents move leaves the learner's last decision out, its
  transition unfinished (see :func:`gae`).
"""

from __future__ import annotations

import math
import time
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from cauldron.agents import Agent, make_agent
from cauldron.agents.torch_policy import PolicyNet, TorchAgent, save_checkpoint
from cauldron.envs.core.devices import torch_device
from cauldron.train import belief, curriculum, diagnostics, runfolder, sequences, warm_start
from cauldron.train.batched import BatchedGames
from cauldron.train.bridge import SingleAgentBridge
from cauldron.train.config import TrainConfig
from cauldron.train.other_play import OtherPlay
from cauldron.train.runlog import RunLog
from cauldron.train.vector import VectorGames


def sample(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One action per row of masked ``logits`` (Gumbel-max: faster than ``multinomial`` on CPU),
    and its log-probability. The uniform draws are kept above 0: a draw of exactly 0 (1 in 2^24)
    is a noise of minus infinity, and a row's only legal action would lose to the illegal ones."""
    uniform = torch.rand_like(logits).clamp_(min=torch.finfo(logits.dtype).tiny)
    action = (logits - torch.log(-torch.log(uniform))).argmax(-1, keepdim=True)
    return action.squeeze(1), torch.log_softmax(logits, -1).gather(1, action).squeeze(1)


def gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    learners: torch.Tensor,
    next_value: torch.Tensor,
    next_done: torch.Tensor,
    next_learner: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalized advantage estimates, ``[T, N]`` like ``rewards``, and ``settled`` (1 or 0,
    same shape): whether the step's transition ends inside the rollout.

    ``dones[t]`` marks step ``t``'s observation as an episode's first; ``learners[t]`` (1 or 0)
    says whether step ``t`` is the learner's decision; the ``next_*`` rows describe the step
    after the last. Discount and lambda apply only on the way into a learner's decision, so the
    opponents' moves between two of its decisions (and their rewards) belong to one transition,
    as in the single-agent view. With every step the learner's, this is CleanRL's GAE. The
    ``values`` of opponents' steps cancel out of every learner decision's advantage (each enters
    one ``delta`` with sign + and the next with sign -, with discount and trace 1 between them),
    so they may be anything (the trainer leaves them 0).

    A rollout that stops while opponents move (``next_learner`` 0) leaves the last learner
    decision's transition open: the value it would bootstrap from is that of the learner's next
    decision, not yet reached, and the critic never values the opponents' moves. That decision
    and the opponents' steps after it get advantage 0 and ``settled`` 0 (the trainer leaves them
    out), and the decisions before it bootstrap from its value, as if the rollout stopped there.
    """
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(next_value)
    open_tail = (1.0 - next_done) * (1.0 - next_learner)
    settled = torch.ones_like(rewards)
    for t in reversed(range(len(rewards))):
        final = t == len(rewards) - 1
        following_done = next_done if final else dones[t + 1]
        following_value = next_value if final else values[t + 1]
        following_learner = (next_learner if final else learners[t + 1]).bool()
        open_tail = open_tail * (1.0 - following_done)
        discount = torch.where(following_learner, gamma, 1.0)
        trace = torch.where(following_learner, lam, 1.0)
        alive = 1.0 - following_done
        delta = rewards[t] + discount * following_value * alive - values[t]
        last = (delta + discount * trace * alive * last) * (1.0 - open_tail)
        advantages[t] = last
        settled[t] = 1.0 - open_tail
        open_tail = open_tail * (1.0 - learners[t])
    return advantages, settled


def critic_loss(
    predicted: torch.Tensor, returns: torch.Tensor, weight: torch.Tensor
) -> torch.Tensor:
    """Half the mean squared error of the values over the learner's decisions (``weight`` 1;
    0 where an opponent moves on a batched table), the rows the critic sees in the single-agent
    view. Trained on the opponents' moves too, the critic must tell a position from the same
    position with the other seat to move by the ``actor`` field alone (the learner's view of an
    opponent's examination looks like its own), and the blur biases the advantages that
    bootstrap from it: Hexenflug's learner learnt to skip its examinations."""
    return 0.5 * (weight * (predicted - returns).pow(2)).sum() / weight.sum().clamp(min=1.0)


def evaluate(
    make_player: Callable[[], Agent], config: TrainConfig, games: int, seed: int
) -> dict[str, float]:
    """``games`` games of the learner (one ``make_player()`` per seat it plays, so memories are
    never shared): the team's win rate (cooperative) or its win rate against the baseline pool
    (competitive), counted as the evaluation harness counts a win (:func:`learner_won`), and
    the mean episode return."""
    from cauldron.agents import HEURISTICS

    specs = ["random"] + [f"heuristic:{h}" for h in HEURISTICS.get(config.env, {})]
    pool = [lambda rng, s=s: make_agent(s, config.env, int(rng.integers(2**31))) for s in specs]
    env = SingleAgentBridge(config.env, config.num_players, config.options, pool, seed=seed)
    wins, returns = 0, []
    players: dict[int, Agent] = {}
    for _ in range(games):
        obs, _ = env.reset()
        for player in players.values():
            player.reset()
        done = False
        while not done:
            player = players.setdefault(env.seat(), make_player())
            obs, _, term, trunc, info = env.step(player.act(obs, env.action_masks()))
            done = term or trunc
        returns.append(info["episode_return"])
        wins += learner_won(info, env.aec.possible_agents.index(env.learner))
    return {"win_rate": wins / games, "mean_return": float(np.mean(returns))}


def learner_won(info: dict, seat: int) -> bool:
    """A win as the evaluation harness counts it, from a finished game's ``info``: a cooperative
    game's ``outcome`` 1, or ``seat`` among a competitive game's ``winners`` (a shared win
    counts; a truncated game has none). A positive return is not a win where rewards are
    shaped (stuns, per-round payments)."""
    if "outcome" in info:
        return info["outcome"] == 1
    return seat in info.get("winners", ())


def make_games(config: TrainConfig, step: int) -> BatchedGames | VectorGames:
    """The training games with the curriculum's options at learner step ``step``."""
    staged = config.model_copy(update={"options": curriculum.options_at(config, step)})
    return BatchedGames(staged) if config.engine == "batched" else VectorGames(staged)


def belief_figures(
    believed: list[tuple[torch.Tensor, torch.Tensor]], hands: belief.HandLayout | None
) -> dict[str, float]:
    """``belief/*``: how well the belief head predicted over the last epoch's minibatches
    (:func:`cauldron.train.belief.figures`); nothing without a belief target or a decision."""
    if hands is None or not believed:
        return {}
    guessed, target = (torch.cat(parts) for parts in zip(*believed, strict=True))
    if not len(target):
        return {}
    return {f"belief/{k}": v for k, v in belief.figures(guessed, target, hands.per_seat).items()}


def learning_rate_at(config: TrainConfig, step: int) -> float:
    """Adam's step size for the update that starts at learner step ``step``: ``learning_rate``,
    falling linearly to 0 over the last ``lr_decay_steps`` of ``total_steps``."""
    left = config.total_steps - step
    if not config.lr_decay_steps or left >= config.lr_decay_steps:
        return config.learning_rate
    return config.learning_rate * max(0.0, left) / config.lr_decay_steps


def native_bfloat16(device: torch.device) -> bool:
    """Whether ``device`` multiplies bfloat16 natively: always on CUDA; on a CPU only where
    oneDNN finds AVX-512 BF16 or AMX (elsewhere autocast's bfloat16 products take a slow path)."""
    return device.type != "cpu" or bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def batched_state(
    games: BatchedGames,
    rng: np.random.Generator,
    memory: torch.Tensor,
    other_play: OtherPlay | None,
) -> dict[str, Any]:
    """What a batched run saves beyond its network and optimizer to go on bit for bit: the
    games (:meth:`cauldron.train.batched.BatchedGames.state_dict`), the trainer's numpy generator
    and its device's torch generator, the memories, and Other-Play's relabelings."""
    device = games.device
    return {
        "device": str(device),
        "games": games.state_dict(),
        "rng": rng.bit_generator.state,
        "memory": memory.clone(),
        "device_rng": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
        "other_play": other_play.state_dict() if other_play else None,
    }


def restore_batched(
    saved: dict[str, Any],
    games: BatchedGames,
    rng: np.random.Generator,
    memory: torch.Tensor,
    other_play: OtherPlay | None,
    net: PolicyNet,
) -> None:
    """Put back what :func:`batched_state` saved, on a run of the same config and device."""
    games.load_state_dict(saved["games"], net)
    rng.bit_generator.state = saved["rng"]
    memory.copy_(saved["memory"])
    if saved["device_rng"] is not None:
        torch.cuda.set_rng_state(saved["device_rng"], games.device)
    if other_play is not None:
        other_play.load_state_dict(saved["other_play"])


@dataclass
class Learner:
    """What the updates train, on ``device``: the policy ``net``, the belief head (with the
    layout of the hands it predicts; both None without ``belief_coef``), and one Adam
    ``optimizer`` over both."""

    net: PolicyNet
    belief_head: belief.BeliefHead | None
    hands: belief.HandLayout | None
    optimizer: torch.optim.Adam
    device: torch.device
    bfloat16: bool

    def autocast(self) -> torch.autocast:
        """The context of the network's forward passes: bfloat16 autocast with ``precision:
        bfloat16``, plain float32 otherwise."""
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bfloat16)


@dataclass
class Rollout:
    """One rollout's records, ``[T, N, ...]`` for ``T`` = ``rollout_steps`` steps of ``N`` =
    ``num_envs`` games, kept from one update to the next:

    * ``obs`` ``[T, N, obs_size]``, ``mask`` ``[T, N, num_actions]``: the deciding seat's view
      (relabeled under Other-Play);
    * ``state`` ``[T, N, state_size]``: the game's ``state()`` where the config needs it (else
      the same tensor as ``obs``); ``critic``: what the value head reads (``state`` with a
      centralized critic, else ``obs``);
    * ``memory`` ``[T, N, memory_size]``: the deciding seat's GRU memory before its decision;
    * ``[T, N]`` long: ``relabelings`` (Other-Play's, of the deciding seat), ``actions``,
      ``priors`` (the prior heuristic's choices), ``seats`` (the deciding seat);
    * ``[T, N]`` float: ``logprobs``, ``rewards``, ``dones`` (1 where the observation is an
      episode's first), ``values``, ``entropies``, ``learners`` (1 where the decision is the
      learner's).
    """

    obs: torch.Tensor
    mask: torch.Tensor
    state: torch.Tensor
    critic: torch.Tensor
    memory: torch.Tensor
    relabelings: torch.Tensor
    actions: torch.Tensor
    priors: torch.Tensor
    seats: torch.Tensor
    logprobs: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    values: torch.Tensor
    entropies: torch.Tensor
    learners: torch.Tensor

    @classmethod
    def allocate(
        cls, config: TrainConfig, games: BatchedGames | VectorGames, device: torch.device
    ) -> Rollout:
        """Zeroed records for ``config``'s rollout of ``games`` (``learners`` all 1)."""
        state_size = games.state_size if config.needs_state else 0

        def buffer(*size: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
            return torch.zeros(
                config.rollout_steps, config.num_envs, *size, dtype=dtype, device=device
            )

        obs = buffer(games.observation_size)
        state = buffer(state_size) if state_size else obs
        return cls(
            obs=obs,
            mask=buffer(games.num_actions),
            state=state,
            critic=state if config.centralized_critic else obs,
            memory=buffer(max(config.recurrent, 1)),
            relabelings=buffer(dtype=torch.long),
            actions=buffer(dtype=torch.long),
            priors=buffer(dtype=torch.long),
            seats=buffer(dtype=torch.long),
            logprobs=buffer(),
            rewards=buffer(),
            dones=buffer(),
            values=buffer(),
            entropies=buffer(),
            learners=buffer() + 1.0,
        )


@dataclass
class Run:
    """A training run's state between updates: the ``learner``, the ``games`` (rebuilt at each
    curriculum ``stage``), the trainer's numpy generator ``rng``, the GRU ``memory`` ``[N,
    seats, memory_size]`` of every env and seat, Other-Play's relabelings, the ``rollout``
    records, the ``recent`` episode returns (the last 100), the warm start's demonstrations,
    and the updates to run (``start`` to ``updates`` - 1) before ``deadline``."""

    config: TrainConfig
    log: RunLog
    learner: Learner
    games: BatchedGames | VectorGames
    rng: np.random.Generator
    memory: torch.Tensor
    rollout: Rollout
    recent: deque[float]
    stage: int
    start: int
    updates: int
    deadline: float
    other_play: OtherPlay | None = None
    demos: warm_start.Demonstrations | None = None

    @property
    def batch(self) -> int:
        """Table steps per rollout (``num_envs * rollout_steps``)."""
        return self.config.num_envs * self.config.rollout_steps

    @property
    def batched(self) -> bool:
        """Whether the games are the batched tensor engine."""
        return self.config.engine == "batched"

    @property
    def critic_size(self) -> int:
        """The size of the centralized critic's input (0: the critic reads the observation)."""
        return self.games.state_size if self.config.centralized_critic else 0

    @property
    def opponents_on_table(self) -> bool:
        """Whether rows where another seat than the learner decides share the table."""
        return self.batched and self.games.others_on_table


@dataclass
class Played:
    """What a rollout leaves beside its records: the seconds spent in the games' steps
    (opponents' choices included) and the figures of every game that ended."""

    stepping: float
    finished: list[dict[str, float]]


@dataclass
class Targets:
    """What an update fits, ``[T, N]``: the GAE ``advantages``, the ``returns`` (advantages +
    values), and ``trained``: 1 at the learner's decisions whose transition ended inside the
    rollout, 0 elsewhere."""

    advantages: torch.Tensor
    returns: torch.Tensor
    trained: torch.Tensor


@dataclass
class Batch:
    """The rollout flattened to ``B`` = T * N rows for the update: ``[B, k]`` ``obs``, ``mask``,
    ``critic``, ``state``, ``memory``; ``[B]`` ``seats``, ``relabelings``, ``actions``,
    ``priors``, ``logprobs``, ``advantages``, ``returns``, ``weight`` (the targets'
    ``trained``). Minibatches are cut from ``units``: the recurrent ``seqs`` (with their
    ``[S, seq_len]`` ``seq_weight``), else the rows in ``rows_trained``."""

    obs: torch.Tensor
    mask: torch.Tensor
    critic: torch.Tensor
    state: torch.Tensor
    memory: torch.Tensor
    seats: torch.Tensor
    relabelings: torch.Tensor
    actions: torch.Tensor
    priors: torch.Tensor
    logprobs: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    weight: torch.Tensor
    units: int
    seqs: sequences.Sequences | None = None
    seq_weight: torch.Tensor | None = None
    rows_trained: torch.Tensor | None = None

    def minibatch(self, pick: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The rows of the units ``pick`` (sequence-major for sequences) and their loss weight
        (0 on padding, burn-in and the rows the policy does not learn from)."""
        if self.seqs is not None:
            return self.seqs.rows[pick].reshape(-1), self.seq_weight[pick].reshape(-1)
        idx = self.rows_trained[pick]
        return idx, self.weight[idx]


@dataclass
class Losses:
    """The last minibatch's loss terms (0-d tensors) and, over the last epoch's minibatches,
    the belief head's guesses and targets at the learner's decisions."""

    policy: torch.Tensor
    value: torch.Tensor
    entropy: torch.Tensor
    believed: list[tuple[torch.Tensor, torch.Tensor]]


def train(config: TrainConfig, log: RunLog) -> Path:
    """Train, log, checkpoint; return the final checkpoint's path."""
    run = start_run(config, log)
    step = run.start * run.batch
    for update in range(run.start, run.updates):
        began = time.perf_counter()
        next_stage(run, update)
        bc = warm_start.bc_weight(config, update * run.batch)
        rate = learning_rate_at(config, update * run.batch)
        for group in run.learner.optimizer.param_groups:
            group["lr"] = rate
        played = play_rollout(run)
        targets = estimate_advantages(run)
        losses = ppo_update(run, targets, bc)
        step = (update + 1) * run.batch
        elapsed = time.perf_counter() - began
        log_update(run, step, elapsed, played, targets, losses, bc=bc, rate=rate)
        if config.self_play_every and (update + 1) % config.self_play_every == 0:
            run.games.add_snapshot(run.learner.net)
        out_of_time = time.perf_counter() > run.deadline
        if (update + 1) % config.eval_every == 0 or update + 1 == run.updates or out_of_time:
            save_progress(run, update, step)
        if out_of_time:
            log.message(f"max_minutes reached after {step:,} steps")
            break
    return finish(run, step)


def new_learner(
    config: TrainConfig, games: BatchedGames | VectorGames, device: torch.device
) -> Learner:
    """A freshly initialized network for ``games`` (and belief head), with its optimizer."""
    net = PolicyNet(
        games.observation_size,
        games.num_actions,
        config.hidden,
        games.state_size if config.centralized_critic else 0,
        config.recurrent,
        config.head,
        config.env,
        config.prior,
        config.prior_weight,
        config.num_players,
    ).to(device)
    hands = belief_head = None
    if config.belief_coef:
        hands = belief.hand_layout(config.env, config.num_players, config.options)
        belief_head = belief.BeliefHead(net.feature_size, hands.target_size).to(device)
    trained_modules = nn.ModuleList([net, *([belief_head] if belief_head else [])])
    optimizer = torch.optim.Adam(trained_modules.parameters(), lr=config.learning_rate, eps=1e-5)
    bfloat16 = config.precision == "bfloat16"
    return Learner(net, belief_head, hands, optimizer, device, bfloat16)


def start_run(config: TrainConfig, log: RunLog) -> Run:
    """The run at its first update: seeded, its games dealt, the network built (or put back
    with everything else from the run folder's saved state, under ``resume``), the warm start
    done."""
    deadline = config.deadline()  # the warm start counts towards max_minutes
    saved = runfolder.load_state(config)
    start = int(saved["update"]) if saved else 0
    rng = np.random.default_rng(runfolder.run_seed(config.seed, start))
    torch.manual_seed(config.seed)
    batch = config.num_envs * config.rollout_steps
    games = make_games(config, start * batch)
    device = torch_device(config.device) if config.engine == "batched" else torch.device("cpu")
    learner = new_learner(config, games, device)
    recent: deque[float] = deque(maxlen=100)
    if saved:
        learner.net.load_state_dict(saved["net"])
        if learner.belief_head is not None:
            learner.belief_head.load_state_dict(saved["belief"])
        learner.optimizer.load_state_dict(saved["optimizer"])
        recent.extend(saved["recent_returns"].tolist())
    games.reset([int(rng.integers(2**31)) for _ in range(config.num_envs)])
    run = Run(
        config=config,
        log=log,
        learner=learner,
        games=games,
        rng=rng,
        memory=torch.zeros(config.num_envs, games.seats, max(config.recurrent, 1), device=device),
        rollout=Rollout.allocate(config, games, device),
        recent=recent,
        stage=curriculum.stage_at(config, start * batch),
        start=start,
        updates=math.ceil(config.total_steps / batch),
        deadline=deadline,
    )
    run.other_play = relabeling(run, start * batch)
    if config.warm_start and (not saved or warm_start.bc_weight(config, start * batch)):
        run.demos = warm_start.collect(config, quiet=log.quiet)
    if learner.bfloat16 and not native_bfloat16(device):
        warnings.warn(
            "precision bfloat16 on a CPU without native bfloat16 products (oneDNN finds no "
            "AVX-512 BF16 or AMX): they run several times slower than float32 here (8-11x "
            "measured on an AVX2 CPU); precision: float32 is faster on this machine",
            RuntimeWarning,
            stacklevel=3,
        )
    log.start(total=run.updates * batch, done=start * batch, deadline=deadline)
    resume_or_warm_start(run, saved)
    return run


def resume_or_warm_start(run: Run, saved: dict[str, Any] | None) -> None:
    """Under ``resume``, put back the generators (and a batched run's games, memories and
    relabelings); on a fresh run with a warm start, clone the demonstrator."""
    config, log, net, demos = run.config, run.log, run.learner.net, run.demos
    if saved:
        log.message(f"resumed at step {run.start * run.batch:,} (update {run.start})")
    elif demos is not None:
        log.scalars(0, {f"warm_start/demo_{k}": v for k, v in demos.figures.items()})
        warm_start.clone(
            net,
            demos,
            config,
            lambda epoch, figures: log.scalars(
                0, {f"warm_start/{k}": v for k, v in figures.items()} | {"warm_start/epoch": epoch}
            ),
        )
    if demos is not None and config.recurrent:
        if saved and saved.get("demo_memory") is not None:
            demos.memory = saved["demo_memory"]  # the clone's memories, not the resumed net's
        else:
            demos.remember(net)
    if not saved:
        return
    torch.set_rng_state(saved["torch_rng"])
    if run.batched and saved.get("device") == str(run.learner.device):
        restore_batched(saved, run.games, run.rng, run.memory, run.other_play, net)
    elif run.batched:
        log.message("the saved state holds no games for this device: new games are dealt")


def relabeling(run: Run, step: int) -> OtherPlay | None:
    """Other-Play's relabelings of the games at learner step ``step`` (None without)."""
    config = run.config
    if not config.other_play:
        return None
    options = curriculum.options_at(config, step)
    seed = int(run.rng.integers(2**31))
    return OtherPlay(
        config.env,
        config.num_players,
        options,
        config.num_envs,
        run.games.seats,
        run.learner.device,
        seed,
    )


def seen(
    other_play: OtherPlay | None, rows: dict[str, torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The deciding seats' observations ``[N, obs_size]`` and masks ``[N, num_actions]`` as
    they see them in the games' ``rows``, and their relabelings ``[N]`` (None without
    Other-Play)."""
    if other_play is None:
        return rows["obs"], rows["mask"], None
    drawn = other_play.current(rows["seat"])
    return *other_play.view(drawn, rows["obs"], rows["mask"]), drawn


def next_stage(run: Run, update: int) -> None:
    """At the first update of a new curriculum stage, deal new games with its options (new
    memories and relabelings too)."""
    config, step = run.config, update * run.batch
    if curriculum.stage_at(config, step) == run.stage:
        return
    run.stage = curriculum.stage_at(config, step)
    run.games.close()
    run.games = make_games(config, step)
    run.games.reset([int(run.rng.integers(2**31)) for _ in range(config.num_envs)])
    run.memory.zero_()
    run.other_play = relabeling(run, step)
    run.log.message(f"curriculum stage {run.stage} from step {step:,}")


def play_rollout(run: Run) -> Played:
    """Step the games ``rollout_steps`` times, recording into ``run.rollout``."""
    records, live = run.rollout, run.games.rows
    stepping = 0.0
    finished: list[dict[str, float]] = []
    for t in range(run.config.rollout_steps):
        drawn = decide(run, t)
        actions = records.actions[t]
        stepped = time.perf_counter()
        run.games.step(actions if drawn is None else run.other_play.real_actions(drawn, actions))
        stepping += time.perf_counter() - stepped
        records.rewards[t] = live["reward"]
        ended = live["done"].nonzero().squeeze(1)
        run.recent.extend(live["ret"][ended].tolist())
        for row in live["figures"][ended].tolist():
            finished.append(dict(zip(run.games.figure_names, row, strict=True)))
        run.memory[ended] = 0.0
        if run.other_play is not None and len(ended):
            run.other_play.redraw(ended)
    return Played(stepping, finished)


def decide(run: Run, t: int) -> torch.Tensor | None:
    """Record step ``t``'s view of the games and the network's decisions at the learner's
    rows (actions, log-probabilities, values, entropies; memories carried on); return the
    deciding seats' relabelings ``[N]`` (None without Other-Play)."""
    config, records, live, net = run.config, run.rollout, run.games.rows, run.learner.net
    records.obs[t], records.mask[t], drawn = seen(run.other_play, live)
    records.dones[t], records.seats[t] = live["done"], live["seat"]
    if drawn is not None:
        records.relabelings[t] = drawn
    if config.needs_state:
        records.state[t] = live["state"]
    if run.batched:
        records.learners[t] = live["learner"]
    # on a table with opponents or partners, their rows play the pool's actions and their
    # values cancel out of gae's sums
    mine = live["learner"].nonzero().squeeze(1) if run.opponents_on_table else slice(None)
    obs, mask = records.obs[t][mine], records.mask[t][mine]
    critic = records.critic[t][mine] if run.critic_size else obs
    held = prior = None
    rows = torch.arange(config.num_envs, device=run.learner.device) if config.recurrent else None
    if config.recurrent:
        records.memory[t] = run.memory[rows, live["seat"]]
        held = records.memory[t][mine]
    if config.prior:
        prior = records.priors[t][mine] = net.prior_actions(obs, mask)
    records.values[t] = 0.0
    with torch.no_grad():
        with run.learner.autocast():
            logits, updated = net.masked_logits(obs, mask, held, prior)
            records.values[t][mine] = net.value(critic).float()
        logits = logits.float()
        records.actions[t][mine], records.logprobs[t][mine] = sample(logits)
        records.entropies[t][mine] = diagnostics.entropy(logits)
    if config.recurrent:
        run.memory[rows[mine], live["seat"][mine]] = updated
    return drawn


def estimate_advantages(run: Run) -> Targets:
    """GAE over the rollout (:func:`gae`), bootstrapped from the value of the games' current
    rows."""
    config, records, live, learner = run.config, run.rollout, run.games.rows, run.learner
    with torch.no_grad(), learner.autocast():
        critic = live["state"] if run.critic_size else seen(run.other_play, live)[0]
        next_value = learner.net.value(critic).float()
    following = (
        live["learner"] if run.batched else torch.ones(config.num_envs, device=learner.device)
    )
    advantages, settled = gae(
        records.rewards,
        records.values,
        records.dones,
        records.learners,
        next_value,
        live["done"],
        following,
        config.gamma,
        config.gae_lambda,
    )
    return Targets(advantages, advantages + records.values, records.learners * settled)


def flatten(run: Run, targets: Targets) -> Batch:
    """The rollout and its targets as one :class:`Batch`. Recurrent: the units are whole
    sequences of each env and seat's decisions (of all rows, only to have losses to log, in a
    rollout where the learner never decided); otherwise the rows the policy learns from (all
    rows if none)."""
    config, records, size = run.config, run.rollout, run.batch
    weight = targets.trained.reshape(-1)
    seqs = seq_weight = rows_trained = None
    if config.recurrent:
        learners = records.learners
        deciding = learners.bool() if bool(learners.any()) else torch.ones_like(learners).bool()
        seqs = sequences.cut(deciding, records.seats, records.dones, config.seq_len, config.burn_in)
        seq_weight = seqs.weight * weight[seqs.rows]
        units = len(seqs.rows)
    else:
        rows_trained = weight.nonzero().squeeze(1)
        if not len(rows_trained):
            rows_trained = torch.arange(size, device=run.learner.device)
        units = len(rows_trained)
    return Batch(
        obs=records.obs.reshape(size, -1),
        mask=records.mask.reshape(size, -1),
        critic=records.critic.reshape(size, -1),
        state=records.state.reshape(size, -1),
        memory=records.memory.reshape(size, -1),
        seats=records.seats.reshape(-1),
        relabelings=records.relabelings.reshape(-1),
        actions=records.actions.reshape(-1),
        priors=records.priors.reshape(-1),
        logprobs=records.logprobs.reshape(-1),
        advantages=targets.advantages.reshape(-1),
        returns=targets.returns.reshape(-1),
        weight=weight,
        units=units,
        seqs=seqs,
        seq_weight=seq_weight,
        rows_trained=rows_trained,
    )


def ppo_update(run: Run, targets: Targets, bc: float) -> Losses:
    """``epochs`` passes over the rollout in ``minibatches`` shuffled minibatches, one Adam
    step each on PPO's loss (plus the belief loss and, weighted ``bc``, the cloning loss)."""
    config, learner = run.config, run.learner
    data = flatten(run, targets)
    size = math.ceil(data.units / config.minibatches)
    believed: list[tuple[torch.Tensor, torch.Tensor]] = []
    for epoch in range(config.epochs):
        order = torch.randperm(data.units, device=learner.device)
        for lo in range(0, data.units, size):
            pick = order[lo : lo + size]
            idx, weight = data.minibatch(pick)
            logits, predicted, features = forward(run, data, idx, pick)
            loss, policy, value, entropy = ppo_loss(config, data, idx, weight, logits, predicted)
            if learner.belief_head is not None:
                term, guessed, target = belief_loss(run, data, idx, weight, features)
                loss = loss + term
                if epoch == config.epochs - 1:
                    kept = weight > 0
                    believed.append((guessed.detach()[kept], target[kept]))
            if bc and run.demos is not None:
                loss = loss + bc * cloning_loss(run, size)
            learner.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(learner.net.parameters(), config.max_grad_norm)
            learner.optimizer.step()
    return Losses(policy, value, entropy, believed)


def forward(
    run: Run, data: Batch, idx: torch.Tensor, pick: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The network on the minibatch's rows ``idx`` (the units ``pick``; a recurrent net
    unrolled over the sequences from their stored memories): float32 logits ``[b,
    num_actions]``, values ``[b]`` and the actor's features ``[b, feature_size]``."""
    config, net = run.config, run.learner.net
    prior = data.priors[idx] if config.prior else None
    obs = data.obs.index_select(0, idx)  # 3-4x faster than data.obs[idx] on CPU
    mask = data.mask.index_select(0, idx)
    critic = data.critic.index_select(0, idx) if run.critic_size else obs
    with run.learner.autocast():
        if data.seqs is not None:
            start = data.memory[data.seqs.rows[pick, 0]]
            reset, burn = data.seqs.reset[pick], data.seqs.burn[pick]
            logits, features = sequences.unroll(net, obs, mask, prior, start, reset, burn)
        else:
            logits, _, features = net.forward_actor(obs, mask, None, prior)
        predicted = net.value(critic)
    return logits.float(), predicted.float(), features


def ppo_loss(
    config: TrainConfig,
    data: Batch,
    idx: torch.Tensor,
    weight: torch.Tensor,
    logits: torch.Tensor,
    predicted: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """PPO's loss on the minibatch's rows ``idx`` (each weighted by ``weight``, advantages
    normalized over the weighted rows) and its clipped policy, value and entropy terms."""
    log_policy = torch.log_softmax(logits, -1)
    new_logprob = log_policy.gather(1, data.actions[idx, None]).squeeze(1)
    ratio = (new_logprob - data.logprobs[idx]).exp()
    decisions = weight.sum().clamp(min=1.0)
    adv = data.advantages[idx]
    mean = (weight * adv).sum() / decisions
    std = ((weight * (adv - mean).pow(2)).sum() / (decisions - 1).clamp(min=1.0)).sqrt()
    adv = (adv - mean) / (std + 1e-8)
    clipped = torch.max(-adv * ratio, -adv * ratio.clamp(1 - config.clip, 1 + config.clip))
    policy_loss = (weight * clipped).sum() / decisions
    value_loss = critic_loss(predicted, data.returns[idx], weight)
    entropy_each = -(torch.softmax(logits, -1) * log_policy).sum(-1)
    entropy = (weight * entropy_each).sum() / decisions
    loss = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
    return loss, policy_loss, value_loss, entropy


def belief_loss(
    run: Run, data: Batch, idx: torch.Tensor, weight: torch.Tensor, features: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The weighted belief loss on the minibatch's rows ``idx``, the head's guesses and the
    targets (the other seats' hands, relabeled as the deciding seat saw them)."""
    hands, head, other_play = run.learner.hands, run.learner.belief_head, run.other_play
    relabel = other_play.hand[data.relabelings[idx]] if other_play else None
    states = data.state.index_select(0, idx)
    target = belief.targets(hands, states, data.seats[idx], relabel)
    guessed = head(features.float())
    return run.config.belief_coef * belief.loss(guessed, target, weight), guessed, target


def cloning_loss(run: Run, size: int) -> torch.Tensor:
    """The cloning loss on ``size`` of the demonstrations (recurrent: windows of
    ``seq_len``)."""
    config, demos = run.config, run.demos
    if config.recurrent:
        demo = demos.windows(size, config.seq_len)
    else:
        demo = demos.batch(torch.randint(len(demos), (size,)))
    demo = {k: v.to(run.learner.device) for k, v in demo.items()}
    return warm_start.cloning_loss(run.learner.net, demo)


def log_update(
    run: Run,
    step: int,
    elapsed: float,
    played: Played,
    targets: Targets,
    losses: Losses,
    *,
    bc: float,
    rate: float,
) -> None:
    """Log the update's scalars at ``step``: returns, losses, speeds (the update took
    ``elapsed`` seconds), the cloning weight ``bc`` and the learning ``rate``, the rollout's
    diagnostics and the finished games' figures."""
    records, learners = run.rollout, run.rollout.learners
    run.log.scalars(
        step,
        {
            "train/mean_return": float(np.mean(run.recent)) if run.recent else 0.0,
            "train/episodes": len(run.recent),
            "loss/policy": losses.policy.item(),
            "loss/value": losses.value.item(),
            "loss/entropy": losses.entropy.item(),
            "perf/steps_per_second": run.batch / elapsed,
            "perf/learner_steps_per_second": float(learners.sum()) / elapsed,
            "perf/game_share": played.stepping / elapsed,
            "train/learner_share": float(learners.mean()),
            "train/curriculum_stage": run.stage,
            "train/bc_coef": bc,
            "train/learning_rate": rate,
            **diagnostics.rollout_stats(
                entropies=records.entropies,
                obs=records.obs,
                masks=records.mask,
                learners=targets.trained,
                advantages=targets.advantages,
                values=records.values,
                returns=targets.returns,
                phases=diagnostics.phase_field(run.config.env),
            ),
            **diagnostics.game_stats(played.finished),
            **belief_figures(losses.believed, run.learner.hands),
            **(run.games.partner_figures() if run.batched else {}),
        },
    )


def checkpoint_meta(config: TrainConfig, step: int) -> dict[str, Any]:
    """What a checkpoint records beside the network: the table and options, the steps."""
    return {"num_players": config.num_players, "options": config.options, "steps": step}


def save_progress(run: Run, update: int, step: int) -> None:
    """After update ``update`` (from 0), at ``step``: evaluate, log, checkpoint the network,
    and save everything a resumed run needs (:func:`cauldron.train.runfolder.save_state`)."""
    config, learner = run.config, run.learner
    result = evaluate(
        lambda: TorchAgent(learner.net, "learner"),
        config,
        config.eval_games,
        seed=config.seed + 10_000 + update,
    )
    run.log.scalars(step, {f"eval/{k}": v for k, v in result.items()})
    checkpoint = config.folder / "checkpoints" / f"step_{step}.pt"
    save_checkpoint(learner.net, config.env, checkpoint, checkpoint_meta(config, step))
    runfolder.save_state(
        config,
        step,
        {
            "net": learner.net.state_dict(),
            **({"belief": learner.belief_head.state_dict()} if learner.belief_head else {}),
            "optimizer": learner.optimizer.state_dict(),
            "update": update + 1,
            "torch_rng": torch.get_rng_state(),
            "recent_returns": torch.tensor(list(run.recent), dtype=torch.float64),
            "demo_memory": run.demos.memory if run.demos is not None else None,
            **(
                batched_state(run.games, run.rng, run.memory, run.other_play) if run.batched else {}
            ),
        },
    )


def finish(run: Run, step: int) -> Path:
    """Write the partners' record, close the games, save ``final.pt`` at ``step``; its path."""
    folder = run.config.folder
    if run.batched and run.games.partners:
        run.log.message(run.games.partners.write(folder))
    run.games.close()
    final = folder / "final.pt"
    save_checkpoint(run.learner.net, run.config.env, final, checkpoint_meta(run.config, step))
    run.log.finish()
    return final
