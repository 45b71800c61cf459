"""The generated tables of every game's ``RULES.md`` (actions, observation, state, options).

python -m envs.docs   # rewrite them from the code
"""

from __future__ import annotations

import importlib
from pathlib import Path

from envs.core.docs import standard_blocks, write_blocks
from envs.registry import ids, spec


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


if __name__ == "__main__":
    for env_id in ids():
        write_blocks(rules_md(env_id), blocks(env_id))
