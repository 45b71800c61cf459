"""What every Cauldron game shares: the AEC base, options, layouts, decks and errors."""

from envs.core.aec import CauldronAECEnv
from envs.core.errors import CauldronError, ConfigError, IllegalActionError
from envs.core.layout import Field, Layout
from envs.core.options import CommonOptions, option, options_table, parse_options

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
