"""The generated tables of every game's ``RULES.md`` (actions, observation, state, options).

cauldron rules-tables   # rewrite them from the code
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from cauldron.envs.core.docs import standard_blocks, write_blocks
from cauldron.envs.registry import ids, spec


def rules_md(env_id: str) -> Path:
    """The RULES.md beside the game's code."""
    return Path(importlib.import_module(spec(env_id).module).__file__).with_name("RULES.md")


def blocks(env_id: str) -> dict[str, str]:
    """Block name -> Markdown generated from the game's action table, layouts and options."""
    package = spec(env_id).module
    actions = importlib.import_module(f"{package}.actions")
    encoding = importlib.import_module(f"{package}.encoding")
    options = importlib.import_module(package).raw_env.options_class
    return standard_blocks(
        actions.TABLE, encoding.OBSERVATION_FIELDS, encoding.STATE_FIELDS, options
    )


def main(argv: list[str] | None = None) -> None:
    """Rewrite the generated tables of the RULES.md of every game (or of the games named)."""
    parser = argparse.ArgumentParser(
        prog="cauldron rules-tables", description=__doc__.splitlines()[0]
    )
    parser.add_argument("env", nargs="*", help=f"games (default: all): {', '.join(ids())}")
    games = parser.parse_args(argv).env or ids()
    unknown = sorted(set(games) - set(ids()))
    if unknown:
        parser.error(f"unknown game {unknown[0]!r}; the games are {', '.join(ids())}")
    for env_id in games:
        write_blocks(rules_md(env_id), blocks(env_id))


if __name__ == "__main__":
    main()
