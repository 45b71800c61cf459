"""The generated tables of ``envs/hexenflug/RULES.md``.

python -m envs.hexenflug.docs   # rewrite them from the code
"""

from __future__ import annotations

from pathlib import Path

from envs.core.docs import action_table, update_file
from envs.core.layout import Layout
from envs.core.options import options_table
from envs.hexenflug import actions
from envs.hexenflug.encoding import OBSERVATION_FIELDS, STATE_FIELDS
from envs.hexenflug.options import HexenflugOptions

RULES_MD = Path(__file__).with_name("RULES.md")


def blocks() -> dict[str, str]:
    """Block name -> generated Markdown."""
    return {
        "actions": action_table(actions.TABLE),
        "observation": Layout(OBSERVATION_FIELDS).markdown(),
        "state": Layout(STATE_FIELDS).markdown(),
        "options": options_table(HexenflugOptions),
    }


if __name__ == "__main__":
    changed = update_file(RULES_MD, blocks())
    print(f"{RULES_MD}: {'updated' if changed else 'up to date'}")
