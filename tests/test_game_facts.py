"""Every layer reads a game's facts from the one declaration in ``envs/<game>/facts.py``."""

from __future__ import annotations

import importlib
import re

import pytest

from cauldron import envs
from cauldron.envs.registry import REGISTRY

GAMES = sorted(envs.ids())
RENDER_MODES = ["ansi", "svg", "rgb_array"]


def _facts(env_id: str):
    return importlib.import_module(envs.spec(env_id).module + ".facts").FACTS


@pytest.mark.parametrize("env_id", GAMES)
def test_the_registry_holds_the_games_declaration(env_id):
    facts = _facts(env_id)
    assert REGISTRY[env_id] is facts and envs.spec(env_id) is facts
    assert facts.name == env_id and facts.module == f"cauldron.envs.{env_id.rpartition('_v')[0]}"
    assert facts.measure == ("win_rate" if facts.cooperative else "won_minus_lost")


@pytest.mark.parametrize("env_id", GAMES)
def test_the_environments_agree_with_the_declaration(env_id):
    facts = _facts(env_id)
    package = importlib.import_module(facts.module)
    metadata = {"render_modes": RENDER_MODES, "name": env_id, "is_parallelizable": facts.parallel}
    raw = package.raw_env
    assert raw.facts is facts
    assert raw.player_range == facts.players and raw.default_players == facts.default_players
    assert raw.metadata == metadata
    env = envs.make(env_id)
    assert env.unwrapped.cooperative == facts.cooperative
    assert len(env.unwrapped.possible_agents) == facts.default_players
    assert hasattr(package, "parallel_env") == facts.parallel
    if facts.parallel:
        assert package.parallel_env.metadata == metadata
        assert package.parallel_env.metadata is not raw.metadata
        assert envs.make_parallel(env_id).metadata == metadata


@pytest.mark.parametrize("env_id", GAMES)
def test_player_counts_outside_the_declared_range_are_refused(env_id):
    low, high = _facts(env_id).players
    for n in (low, high):
        assert len(envs.make(env_id, num_players=n).possible_agents) == n
    for n in (low - 1, high + 1):
        with pytest.raises(envs.ConfigError, match=f"{low} to {high} players"):
            envs.make(env_id, num_players=n)


@pytest.mark.parametrize("env_id", envs.batched_ids())
def test_the_batched_engine_agrees_with_the_declaration(env_id):
    facts = _facts(env_id)
    engine = importlib.import_module(facts.module + ".batched")
    game = envs.make_batched(env_id, batch_size=2).game
    assert game.cooperative == facts.cooperative
    assert type(game).__module__ == engine.__name__
    assert game.num_players == facts.default_players


@pytest.mark.parametrize("env_id", GAMES)
def test_the_env_docstring_states_the_declared_player_counts(env_id):
    facts = _facts(env_id)
    doc = importlib.import_module(facts.module + ".env").__doc__
    low, high = facts.players
    stated = re.search(r"n = (\d)–(\d) \(default (\d)\)", doc)
    assert stated and tuple(map(int, stated.groups())) == (low, high, facts.default_players)


def test_a_default_player_count_outside_the_range_is_refused():
    facts = _facts(GAMES[0])
    with pytest.raises(ValueError, match="default_players"):
        type(facts)("x_v0", "x", (2, 3), default_players=4, cooperative=True)
