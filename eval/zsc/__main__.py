"""``cauldron zsc CONFIG``: the cooperative-AI protocol (see :mod:`cauldron.eval.zsc`)."""

from cauldron.envs.core.errors import run_command
from cauldron.eval.zsc import main

run_command(main)
