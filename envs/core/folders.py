"""Output folders shared by training and evaluation: one process writes a folder at a time, and
every file it writes appears whole.

* :func:`lock_folder` holds ``<folder>/.lock`` (an ``fcntl`` lock holding the process id) while
  a block runs: a second process that asks for the folder stops at once with a one-line
  :class:`ConfigError` naming the holder; the lock goes when its process does, even on
  ``kill -9``.
* :func:`atomic_file` writes to a temporary file beside the target and renames it over the
  target (``os.replace``) only when the whole file is written: a reader, a concurrent writer or
  a run killed mid-write never sees half a file, and an error leaves the old file as it was.
* :func:`remove_stale_temporaries` deletes the temporary files of writers killed mid-write
  (``kill -9``), once their process is gone.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal

from cauldron.envs.core.errors import ConfigError

_TEMPORARY = re.compile(r"\..+\.([0-9]{1,10})\.tmp", re.ASCII)  # .<name>.<pid>.tmp


@contextlib.contextmanager
def lock_folder(folder: Path, what: str = "output folder") -> Iterator[None]:
    """Create ``folder`` and hold its lock while the block runs; ``what`` names the folder in
    the errors (the folder cannot be written, or another process holds it)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = (folder / ".lock").open("a+")
    except OSError as err:
        raise ConfigError(
            f"cannot write the {what} {str(folder)!r}: {err.strerror or err}"
        ) from None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "?"
            raise ConfigError(
                f"{what} {str(folder)!r} is in use by another run (process {holder}); "
                "wait for it to finish or choose another name"
            ) from None
        lock.seek(0)
        lock.truncate()
        lock.write(str(os.getpid()))
        lock.flush()
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextlib.contextmanager
def atomic_file(path: Path, mode: Literal["w", "wb"] = "w") -> Iterator[IO[Any]]:
    """An open temporary file beside ``path`` (``mode`` ``"w"``: UTF-8 text, ``"wb"``: bytes)
    that replaces ``path`` when the block ends without an error; on an error it is deleted."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, mode, encoding="utf-8" if mode == "w" else None) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def remove_stale_temporaries(folder: Path) -> None:
    """Delete the temporary files that :func:`atomic_file` left in ``folder`` (if it exists)
    when its process died mid-write (``kill -9``): those whose process is gone."""
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        match = _TEMPORARY.fullmatch(path.name)
        if match and not _alive(int(match[1])) and path.is_file():
            path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # another user's process
        return True
    return True
