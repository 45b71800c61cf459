"""Batched engines: B games held as tensors and stepped at once (Pgx's pure step, in PyTorch).

A game's ``envs/<game>/batched.py`` writes the rules once more over a dataclass of tensors whose
first dimension is the batch (fields named as in ``rules.py``'s ``State``) and offers them as a
:class:`BatchedGame`. :class:`BatchedEnv` does everything that is the same for every game: it
reads and checks actions, rejects illegal ones (or ends only the offending rows' games with the
penalty), counts agent-steps towards ``max_steps``, reports final rewards and figures, deals new
games into finished rows, and builds the output dict. The reference rules stay the
specification: options are parsed and checked by the reference ``Rules`` class, and tests prove
each engine equal to it.

Output of :meth:`BatchedEnv.reset` and :meth:`BatchedEnv.step`, all tensors on ``device``:

| key | shape | meaning |
|---|---|---|
| ``observation`` | ``[B, obs_size]`` float32 | the acting seat's view (after any reset) |
| ``action_mask`` | ``[B, num_actions]`` bool | the acting seat's legal actions |
| ``seat`` | ``[B]`` int64 | the acting seat |
| ``reward`` | ``[B, n]`` float32 | every seat's reward for this step (a finished game's last) |
| ``done`` | ``[B]`` bool | the game in this row ended with this step (a new one is dealt) |
| ``truncated`` | ``[B]`` bool | it ended by ``max_steps`` or the game's own clock |
| ``figures`` | dict of ``[B]`` | the game's own figures (``score``, ``stuns`` …), before resets |

Every output tensor is the caller's own: none shares memory with the engine's state, so changing
one in place changes no game, and no later step changes it.

Chance: ``reset(seed)`` with one integer seeds one ``torch.Generator`` for the whole batch, so a
row's games depend on the batch size and on the other rows. ``reset(seeds)`` with one seed per row
gives every row its own stream (:class:`RowStreams`): row ``b``'s games, its first dealt from
``seeds[b]`` and the later ones by auto-reset, depend only on that seed and that row's actions,
whatever the batch around it. Game rules draw through :func:`uniform`, :func:`randint` and
:func:`chance_rows`, which take either kind of chance and name the rows that use each draw.

``step`` takes the actions as an integer torch tensor or numpy array of shape ``[B]``.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from typing import Any, Protocol, TypeVar

import numpy as np
import torch

from cauldron.envs.core.devices import torch_device
from cauldron.envs.core.errors import ConfigError, IllegalActionError
from cauldron.envs.core.options import CommonOptions

S = TypeVar("S")

MAX_BATCH_SIZE = 2**20  # rows of one engine (a guard against sizes that cannot be allocated)
MAX_SEED = 2**64 - 1  # the largest seed a torch generator takes whole


def _int64(constant: int) -> int:
    """A 64-bit constant as the signed value an int64 tensor holds."""
    return constant - 2**64 if constant >= 2**63 else constant


_GOLDEN, _MIX1, _MIX2 = (
    _int64(c) for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
)


def _shift(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int64 ``x`` (torch's ``>>`` keeps the sign)."""
    return (x >> bits) & ((1 << (64 - bits)) - 1)


def _mix(x: torch.Tensor) -> torch.Tensor:
    """SplitMix64 (Steele, Lea and Flood 2014) on int64 tensors, arithmetic wrapping mod 2**64."""
    x = x + _GOLDEN
    x = (x ^ _shift(x, 30)) * _MIX1
    x = (x ^ _shift(x, 27)) * _MIX2
    return x ^ _shift(x, 31)


