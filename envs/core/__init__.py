"""What every Cauldron game shares: the AEC base, options, layouts, decks and errors."""

from cauldron.envs.core.aec import CauldronAECEnv
from cauldron.envs.core.errors import CauldronError, ConfigError, IllegalActionError
from cauldron.envs.core.layout import Field, Layout
from cauldron.envs.core.options import CommonOptions, option, options_table, parse_options

__all__ = [
    "CauldronAECEnv",
    "CauldronError",
    "CommonOptions",
    "ConfigError",
    "Field",
    "IllegalActionError",
    "Layout",
    "option",
    "options_table",
    "parse_options",
]
