"""A game's facts, declared once in its package (``envs/<game>/facts.py``) and read by every layer:
the registry (``cauldron.envs.spec``), the AEC and Parallel environments (player counts,
``metadata``) and the batched engine (``cooperative``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EnvSpec:
    """Where a game lives and what it offers.

    ``name`` is the environment id (``<game>_v<version>``); ``module`` the game's package;
    ``players`` the inclusive range of player counts and ``default_players`` the count taken when
    none is given. A ``parallel`` game (simultaneous moves) also has a Parallel environment.
    ``score`` is the key of the game's progress figure in ``info`` (a diagnostic);
    ``lower_is_better`` says fewer is better (the Horseman's scares, Voodoo Mania's points);
    ``hidden_hands`` says ``state()``'s ``hands`` field holds cards the other seats do not see.
    """

    name: str
    module: str
    players: tuple[int, int]
    default_players: int
    cooperative: bool
    parallel: bool = False
    score: str = "score"
    lower_is_better: bool = False
    hidden_hands: bool = True

    def __post_init__(self) -> None:
        low, high = self.players
        if not low <= self.default_players <= high:
            raise ValueError(
                f"{self.name}: default_players {self.default_players} not in {low}–{high}"
            )

    @property
    def measure(self) -> str:
        """The rulebook's outcome, the verdict's measure (``cauldron.envs.registry.MEASURES``):
        the team's win rate in a cooperative game, won − lost in a competitive one."""
        return "win_rate" if self.cooperative else "won_minus_lost"

    def metadata(self, render_modes: list[str]) -> dict[str, Any]:
        """The PettingZoo ``metadata`` of the game's environments drawn in ``render_modes``."""
        return {
            "render_modes": list(render_modes),
            "name": self.name,
            "is_parallelizable": self.parallel,
        }
