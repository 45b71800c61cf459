"""Voodoo Mania (``voodoo_mania_v1``): competitive and real time, cut into ticks."""

from cauldron.envs.voodoo_mania.env import env, parallel_env, raw_env

__all__ = ["env", "parallel_env", "raw_env"]
