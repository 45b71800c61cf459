"""Cauldron: multi-agent RL environments from four witch-themed tabletop games.

For example:

    from cauldron import envs
    env = envs.make("hocus_pocus_v1", num_players=4)
    gymnasium.make("cauldron/hocus_pocus-v1")  # the single-agent view (registered on import)
"""

from cauldron.envs.core.decode import decode, layout
from cauldron.envs.core.errors import CauldronError, ConfigError, IllegalActionError
from cauldron.envs.registry import (
    action_name,
    batched_ids,
    ids,
    make,
    make_batched,
    make_parallel,
    options_class,
    register_gymnasium,
    spec,
)

register_gymnasium()

__all__ = [
    "CauldronError",
    "ConfigError",
    "IllegalActionError",
    "action_name",
    "batched_ids",
    "decode",
    "ids",
    "layout",
    "make",
    "make_batched",
    "make_parallel",
    "options_class",
    "spec",
]
