"""The training games on a batched engine (``engine: batched``), seen by the learner.

:class:`BatchedGames` offers the trainer the same rows as :class:`cauldron.train.vector.VectorGames`
(``obs``, ``mask``, ``state``, ``reward``, ``done``, ``ret``, ``seat``, ``figures``: the ended
games' one-number ``figures`` named in ``figure_names``), all tensors on the engine's device,
plus ``learner``: 1 where the row's decision is the learner's. Every row steps
at every step (Pgx's way): in a competitive game a row whose acting seat is an opponent's plays
that opponent's action, chosen here by a batched baseline or a frozen snapshot of the learner,
while the trainer's action for that row is ignored. So the rollout never leaves tensors and no
row waits for another. Each new game draws its opponent from the pool (the config's opponents
and the snapshots) uniformly or, with ``opponent_sampling: pfsp``, by how often the learner lost
to each (:meth:`BatchedGames.opponent_weights`). In a cooperative game with ``partners``, the
seats other than the learner's are played alike by members of a partner population
(:mod:`cauldron.train.partners`), drawn for each new game.

For the learner, nothing changes but the bookkeeping: the trainer discounts only at the
learner's decisions (``learner`` = 1), runs its network on those rows alone and trains on them,
which gives the same returns as the bridge's single-agent view, where opponents' moves happen
inside one step. ``state`` is ``state()`` where the trainer needs it (a centralized critic, a
belief target) and empty (``[B, 0]``) otherwise, as in :class:`~cauldron.train.vector.VectorGames`.
"""

from __future__ import annotations

from typing import Any

import torch

from cauldron import envs
from cauldron.agents.batched import BatchedNet, BatchedPolicy, make_batched_agent, snapshot_policy
from cauldron.agents.torch_policy import PolicyNet
from cauldron.envs.core.batched_ops import as_float
from cauldron.train.config import TrainConfig
from cauldron.train.partners import LEARNER, Partners

MAX_SNAPSHOTS = 5


