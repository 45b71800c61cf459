"""Hexenflug (``hexenflug_v1``): competitive push-your-luck for 2–5 players."""

from cauldron.envs.hexenflug.env import env, raw_env

__all__ = ["env", "raw_env"]
