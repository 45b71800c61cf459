"""Where a result came from: package version, git commit, config hash, library versions and
the checkpoint files' hashes, so a table can be traced back and re-run."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cauldron.agents.specs import parse_spec
from cauldron.envs.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


UNHASHED = ("name", "out", "workers", "executor", "ray_address")
"""Config fields that do not shape the results (where they go, how many processes or which
executor plays the games), left out of :func:`config_hash`."""

LIBRARIES = ("numpy", "pettingzoo", "gymnasium", "torch")
OPTIONAL_LIBRARIES = ("stable-baselines3", "sb3-contrib")  # listed where installed


def config_hash(config: dict[str, Any]) -> str:
    """SHA-256 of the config as canonical JSON (sorted keys) without the :data:`UNHASHED`
    fields: configs that give the same results have equal hashes."""
    shaping = {key: value for key, value in config.items() if key not in UNHASHED}
    text = json.dumps(shaping, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def git(*args: str) -> str | None:
    """Output of a git command in the source tree, or None (no git, not a checkout)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def checkpoints(agents: list[str]) -> dict[str, str]:
    """SHA-256 of every ``torch:`` / ``sb3:`` agent's checkpoint file."""
    out = {}
    for spec in agents:
        try:
            parsed = parse_spec(spec)
        except ConfigError:  # an agent object's name
            continue
        if parsed.kind in ("torch", "sb3") and Path(parsed.target).is_file():
            out[spec] = file_hash(Path(parsed.target))
    return out


def libraries() -> dict[str, str | None]:
    """The versions of :data:`LIBRARIES`, and of :data:`OPTIONAL_LIBRARIES` that are installed."""
    found = {p: version(p) for p in LIBRARIES}
    found.update({p: version(p) for p in OPTIONAL_LIBRARIES if version(p)})
    return found


def provenance(config: dict[str, Any]) -> dict[str, Any]:
    """Package and library versions (Stable-Baselines3 and sb3-contrib where installed), git
    commit (and whether tracked files had uncommitted changes), the config's hash, the
    checkpoints' hashes and the time (UTC)."""
    commit = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {
        "package": "cauldron",
        "version": version("cauldron"),
        "git_commit": commit,
        "git_dirty": None if dirty is None else bool(dirty),
        "config_hash": config_hash(config),
        "checkpoints": checkpoints(config.get("agents", [])),
        "python": platform.python_version(),
        "libraries": libraries(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
