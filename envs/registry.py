"""The registry of Cauldron environments: ``make``, ``make_parallel``, ``ids`` and
``action_name``."""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from cauldron.envs.core.devices import torch_device
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.facts import EnvSpec
from cauldron.envs.headless_horseman.facts import FACTS as HEADLESS_HORSEMAN
from cauldron.envs.hexenflug.facts import FACTS as HEXENFLUG
from cauldron.envs.hocus_pocus.facts import FACTS as HOCUS_POCUS
from cauldron.envs.voodoo_mania.facts import FACTS as VOODOO_MANIA

if TYPE_CHECKING:
    import torch


MEASURES = {
    "win_rate": "win rate: the share of games the team wins (the rulebook's outcome)",
    "won_minus_lost": "won − lost: per game 1 if the seat won, −1 if an opponent won, 0 for a "
    "shared win, a draw or a game cut short",
}
"""The games' measures: what a verdict compares, paired on the same deals."""


REGISTRY: dict[str, EnvSpec] = {
    facts.name: facts for facts in (HEADLESS_HORSEMAN, HEXENFLUG, VOODOO_MANIA, HOCUS_POCUS)
}
"""Every game by its environment id: the facts each game's package declares."""


def ids() -> list[str]:
    """Every registered environment id."""
    return sorted(REGISTRY)


def spec(env_id: str) -> EnvSpec:
    """The :class:`EnvSpec` of ``env_id``; a clear error for an unknown id, naming the current
    id when ``env_id`` is another version of a registered game (``hocus_pocus_v0``)."""
    if env_id not in REGISTRY:
        game = env_id.rpartition("_v")[0] if isinstance(env_id, str) else None
        current = [i for i in ids() if game and i.rpartition("_v")[0] == game]
        if current:
            raise ConfigError(
                f"{env_id!r} is not registered: the current version of this game is "
                f"{current[0]!r} (its RULES.md has the version history); registered ids: {ids()}"
            )
        raise ConfigError(f"unknown environment id {env_id!r}; registered ids: {ids()}")
    return REGISTRY[env_id]


def options_class(env_id: str) -> type:
    """The frozen dataclass of ``env_id``'s options (its ``raw_env.options_class``)."""
    return importlib.import_module(spec(env_id).module).raw_env.options_class


def action_name(env_id: str, action: object) -> str:
    """The readable name of ``action`` in ``env_id``'s action space (the same at every player
    count and option), e.g. ``action_name("hocus_pocus_v1", 310) == "finish discarding"``; a
    :class:`ConfigError` for an index outside the space. The name is the one the game's
    ``rules.action_name`` gives without a state."""
    from cauldron.envs.core.actions import as_action

    actions = importlib.import_module(spec(env_id).module + ".actions")
    index = as_action(action)
    if index is None or not 0 <= index < actions.NUM_ACTIONS:
        raise ConfigError(
            f"{env_id} actions are integers 0..{actions.NUM_ACTIONS - 1}, got {action!r}"
        )
    return actions.action_name(index)


def make(
    env_id: str, num_players: int | None = None, render_mode: str | None = None, **options: Any
):
    """The wrapped AEC environment ``env_id`` with ``num_players`` players and ``options``."""
    module = importlib.import_module(spec(env_id).module)
    return module.env(num_players=num_players, render_mode=render_mode, **options)


def make_parallel(
    env_id: str, num_players: int | None = None, render_mode: str | None = None, **options: Any
):
    """The Parallel environment of a simultaneous-move game."""
    if not spec(env_id).parallel:
        parallel = [i for i in ids() if REGISTRY[i].parallel]
        raise ConfigError(
            f"{env_id} is a turn-based game with no Parallel API; games with one: {parallel}"
        )
    module = importlib.import_module(spec(env_id).module)
    return module.parallel_env(num_players=num_players, render_mode=render_mode, **options)


def register_gymnasium() -> None:
    """Register every game's single-agent view (:class:`cauldron.train.bridge.SingleAgentBridge`,
    the one SB3 and the PyTorch trainer learn on) with Gymnasium as ``cauldron/<game>-v<n>``:
    ``gymnasium.make("cauldron/hocus_pocus-v1", num_players=4)``. The player count defaults
    to the game's; competitive games need ``opponents=[...]`` (factories ``rng -> Agent``);
    other keywords are the bridge's (``options``, ``seed``, ``reward_shaping``)."""
    import gymnasium

    for env_id in ids():
        game, _, number = env_id.rpartition("_v")
        name = f"cauldron/{game}-v{number}"
        if name not in gymnasium.registry:
            gymnasium.register(
                name,
                entry_point="cauldron.train.bridge:SingleAgentBridge",
                kwargs={"env_id": env_id, "num_players": None},
            )


def batched_ids() -> list[str]:
    """The environments with a batched engine (``envs/<game>/batched.py``)."""
    return [i for i in ids() if importlib.util.find_spec(REGISTRY[i].module + ".batched")]


def make_batched(
    env_id: str,
    num_players: int | None = None,
    batch_size: int = 1024,
    device: str | torch.device = "cpu",
    **options: Any,
):
    """A :class:`~cauldron.envs.core.batched.BatchedEnv` stepping ``batch_size`` games of ``env_id``
    as tensors on ``device`` (normalised by :func:`torch_device`). Player count and options are
    checked exactly as by :func:`make`."""
    from cauldron.envs.core.batched import BatchedEnv

    if env_id not in batched_ids():
        spec(env_id)
        raise ConfigError(f"{env_id} has no batched engine yet; games with one: {batched_ids()}")
    device = torch_device(device)
    reference = importlib.import_module(spec(env_id).module).raw_env(num_players, None, **options)
    engine = importlib.import_module(spec(env_id).module + ".batched")
    game = engine.batched_game(reference, device)
    return BatchedEnv(game, reference.options, batch_size, device)
