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

from agents.specs import parse_spec
from envs.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def config_hash(config: dict[str, Any]) -> str:
    """SHA-256 of the config as canonical JSON (sorted keys): equal configs, equal hashes."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
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


def provenance(config: dict[str, Any]) -> dict[str, Any]:
    """Package and library versions, git commit (and whether tracked files had uncommitted
    changes), the config's hash, the checkpoints' hashes and the time (UTC)."""
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
        "libraries": {p: version(p) for p in ("numpy", "pettingzoo", "gymnasium", "torch")},
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
