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
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any, Protocol, TypeVar

import torch

from envs.core.errors import ConfigError, IllegalActionError
from envs.core.options import CommonOptions
from envs.registry import torch_device

S = TypeVar("S")

MAX_BATCH_SIZE = 2**20  # rows of one engine (a guard against sizes that cannot be allocated)
MAX_SEED = 2**64 - 1  # the largest seed a torch generator takes whole


class BatchedGame(Protocol[S]):
    """What :class:`BatchedEnv` needs from a game's tensor rules (``S``: its state dataclass)."""

    num_players: int
    num_actions: int
    observation_size: int
    state_size: int
    cooperative: bool

    def new_games(self, rows: int, generator: torch.Generator, start_seat: torch.Tensor) -> S:
        """``rows`` freshly dealt games drawing all chance from ``generator``."""

    def acting_seat(self, state: S) -> torch.Tensor:
        """``[B]`` int64: the seat whose decision each game waits for (may be the state's own
        tensor: :class:`BatchedEnv` copies it before handing it out)."""

    def legal_mask(self, state: S) -> torch.Tensor:
        """``[B, num_actions]`` bool: legal actions of each game's acting seat."""

    def apply(self, state: S, actions: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
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


def shuffled_decks(rows: int, size: int, generator: torch.Generator, device: Any) -> torch.Tensor:
    """``[rows, size]`` int64: a random permutation of ``0..size-1`` per row (argsort of
    uniform keys; ties have probability zero)."""
    keys = torch.rand(rows, size, generator=generator, device=device)
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
    def reset(self, seed: int | None = None) -> dict[str, Any]:
        """Deal ``batch_size`` games; same seed, same batch of games. A seed that is not an
        integer from 0 to 2**64 - 1 is refused before anything changes."""
        if seed is not None:
            self.generator.manual_seed(checked_seed(seed))
        else:
            self.generator.seed()
        self.game_state = self.game.new_games(
            self.batch_size, self.generator, self._start_seats(self.batch_size)
        )
        self.steps = torch.zeros(self.batch_size, dtype=torch.int64, device=self.device)
        reward = torch.zeros(self.batch_size, self.num_players, device=self.device)
        return self._output(reward, self._no_rows(), self._no_rows(), {})

    def step(self, actions: torch.Tensor) -> dict[str, Any]:
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
        reward = self.game.apply(self.game_state, actions, self.generator)
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

    # ----------------------------------------------------------------- helpers
    def _acting_seat(self) -> torch.Tensor:
        """A copy of the game's acting seats: neither the caller nor a later in-place write
        into the state can change the other's."""
        return self.game.acting_seat(self.game_state).clone()

    def _no_rows(self) -> torch.Tensor:
        return torch.zeros(self.batch_size, dtype=torch.bool, device=self.device)

    def _start_seats(self, rows: int) -> torch.Tensor:
        if self.options.start_seat == "first":
            return torch.zeros(rows, dtype=torch.int64, device=self.device)
        return torch.randint(
            self.num_players, (rows,), generator=self.generator, device=self.device
        )

    def _out_of_steps(self) -> torch.Tensor:
        """``[B]`` bool: the row has played ``max_steps`` agent-steps and no simultaneous step
        is half chosen (the game's ``mid_step`` is asked only when some row is that far)."""
        reached = self.steps >= self.options.max_steps
        if not bool(reached.any()):
            return reached
        return reached & ~self.game.mid_step(self.game_state)

    def _deal(self, rows: torch.Tensor) -> None:
        fresh = self.game.new_games(len(rows), self.generator, self._start_seats(len(rows)))
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
        """``actions`` as an int64 tensor of shape ``[B]`` on the engine's device, or an
        :class:`IllegalActionError` saying what is wrong."""
        expected = f"an integer torch tensor of shape [{self.batch_size}] on {self.device}"
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
