"""The generated tables of ``envs/hocus_pocus/RULES.md``.

python -m envs.hocus_pocus.docs   # rewrite them from the code
"""

from __future__ import annotations

from pathlib import Path

from envs.core.docs import standard_blocks, write_blocks
from envs.hocus_pocus import actions
from envs.hocus_pocus.encoding import OBSERVATION_FIELDS, STATE_FIELDS
from envs.hocus_pocus.options import HocusPocusOptions

RULES_MD = Path(__file__).with_name("RULES.md")


def blocks() -> dict[str, str]:
    """Block name -> generated Markdown."""
    return standard_blocks(actions.TABLE, OBSERVATION_FIELDS, STATE_FIELDS, HocusPocusOptions)


if __name__ == "__main__":
    write_blocks(RULES_MD, blocks())
