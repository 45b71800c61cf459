"""A training run's folder: one run at a time, a fresh start or a checked resume, safe saves.

``<out>/<name>/`` holds what :data:`ARTIFACTS` lists, and ``.lock``, held by the process that uses
the folder (a second run into it stops at once; the lock goes when its process does).

* A fresh run (``resume: false``) deletes the artifacts a previous run left (and nothing else),
  so its old train state, checkpoints and final model can never be resumed or evaluated by
  mistake.
* ``resume: true`` needs ``train_state.pt`` and continues from it; a field that shapes the
  training (every field but :data:`MAY_CHANGE`) must be the same as when it was saved.
* The train state is a ``torch.save`` of tensors and plain data only, written atomically and read
  with ``weights_only=True``; a damaged one gives a one-line error naming the file::

    {"format": FORMAT, "config": <the config as JSON text>, "step": learner steps done,
     ...the trainer's tensors (network, optimizer, random state, recent returns)}
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from agents.checkpoints import SB3_META
from agents.torch_policy import load_weights, save_atomically
from envs.core.errors import ConfigError
from train.config import TrainConfig

STATE = "train_state.pt"
FORMAT = "cauldron-train-state-v1"
ARTIFACTS = (
    "config.yaml",
    "metrics.csv",
    "tb",
    "checkpoints",
    STATE,
    "train_state.zip",  # written by earlier versions (a pickle): never read, always cleared
    "final.pt",
    "final.zip",
    "final.zip" + SB3_META,
    "final_rllib",
    "evaluation",
    "learning_curve.png",
)
# Fields a resumed run may change: how long it runs, how it uses the machine, how often and how
# much it evaluates, and where it lives. Every other field shapes the training.
MAY_CHANGE = frozenset(
    {
        "name",
        "out",
        "resume",
        "total_steps",
        "max_minutes",
        "threads",
        "workers",
        "device",
        "eval_every",
        "eval_games",
        "final_eval_games",
    }
)


@contextlib.contextmanager
def claim(config: TrainConfig, train: bool = True) -> Iterator[None]:
    """Hold the run folder's lock while the block runs. A fresh run first clears the previous
    run's artifacts; a resumed one first checks its saved state (:func:`load_state`); with
    ``train=False`` (a new evaluation of a finished run) the folder stays as it is."""
    folder = config.folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = (folder / ".lock").open("a+")
    except OSError as err:
        raise ConfigError(f"cannot write the run folder {str(folder)!r}: {err.strerror}") from None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "?"
            raise ConfigError(
                f"run folder {str(folder)!r} is in use by another run (process {holder}); "
                "wait for it to finish or choose another name"
            ) from None
        lock.seek(0)
        lock.truncate()
        lock.write(str(os.getpid()))
        lock.flush()
        if train and config.resume:
            load_state(config)
        elif train:
            clear(folder)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def clear(folder: Path) -> None:
    """Delete the :data:`ARTIFACTS` of a previous run in ``folder`` (other files stay)."""
    for name in ARTIFACTS:
        path = folder / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def save_state(config: TrainConfig, step: int, parts: dict[str, Any]) -> None:
    """Write the train state after ``step`` learner steps (``parts``: tensors and plain data)."""
    data = {"format": FORMAT, "config": json.dumps(config.model_dump(mode="json")), "step": step}
    save_atomically({**data, **parts}, config.folder / STATE)


def load_state(config: TrainConfig) -> dict[str, Any] | None:
    """The saved train state to resume from (None for a fresh run). Raises :class:`ConfigError`
    when there is none, when the file is damaged or not a train state, or when a field that
    shapes the training differs from the saved run's, naming each such field."""
    if not config.resume:
        return None
    path = config.folder / STATE
    if not path.is_file():
        raise ConfigError(
            f"resume: true, but {str(path)!r} does not exist (nothing to resume); "
            "run without resume to start afresh"
        )
    data = load_weights(path, f"train state {str(path)!r}")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{str(path)!r} is not a Cauldron train state ({FORMAT})")
    saved = json.loads(data["config"])
    now = config.model_dump(mode="json")
    changed = [
        f"{field} ({saved.get(field)!r} -> {value!r})"
        for field, value in now.items()
        if field not in MAY_CHANGE and saved.get(field) != value
    ]
    if changed:
        raise ConfigError(
            f"cannot resume {str(config.folder)!r}: changed since it was saved: "
            f"{', '.join(changed)}; only {', '.join(sorted(MAY_CHANGE))} may change"
        )
    return data


def run_seed(seed: int, step: int) -> int:
    """The seed of the run's generators from ``step`` on: ``seed`` itself at the start, a fresh
    one derived from both after a resume (so the resumed games are new deals)."""
    if step == 0:
        return seed
    return int(np.random.SeedSequence([seed, step]).generate_state(1)[0] >> 1)
