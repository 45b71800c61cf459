"""Cauldron: multi-agent RL environments from four witch-themed tabletop games.

Its subpackages are the repository's top-level folders: :mod:`cauldron.envs` (the games and
their rules), :mod:`cauldron.agents` (heuristics and policies), :mod:`cauldron.train` (trainers)
and :mod:`cauldron.eval` (evaluation, play and replay). The ``cauldron`` command
(:mod:`cauldron.cli`) runs their tools.
"""
