"""The auxiliary belief target (centralized training, decentralized play): what the deciding
seat cannot see of the other seats' hands.

A linear head on the actor's features (:meth:`cauldron.agents.torch_policy.PolicyNet.forward_actor`:
the last hidden layer, or the GRU memory) predicts the hands of the other seats, clockwise from the
deciding one, each as ``state()``'s ``hands`` field writes it: ``[B, (n - 1) * per_seat]``
entries of 0 or 1 (Hocus Pocus and the Horseman: one per card id; Voodoo Mania: the pairs shown
and missing per slot and side). Its binary cross-entropy, weighted by ``belief_coef``, joins PPO's
loss, so the gradient shapes the actor's features; the target is read from ``state()`` during
training only, the head is never an input of the policy and is not saved in the checkpoint.

How well it predicts (``belief/*`` in the run log, from the last epoch's minibatches):

* ``bce`` against ``bce_frequency``: the loss of predicting every entry's frequency over the same
  rows (the card-frequency baseline, fitted to the data it is scored on);
* ``hit_rate`` against ``hit_rate_frequency``: per other seat holding ``h`` cards (entries 1),
  the share of them among the ``h`` entries ranked highest, by the head and by frequency.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from cauldron import envs
from cauldron.envs.core.errors import ConfigError


@dataclass(frozen=True)
class HandLayout:
    """Where ``state()`` holds the hands: ``per_seat`` entries for each of ``max_seats``
    absolute seats from ``start``, and ``players`` seats at the table."""

    start: int
    per_seat: int
    max_seats: int
    players: int

    @property
    def target_size(self) -> int:
        return (self.players - 1) * self.per_seat


def hand_layout(env_id: str, num_players: int, options: dict | None = None) -> HandLayout:
    """The hands in ``env_id``'s ``state()``; a :class:`ConfigError` naming ``belief_coef`` for a
    game whose hands are public."""
    if not envs.spec(env_id).hidden_hands:
        raise ConfigError(
            f"belief_coef: {env_id}'s hands are public (every card enters a hand in view): "
            "there is nothing hidden to predict"
        )
    shape = envs.layout(env_id, "state", num_players, **(options or {}))
    hands, seats = shape.slices["hands"], shape.slices["hand_sizes"]
    max_seats = seats.stop - seats.start
    return HandLayout(hands.start, (hands.stop - hands.start) // max_seats, max_seats, num_players)


def targets(
    layout: HandLayout, states: torch.Tensor, seats: torch.Tensor, relabel: torch.Tensor | None
) -> torch.Tensor:
    """``[B, target_size]``: the other seats' hands, clockwise from ``seats`` ``[B]`` (absolute),
    read from ``states`` ``[B, state_size]``; ``relabel`` ``[B, per_seat]`` (Other-Play) gathers
    each hand into the deciding seat's relabelled view."""
    n, per_seat = layout.players, layout.per_seat
    hands = states[:, layout.start : layout.start + layout.max_seats * per_seat]
    hands = hands.reshape(len(states), layout.max_seats, per_seat)
    others = (seats[:, None] + torch.arange(1, n, device=seats.device)) % n  # [B, n - 1]
    picked = hands.gather(1, others[..., None].expand(-1, -1, per_seat))
    if relabel is not None:
        picked = picked.gather(2, relabel[:, None, :].expand(-1, n - 1, -1))
    return picked.reshape(len(states), -1)


class BeliefHead(nn.Module):
    """Logits ``[B, target_size]`` of the other seats' hands from the actor's features."""

    def __init__(self, feature_size: int, target_size: int) -> None:
        super().__init__()
        self.linear = nn.Linear(feature_size, target_size)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.linear(features)


def loss(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The binary cross-entropy per entry, averaged over the rows of ``weight`` 1."""
    each = nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
    return (weight * each.mean(-1)).sum() / weight.sum().clamp(min=1.0)


def _hit_rate(scores: torch.Tensor, target: torch.Tensor, per_seat: int) -> float:
    """Per row and other seat, the share of its ``h`` held entries among its ``h`` best scores."""
    scores = scores.reshape(-1, per_seat)
    held = target.reshape(-1, per_seat) > 0.5
    ranks = scores.argsort(-1, descending=True).argsort(-1)
    hits = (held & (ranks < held.sum(-1, keepdim=True))).sum()
    return float(hits / held.sum().clamp(min=1))


@torch.no_grad()
def figures(logits: torch.Tensor, target: torch.Tensor, per_seat: int) -> dict[str, float]:
    """``bce``, ``bce_frequency``, ``hit_rate`` and ``hit_rate_frequency`` (module docstring)
    over the rows of ``logits`` and ``target`` ``[R, target_size]``."""
    frequency = target.mean(0, keepdim=True).clamp(1e-6, 1 - 1e-6).expand_as(target)
    bce = nn.functional.binary_cross_entropy_with_logits
    return {
        "bce": float(bce(logits, target)),
        "bce_frequency": float(nn.functional.binary_cross_entropy(frequency, target)),
        "hit_rate": _hit_rate(logits, target, per_seat),
        "hit_rate_frequency": _hit_rate(frequency, target, per_seat),
    }
