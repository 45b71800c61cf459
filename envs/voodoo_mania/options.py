"""Options of ``voodoo_mania_v1``."""

from __future__ import annotations

from dataclasses import dataclass

from cauldron.envs.core.options import CommonOptions, option


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
        "round's end, the mean of the others' points minus one's own, / cards per player; "
        "`per_tick`: `per_round`'s payment spread over the round, each tick paying the change "
        "of the mean of the others' cards held minus one's own, / cards per player (a round "
        "pays in sum what `per_round` pays at its end; a cut-short round pays what it has).",
        choices=("win_loss", "per_round", "per_tick"),
    )
    max_idle_ticks: int = option(
        0,
        "When above 0, a game in which some player could play but nobody has played for this "
        "many ticks in a row is cut short (paid as `truncation` says). In ticks a player "
        "holding the only answers to the wanted pair can wait forever; 0: no limit.",
    )
    truncation: str = option(
        "standing",
        "How a game cut short at `max_ticks` or `max_idle_ticks` pays. `standing`: as if it "
        "had ended there (points so far plus cards held; fewest win; with `per_round`, the "
        "unfinished round as if it had ended; with `per_tick`, nothing more); `loss`: −1 to "
        "every player (with `per_round` or `per_tick`, for the unfinished round), so that "
        "stalling pays nobody.",
        choices=("standing", "loss"),
    )
