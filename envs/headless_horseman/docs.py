"""The generated tables of ``envs/headless_horseman/RULES.md``.

python -m envs.headless_horseman.docs   # rewrite them from the code
"""

from __future__ import annotations

from pathlib import Path

from envs.core.docs import standard_blocks, write_blocks
from envs.headless_horseman import actions
from envs.headless_horseman.encoding import OBSERVATION_FIELDS, STATE_FIELDS
from envs.headless_horseman.options import HeadlessHorsemanOptions

RULES_MD = Path(__file__).with_name("RULES.md")


def blocks() -> dict[str, str]:
    """Block name -> generated Markdown."""
    return standard_blocks(actions.TABLE, OBSERVATION_FIELDS, STATE_FIELDS, HeadlessHorsemanOptions)


if __name__ == "__main__":
    write_blocks(RULES_MD, blocks())
