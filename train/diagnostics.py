"""What a PPO rollout says about learning, as scalars for the run log (``diag/``, ``phase/``,
``game/``).

* ``diag/``: advantage mean, std and mean absolute value (before normalisation), explained
  variance of the value estimates, mean number of legal actions and their share of the action
  space, policy entropy per decision; all over the learner's decisions.
* ``phase/<name>/``: for games whose observation has a one-hot ``phase`` field (its meaning reads
  ``one-hot phase: a, b, ...`` in ``cauldron.envs.layout``), the share of decisions, the mean
  entropy, the mean legal actions and the advantages' mean and mean absolute value (before
  normalisation) of each phase that occurred in the rollout.
* ``game/<figure>``: the mean of each of the game's own numbers (``info`` / batched ``figures``,
  e.g. Hocus Pocus' ``stuns``) over the games that finished in the rollout, and
  ``game/finished``, their count.

``cauldron diagnostics <run folder>`` prints a run's ``phase/`` figures as a table: each
phase's mean over the first and the last tenth of the run's steps (:func:`phase_table`).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import torch

from cauldron import envs
from cauldron.envs.core.errors import ConfigError
from cauldron.train.runlog import read_metrics

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
        stats[f"phase/{name}/advantage_mean"] = _mean(advantages, in_phase)
        stats[f"phase/{name}/advantage_abs_mean"] = _mean(advantages.abs(), in_phase)
    return stats


def game_stats(finished: list[dict[str, float]]) -> dict[str, float]:
    """``game/<figure>``: each figure's mean over ``finished`` games (one dict of the game's own
    numbers each), and ``game/finished``: how many."""
    stats = {"game/finished": float(len(finished))}
    for name in sorted({key for figures in finished for key in figures}):
        values = [figures[name] for figures in finished if name in figures]
        stats[f"game/{name}"] = sum(values) / len(values)
    return stats


PHASE_FIGURES = ("share", "entropy", "legal_actions", "advantage_mean", "advantage_abs_mean")


def phase_table(rows: list[tuple[int, str, float]], tail: float = 0.1) -> str:
    """A markdown table of the ``phase/`` rows of a run log (``(step, key, value)``, as
    :func:`cauldron.train.runlog.read_metrics` reads them): per phase and figure, the mean over the
    rows logged in the first ``tail`` of the run's steps and over those in the last ``tail``
    (``first → last``; a figure a run did not log reads ``-``)."""
    phase_rows = [(step, key, value) for step, key, value in rows if key.startswith("phase/")]
    if not phase_rows:
        raise ConfigError("the run log has no phase/ figures (a game without a phase field?)")
    low, high = min(r[0] for r in phase_rows), max(r[0] for r in phase_rows)
    first_until, last_from = low + tail * (high - low), high - tail * (high - low)
    sums: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    phases: list[str] = []
    for step, key, value in phase_rows:
        _, phase, figure = key.split("/")
        if phase not in phases:
            phases.append(phase)
        for part, inside in (("first", step <= first_until), ("last", step >= last_from)):
            if inside:
                sums[phase, figure, part].append(value)

    def cell(phase: str, figure: str) -> str:
        means = [sums.get((phase, figure, part)) for part in ("first", "last")]
        return " → ".join(f"{sum(m) / len(m):.3f}" if m else "-" for m in means)

    lines = [
        f"phase figures, first → last {tail:.0%} of steps {low:,}–{high:,}",
        "",
        "| phase | " + " | ".join(f.replace("_", " ") for f in PHASE_FIGURES) + " |",
        "|---|" + "---|" * len(PHASE_FIGURES),
    ]
    lines += [
        f"| {phase} | " + " | ".join(cell(phase, f) for f in PHASE_FIGURES) + " |"
        for phase in phases
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(
        prog="cauldron diagnostics", description="a training run's figures per phase"
    )
    parser.add_argument("run", type=Path, help="a run folder (its metrics.csv)")
    parser.add_argument(
        "--tail", type=float, default=0.1, help="share of the steps at each end (0-0.5]"
    )
    args = parser.parse_args(argv)
    if not 0 < args.tail <= 0.5:
        raise ConfigError(f"--tail must lie in (0, 0.5], got {args.tail}")
    rows = read_metrics(args.run / "metrics.csv")
    if not rows:
        raise ConfigError(f"{str(args.run)!r} has no metrics.csv: not a training run folder")
    text = phase_table(rows, args.tail)
    print(text)
    return text


if __name__ == "__main__":
    from cauldron.envs.core.errors import run_command

    run_command(main)
