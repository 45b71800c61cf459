"""What a PPO rollout says about learning, as scalars for the run log (``diag/``, ``phase/``,
``game/``).

* ``diag/``: advantage mean, std and mean absolute value (before normalisation), explained
  variance of the value estimates, mean number of legal actions and their share of the action
  space, policy entropy per decision; all over the learner's decisions.
* ``phase/<name>/``: for games whose observation has a one-hot ``phase`` field (its meaning reads
  ``one-hot phase: a, b, ...`` in ``envs.layout``), the share of decisions, the mean entropy and
  the mean legal actions of each phase that occurred in the rollout.
* ``game/<figure>``: the mean of each of the game's own numbers (``info`` / batched ``figures``,
  e.g. Hocus Pocus' ``stuns``) over the games that finished in the rollout, and
  ``game/finished``, their count.
"""

from __future__ import annotations

import torch

import envs

PHASE_PREFIX = "one-hot phase:"


def phase_field(env_id: str) -> tuple[slice, list[str]] | None:
    """The slice of ``env_id``'s observation holding its one-hot ``phase`` and the phase names,
    in order; None if the observation has no such field."""
    layout = envs.layout(env_id)
    field = next((f for f in layout.fields if f.name == "phase"), None)
    if field is None or not field.meaning.startswith(PHASE_PREFIX):
        return None
    names = [name.strip() for name in field.meaning[len(PHASE_PREFIX) :].split(",")]
    if len(names) != field.size:
        return None
    return layout.slices["phase"], names


def entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of each row's categorical distribution over masked ``logits`` (``[..., A]``).
    The probabilities come from ``softmax``: ``exp`` of the masked actions' log-probabilities
    (about -1e9) takes a slow path on CPU, some 20 times slower."""
    return -(torch.softmax(logits, -1) * torch.log_softmax(logits, -1)).sum(-1)


def _mean(values: torch.Tensor, weight: torch.Tensor) -> float:
    return float((values * weight).sum() / weight.sum().clamp(min=1.0))


def rollout_stats(
    *,
    entropies: torch.Tensor,
    obs: torch.Tensor,
    masks: torch.Tensor,
    learners: torch.Tensor,
    advantages: torch.Tensor,
    values: torch.Tensor,
    returns: torch.Tensor,
    phases: tuple[slice, list[str]] | None,
) -> dict[str, float]:
    """Scalars of one rollout (every tensor ``[T, N, ...]``, ``learners`` 1 at the learner's
    decisions): the ``diag/`` and ``phase/`` keys of the module docstring."""
    weight = learners.float()
    legal = masks.sum(-1)
    residual_var = _mean((returns - values - _mean(returns - values, weight)).pow(2), weight)
    return_var = _mean((returns - _mean(returns, weight)).pow(2), weight)
    adv_mean = _mean(advantages, weight)
    stats = {
        "diag/advantage_mean": adv_mean,
        "diag/advantage_std": _mean((advantages - adv_mean).pow(2), weight) ** 0.5,
        "diag/advantage_abs_mean": _mean(advantages.abs(), weight),
        "diag/explained_variance": 1.0 - residual_var / return_var if return_var > 0 else 0.0,
        "diag/return_mean": _mean(returns, weight),
        "diag/legal_actions": _mean(legal, weight),
        "diag/legal_share": _mean(legal, weight) / masks.shape[-1],
        "diag/entropy": _mean(entropies, weight),
    }
    if phases is None:
        return stats
    where, names = phases
    phase = obs[..., where].argmax(-1)
    decisions = weight.sum().clamp(min=1.0)
    for index, name in enumerate(names):
        in_phase = weight * (phase == index)
        if in_phase.sum() == 0:
            continue
        stats[f"phase/{name}/share"] = float(in_phase.sum() / decisions)
        stats[f"phase/{name}/entropy"] = _mean(entropies, in_phase)
        stats[f"phase/{name}/legal_actions"] = _mean(legal, in_phase)
    return stats


def game_stats(finished: list[dict[str, float]]) -> dict[str, float]:
    """``game/<figure>``: each figure's mean over ``finished`` games (one dict of the game's own
    numbers each), and ``game/finished``: how many."""
    stats = {"game/finished": float(len(finished))}
    for name in sorted({key for figures in finished for key in figures}):
        values = [figures[name] for figures in finished if name in figures]
        stats[f"game/{name}"] = sum(values) / len(values)
    return stats
