"""PettingZoo AEC environment ``hexenflug_v1``.

| | |
|---|---|
| agents | `player_0` … `player_{n-1}`, n = 2–5 (default 3) |
| actions | `Discrete(167)`, see RULES.md |
| observation | `Box(0, 1, (1193,), float32)` |
| action_mask | `Box(0, 1, (167,), int8)`, all zeros for agents not to act |
| state | `Box(0, 1, (1268,), float32)` |
| rewards | at the end: +1 each winner, −1 each other player (option: score margin) |
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils import wrappers

from cauldron.envs.core.aec import CauldronAECEnv
from cauldron.envs.hexenflug.encoding import Encoder
from cauldron.envs.hexenflug.facts import FACTS
from cauldron.envs.hexenflug.options import HexenflugOptions
from cauldron.envs.hexenflug.render import render_table
from cauldron.envs.hexenflug.rules import HexenflugRules
from cauldron.envs.hexenflug.svg import svg_table


class raw_env(CauldronAECEnv):  # noqa: N801 (PettingZoo naming)
    """Hexenflug, competitive push-your-luck (player counts and metadata from :data:`FACTS`)."""

    rules_class = HexenflugRules
    encoder_class = Encoder
    render_table = staticmethod(render_table)
    svg_table = staticmethod(svg_table)
    options_class = HexenflugOptions
    facts = FACTS


def env(num_players: int | None = None, render_mode: str | None = None, **options: Any):
    """The wrapped AEC environment (order enforcing), as ``cauldron.envs.make("hexenflug_v1")``."""
    return wrappers.OrderEnforcingWrapper(raw_env(num_players, render_mode, **options))
