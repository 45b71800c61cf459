"""Options of ``hexenflug_v1``."""

from __future__ import annotations

from dataclasses import dataclass

from cauldron.envs.core.options import CommonOptions, option


@dataclass(frozen=True)
class HexenflugOptions(CommonOptions):
    beginner_crash_rule: bool = option(
        False,
        "Crash (beginner rule): a player with no Spellbook of the crashed colour may keep the "
        "drawn card in hand.",
    )
    reward: str = option(
        "win_loss",
        "Final reward: `win_loss` (+1 each winner, −1 each other player) or `score_margin` "
        "(own score minus the best other score).",
        choices=("win_loss", "score_margin"),
    )
    books_per_colour: int = option(
        0, "Spellbooks per colour in play; 0 = by player count (2: 7, 3: 8, 4–5: 9)."
    )
