"""Options of ``headless_horseman_v1``."""

from __future__ import annotations

from dataclasses import dataclass

from cauldron.envs.core.options import CommonOptions, option


@dataclass(frozen=True)
class HeadlessHorsemanOptions(CommonOptions):
    speed_tile: int = option(
        2, "Spaces the Horseman rides per speed icon: 2 (normal) or 4 (*More Challenging*)."
    )
    handless_seats: tuple = option(
        (),
        "*Less Strategy*: seats that hold no hand and play the top card of the draw pile.",
    )
    reshuffle: bool = option(
        False,
        "When the draw pile runs out, shuffle the discard pile into a new one instead of "
        "flipping it over as the rulebook says (flipped, the first card discarded comes up "
        "first and no chance is drawn).",
    )
    progress_reward: float = option(
        0.0,
        "Shaped reward per turn: this times Ichabod's progress that turn / the bridge.",
        shaping=True,
    )
