"""The evaluation config of a trained checkpoint, derived from what the checkpoint records.

    cauldron eval checkpoints/hocus_pocus_torch.pt

A shipped checkpoint (``checkpoints/<name>.pt``, a ``torch:`` agent, or ``<name>.zip`` with its
``.cauldron.json`` sidecar, an ``sb3:`` agent) records its environment, the player count and the
options it trained with. Its evaluation replays a training run's final evaluation: the
checkpoint beside random play and every heuristic of the game, at that player count and with
those options, :data:`GAMES` seeded games per pairing from seed 0. A run whose final evaluation
played another number of games keeps it in a two-line config that derives from the checkpoint
(``base: <checkpoint>`` and ``games: N``; :func:`cauldron.eval.config.read_config_file`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cauldron.agents import HEURISTICS
from cauldron.agents.checkpoints import SB3_META
from cauldron.envs.core.errors import ConfigError

KINDS = {".pt": "torch", ".zip": "sb3"}
"""The agent kind of a checkpoint, by file suffix."""
GAMES = 500  # games per pairing of a training run's final evaluation (its default)
RECORDED = ("env_id", "num_players", "options")


def is_checkpoint(path: Path) -> bool:
    """Whether ``path`` names a checkpoint (by its suffix, :data:`KINDS`) rather than a YAML
    config."""
    return path.suffix in KINDS


def recorded(path: Path) -> dict[str, Any]:
    """``{"env_id": str, "num_players": int, "options": {name: value}}``: what the checkpoint
    ``path`` (a torch ``.pt`` or an SB3 ``.zip`` with its sidecar) says it trained on; a missing
    file, or one that does not record all three, is a :class:`ConfigError`."""
    if not path.is_file():
        raise ConfigError(f"checkpoint {str(path)!r} not found")
    if path.suffix == ".pt":
        from cauldron.agents.torch_policy import load_weights

        data = load_weights(path, f"torch checkpoint {str(path)!r}")
    else:
        sidecar = path.with_name(path.name + SB3_META)
        try:
            data = json.loads(sidecar.read_text())
        except (OSError, ValueError) as err:
            raise ConfigError(
                f"sb3 checkpoint {str(path)!r}: cannot read {sidecar.name} ({err})"
            ) from None
    missing = [key for key in RECORDED if not isinstance(data, dict) or key not in data]
    if missing:
        raise ConfigError(
            f"checkpoint {str(path)!r} does not record {', '.join(missing)} (a checkpoint the "
            "trainer wrote records the env, the player count and the options)"
        )
    return {key: data[key] for key in RECORDED}


def eval_config(path: Path) -> dict[str, Any]:
    """The evaluation config mapping (the YAML form of :class:`cauldron.eval.config.EvalConfig`)
    of checkpoint ``path``, its agent named by ``path`` as given (relative to the working
    folder) and its run folder ``runs/eval/<stem>``."""
    saved = recorded(path)
    env_id = saved["env_id"]
    agent = f"{KINDS[path.suffix]}:{path.as_posix()}"
    return {
        "env": env_id,
        "players": [saved["num_players"]],
        "agents": [agent, "random", *(f"heuristic:{h}" for h in HEURISTICS.get(env_id, {}))],
        "labels": {agent: path.stem},
        "games": GAMES,
        "seed": 0,
        "workers": 2,
        "options": saved["options"],
        "out": "runs/eval",
        "name": path.stem,
    }
