"""A curriculum over game options: which options the training games use at each learner step.

``curriculum`` in the training config is a list of stages ``{until_step, options}``. Stage ``i``
applies while the learner's step count is below its ``until_step`` (and at or past the previous
stage's); its options are merged over the config's ``options``. Only the last stage may omit
``until_step`` (it then lasts to the end); after a last stage that has one, ``options`` alone
apply. An empty curriculum means ``options`` throughout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import envs
from envs.core.errors import ConfigError

if TYPE_CHECKING:
    from train.config import TrainConfig


def stage_at(config: TrainConfig, step: int) -> int:
    """The index of the stage in force at learner step ``step`` (``len(curriculum)`` once every
    stage is over)."""
    for index, stage in enumerate(config.curriculum):
        if stage.until_step is None or step < stage.until_step:
            return index
    return len(config.curriculum)


def options_at(config: TrainConfig, step: int) -> dict[str, Any]:
    """The environment options of the training games at learner step ``step``."""
    index = stage_at(config, step)
    if index == len(config.curriculum):
        return dict(config.options)
    return {**config.options, **config.curriculum[index].options}


def check(config: TrainConfig) -> None:
    """A ValueError naming the stage and field unless every stage's options pass the game's own
    option checks and keep the observation and action sizes, the thresholds increase, only the
    last stage omits ``until_step``, and every stage starts before ``total_steps``."""
    stages = config.curriculum
    base = envs.make(config.env, num_players=config.num_players, **config.options)
    shapes = _sizes(base)
    previous = 0
    for index, stage in enumerate(stages):
        where = f"curriculum[{index}]"
        if stage.until_step is None and index < len(stages) - 1:
            raise ValueError(f"{where}.until_step: only the last stage may omit it")
        if index and previous >= config.total_steps:
            raise ValueError(
                f"{where}: never reached, the stage before ends at step {previous:,} and "
                f"total_steps is {config.total_steps:,}"
            )
        if stage.until_step is not None:
            if stage.until_step <= previous:
                raise ValueError(
                    f"{where}.until_step {stage.until_step:,} must be above the previous "
                    f"stage's {previous:,} (thresholds increase)"
                )
            previous = stage.until_step
        options = {**config.options, **stage.options}
        try:
            env = envs.make(config.env, num_players=config.num_players, **options)
        except ConfigError as err:
            raise ValueError(f"{where}.options: {err}") from None
        if _sizes(env) != shapes:
            raise ValueError(
                f"{where}.options change the observation or action sizes "
                f"({_sizes(env)} instead of {shapes}); a network cannot carry over"
            )


def _sizes(env: Any) -> tuple[int, int]:
    agent = env.possible_agents[0]
    return (
        int(env.observation_space(agent)["observation"].shape[0]),
        int(env.action_space(agent).n),
    )
