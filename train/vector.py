"""Many training games stepped in lockstep, in this process or split across worker processes.

:class:`VectorGames` holds ``config.num_envs`` :class:`~cauldron.train.bridge.SingleAgentBridge`
games and presents them as shared ``torch`` tensors, one row per game (``n`` games)::

    obs     (n, obs_size)     float32   the acting seat's observation
    mask    (n, num_actions)  float32   its legal actions (1 legal, 0 not)
    state   (n, state_size)   float32   the full ``state()``, if ``config.needs_state``
    reward  (n,)              float32   the learner's reward from the last step
    done    (n,)              float32   1 where that step ended a game (the row is a new game)
    ret     (n,)              float32   the ended game's episode return, where ``done``
    seat    (n,)              int64     the seat the learner now plays
    action  (n,)              int64     written by the trainer before :meth:`step`
    figures (n, k)            float32   the ended game's numbers (``figure_names``), where ``done``

With ``config.workers`` > 0 the games are split across that many spawned processes, which write
their rows straight into the shared tensors (no copies through pipes), as gymnasium's
``AsyncVectorEnv`` does with one game per process. Each game keeps its own seed, so the run is
the same whatever the number of workers.
"""

from __future__ import annotations

import contextlib
import multiprocessing.connection
import signal
from typing import Any

import numpy as np
import torch
import torch.multiprocessing as mp

from cauldron.agents import make_agent
from cauldron.agents.torch_policy import PolicyNet, TorchAgent
from cauldron.train.bridge import SingleAgentBridge, shaping
from cauldron.train.config import TrainConfig

MAX_SNAPSHOTS = 5


def figure_names(info: dict[str, Any]) -> list[str]:
    """The names of a game's own numbers in its ``info`` (numeric scalars, such as ``stuns``)."""
    return [k for k, v in info.items() if isinstance(v, int | float) and not isinstance(v, bool)]


def opponent_pool(config: TrainConfig) -> list:
    """Factories of the opponents named in the config (self-play snapshots are added later)."""
    return [
        lambda rng, spec=spec: make_agent(spec, config.env, int(rng.integers(2**31)))
        for spec in config.opponents
    ]


class GameSlice:
    """Games ``lo`` to ``hi - 1`` of the vector and the opponent pool they draw from."""

    def __init__(self, config: TrainConfig, lo: int, hi: int, rows: dict[str, torch.Tensor]):
        self.config, self.lo, self.hi = config, lo, hi
        self.pool = opponent_pool(config)
        self.snapshots = 0
        self.games = [
            SingleAgentBridge(
                config.env,
                config.num_players,
                config.options,
                self.pool,
                seed=config.seed + i,
                reward_shaping=shaping(config),
            )
            for i in range(lo, hi)
        ]
        self.rows = {name: tensor.numpy() for name, tensor in rows.items()}
        self.figures: list[str] = []

    def _write(self, row: int, game: SingleAgentBridge, obs: np.ndarray) -> None:
        self.rows["obs"][row] = obs
        self.rows["mask"][row] = game.action_masks()
        self.rows["seat"][row] = game.seat()
        if self.config.needs_state:
            self.rows["state"][row] = game.state()

    def reset(self, seeds: list[int], figures: list[str]) -> None:
        self.figures = figures
        for row, game in enumerate(self.games, self.lo):
            self._write(row, game, game.reset(seed=seeds[row])[0])

    def step(self) -> None:
        rows = self.rows
        for row, game in enumerate(self.games, self.lo):
            obs, rows["reward"][row], term, trunc, info = game.step(int(rows["action"][row]))
            rows["done"][row] = term or trunc
            if term or trunc:
                rows["ret"][row] = info["episode_return"]
                rows["figures"][row] = [info.get(name, 0.0) for name in self.figures]
                obs, _ = game.reset()
            self._write(row, game, obs)

    def add_snapshot(self, net_config: dict[str, Any], weights: dict[str, torch.Tensor]) -> None:
        """A frozen copy of the learner joins the pool, replacing the oldest beyond
        :data:`MAX_SNAPSHOTS`."""
        net = PolicyNet(**net_config)
        net.load_state_dict(weights)
        if self.snapshots >= MAX_SNAPSHOTS:
            self.pool.pop(len(self.config.opponents))
        self.pool.append(lambda rng, net=net: TorchAgent(net, "snapshot"))
        self.snapshots += 1


