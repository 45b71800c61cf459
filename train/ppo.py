"""Proximal Policy Optimization with action masks for Cauldron games, in one file (after
CleanRL's ``ppo.py``).

* One masked categorical policy with shared parameters plays every seat it controls (all seats of
  a cooperative game; its own seat, rotated each episode, against an opponent pool in a
  competitive one) through :class:`train.bridge.SingleAgentBridge`.
* ``num_envs`` games are stepped in lockstep (:class:`train.vector.VectorGames`, optionally in
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
  by members drawn from a population (:mod:`train.partners`); their decisions carry
  ``learner`` = 0, as opponents' do, unless the member is the learner itself.
* ``recurrent``: the actor carries a GRU memory, one per env and seat (a shared team policy never
  passes one seat's private observations to another), reset when a game ends. The update
  back-propagates through time, truncated at ``seq_len`` decisions: each env and seat's
  decisions in the rollout are cut into sequences (:mod:`train.sequences`), each started from
  the memory stored at its first step, with the memory reset where an episode begins inside
  it; minibatches are whole sequences, and :func:`train.sequences.unroll` runs the GRU over
  them with the gradient flowing through every step. The first ``burn_in`` steps of a
  sequence (the decisions just before its own, when the stream has them) only warm the memory
  with the current weights: no loss, no gradient.
* ``warm_start``: before the first update, the network clones a demonstrator's recorded
  decisions (:mod:`train.warm_start`); with ``bc_coef`` the cloning loss stays in PPO's loss,
  annealed to 0.
* ``curriculum``: the games are rebuilt with each stage's options at the first update that
  starts at or past the stage's threshold (:mod:`train.curriculum`).
* ``precision: bfloat16``: the network's forward passes (rollout and update) run under
  autocast; logits and values are cast back to float32 before sampling and the losses.
* ``engine: batched``: the games are a batched tensor engine (:class:`train.batched.BatchedGames`)
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
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents import Agent, make_agent
from agents.torch_policy import PolicyNet, TorchAgent, save_checkpoint
from envs.core.devices import torch_device
from train import belief, curriculum, diagnostics, runfolder, sequences, warm_start
from train.batched import BatchedGames
from train.bridge import SingleAgentBridge
from train.config import TrainConfig
from train.other_play import OtherPlay
from train.runlog import RunLog
from train.vector import VectorGames


def sample(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One action per row of masked ``logits`` (Gumbel-max: faster than ``multinomial`` on CPU),
    and its log-probability."""
    action = (logits - torch.log(-torch.log(torch.rand_like(logits)))).argmax(-1, keepdim=True)
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
    from agents import HEURISTICS

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
    (:func:`train.belief.figures`); nothing without a belief target or a decision."""
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
    games (:meth:`train.batched.BatchedGames.state_dict`), the trainer's numpy generator and
    its device's torch generator, the memories, and Other-Play's relabelings."""
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


