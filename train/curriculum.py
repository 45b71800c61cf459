"""A curriculum over game options: which options the training games use at each learner step.

``curriculum`` in the training config is a list of stages ``{until_step, options}``. Stage ``i``
applies while the learner's step count is below its ``until_step`` (and at or past the previous
stage's); its options are merged over the config's ``options``. Only the last stage may omit
``until_step`` (it then lasts to the end); after a last stage that has one, ``options`` alone
apply. An empty curriculum means ``options`` throughout. The stages are checked with the rest of
the config (:func:`cauldron.train.config.check_curriculum`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cauldron.train.config import TrainConfig


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