def _serve(
    config: TrainConfig,
    lo: int,
    hi: int,
    rows: dict[str, torch.Tensor],
    conn: multiprocessing.connection.Connection,
) -> None:
    """A worker process: run the slice's commands until told to close; an error goes back to the
    trainer, which raises it. Ctrl-C is the trainer's to handle (the worker ends with it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)
    games = GameSlice(config, lo, hi, rows)
    with contextlib.suppress(EOFError, BrokenPipeError, ConnectionResetError):  # trainer gone
        while True:
            command, args = conn.recv()
            if command == "close":
                return
            try:
                getattr(games, command)(*args)
            except Exception as error:  # noqa: BLE001 - every error is the trainer's to raise
                conn.send(error)
                return
            conn.send(None)


class VectorGames:
    """``config.num_envs`` games in lockstep; ``rows`` holds the tensors of the module
    docstring."""

    def __init__(self, config: TrainConfig) -> None:
        probe = SingleAgentBridge(
            config.env, config.num_players, config.options, opponent_pool(config)
        )
        n = config.num_envs
        state_size = probe.state_space.shape[0] if config.needs_state else 0
        self.observation_size = probe.observation_space.shape[0]
        self.num_actions = int(probe.action_space.n)
        self.state_size = probe.state_space.shape[0]
        self.seats = len(probe.aec.possible_agents)
        probe.reset(seed=0)
        self.figure_names = figure_names(probe.aec.infos[probe.learner])
        self.rows = {
            "obs": torch.zeros(n, self.observation_size),
            "mask": torch.zeros(n, self.num_actions),
            "state": torch.zeros(n, state_size),
            "reward": torch.zeros(n),
            "done": torch.zeros(n),
            "ret": torch.zeros(n),
            "seat": torch.zeros(n, dtype=torch.long),
            "action": torch.zeros(n, dtype=torch.long),
            "figures": torch.zeros(n, len(self.figure_names)),
        }
        for tensor in self.rows.values():
            tensor.share_memory_()
        bounds = np.linspace(0, n, config.workers + 1).astype(int) if config.workers else [0, n]
        self._local: GameSlice | None = None
        self._workers: list[tuple[Any, multiprocessing.connection.Connection]] = []
        if not config.workers:
            self._local = GameSlice(config, 0, n, self.rows)
            return
        context = mp.get_context("spawn")
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            here, there = context.Pipe()
            process = context.Process(
                target=_serve, args=(config, int(lo), int(hi), self.rows, there), daemon=True
            )
            process.start()
            self._workers.append((process, here))

    def _run(self, command: str, *args: Any) -> None:
        if self._local is not None:
            getattr(self._local, command)(*args)
            return
        for _, conn in self._workers:
            conn.send((command, args))
        errors = [reply for _, conn in self._workers if (reply := conn.recv()) is not None]
        if errors:
            self.close()
            raise errors[0]

    def reset(self, seeds: list[int]) -> None:
        """Start a game in every row, row ``i`` seeded with ``seeds[i]``."""
        self._run("reset", seeds, self.figure_names)

    def step(self, actions: torch.Tensor) -> None:
        """Every game takes its row of ``actions``; ended games restart at once."""
        self.rows["action"][:] = actions
        self._run("step")

    def add_snapshot(self, net: PolicyNet) -> None:
        """Freeze ``net`` into every opponent pool (self-play)."""
        weights = {k: v.detach().clone() for k, v in net.state_dict().items()}
        self._run("add_snapshot", net.config, weights)

    def close(self) -> None:
        """Stop the worker processes (those still running)."""
        for process, conn in self._workers:
            with contextlib.suppress(OSError):  # a worker that failed has closed its end
                conn.send(("close", ()))
            process.join(timeout=10)
        self._workers = []