class BatchedGames:
    """``config.num_envs`` games of ``config.env`` on the batched engine (one row each)."""

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.env = envs.make_batched(
            config.env,
            config.num_players,
            batch_size=config.num_envs,
            device=config.device,
            **config.options,
        )
        self.device = self.env.device
        self.cooperative = envs.spec(config.env).cooperative
        game = self.env.game
        self.observation_size = game.observation_size
        self.num_actions = game.num_actions
        self.state_size = game.state_size
        self.seats = game.num_players
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(config.seed)
        self.partners = (
            Partners(config, self.seats, self.device, self.generator) if config.partners else None
        )
        self.pool: list[BatchedPolicy] = [
            make_batched_agent(spec, config.env, config.num_players, self.device, self.generator)
            for spec in config.opponents
        ] + (self.partners.policies if self.partners else [])
        self.fixed = len(self.pool)  # the snapshots follow
        self.others_on_table = not self.cooperative or self.partners is not None
        self.snapshots = 0
        self.record = torch.zeros(len(self.pool), 2, device=self.device)  # games, losses
        n = config.num_envs
        self.rows: dict[str, torch.Tensor] = {}
        self.episodes = torch.zeros(n, dtype=torch.long, device=self.device)
        self.learner_seat = torch.zeros(n, dtype=torch.long, device=self.device)
        self.opponent = torch.zeros(n, dtype=torch.long, device=self.device)
        self._return = torch.zeros(n, device=self.device)
        self._row = torch.arange(n, device=self.device)
        self.figure_names: list[str] = []

    def reset(self, seeds: list[int]) -> None:
        """Deal a game in every row; the engine's one generator is seeded by ``seeds[0]`` (the
        rows' other seeds, which :class:`~cauldron.train.vector.VectorGames` gives one game each,
        are not needed). Learners sit in seat 0."""
        out = self.env.reset(seed=seeds[0])
        figures = self.env.game.figures(self.env.game_state)
        self.figure_names = [name for name, value in figures.items() if value.dim() == 1]
        self.episodes.zero_()
        self.learner_seat.zero_()
        self._return.zero_()
        self._draw_opponents(torch.ones_like(self.episodes, dtype=torch.bool))
        zeros = torch.zeros(self.config.num_envs, device=self.device)
        self._write(out, zeros, zeros, zeros)

    def step(self, actions: torch.Tensor) -> None:
        """Play the learner's ``actions`` where the learner decides and the opponents' choices
        elsewhere; finished games restart with the learner one seat further on."""
        rows = self.rows
        if self.others_on_table:
            actions = torch.where(rows["learner"].bool(), actions, self._opponent_actions())
        out = self.env.step(actions)
        reward = out["reward"][self._row, self.learner_seat]
        done = out["done"]
        self._return += reward
        ret = torch.where(done, self._return, 0.0)
        self._return = torch.where(done, 0.0, self._return)
        if bool(done.any()):
            self._count_results(done, ret)
            self.episodes += done
            self.learner_seat = self.episodes % self.seats
            self._draw_opponents(done)
        self._write(out, reward, done.float(), ret)

    def add_snapshot(self, net: PolicyNet) -> None:
        """A frozen copy of ``net`` joins the opponent pool (or the partners' snapshots),
        replacing the oldest beyond :data:`MAX_SNAPSHOTS`."""
        if self.snapshots >= MAX_SNAPSHOTS:
            oldest = self.fixed
            self.pool.pop(oldest)
            self.record = torch.cat([self.record[:oldest], self.record[oldest + 1 :]])
        self.pool.append(snapshot_policy(net, self.device))
        self.record = torch.cat([self.record, self.record.new_zeros(1, 2)])
        self.snapshots += 1

    def opponent_weights(self) -> torch.Tensor:
        """``[pool]``: how likely each pool member is drawn for a new game. ``uniform``: alike;
        ``pfsp`` (prioritized fictitious self-play): the learner's estimated chance of losing to
        it, (losses + 1) / (games + 2), squared, so the opponents it loses to come most often
        and a new one starts at 1/4 (the counts are in the train state: a resumed run keeps
        them)."""
        if self.config.opponent_sampling == "uniform":
            return torch.ones(len(self.pool), device=self.device)
        games, losses = self.record.unbind(1)
        return ((losses + 1) / (games + 2)) ** 2

    def partner_figures(self) -> dict[str, float]:
        """The partners' sampling weights and game counts (:meth:`Partners.figures`); none
        without partners."""
        return self.partners.figures() if self.partners else {}

    def state_dict(self) -> dict[str, Any]:
        """Everything that decides the coming games, as tensors and plain data (copies): the
        engine's games and chance, the generator of the opponents' and partners' draws and
        choices, the snapshots' weights, the recurrent opponents' memories, the PFSP record,
        the partners' seats and counts, each row's opponent, learner seat, episode count and
        running return, and the rows last shown."""
        return {
            "engine": self.env.state_dict(),
            "generator": self.generator.get_state(),
            "snapshots": [p.net.state_dict() for p in self.pool[self.fixed :]],
            "snapshots_added": self.snapshots,
            "memories": [_copy(getattr(policy, "memory", None)) for policy in self.pool],
            "record": self.record.clone(),
            "partners": self.partners.state_dict() if self.partners else None,
            "episodes": self.episodes.clone(),
            "learner_seat": self.learner_seat.clone(),
            "opponent": self.opponent.clone(),
            "return": self._return.clone(),
            "rows": {name: value.clone() for name, value in self.rows.items()},
        }

    def load_state_dict(self, saved: dict[str, Any], net: PolicyNet) -> None:
        """Go on from a :meth:`state_dict` of games of the same config (after a reset); ``net``,
        the learner's network, gives the snapshots their shape."""
        self.env.load_state_dict(saved["engine"])
        self.generator.set_state(saved["generator"])
        del self.pool[self.fixed :]
        for weights in saved["snapshots"]:
            policy = snapshot_policy(net, self.device)
            policy.net.load_state_dict(weights)
            self.pool.append(policy)
        for policy, memory in zip(self.pool, saved["memories"], strict=True):
            if isinstance(policy, BatchedNet):
                policy.memory = None if memory is None else memory.to(self.device, copy=True)
        self.snapshots = saved["snapshots_added"]
        self.record = saved["record"].to(self.device, copy=True)
        if self.partners:
            self.partners.load_state_dict(saved["partners"])
        self.episodes = saved["episodes"].to(self.device, copy=True)
        self.learner_seat = saved["learner_seat"].to(self.device, copy=True)
        self.opponent = saved["opponent"].to(self.device, copy=True)
        self._return = saved["return"].to(self.device, copy=True)
        for name, value in saved["rows"].items():
            self.rows[name].copy_(value)

    def close(self) -> None:
        """Nothing to stop: the engine lives in this process."""

    # ----------------------------------------------------------------- helpers
    def _draw_opponents(self, rows: torch.Tensor) -> None:
        """New opponents (competitive) or partners for the games starting in ``rows`` (a
        boolean mask); their recurrent memories start again."""
        if self.partners:
            self.partners.draw(rows, self.learner_seat, len(self.pool) - self.fixed)
        elif not self.cooperative:
            self.opponent = torch.where(rows, self._drawn_opponents(), self.opponent)
        for policy in self.pool:
            if isinstance(policy, BatchedNet):
                policy.forget(rows)

    def _drawn_opponents(self) -> torch.Tensor:
        """``[rows]``: an opponent for every row, uniformly or by :meth:`opponent_weights`."""
        if self.config.opponent_sampling == "uniform":
            return torch.randint(
                len(self.pool), self.opponent.shape, generator=self.generator, device=self.device
            )
        return torch.multinomial(
            self.opponent_weights(), len(self.opponent), True, generator=self.generator
        )

    def _count_results(self, done: torch.Tensor, ret: torch.Tensor) -> None:
        """Each ended game counts for its row's opponent: a game, and a loss when the learner's
        return is below 0."""
        if self.cooperative:
            return
        against = self.opponent[done]
        self.record[:, 0].index_add_(0, against, torch.ones_like(against, dtype=torch.float))
        self.record[:, 1].index_add_(0, against, (ret[done] < 0).float())

    def _opponent_actions(self) -> torch.Tensor:
        """Each row's opponent's or partner's choice where one is to act (0 where the learner
        is: the caller plays the learner's action there). Every pool member is asked once, for
        the rows where it is the one to act; noisy partners then draw their random actions."""
        rows = self.rows
        if self.partners:
            to_act = self.partners.acting(rows["seat"])
        else:
            to_act = torch.where(rows["learner"].bool(), LEARNER, self.opponent)
        chosen = torch.zeros_like(self.opponent)
        for index in to_act.unique().tolist():
            if index < 0:
                continue
            mine = (to_act == index).nonzero().squeeze(1)
            policy = self.pool[index]
            seen = rows["obs"][mine], rows["mask"][mine].bool(), rows["seat"][mine]
            if isinstance(policy, BatchedNet):  # a recurrent snapshot keeps per-row memories
                chosen[mine] = policy.act_rows(mine, *seen)
            else:
                chosen[mine] = policy.act(*seen)
        if self.partners:
            return self.partners.add_noise(chosen, rows["obs"], rows["mask"].bool(), rows["seat"])
        return chosen

    def _write(
        self, out: dict[str, Any], reward: torch.Tensor, done: torch.Tensor, ret: torch.Tensor
    ) -> None:
        seat = out["seat"]
        if self.partners:
            learner = as_float(self.partners.acting(seat) == LEARNER)
        elif self.cooperative:
            learner = torch.ones_like(done)
        else:
            learner = as_float(seat == self.learner_seat)
        state = self.env.state() if self.config.needs_state else out["observation"][:, :0]
        figures = out["figures"]  # empty after a reset
        blank = torch.zeros_like(done)
        columns = [figures.get(name, blank).float() for name in self.figure_names]
        fresh = {
            "obs": out["observation"],
            "mask": as_float(out["action_mask"]),
            "state": state,
            "reward": reward,
            "done": done,
            "ret": ret,
            "seat": seat,
            "learner": learner,
            "figures": torch.stack(columns, 1) if columns else blank[:, None][:, :0],
        }
        if not self.rows:  # the trainer keeps these tensors: later steps write into them
            self.rows = {name: value.clone() for name, value in fresh.items()}
        for name, value in fresh.items():
            self.rows[name].copy_(value)


def _copy(tensor: torch.Tensor | None) -> torch.Tensor | None:
    return None if tensor is None else tensor.clone()
