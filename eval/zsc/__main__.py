"""``python -m eval.zsc CONFIG``: the cooperative-AI protocol (see :mod:`eval.zsc`)."""

from envs.core.errors import run_command
from eval.zsc import main

run_command(main)