class RowStreams:
    """One random stream per row (per game seed), counter-based: the ``k``-th draw of row ``b``
    is SplitMix64 of (the row's key, ``k``, the entry), so what a row draws depends only on its
    seed and on how many draws it took, never on the other rows or the batch size. ``take``
    gives a view of some rows that advances their counters. Each draw names the rows that use
    it (``rows``, a bool mask over the view; default all): only theirs advance, so a row's
    stream does not move when another row's state calls for a draw."""

    def __init__(self, seeds: torch.Tensor, salt: int = 0) -> None:
        """``seeds``: ``[R]`` int64 (seeds above 2**63 - 1 wrapped, as :func:`row_seeds` gives
        them); ``salt`` tells apart independent streams from the same seeds."""
        self.key = _mix(_mix(seeds) + _int64(salt % 2**64))
        self.count = torch.zeros_like(self.key)
        self.index = torch.arange(len(seeds), device=seeds.device)

    def take(self, index: torch.Tensor) -> RowStreams:
        """The streams of rows ``index`` (of this view), sharing their counters."""
        view = object.__new__(RowStreams)
        view.key, view.count, view.index = self.key, self.count, self.index[index]
        return view

    def _bits(self, shape: tuple[int, ...], rows: torch.Tensor | None) -> torch.Tensor:
        shape = tuple(shape)
        if not shape or shape[0] != len(self.index):
            raise ValueError(f"a draw of shape {shape} for {len(self.index)} rows")
        index = self.index
        entries = torch.arange(math.prod(shape[1:]), device=index.device) * _GOLDEN
        row = _mix(self.key[index] ^ _mix(self.count[index]))
        bits = _mix(row[:, None] + entries[None, :]).view(shape)
        self.count[index if rows is None else index[rows]] += 1
        return bits

    def rand(
        self,
        shape: tuple[int, ...],
        rows: torch.Tensor | None = None,
        dtype: torch.dtype | None = None,
    ) -> torch.Tensor:
        """Uniform in [0, 1): float32 from 24 bits (float64 from 53), first dimension the rows."""
        bits = self._bits(shape, rows)
        if dtype == torch.float64:
            return _shift(bits, 11).double() * 2.0**-53
        return (_shift(bits, 40).float() * 2.0**-24).to(dtype or torch.get_default_dtype())

    def randint(
        self, high: int, shape: tuple[int, ...], rows: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Integers from 0 to ``high`` - 1 (``high`` below 2**31; multiply-shift of 32 bits)."""
        return (_shift(self._bits(shape, rows), 32) * high) >> 32


Chance = torch.Generator | RowStreams
"""Where a batch's chance comes from: one generator for the batch, or a stream per row."""


def uniform(
    chance: Chance,
    shape: tuple[int, ...],
    device: Any,
    rows: torch.Tensor | None = None,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """``torch.rand(shape)`` from ``chance``; ``rows`` (bool ``[shape[0]]``) marks the rows that
    use the draw, for per-row streams (a generator draws for every row alike)."""
    if isinstance(chance, torch.Generator):
        return torch.rand(shape, generator=chance, device=device, dtype=dtype)
    return chance.rand(shape, rows, dtype)


def randint(
    chance: Chance,
    high: int,
    shape: tuple[int, ...],
    device: Any,
    rows: torch.Tensor | None = None,
) -> torch.Tensor:
    """``torch.randint(high, shape)`` from ``chance`` (``rows`` as in :func:`uniform`)."""
    if isinstance(chance, torch.Generator):
        return torch.randint(high, shape, generator=chance, device=device)
    return chance.randint(high, shape, rows)


def chance_rows(chance: Chance, index: torch.Tensor) -> Chance:
    """The chance of rows ``index`` alone: their streams, or the batch's generator as it is."""
    return chance if isinstance(chance, torch.Generator) else chance.take(index)


class BatchedGame(Protocol[S]):
    """What :class:`BatchedEnv` needs from a game's tensor rules (``S``: its state dataclass)."""

    num_players: int
    num_actions: int
    observation_size: int
    state_size: int
    cooperative: bool

    def new_games(self, rows: int, generator: Chance, start_seat: torch.Tensor) -> S:
        """``rows`` freshly dealt games drawing all chance from ``generator``."""

    def acting_seat(self, state: S) -> torch.Tensor:
        """``[B]`` int64: the seat whose decision each game waits for (may be the state's own
        tensor: :class:`BatchedEnv` copies it before handing it out)."""

    def legal_mask(self, state: S) -> torch.Tensor:
        """``[B, num_actions]`` bool: legal actions of each game's acting seat."""

    def apply(self, state: S, actions: torch.Tensor, generator: Chance) -> torch.Tensor:
        """Play one legal action per game in place; return ``[B, n]`` float32 rewards."""

    def is_over(self, state: S) -> torch.Tensor:
        """``[B]`` bool: the game has ended by its rules."""

    def is_truncated(self, state: S) -> torch.Tensor:
        """``[B]`` bool: the game was cut short by its own clock."""

    def mid_step(self, state: S) -> torch.Tensor:
        """``[B]`` bool: a simultaneous step is half chosen (truncation waits for its end)."""

    def observe(self, state: S, seat: torch.Tensor) -> torch.Tensor:
        """``[B, observation_size]`` float32: what ``seat[b]`` may know of game ``b``."""

    def encode_state(self, state: S) -> torch.Tensor:
        """``[B, state_size]`` float32: everything, as the reference ``state()``."""

    def figures(self, state: S) -> dict[str, torch.Tensor]:
        """The game's own figures per game (its ``info`` numbers, such as the score), as
        fresh tensors: the engine deals new games into the state after reading them."""


def checked_seed(seed: Any) -> int:
    """``seed`` as an ``int`` from 0 to :data:`MAX_SEED`, or a :class:`ConfigError` saying what
    is allowed (a bool, a float, a string or a number out of range is refused, not truncated)."""
    try:
        value = None if isinstance(seed, bool) else operator.index(seed)
    except TypeError:
        value = None
    if value is None or not 0 <= value <= MAX_SEED:
        raise ConfigError(f"seed must be None or an integer from 0 to 2**64 - 1, got {seed!r}")
    return value


def row_seeds(seeds: Any, rows: int) -> torch.Tensor:
    """``[rows]`` int64 from one seed per row (a sequence, numpy array or tensor of integers from
    0 to :data:`MAX_SEED`; those above 2**63 - 1 wrapped), or a :class:`ConfigError`."""
    values = seeds.tolist() if isinstance(seeds, (np.ndarray, torch.Tensor)) else list(seeds)
    if len(values) != rows:
        raise ConfigError(f"seeds must hold one seed per row ({rows}), got {len(values)}")
    for b, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
            raise ConfigError(
                f"seeds must be integers from 0 to 2**64 - 1, got {value!r} in row {b}"
            )
    return torch.from_numpy(np.array(values, dtype=np.uint64).view(np.int64))


def clone_state(state: S) -> S:
    """A deep copy of a tensor-state dataclass."""
    return dataclasses.replace(
        state, **{f.name: getattr(state, f.name).clone() for f in dataclasses.fields(state)}
    )


def put_rows(state: S, rows: torch.Tensor, source: S) -> None:
    """Overwrite ``state``'s rows ``rows`` with the rows of ``source`` (same length), in place."""
    for f in dataclasses.fields(state):
        getattr(state, f.name)[rows] = getattr(source, f.name)


def take_rows(state: S, rows: torch.Tensor) -> S:
    """A new state holding only ``rows`` of ``state``."""
    return dataclasses.replace(
        state, **{f.name: getattr(state, f.name)[rows] for f in dataclasses.fields(state)}
    )


def shuffled_decks(rows: int, size: int, generator: Chance, device: Any) -> torch.Tensor:
    """``[rows, size]`` int64: a random permutation of ``0..size-1`` per row (argsort of
    uniform keys; ties have probability zero)."""
    keys = uniform(generator, (rows, size), device)
    return keys.argsort(dim=1)


class BatchedEnv:
    """B games of one kind stepped at once; see the module docstring for the output."""

    def __init__(
        self, game: BatchedGame, options: CommonOptions, batch_size: int, device: str | torch.device
    ) -> None:
        if (
            isinstance(batch_size, bool)
            or not isinstance(batch_size, int)
            or not 1 <= batch_size <= MAX_BATCH_SIZE
        ):
            raise ConfigError(
                f"batch_size must be an integer from 1 to {MAX_BATCH_SIZE:,}, got {batch_size!r}"
            )
        self.device = torch_device(device)
        self.game = game
        self.options = options
        self.batch_size = batch_size
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.generator = torch.Generator(device=self.device)
        self.chance: Chance = self.generator  # the generator, or the rows' own streams
        self.rows = torch.arange(batch_size, device=self.device)
        self._state: Any = None

    @property
    def game_state(self) -> Any:
        """The batch's tensor state (a game's state dataclass)."""
        return self._state

    @game_state.setter
    def game_state(self, state: Any) -> None:
        """Replace the whole batch (e.g. by converted reference states)."""
        self._state = state
        self._mask = self.game.legal_mask(state)

    # ----------------------------------------------------------------- public API
    def reset(self, seed: Any = None) -> dict[str, Any]:
        """Deal ``batch_size`` games; same seed, same batch of games. One integer seeds the
        batch's generator; one seed per row (a sequence, array or tensor) gives each row its own
        stream (module docstring). A seed that is not an integer from 0 to 2**64 - 1 is refused
        before anything changes."""
        if seed is not None and not isinstance(seed, (int, np.integer)) and np.ndim(seed) == 1:
            self.chance = RowStreams(row_seeds(seed, self.batch_size).to(self.device))
        else:
            if seed is not None:
                self.generator.manual_seed(checked_seed(seed))
            else:
                self.generator.seed()
            self.chance = self.generator
        start = self._start_seats(self.batch_size, self.chance)
        self.game_state = self.game.new_games(self.batch_size, self.chance, start)
        self.steps = torch.zeros(self.batch_size, dtype=torch.int64, device=self.device)
        reward = torch.zeros(self.batch_size, self.num_players, device=self.device)
        return self._output(reward, self._no_rows(), self._no_rows(), {})

    def step(self, actions: torch.Tensor | np.ndarray) -> dict[str, Any]:
        """Play ``actions[b]`` for the acting seat of game ``b``; finished games restart."""
        if self.game_state is None:
            raise IllegalActionError(actions, "every row", "not started", ["call reset() first"])
        actions = self._checked(actions)
        mask = self._mask
        in_range = (actions >= 0) & (actions < self.num_actions)
        safe = actions.clamp(0, self.num_actions - 1)
        legal = in_range & mask.gather(1, safe[:, None]).squeeze(1)
        illegal = ~legal
        any_illegal = bool(illegal.any())
        if any_illegal and self.options.illegal_action == "raise":
            self._raise_illegal(actions, illegal, mask)
        seat = self._acting_seat()
        before = clone_state(self.game_state) if any_illegal else None
        if any_illegal:  # penalty mode: the offending rows play any legal action, then are restored
            actions = torch.where(legal, actions, mask.to(torch.int8).argmax(dim=1))
        reward = self.game.apply(self.game_state, actions, self.chance)
        self.steps += 1
        out_of_steps = self._out_of_steps()
        over = self.game.is_over(self.game_state)
        truncated = out_of_steps | (over & self.game.is_truncated(self.game_state))
        if any_illegal:
            rows = illegal.nonzero().squeeze(1)
            put_rows(self.game_state, rows, take_rows(before, rows))
            reward = torch.where(illegal[:, None], self._penalty(seat), reward)
            truncated = truncated & legal
        done = over | out_of_steps | illegal
        figures = self.game.figures(self.game_state)
        if bool(done.any()):
            self._deal(done.nonzero().squeeze(1))
        return self._output(reward, done, truncated, figures)

    def state(self) -> torch.Tensor:
        """``[B, state_size]``: the full-information encoding of every game."""
        return self.game.encode_state(self.game_state)

    def state_dict(self) -> dict[str, Any]:
        """The batch as tensors and plain data (copies), for a train state: every game's tensors,
        the rows' step counts and the chance (the generator's state, and the rows' streams if
        any). :meth:`load_state_dict` goes on from it bit for bit."""
        if self.game_state is None:
            raise RuntimeError("reset() must come before state_dict()")
        state = self.game_state
        streams = None
        if isinstance(self.chance, RowStreams):
            streams = {"key": self.chance.key.clone(), "count": self.chance.count.clone()}
        return {
            "games": {f.name: getattr(state, f.name).clone() for f in dataclasses.fields(state)},
            "steps": self.steps.clone(),
            "generator": self.generator.get_state(),
            "streams": streams,
        }

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        """Go on from a :meth:`state_dict` of an engine of the same game, options and batch size
        on the same kind of device (after a reset, which sets the state's type)."""
        if self.game_state is None:
            raise RuntimeError("reset() must come before load_state_dict()")
        games = {name: value.to(self.device, copy=True) for name, value in saved["games"].items()}
        self.game_state = dataclasses.replace(self.game_state, **games)
        self.steps = saved["steps"].to(self.device, copy=True)
        self.generator.set_state(saved["generator"])
        self.chance = self.generator
        if saved["streams"] is not None:
            self.chance = object.__new__(RowStreams)
            self.chance.key = saved["streams"]["key"].to(self.device, copy=True)
            self.chance.count = saved["streams"]["count"].to(self.device, copy=True)
            self.chance.index = self.rows.clone()

    # ----------------------------------------------------------------- helpers
    def _acting_seat(self) -> torch.Tensor:
        """A copy of the game's acting seats: neither the caller nor a later in-place write
        into the state can change the other's."""
        return self.game.acting_seat(self.game_state).clone()

    def _no_rows(self) -> torch.Tensor:
        return torch.zeros(self.batch_size, dtype=torch.bool, device=self.device)

    def _start_seats(self, rows: int, chance: Chance) -> torch.Tensor:
        if self.options.start_seat == "first":
            return torch.zeros(rows, dtype=torch.int64, device=self.device)
        return randint(chance, self.num_players, (rows,), self.device)

    def _out_of_steps(self) -> torch.Tensor:
        """``[B]`` bool: the row has played ``max_steps`` agent-steps and no simultaneous step
        is half chosen (the game's ``mid_step`` is asked only when some row is that far)."""
        reached = self.steps >= self.options.max_steps
        if not bool(reached.any()):
            return reached
        return reached & ~self.game.mid_step(self.game_state)

    def _deal(self, rows: torch.Tensor) -> None:
        chance = chance_rows(self.chance, rows)
        fresh = self.game.new_games(len(rows), chance, self._start_seats(len(rows), chance))
        put_rows(self.game_state, rows, fresh)
        self.steps[rows] = 0

    def _output(
        self,
        reward: torch.Tensor,
        done: torch.Tensor,
        truncated: torch.Tensor,
        figures: dict[str, torch.Tensor],
    ) -> dict[str, Any]:
        seat = self._acting_seat()
        self._mask = self.game.legal_mask(self.game_state)
        return {
            "observation": self.game.observe(self.game_state, seat),
            "action_mask": self._mask.clone(),
            "seat": seat,
            "reward": reward,
            "done": done,
            "truncated": truncated,
            "figures": figures,
        }

    def _checked(self, actions: Any) -> torch.Tensor:
        """``actions`` (an integer tensor, or numpy array, of shape ``[B]``) as an int64 tensor on
        the engine's device, or an :class:`IllegalActionError` saying what is wrong."""
        expected = (
            f"an integer torch tensor of shape [{self.batch_size}] on {self.device} "
            "or an integer numpy array of that shape"
        )
        if isinstance(actions, np.ndarray):
            if actions.dtype.kind not in "iu":
                problem = f"dtype {actions.dtype}"
            elif actions.shape != (self.batch_size,):
                problem = f"shape {actions.shape}"
            else:
                return torch.from_numpy(actions.astype(np.int64)).to(self.device)
            raise IllegalActionError(
                f"numpy array of {problem}", "every row", "any", [f"actions must be {expected}"]
            )
        if not isinstance(actions, torch.Tensor):
            raise IllegalActionError(
                type(actions).__name__, "every row", "any", [f"actions must be {expected}"]
            )
        problem = None
        if (
            actions.dtype in (torch.bool,)
            or actions.dtype.is_floating_point
            or actions.is_complex()
        ):
            problem = f"dtype {actions.dtype}"
        elif tuple(actions.shape) != (self.batch_size,):
            problem = f"shape {tuple(actions.shape)}"
        elif actions.device != self.device:
            problem = f"device {actions.device}"
        if problem is not None:
            raise IllegalActionError(
                f"tensor of {problem}", "every row", "any", [f"actions must be {expected}"]
            )
        return actions.long()

    def _raise_illegal(
        self, actions: torch.Tensor, illegal: torch.Tensor, mask: torch.Tensor
    ) -> None:
        rows = illegal.nonzero().squeeze(1).tolist()
        shown = ", ".join(
            f"row {r}: {int(actions[r])} (legal: {mask[r].nonzero().squeeze(1).tolist()[:12]})"
            for r in rows[:5]
        )
        more = f" and {len(rows) - 5} more rows" if len(rows) > 5 else ""
        named = f"rows {rows[:20]}" + (f" ({len(rows)} rows in all)" if len(rows) > 20 else "")
        raise IllegalActionError(
            [int(actions[r]) for r in rows[:20]],
            named,
            "batched step",
            [shown + more],
        )

    def _penalty(self, seat: torch.Tensor) -> torch.Tensor:
        """``[B, n]`` rewards of an illegal action: shared by a cooperative team, the offending
        seat's alone otherwise (as in the AEC environment)."""
        penalty = float(self.options.illegal_reward)
        if self.game.cooperative:
            return torch.full((self.batch_size, self.num_players), penalty, device=self.device)
        seats = torch.arange(self.num_players, device=self.device)
        return torch.where(seats[None, :] == seat[:, None], penalty, 0.0)
