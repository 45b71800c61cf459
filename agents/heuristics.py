"""Every game's heuristics by name: the reference ones (``agents/<game>/heuristic.py``, one
``HEURISTICS = {name: class}`` each, built with no arguments) and their batched forms
(``agents/<game>/batched.py``, built as ``cls(num_players, device, generator)``)."""

from __future__ import annotations

import importlib

from cauldron import envs
from cauldron.agents.headless_horseman import heuristic as headless_horseman
from cauldron.agents.hexenflug import heuristic as hexenflug
from cauldron.agents.hocus_pocus import heuristic as hocus_pocus
from cauldron.agents.voodoo_mania import heuristic as voodoo_mania

HEURISTICS = {
    "hocus_pocus_v1": hocus_pocus.HEURISTICS,
    "headless_horseman_v1": headless_horseman.HEURISTICS,
    "voodoo_mania_v1": voodoo_mania.HEURISTICS,
    "hexenflug_v1": hexenflug.HEURISTICS,
}
"""The reference heuristics by environment id, then by name."""


def batched_heuristics(env_id: str) -> dict[str, type]:
    """The batched heuristics of ``env_id`` by name (empty if the game has none). Torch is
    imported only here, when a game's batched module is first asked for."""
    game = envs.spec(env_id).module.split(".")[-1]
    try:
        module = importlib.import_module(f"cauldron.agents.{game}.batched")
    except ModuleNotFoundError:
        return {}
    return module.HEURISTICS
