"""The generated tables of ``envs/hocus_pocus/RULES.md``.

python -m envs.hocus_pocus.docs   # rewrite them from the code
"""

from __future__ import annotations

from pathlib import Path

from envs.core.docs import action_table, update_file
from envs.core.layout import Layout
from envs.core.options import options_table
from envs.hocus_pocus import actions
from envs.hocus_pocus.encoding import OBSERVATION_FIELDS, STATE_FIELDS
from envs.hocus_pocus.options import HocusPocusOptions

RULES_MD = Path(__file__).with_name("RULES.md")


def blocks() -> dict[str, str]:
    """Block name -> generated Markdown."""
    return {
        "actions": action_table(actions.TABLE),
        "observation": Layout(OBSERVATION_FIELDS).markdown(),
        "state": Layout(STATE_FIELDS).markdown(),
        "options": options_table(HocusPocusOptions),
    }


if __name__ == "__main__":
    changed = update_file(RULES_MD, blocks())
    print(f"{RULES_MD}: {'updated' if changed else 'up to date'}")
