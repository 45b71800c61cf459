"""Baseline teams played once and reused by every training run's final evaluation.

A trained agent's final evaluation sets it beside random play and every heuristic team on the
same deals. Those teams' games do not depend on the run, so they are played once per game,
player count, options, seeds and code, kept in ``<out>/.baselines/<key>.json`` and read back by
later runs and seeds. The key (:func:`cache_key`) is the sha256 of the engine, the env id, the
player count, the options, the first seed and the number of games, the agent spec, the package
version and the source of ``envs/`` and ``agents/``: any change to the rules, an encoder or a
heuristic plays the teams again. A file that cannot be read as such a cache is played again
and overwritten.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

from cauldron.envs.core.folders import atomic_file
from cauldron.eval.config import EvalConfig
from cauldron.eval.harness import Lineup
from cauldron.eval.play import GameResult

ROOT = Path(__file__).resolve().parent.parent
FORMAT = "cauldron-baselines"


@cache
def code_hash() -> str:
    """The sha256 of every Python source file under ``envs/`` and ``agents/`` (path and bytes)."""
    digest = hashlib.sha256()
    for package in ("envs", "agents"):
        for path in sorted((ROOT / package).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def cache_key(config: EvalConfig, lineup: Lineup, engine: str = "reference") -> str:
    """What a baseline team's games depend on, hashed: see the module docstring."""
    given = {
        "engine": engine,
        "env": config.env,
        "players": lineup.players,
        "options": config.options,
        "seed": config.seed,
        "games": config.games,
        "agents": list(lineup.agents),
        "seats": list(lineup.seats),
        "version": version("cauldron"),
        "code": code_hash(),
    }
    return hashlib.sha256(json.dumps(given, sort_keys=True).encode()).hexdigest()[:32]


def _read(path: Path) -> list[GameResult] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return None
        return [
            GameResult(g["seed"], g["returns"], g["steps"], g["info"], tuple(g["seating"]))
            for g in data["games"]
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def cached_results(
    config: EvalConfig,
    teams: Sequence[Lineup],
    play: Callable[[list[Lineup]], dict[Lineup, list[GameResult]]],
    folder: Path,
    engine: str = "reference",
) -> tuple[dict[Lineup, list[GameResult]], int]:
    """Every lineup of ``teams``: read from ``folder`` where kept, the others played by
    ``play`` (given the missing lineups) and kept; with the number read from the cache.
    ``engine`` (``reference`` or ``batched``: other deals) is part of the key."""
    paths = {lineup: folder / f"{cache_key(config, lineup, engine)}.json" for lineup in teams}
    results: dict[Lineup, list[GameResult]] = {}
    for lineup, path in paths.items():
        kept = _read(path) if path.is_file() else None
        if kept is not None and len(kept) == config.games:
            results[lineup] = kept
    reused = len(results)
    missing = [lineup for lineup in teams if lineup not in results]
    if missing:
        played = play(missing)
        folder.mkdir(parents=True, exist_ok=True)
        for lineup in missing:
            results[lineup] = played[lineup]
            data: dict[str, Any] = {
                "format": FORMAT,
                "lineup": asdict(lineup),
                "games": [asdict(g) for g in played[lineup]],
            }
            with atomic_file(paths[lineup], "w") as handle:
                json.dump(data, handle)
    return results, reused
