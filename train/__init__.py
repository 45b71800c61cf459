"""Training: ``cauldron train CONFIG``; :func:`fit` runs the trainer a config names."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cauldron.train.config import TrainConfig
    from cauldron.train.runlog import RunLog


def fit(config: TrainConfig, log: RunLog) -> Path:
    """Train with ``config.trainer`` (``torch``: :mod:`cauldron.train.ppo`; ``sb3``:
    :mod:`cauldron.train.sb3`; ``rllib``: :mod:`cauldron.train.rllib`) on ``config.threads`` torch
    threads (0: one per core) and
    return the final checkpoint's path."""
    from cauldron.agents.torch_policy import choose_threads

    choose_threads(config.threads or os.cpu_count() or 1)
    if config.trainer == "torch":
        from cauldron.train.ppo import train
    elif config.trainer == "rllib":
        from cauldron.train.rllib import train
    else:
        from cauldron.train.sb3 import train
    return train(config, log)
