"""The one shim for simultaneous moves: every seat picks a hidden choice, revealed together.

A simultaneous game's rules resolve a joint step of every seat at once (``apply_joint``, the
Parallel API). In the AEC order the seats choose one after another instead: the acting seat's
choice waits hidden in ``pending``, the actor moves on to the next seat, and the last seat's choice
reveals them all: ``pending`` is cleared, the actor goes back to seat 0 and the joint step
resolves. Observations show who has already chosen (per relative seat) and the observer's own
choice; ``state()`` shows every choice.

The reference rules keep ``pending`` as a dict ``seat -> action`` (:class:`SimultaneousRules` and
the encoder helpers); the batched engines as ``[B, n]`` int64, ``-1`` where a seat has not chosen
(:class:`BatchedSimultaneous` and the tensor helpers, which import torch only when called, so the
reference environments load without it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from cauldron.envs.core.rules import PhasedRules

if TYPE_CHECKING:
    import torch


class SimultaneousRules(PhasedRules):
    """Rules where every seat chooses at once (``apply_joint``). The AEC environment asks the
    seats in order; each choice waits hidden in ``state.pending`` until the last one is made."""

    num_players: int

    def legal_mask(self, state: Any) -> np.ndarray:
        return self.legal_mask_for(state, state.actor)

    def mid_step(self, state: Any) -> bool:
        return bool(state.pending)

    def apply(self, state: Any, action: int) -> tuple[float, ...]:
        """Record the actor's hidden choice; the last seat's choice resolves the step."""
        state.pending[state.actor] = action
        if len(state.pending) < self.num_players:
            state.actor += 1
            return (0.0,) * self.num_players
        joint = [state.pending[seat] for seat in range(self.num_players)]
        state.pending = {}
        state.actor = 0
        return self.apply_joint(state, joint)


def chosen_ones(pending: dict[int, int], offset: int, relative: list[int]) -> list[int]:
    """The entries of a ``chosen`` field (one per seat, relative to the observer through
    ``relative[seat]``) to set to 1: the seats that have chosen."""
    return [offset + relative[seat] for seat in pending]


def own_choice_ones(pending: dict[int, int], seat: int, offset: int) -> list[int]:
    """The entry of an ``own_choice`` field (one-hot over the actions) to set to 1: ``seat``'s
    own hidden choice, if it has chosen."""
    return [offset + pending[seat]] if seat in pending else []


def choices_ones(pending: dict[int, int], offset: int, width: int) -> list[int]:
    """The entries of a ``choices`` field (``width`` actions per absolute seat) to set to 1:
    every choice made."""
    return [offset + seat * width + action for seat, action in pending.items()]


def record_choice(
    pending: torch.Tensor, actor: torch.Tensor, actions: torch.Tensor, live: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The batched ``SimultaneousRules.apply`` bookkeeping: write each live row's ``actions``
    into ``pending [B, n]`` at its ``actor`` and move the actor on. Returns the new ``pending``,
    the new ``actor`` and ``last [B]``: the rows whose last seat has now chosen (their actor is
    back at 0; their choices are still in ``pending``, to be resolved and cleared)."""
    import torch

    n = pending.shape[1]
    seats = torch.arange(n, device=pending.device)
    chosen = live[:, None] & (seats[None, :] == actor[:, None])
    pending = torch.where(chosen, actions[:, None], pending)
    last = live & (actor == n - 1)
    actor = torch.where(last, 0, torch.where(live, actor + 1, actor))
    return pending, actor, last


def has_chosen(pending: torch.Tensor) -> torch.Tensor:
    """``[B, n]`` bool: the seats that have chosen in this step (absolute seats)."""
    return pending >= 0


def own_choice(pending: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
    """``[B]`` int64: ``seat[b]``'s own hidden choice in game ``b``, ``-1`` if none yet."""
    return pending.gather(1, seat[:, None]).squeeze(1)


class BatchedSimultaneous:
    """The batched :class:`SimultaneousRules`, for an engine whose state has ``pending [B, n]``,
    ``actor [B]`` and ``phase [B]``, and which sets ``choosing_phase`` (the phase in which the
    seats choose) and offers ``legal_mask_for(state, seat)`` and ``apply_joint(state, actions,
    generator, live)``."""

    choosing_phase: ClassVar[int]
    num_players: int
    device: Any

    def acting_seat(self, state: Any) -> torch.Tensor:
        return state.actor

    def mid_step(self, state: Any) -> torch.Tensor:
        """Some seat has chosen and the step waits for the others."""
        return has_chosen(state.pending).any(dim=1)

    def legal_mask(self, state: Any) -> torch.Tensor:
        return self.legal_mask_for(state, state.actor)

    def apply(self, state: Any, actions: torch.Tensor, generator: Any) -> torch.Tensor:
        """AEC order (``SimultaneousRules.apply``): record the actor's hidden choice; the last
        seat's choice resolves the step (``apply_joint``). Returns ``[B, n]`` rewards."""
        import torch

        live = state.phase == self.choosing_phase
        state.pending, state.actor, last = record_choice(state.pending, state.actor, actions, live)
        if not bool(last.any()):  # no game completes its step: nothing more to do
            return torch.zeros(len(actions), self.num_players, device=self.device)
        joint = state.pending
        state.pending = torch.where(last[:, None], -1, state.pending)
        return self.apply_joint(state, joint, generator, last)
