"""Small tensor helpers shared by the batched engines (append-only: each engine adds what it
needs and leaves the others' helpers alone)."""

from __future__ import annotations

import torch


def any_along(mask: torch.Tensor, dim: int | tuple[int, ...]) -> torch.Tensor:
    """``mask.any(dim)`` for a bool ``mask``, as a count: on the CPU, torch's bool ``any`` along
    a dimension is several times slower than a sum (measured ~10x on [1024, 50])."""
    return mask.sum(dim) > 0


def all_along(mask: torch.Tensor, dim: int) -> torch.Tensor:
    """``mask.all(dim)`` for a bool ``mask``, as a count (see :func:`any_along`)."""
    return mask.sum(dim) == mask.shape[dim]


def as_float(mask: torch.Tensor) -> torch.Tensor:
    """``mask.float()`` for a bool ``mask`` (1.0 where true), through a uint8 view: on the CPU,
    torch's bool-to-float conversion is several times slower (measured ~5x on [1024, 56])."""
    return mask.view(torch.uint8).float()


def inverse_permutation(perm: torch.Tensor) -> torch.Tensor:
    """``perm.argsort(dim=1)`` for rows that are permutations of ``0..k-1`` (each row's inverse),
    by one scatter instead of a sort (~25x cheaper on ``[1024, 50]``)."""
    ranks = torch.arange(perm.shape[1], device=perm.device).expand_as(perm)
    return torch.empty_like(perm).scatter_(1, perm, ranks)
