"""The generated tables of ``envs/voodoo_mania/RULES.md``.

python -m envs.voodoo_mania.docs   # rewrite them from the code
"""

from __future__ import annotations

from pathlib import Path

from envs.core.docs import standard_blocks, write_blocks
from envs.voodoo_mania import actions
from envs.voodoo_mania.encoding import OBSERVATION_FIELDS, STATE_FIELDS
from envs.voodoo_mania.options import VoodooManiaOptions

RULES_MD = Path(__file__).with_name("RULES.md")


def blocks() -> dict[str, str]:
    """Block name -> generated Markdown."""
    return standard_blocks(actions.TABLE, OBSERVATION_FIELDS, STATE_FIELDS, VoodooManiaOptions)


if __name__ == "__main__":
    write_blocks(RULES_MD, blocks())
