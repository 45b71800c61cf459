"""The agent interface used by evaluation, training and play, and what an agent thought."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

TOP = 5  # actions a thought lists
SEAT_SEED_STEP = 7919


def seat_seed(seed: int, index: int) -> int:
    """The seed an agent is reset with before the game of ``seed``, at the ``index``-th seat:
    ``seed`` + :data:`SEAT_SEED_STEP` × (``index`` + 1)."""
    return seed + SEAT_SEED_STEP * (index + 1)


class Agent(Protocol):
    """Chooses a legal action from one player's observation vector and action mask.

    - ``reset(seed)`` is called before every game with a seed derived from the game's seed and
      the seat (:func:`seat_seed`), so a stochastic agent plays the same game the same way every
      time.
    - ``act(observation, action_mask)`` gets the seat's float32 observation vector (its fields:
      ``cauldron.envs.decode(env_id, observation)``) and the int8 mask of legal actions, and returns
      the index of a legal action (an ``int``).
    - Every seat gets its own object, so an agent may keep memory within a game.
    - ``name`` is optional: the harness names agents by their spec or key.
    - ``explain()`` is optional: the :class:`Thought` behind the last ``act`` (``None``: none),
      taken from that decision's own computation, so asking never changes the agent's memory or
      its next actions. The ``torch:``, ``rllib:`` and ``sb3:`` agents have it; baselines not.

    Any class with these methods is an agent: ``python:<package.module>:<Class>?key=value`` puts
    it in an evaluation config, ``cauldron.eval.evaluate`` takes instances.
    """

    name: str

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...


@dataclass(frozen=True)
class Thought:
    """What a policy thought at one decision: ``top``, up to :data:`TOP` legal actions with the
    policy's probabilities under the mask (rounded to 4 decimals, highest first, the chosen
    action always among them), and ``value`` (rounded alike), the critic's estimate of the
    seat's (discounted, shaped as in training) return from here, or ``None`` when the agent
    cannot compute it from what the seat sees (a centralized critic reads ``state()``, hidden
    cards included)."""

    top: tuple[tuple[int, float], ...]
    value: float | None = None


def thought(
    probs: np.ndarray, action_mask: np.ndarray, chosen: int, value: float | None
) -> Thought:
    """The :class:`Thought` of a decision from the policy's probabilities over all actions: the
    legal actions by probability (ties: lower index first), the chosen one in place of the last
    if it is not among the first :data:`TOP`."""
    legal = np.flatnonzero(np.asarray(action_mask) > 0)
    order = legal[np.argsort(-np.asarray(probs, dtype=np.float64)[legal], kind="stable")]
    top = [int(a) for a in order[:TOP]]
    if chosen not in top and chosen in legal:
        top[-1] = chosen
    return Thought(
        tuple((a, round(float(probs[a]), 4)) for a in top),
        None if value is None else round(float(value), 4),
    )
