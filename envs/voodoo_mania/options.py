"""Options of ``voodoo_mania_v1``."""

from __future__ import annotations

from dataclasses import dataclass

from envs.core.options import CommonOptions, option


@dataclass(frozen=True)
class VoodooManiaOptions(CommonOptions):
    cycle_anytime: bool = option(
        False,
        "Allow cycling a card under the own pile at any time, not only with no playable card.",
    )
    max_ticks: int = option(
        3000, "Ticks after which a game is truncated (a game where nobody acts ends here)."
    )
    reward: str = option(
        "win_loss",
        "`win_loss`: +1 to each winner and −1 to the others at the end; `per_round`: at each "
        "round's end, the mean of the others' points minus one's own, / cards per player.",
        choices=("win_loss", "per_round"),
    )
