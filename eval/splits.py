"""Named deal splits: ``dev`` for tuning and checkpoint selection, ``test`` for reported figures.

A game's deal is its seed (game ``i`` of a command plays seed ``seed + i``). The splits are
disjoint ranges of seeds, a billion seeds apart; every command that plays seeded games takes a
split (``dev`` by default) and checks that all its seeds lie inside it, so no figure can be
measured on deals that were used to choose it. Training never reads ``test``: its evaluations
deal from ``dev`` (docs/benchmark_protocol.md).

| split | seeds | for |
|---|---|---|
| ``dev`` | 0 – 999,999,999 | tuning, in-training evaluation, checkpoint selection |
| ``test`` | 2,000,000,000 – 2,099,999,999 | the figures a README, a report or a paper gives |
"""

from __future__ import annotations

from dataclasses import dataclass

from cauldron.envs.core.errors import ConfigError


@dataclass(frozen=True)
class Split:
    """Seeds ``start`` to ``stop - 1`` (``stop`` excluded)."""

    name: str
    start: int
    stop: int

    def holds(self, seed: int, games: int = 1) -> bool:
        """Whether seeds ``seed .. seed + games - 1`` all lie in this split."""
        return games >= 1 and self.start <= seed and seed + games <= self.stop

    def describe(self) -> str:
        return f"{self.name} (seeds {self.start:,}–{self.stop - 1:,})"


SPLITS: dict[str, Split] = {
    "dev": Split("dev", 0, 1_000_000_000),
    "test": Split("test", 2_000_000_000, 2_100_000_000),
}
DEFAULT_SPLIT = "dev"
TRAINING_SPLIT = "dev"  # what training and checkpoint selection may read


def get(name: str) -> Split:
    """The split called ``name``; a :class:`ConfigError` naming the splits for any other name."""
    if name not in SPLITS:
        known = "; ".join(s.describe() for s in SPLITS.values())
        raise ConfigError(f"unknown split {name!r}; the splits are {known}")
    return SPLITS[name]


def first_seed(name: str, seed: int | None, games: int) -> int:
    """The first seed of ``games`` games on split ``name``: ``seed``, or the split's start when
    None. A :class:`ConfigError` naming both ranges when the games would reach outside it."""
    split = get(name)
    seed = split.start if seed is None else seed
    if not split.holds(seed, games):
        others = "; ".join(s.describe() for s in SPLITS.values() if s is not split)
        raise ConfigError(
            f"seeds {seed:,}–{seed + games - 1:,} ({games:,} games from seed {seed:,}) are not all "
            f"in split {split.describe()}; the other splits: {others}"
        )
    return seed


def for_training(name: str, what: str) -> str:
    """``name`` when training or checkpoint selection (``what``) may read it; a
    :class:`ConfigError` for the test split, which only reported figures read."""
    get(name)
    if name != TRAINING_SPLIT:
        raise ConfigError(
            f"{what} reads the {TRAINING_SPLIT} split only, got {name!r}; split "
            f"{get(name).describe()} is kept for reported figures"
        )
    return name


def of(seed: int, games: int) -> str | None:
    """The split that holds seeds ``seed .. seed + games - 1``, or None."""
    return next((s.name for s in SPLITS.values() if s.holds(seed, games)), None)
