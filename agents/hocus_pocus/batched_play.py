"""The card play every batched Hocus Pocus heuristic ends its turn with."""

from __future__ import annotations

import torch

from cauldron.envs.core.batched_ops import any_along
from cauldron.envs.hocus_pocus import actions as A


def best_play(mask: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """``[B]``: the legal play (card on space) of the highest ``value`` (``[B, 250]``, or any
    shape that flattens to it after the batch), first on ties; with no play legal, Billy
    Butcherson, then Burning Rain of Death, then revealing a Spell."""
    plays = mask[:, A.PLAY : A.CHOOSE]
    play = A.PLAY + torch.where(plays, value.flatten(1), -torch.inf).argmax(1)
    fallback = torch.where(
        mask[:, A.BILLY], A.BILLY, torch.where(mask[:, A.BURN], A.BURN, A.REVEAL_SPELL)
    )
    return torch.where(any_along(plays, 1), play, fallback)
