"""The Python entry point: evaluate agents built in a script with ``cauldron eval``'s harness.

    from cauldron import eval
    summary = eval.evaluate("hocus_pocus_v1", {"mine": MyAgent(), "greedy": "heuristic:greedy"},
                            players=[4], games=200)

Each value of ``agents`` is an agent object (with ``reset(seed)`` and ``act(observation,
action_mask) -> int``; every seat gets its own deep copy) or an agent spec string; the keys are
the names shown in the tables. The summary is the plain data that ``results.json`` holds.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cauldron import envs
from cauldron.agents import Agent, check_agent
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.folders import lock_folder
from cauldron.eval import harness, report
from cauldron.eval.config import parse_config


def evaluate(
    env_id: str,
    agents: Mapping[str, Agent | str],
    players: list[int] | None = None,
    games: int = 200,
    seed: int = 0,
    workers: int = 1,
    crossplay: str = "all",
    options: dict[str, Any] | None = None,
    out: str | Path | None = None,
    name: str = "eval",
    progress: bool = True,
    save_games: int = 0,
    record_thoughts: bool = False,
) -> dict[str, Any]:
    """Play every lineup of ``agents`` at each of ``players`` (default: the game's smallest
    count) on seeds ``seed .. seed + games - 1`` and return the summary; with ``out``, also
    write ``results.json``, ``report.md`` and the plots to ``out/name`` (locked while it plays and
    writes: a second evaluation into it stops at once) and, with ``save_games`` (which needs
    ``out``), the kept games' records (with what policy agents thought, if ``record_thoughts``)
    and their viewer page. The arguments mean what the evaluation config's keys mean
    (:mod:`cauldron.eval.config`); objects need ``workers=1`` unless they can be pickled."""
    if save_games and out is None:
        raise ConfigError("evaluate(): save_games needs out (the folder the games go to)")
    specs = {n: a for n, a in agents.items() if isinstance(a, str)}
    objects = {n: a for n, a in agents.items() if not isinstance(a, str)}
    for n, obj in objects.items():
        check_agent(obj, n)
        if workers > 1:
            try:
                pickle.dumps(obj)
            except Exception as err:
                raise ConfigError(
                    f"agent {n!r} cannot be pickled for worker processes ({err}); use workers=1"
                ) from None
    data = {
        "env": env_id,
        "players": players or [envs.spec(env_id).players[0]],
        "agents": [specs.get(n, n) for n in agents],
        "labels": {s: n for n, s in specs.items() if s != n},
        "games": games,
        "seed": seed,
        "workers": workers,
        "crossplay": crossplay,
        "options": options or {},
        "out": str(out or "runs/eval"),
        "name": name,
        "save_games": save_games,
        "record_thoughts": record_thoughts,
    }
    config = parse_config(data, "evaluate()", context={"objects": set(objects)})
    if out is None:
        return harness.summarize(config, harness.play_all(config, objects, progress=progress))
    folder = Path(config.out) / config.name
    with lock_folder(folder):  # one evaluation at a time writes the folder
        summary = harness.summarize(config, harness.play_all(config, objects, progress=progress))
        report.write(summary, folder)
    return summary
