"""PettingZoo environments ``headless_horseman_v1`` (AEC and Parallel).

| | |
|---|---|
| agents | `player_0` … `player_{n-1}`, n = 2–4 (default 3) |
| actions | `Discrete(31)`, see RULES.md |
| observation | `Box(0, 1, (313,), float32)` |
| action_mask | `Box(0, 1, (31,), int8)`; in the AEC env all zeros for agents not to act |
| state | `Box(0, 1, (590,), float32)` |
| rewards | shared: +1 win, −1 loss (+ `progress_reward` shaping) |
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils import wrappers

from cauldron.envs.core.aec import CauldronAECEnv
from cauldron.envs.core.parallel import CauldronParallelEnv
from cauldron.envs.headless_horseman.encoding import Encoder
from cauldron.envs.headless_horseman.facts import FACTS
from cauldron.envs.headless_horseman.options import HeadlessHorsemanOptions
from cauldron.envs.headless_horseman.render import render_table
from cauldron.envs.headless_horseman.rules import HeadlessHorsemanRules
from cauldron.envs.headless_horseman.svg import svg_table


class raw_env(CauldronAECEnv):  # noqa: N801 (PettingZoo naming)
    """Return of the Headless Horseman, cooperative; choices in seat order, each
    hidden from the later choosers until the round resolves."""

    rules_class = HeadlessHorsemanRules
    encoder_class = Encoder
    render_table = staticmethod(render_table)
    svg_table = staticmethod(svg_table)
    options_class = HeadlessHorsemanOptions
    facts = FACTS


class parallel_env(CauldronParallelEnv):  # noqa: N801 (PettingZoo naming)
    """Return of the Headless Horseman with every player choosing at once."""

    aec_class = raw_env


def env(num_players: int | None = None, render_mode: str | None = None, **options: Any):
    """The wrapped AEC environment (order enforcing), as
    ``cauldron.envs.make("headless_horseman_v1")``."""
    return wrappers.OrderEnforcingWrapper(raw_env(num_players, render_mode, **options))
