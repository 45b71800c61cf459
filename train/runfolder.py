"""A training run's folder: one run at a time, a fresh start or a checked resume, safe saves.

``<out>/<name>/`` holds what :data:`ARTIFACTS` lists, ``.lock``, held by the process that uses
the folder (a second run into it stops at once; the lock goes when its process does), and
:data:`MARKER`, which says that a training run claimed the folder as its own.

* A fresh run (``resume: false``) deletes the artifacts a previous run left (and nothing else),
  so its old train state, checkpoints and final model can never be resumed or evaluated by
  mistake. It does so only in a folder that is its own (:func:`check_ours`): an empty or new
  one, one with the marker, or a run folder of a version from before the marker (its
  ``config.yaml`` is a train config naming this folder, beside a ``metrics.csv``). Any other
  folder that holds files is refused untouched, and a folder holding a project
  (``pyproject.toml``, ``.git``) always is.
* A run that trains (fresh or resumed) marks the folder, and deletes the temporary files of
  saves cut short (``kill -9``) whose process is gone.
* ``resume: true`` needs ``train_state.pt`` and continues from it; a field that shapes the
  training (every field but :data:`MAY_CHANGE`) must be the same as when it was saved.
* The train state is a ``torch.save`` of tensors and plain data only, written atomically and read
  with ``weights_only=True``; a damaged one gives a one-line error naming the file::

    {"format": FORMAT, "config": <the config as JSON text>, "step": learner steps done,
     ...the trainer's tensors (network, optimizer, random state, recent returns)}

  A batched run's state also holds its games, generators, memories, snapshot pool and PFSP
  record (:func:`cauldron.train.ppo.batched_state`): resumed, it ends as the run never stopped.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from cauldron.agents.checkpoints import SB3_META
from cauldron.agents.torch_policy import load_weights, save_atomically
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.folders import lock_folder, remove_stale_temporaries
from cauldron.eval.config import read_yaml_file
from cauldron.train.config import TrainConfig

STATE = "train_state.pt"
FORMAT = "cauldron-train-state-v1"
MARKER = ".cauldron-run"  # holds RUN_FORMAT: a training run claimed this folder
RUN_FORMAT = "cauldron-run-v1"
PROJECT_FILES = ("pyproject.toml", ".git")  # a folder with one of these is never cleared
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
# Fields a resumed run may change: how long it runs and when its learning rate cools down, how it
# uses the machine, how often and how much it evaluates, and where it lives. Every other field
# shapes the training.
MAY_CHANGE = frozenset(
    {
        "name",
        "out",
        "resume",
        "total_steps",
        "lr_decay_steps",
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
    """Hold the run folder's lock while the block runs. A fresh run first checks that the folder
    is its own (:func:`check_ours`) and clears the previous run's artifacts; a resumed one first
    checks its saved state (:func:`load_state`); either then marks the folder and deletes stale
    temporary files. With ``train=False`` (a new evaluation of a finished run) the folder stays
    as it is."""
    folder = config.folder
    if train and not config.resume:
        check_ours(folder)
    with lock_folder(folder, "run folder"):
        if train and config.resume:
            load_state(config)
        elif train:
            clear(folder)
        if train:
            (folder / MARKER).write_text(RUN_FORMAT + "\n")
            for place in (folder, folder / "checkpoints", folder / "evaluation"):
                remove_stale_temporaries(place)
        yield


def check_ours(folder: Path) -> None:
    """Raise :class:`ConfigError` unless a fresh run may clear ``folder``: it does not exist or
    holds nothing but a lock, or a training run marked it as its own, or it is a run folder of
    a version from before the marker (:func:`_earlier_run`); never a project's folder."""
    if not folder.is_dir():
        return
    entries = sorted(p.name for p in folder.iterdir() if p.name != ".lock")
    project = [name for name in PROJECT_FILES if name in entries]
    if project:
        raise ConfigError(
            f"run folder {str(folder)!r} holds a project ({', '.join(project)}): a fresh run "
            "never clears it; choose another name or out"
        )
    if not entries or _marked(folder) or _earlier_run(folder):
        return
    shown = ", ".join(entries[:5]) + (f", ... ({len(entries)} in all)" if len(entries) > 5 else "")
    raise ConfigError(
        f"run folder {str(folder)!r} holds files that no training run marked as its own "
        f"({shown}); a fresh run clears only a folder with {MARKER}: choose another name or "
        "out, or empty the folder"
    )


def _marked(folder: Path) -> bool:
    marker = folder / MARKER
    try:
        return marker.is_file() and marker.read_text(errors="replace").strip() == RUN_FORMAT
    except OSError:
        return False


def _earlier_run(folder: Path) -> bool:
    """Whether ``folder`` is a run folder written before runs marked theirs: a ``metrics.csv``
    beside a ``config.yaml`` that is a train config naming this very folder."""
    if not (folder / "metrics.csv").is_file():
        return False
    try:
        saved = read_yaml_file(folder / "config.yaml")
    except ConfigError:
        return False
    return (
        isinstance(saved, dict)
        and saved.get("name") == folder.name
        and {"env", "trainer"} <= saved.keys()
    )


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
    # a field added since the save held its default then
    then = {field: info.default for field, info in type(config).model_fields.items()} | saved
    changed = [
        f"{field} ({then.get(field)!r} -> {value!r})"
        for field, value in now.items()
        if field not in MAY_CHANGE and then.get(field) != value
    ]
    if changed:
        raise ConfigError(
            f"cannot resume {str(config.folder)!r}: changed since it was saved: "
            f"{', '.join(changed)}; only {', '.join(sorted(MAY_CHANGE))} may change"
        )
    return data


def run_seed(seed: int, step: int) -> int:
    """The seed of the run's generators from ``step`` on: ``seed`` itself at the start, a fresh
    one derived from both after a resume (so the resumed games are new deals; a batched run
    puts back its saved generators instead)."""
    if step == 0:
        return seed
    return int(np.random.SeedSequence([seed, step]).generate_state(1)[0] >> 1)
