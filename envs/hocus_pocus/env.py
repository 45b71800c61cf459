"""PettingZoo AEC environment ``hocus_pocus_v1``.

| | |
|---|---|
| agents | `player_0` … `player_{n-1}`, n = 2–6 (default 4) |
| actions | `Discrete(329)`, see RULES.md |
| observation | `Box(0, 1, (1186,), float32)` |
| action_mask | `Box(0, 1, (329,), int8)`, all zeros for agents not to act |
| state | `Box(0, 1, (2309,), float32)` |
| rewards | shared: +1 win, −1 loss (+ `stun_reward` per stun, `match_reward` shaping) |
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils import wrappers

from cauldron.envs.core.aec import CauldronAECEnv
from cauldron.envs.hocus_pocus.encoding import Encoder
from cauldron.envs.hocus_pocus.facts import FACTS
from cauldron.envs.hocus_pocus.options import HocusPocusOptions
from cauldron.envs.hocus_pocus.render import render_table
from cauldron.envs.hocus_pocus.rules import HocusPocusRules
from cauldron.envs.hocus_pocus.svg import svg_table


class raw_env(CauldronAECEnv):  # noqa: N801 (PettingZoo naming)
    """Hocus Pocus: The Game (player counts and metadata from :data:`FACTS`)."""

    rules_class = HocusPocusRules
    encoder_class = Encoder
    render_table = staticmethod(render_table)
    svg_table = staticmethod(svg_table)
    options_class = HocusPocusOptions
    facts = FACTS


def env(num_players: int | None = None, render_mode: str | None = None, **options: Any):
    """The wrapped AEC environment (order enforcing), as
    ``cauldron.envs.make("hocus_pocus_v1")``."""
    return wrappers.OrderEnforcingWrapper(raw_env(num_players, render_mode, **options))
