"""PettingZoo environments ``voodoo_mania_v1`` (Parallel and AEC).

| | |
|---|---|
| agents | `player_0` … `player_{n-1}`, n = 2–6 (default 4) |
| actions | `Discrete(10)`: wait, play slot k side s, cycle slot k (see RULES.md) |
| observation | `Box(0, 1, (421,), float32)` |
| action_mask | `Box(0, 1, (10,), int8)`; in the AEC env all zeros for agents not to act |
| state | `Box(0, 1, (2596,), float32)` |
| rewards | at the end: +1 to each winner (fewest points), −1 to the others; or per round |
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils import wrappers

from cauldron.envs.core.aec import CauldronAECEnv
from cauldron.envs.core.parallel import CauldronParallelEnv
from cauldron.envs.voodoo_mania.encoding import Encoder
from cauldron.envs.voodoo_mania.facts import FACTS
from cauldron.envs.voodoo_mania.options import VoodooManiaOptions
from cauldron.envs.voodoo_mania.render import render_table
from cauldron.envs.voodoo_mania.rules import VoodooManiaRules
from cauldron.envs.voodoo_mania.svg import svg_table


class raw_env(CauldronAECEnv):  # noqa: N801 (PettingZoo naming)
    """Voodoo Mania: every tick each seat chooses in turn, hidden from later seats."""

    rules_class = VoodooManiaRules
    encoder_class = Encoder
    render_table = staticmethod(render_table)
    svg_table = staticmethod(svg_table)
    options_class = VoodooManiaOptions
    facts = FACTS


class parallel_env(CauldronParallelEnv):  # noqa: N801 (PettingZoo naming)
    """Voodoo Mania with every player choosing each tick at once."""

    aec_class = raw_env


def env(num_players: int | None = None, render_mode: str | None = None, **options: Any):
    """The wrapped AEC environment (order enforcing), as
    ``cauldron.envs.make("voodoo_mania_v1")``."""
    return wrappers.OrderEnforcingWrapper(raw_env(num_players, render_mode, **options))
