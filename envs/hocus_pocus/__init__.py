"""Hocus Pocus: The Game (``hocus_pocus_v1``): cooperative, hidden hands, one question per turn."""

from cauldron.envs.hocus_pocus.env import env, raw_env

__all__ = ["env", "raw_env"]
