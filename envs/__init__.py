"""Cauldron: multi-agent RL environments from four witch-themed tabletop games.

import envs
env = envs.make("hocus_pocus_v1", num_players=4)
"""

from envs.core.decode import decode, layout
from envs.core.errors import CauldronError, ConfigError, IllegalActionError
from envs.registry import batched_ids, ids, make, make_batched, make_parallel, spec

__all__ = [
    "CauldronError",
    "ConfigError",
    "IllegalActionError",
    "batched_ids",
    "decode",
    "ids",
    "layout",
    "make",
    "make_batched",
    "make_parallel",
    "spec",
]
