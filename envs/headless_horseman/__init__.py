"""Return of the Headless Horseman (``headless_horseman_v1``): cooperative, simultaneous play."""

from cauldron.envs.headless_horseman.env import env, parallel_env, raw_env

__all__ = ["env", "parallel_env", "raw_env"]