def train(config: TrainConfig, log: RunLog) -> Path:
    """Train, log, checkpoint; return the final checkpoint's path."""
    folder = config.folder
    deadline = config.deadline()  # the warm start counts towards max_minutes
    saved = runfolder.load_state(config)
    start = int(saved["update"]) if saved else 0
    rng = np.random.default_rng(runfolder.run_seed(config.seed, start))
    torch.manual_seed(config.seed)
    batched = config.engine == "batched"
    n_envs, n_steps = config.num_envs, config.rollout_steps
    batch = n_envs * n_steps
    games = make_games(config, start * batch)
    device = torch_device(config.device) if batched else torch.device("cpu")
    obs_size, n_actions = games.observation_size, games.num_actions
    critic_size = games.state_size if config.centralized_critic else 0
    state_size = games.state_size if config.needs_state else 0
    opponents_on_table = batched and games.others_on_table
    net = PolicyNet(
        obs_size,
        n_actions,
        config.hidden,
        critic_size,
        config.recurrent,
        config.head,
        config.env,
        config.prior,
        config.prior_weight,
        config.num_players,
    ).to(device)
    memory_size = max(config.recurrent, 1)
    memory = torch.zeros(n_envs, games.seats, memory_size, device=device)  # per env and seat
    memory_buf = torch.zeros(n_steps, n_envs, memory_size, device=device)
    rows = torch.arange(n_envs, device=device)
    hands = belief_head = None
    if config.belief_coef:
        hands = belief.hand_layout(config.env, config.num_players, config.options)
        belief_head = belief.BeliefHead(net.feature_size, hands.target_size).to(device)
    trained_modules = nn.ModuleList([net, *([belief_head] if belief_head else [])])
    optimizer = torch.optim.Adam(trained_modules.parameters(), lr=config.learning_rate, eps=1e-5)
    bfloat16 = config.precision == "bfloat16"

    def low_precision() -> torch.autocast:
        return torch.autocast(device.type, dtype=torch.bfloat16, enabled=bfloat16)

    recent = deque(maxlen=100)
    if saved:
        net.load_state_dict(saved["net"])
        if belief_head is not None:
            belief_head.load_state_dict(saved["belief"])
        optimizer.load_state_dict(saved["optimizer"])
        recent.extend(saved["recent_returns"].tolist())

    def buffer(*size: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.zeros(n_steps, n_envs, *size, dtype=dtype, device=device)

    obs_buf, mask_buf = buffer(obs_size), buffer(n_actions)
    state_buf = buffer(state_size) if state_size else obs_buf
    critic_buf = state_buf if critic_size else obs_buf
    relabelings = buffer(dtype=torch.long)  # Other-Play: the deciding seat's relabeling
    actions, priors = buffer(dtype=torch.long), buffer(dtype=torch.long)
    seats = buffer(dtype=torch.long)  # the deciding seat (whose memory, whose belief)
    logprobs, rewards, dones, values, entropies = (buffer() for _ in range(5))
    learners = buffer() + 1.0  # 1 where the row's decision is the learner's

    meta = {"num_players": config.num_players, "options": config.options}
    games.reset([int(rng.integers(2**31)) for _ in range(n_envs)])
    live = games.rows
    stage = curriculum.stage_at(config, start * batch)

    def relabeling(step: int) -> OtherPlay | None:
        """Other-Play's relabelings of the games at learner step ``step`` (None without)."""
        if not config.other_play:
            return None
        options = curriculum.options_at(config, step)
        seed = int(rng.integers(2**31))
        return OtherPlay(config.env, config.num_players, options, n_envs, games.seats, device, seed)

    other_play = relabeling(start * batch)

    def seen(rows_now: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The deciding seats' observations and masks as they see them, and their
        relabelings (None without Other-Play)."""
        if other_play is None:
            return rows_now["obs"], rows_now["mask"], None
        drawn = other_play.current(rows_now["seat"])
        return *other_play.view(drawn, rows_now["obs"], rows_now["mask"]), drawn

    all_learner = torch.ones(n_envs, device=device)
    updates = math.ceil(config.total_steps / batch)
    demos = None
    if config.warm_start and (not saved or warm_start.bc_weight(config, start * batch)):
        demos = warm_start.collect(config, quiet=log.quiet)
    if bfloat16 and not native_bfloat16(device):
        warnings.warn(
            "precision bfloat16 on a CPU without native bfloat16 products (oneDNN finds no "
            "AVX-512 BF16 or AMX): they run several times slower than float32 here (8-11x "
            "measured on an AVX2 CPU); precision: float32 is faster on this machine",
            RuntimeWarning,
            stacklevel=2,
        )
    log.start(total=updates * batch, done=start * batch, deadline=deadline)
    if saved:
        log.message(f"resumed at step {start * batch:,} (update {start})")
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
    if saved:
        torch.set_rng_state(saved["torch_rng"])
        if batched and saved.get("device") == str(device):
            restore_batched(saved, games, rng, memory, other_play, net)
        elif batched:
            log.message("the saved state holds no games for this device: new games are dealt")
    phases = diagnostics.phase_field(config.env)
    step = start * batch
    for update in range(start, updates):
        began = time.perf_counter()
        stepping = 0.0  # seconds spent in the games' steps (opponents' choices included)
        finished: list[dict[str, float]] = []
        if curriculum.stage_at(config, update * batch) != stage:
            stage = curriculum.stage_at(config, update * batch)
            games.close()
            games = make_games(config, update * batch)
            games.reset([int(rng.integers(2**31)) for _ in range(n_envs)])
            live = games.rows
            memory.zero_()
            other_play = relabeling(update * batch)
            log.message(f"curriculum stage {stage} from step {update * batch:,}")
        bc = warm_start.bc_weight(config, update * batch)
        rate = learning_rate_at(config, update * batch)
        for group in optimizer.param_groups:
            group["lr"] = rate
        for t in range(n_steps):
            obs_buf[t], mask_buf[t], drawn = seen(live)
            dones[t], seats[t] = live["done"], live["seat"]
            if drawn is not None:
                relabelings[t] = drawn
            if state_size:
                state_buf[t] = live["state"]
            if batched:
                learners[t] = live["learner"]
            # the network decides the learner's rows alone: on a batched table with opponents or
            # partners their rows play the pool's actions and their values cancel out of gae's sums
            mine = live["learner"].nonzero().squeeze(1) if opponents_on_table else slice(None)
            obs, mask = obs_buf[t][mine], mask_buf[t][mine]
            critic = critic_buf[t][mine] if critic_size else obs
            held = None
            if config.recurrent:
                memory_buf[t] = memory[rows, live["seat"]]
                held = memory_buf[t][mine]
            prior = None
            if config.prior:  # the heuristic's choices, kept for the update
                prior = priors[t][mine] = net.prior_actions(obs, mask)
            values[t] = 0.0
            with torch.no_grad():
                with low_precision():
                    logits, updated = net.masked_logits(obs, mask, held, prior)
                    values[t][mine] = net.value(critic).float()
                logits = logits.float()
                actions[t][mine], logprobs[t][mine] = sample(logits)
                entropies[t][mine] = diagnostics.entropy(logits)
            if config.recurrent:
                memory[rows[mine], live["seat"][mine]] = updated
            stepped = time.perf_counter()
            games.step(actions[t] if drawn is None else other_play.real_actions(drawn, actions[t]))
            stepping += time.perf_counter() - stepped
            rewards[t] = live["reward"]
            ended = live["done"].nonzero().squeeze(1)
            recent.extend(live["ret"][ended].tolist())
            for row in live["figures"][ended].tolist():
                finished.append(dict(zip(games.figure_names, row, strict=True)))
            memory[ended] = 0.0
            if other_play is not None and len(ended):
                other_play.redraw(ended)

        with torch.no_grad(), low_precision():
            next_value = net.value(live["state"] if critic_size else seen(live)[0]).float()
        following = live["learner"] if batched else all_learner
        advantages, settled = gae(
            rewards,
            values,
            dones,
            learners,
            next_value,
            live["done"],
            following,
            config.gamma,
            config.gae_lambda,
        )
        returns = advantages + values
        trained = learners * settled  # the learner's decisions whose transition ended

        b_obs, b_critic = obs_buf.reshape(batch, -1), critic_buf.reshape(batch, -1)
        b_state, b_seats = state_buf.reshape(batch, -1), seats.reshape(-1)
        b_relabelings = relabelings.reshape(-1)
        believed: list[tuple[torch.Tensor, torch.Tensor]] = []  # last epoch: guesses, targets
        b_mask, b_actions = mask_buf.reshape(batch, -1), actions.reshape(-1)
        b_priors = priors.reshape(-1)
        b_logprobs, b_adv = logprobs.reshape(-1), advantages.reshape(-1)
        b_returns, b_learner = returns.reshape(-1), trained.reshape(-1)
        b_memory = memory_buf.reshape(batch, -1)
        if config.recurrent:
            # minibatches are whole sequences of each env and seat's decisions (all rows, only
            # to have losses to log, in a rollout where the learner never decided)
            deciding = learners.bool() if bool(learners.any()) else torch.ones_like(dones).bool()
            seqs = sequences.cut(deciding, seats, dones, config.seq_len, config.burn_in)
            seq_weight = seqs.weight * b_learner[seqs.rows]  # [S, seq_len]
            units = len(seqs.rows)
        else:
            # minibatches are cut from the rows the policy learns from (all of them but on a
            # competitive batched table, where opponents' rows would only cost weight-0 math)
            rows_trained = b_learner.nonzero().squeeze(1)
            if not len(rows_trained):
                rows_trained = torch.arange(batch, device=device)
            units = len(rows_trained)
        size = math.ceil(units / config.minibatches)
        for epoch in range(config.epochs):
            order = torch.randperm(units, device=device)
            for lo in range(0, units, size):
                pick = order[lo : lo + size]
                if config.recurrent:
                    idx = seqs.rows[pick].reshape(-1)  # [B * seq_len] rows, sequence-major
                    weight = seq_weight[pick].reshape(-1)  # padding and burn-in weigh 0
                else:
                    idx = rows_trained[pick]
                    weight = b_learner[idx]  # the policy learns from the learner's decisions
                prior = b_priors[idx] if config.prior else None
                obs = b_obs.index_select(0, idx)  # 3-4x faster than b_obs[idx] on CPU
                mask = b_mask.index_select(0, idx)
                critic = b_critic.index_select(0, idx) if critic_size else obs
                with low_precision():
                    if config.recurrent:
                        start = b_memory[seqs.rows[pick, 0]]  # [B, memory] stored at the start
                        reset, burn = seqs.reset[pick], seqs.burn[pick]
                        logits, features = sequences.unroll(
                            net, obs, mask, prior, start, reset, burn
                        )
                    else:
                        logits, _, features = net.forward_actor(obs, mask, None, prior)
                    predicted = net.value(critic)
                logits, predicted = logits.float(), predicted.float()
                log_policy = torch.log_softmax(logits, -1)
                new_logprob = log_policy.gather(1, b_actions[idx, None]).squeeze(1)
                ratio = (new_logprob - b_logprobs[idx]).exp()
                decisions = weight.sum().clamp(min=1.0)
                adv = b_adv[idx]
                mean = (weight * adv).sum() / decisions
                std = ((weight * (adv - mean).pow(2)).sum() / (decisions - 1).clamp(min=1.0)).sqrt()
                adv = (adv - mean) / (std + 1e-8)
                clipped = torch.max(
                    -adv * ratio, -adv * ratio.clamp(1 - config.clip, 1 + config.clip)
                )
                policy_loss = (weight * clipped).sum() / decisions
                value_loss = critic_loss(predicted, b_returns[idx], weight)
                entropy_each = -(torch.softmax(logits, -1) * log_policy).sum(-1)
                entropy = (weight * entropy_each).sum() / decisions
                loss = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
                if belief_head is not None:
                    relabel = other_play.hand[b_relabelings[idx]] if other_play else None
                    states = b_state.index_select(0, idx)
                    target = belief.targets(hands, states, b_seats[idx], relabel)
                    guessed = belief_head(features.float())
                    loss = loss + config.belief_coef * belief.loss(guessed, target, weight)
                    if epoch == config.epochs - 1:
                        kept = weight > 0
                        believed.append((guessed.detach()[kept], target[kept]))
                if bc and demos is not None:
                    if config.recurrent:
                        demo = demos.windows(size, config.seq_len)
                    else:
                        demo = demos.batch(torch.randint(len(demos), (size,)))
                    demo = {k: v.to(device) for k, v in demo.items()}
                    loss = loss + bc * warm_start.cloning_loss(net, demo)
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
                optimizer.step()

        step = (update + 1) * batch
        elapsed = time.perf_counter() - began
        log.scalars(
            step,
            {
                "train/mean_return": float(np.mean(recent)) if recent else 0.0,
                "train/episodes": len(recent),
                "loss/policy": policy_loss.item(),
                "loss/value": value_loss.item(),
                "loss/entropy": entropy.item(),
                "perf/steps_per_second": batch / elapsed,
                "perf/learner_steps_per_second": float(learners.sum()) / elapsed,
                "perf/game_share": stepping / elapsed,
                "train/learner_share": float(learners.mean()),
                "train/curriculum_stage": stage,
                "train/bc_coef": bc,
                "train/learning_rate": rate,
                **diagnostics.rollout_stats(
                    entropies=entropies,
                    obs=obs_buf,
                    masks=mask_buf,
                    learners=trained,
                    advantages=advantages,
                    values=values,
                    returns=returns,
                    phases=phases,
                ),
                **diagnostics.game_stats(finished),
                **belief_figures(believed, hands),
                **(games.partner_figures() if batched else {}),
            },
        )
        if config.self_play_every and (update + 1) % config.self_play_every == 0:
            games.add_snapshot(net)
        out_of_time = time.perf_counter() > deadline
        if (update + 1) % config.eval_every == 0 or update + 1 == updates or out_of_time:
            result = evaluate(
                lambda: TorchAgent(net, "learner"),
                config,
                config.eval_games,
                seed=config.seed + 10_000 + update,
            )
            log.scalars(step, {f"eval/{k}": v for k, v in result.items()})
            save_checkpoint(
                net, config.env, folder / "checkpoints" / f"step_{step}.pt", {**meta, "steps": step}
            )
            runfolder.save_state(
                config,
                step,
                {
                    "net": net.state_dict(),
                    **({"belief": belief_head.state_dict()} if belief_head else {}),
                    "optimizer": optimizer.state_dict(),
                    "update": update + 1,
                    "torch_rng": torch.get_rng_state(),
                    "recent_returns": torch.tensor(list(recent), dtype=torch.float64),
                    "demo_memory": demos.memory if demos is not None else None,
                    **(batched_state(games, rng, memory, other_play) if batched else {}),
                },
            )
        if out_of_time:
            log.message(f"max_minutes reached after {step:,} steps")
            break
    if batched and games.partners:
        log.message(games.partners.write(folder))
    games.close()
    final = folder / "final.pt"
    save_checkpoint(net, config.env, final, {**meta, "steps": step})
    log.finish()
    return final
