"""The generated tables of ``envs/hexenflug/RULES.md``.

python -m envs.hexenflug.docs   # rewrite them from the code
"""

from __future__ import annotations

from pathlib import Path

from envs.core.docs import standard_blocks, write_blocks
from envs.hexenflug import actions
from envs.hexenflug.encoding import OBSERVATION_FIELDS, STATE_FIELDS
from envs.hexenflug.options import HexenflugOptions

RULES_MD = Path(__file__).with_name("RULES.md")


def blocks() -> dict[str, str]:
    """Block name -> generated Markdown."""
    return standard_blocks(actions.TABLE, OBSERVATION_FIELDS, STATE_FIELDS, HexenflugOptions)


if __name__ == "__main__":
    write_blocks(RULES_MD, blocks())
