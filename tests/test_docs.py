"""RULES.md and the env docstring say what the code does."""

from __future__ import annotations

import importlib
import re

import pytest

from cauldron import envs
from cauldron.envs import docs
from cauldron.envs.core.docs import BLOCK, fill_blocks

GAMES = sorted(envs.ids())


def _package(env_id: str) -> str:
    return envs.spec(env_id).module


@pytest.mark.parametrize("env_id", GAMES)
def test_rules_md_generated_blocks_are_up_to_date(env_id):
    text = docs.rules_md(env_id).read_text()
    assert fill_blocks(text, docs.blocks(env_id)) == text, "run: cauldron rules-tables"
    assert {m.group(2) for m in BLOCK.finditer(text)} >= set(docs.blocks(env_id)) | {"baselines"}


@pytest.mark.parametrize("env_id", GAMES)
def test_stated_shapes_match_the_spaces(env_id):
    env_module = importlib.import_module(_package(env_id) + ".env")
    env = envs.make(env_id)
    obs = env.observation_space("player_0")["observation"].shape[0]
    mask = env.observation_space("player_0")["action_mask"].shape[0]
    state = env.state_space.shape[0]
    for text in (docs.rules_md(env_id).read_text(), env_module.__doc__):
        assert f"Box(0, 1, ({obs},), float32)" in text
        assert f"Box(0, 1, ({mask},), int8)" in text
        assert f"Box(0, 1, ({state},), float32)" in text
    assert f"Discrete({env.action_space('player_0').n})" in docs.rules_md(env_id).read_text()


def test_fill_blocks_replaces_only_named_blocks():
    text = "a\n<!-- BEGIN x -->\nold\n<!-- END x -->\n<!-- BEGIN y -->\nkeep\n<!-- END y -->\n"
    out = fill_blocks(text, {"x": "new"})
    assert "new" in out and "old" not in out and "keep" in out
    assert re.search("BEGIN x", out)
