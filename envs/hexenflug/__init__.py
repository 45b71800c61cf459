"""Hexenflug (``hexenflug_v1``): competitive push-your-luck."""

from cauldron.envs.hexenflug.env import env, raw_env

__all__ = ["env", "raw_env"]
