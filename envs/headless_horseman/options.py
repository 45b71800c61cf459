"""Options of ``headless_horseman_v0``."""

from __future__ import annotations

from dataclasses import dataclass

from envs.core.options import CommonOptions, option


@dataclass(frozen=True)
class HeadlessHorsemanOptions(CommonOptions):
    speed_tile: int = option(
        2, "Spaces the Horseman rides per speed icon: 2 (normal) or 4 (*More Challenging*)."
    )
    handless_seats: tuple = option(
        (),
        "*Less Strategy*: seats that hold no hand and play the top card of the draw pile.",
    )
    progress_reward: float = option(
        0.0, "Shaped reward per turn: this times Ichabod's progress that turn / the bridge."
    )
