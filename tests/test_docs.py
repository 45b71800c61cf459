"""RULES.md and the env docstring say what the code does."""

from __future__ import annotations

import importlib
import re

import envs
from envs.core.docs import BLOCK, fill_blocks
from envs.hocus_pocus import docs

ENV_MODULE = importlib.import_module("envs.hocus_pocus.env")


def test_rules_md_generated_blocks_are_up_to_date():
    text = docs.RULES_MD.read_text()
    assert fill_blocks(text, docs.blocks()) == text, "run: python -m envs.hocus_pocus.docs"
    assert {m.group(2) for m in BLOCK.finditer(text)} >= set(docs.blocks()) | {"baselines"}


def test_stated_shapes_match_the_spaces():
    env = envs.make("hocus_pocus_v0")
    obs = env.observation_space("player_0")["observation"].shape[0]
    mask = env.observation_space("player_0")["action_mask"].shape[0]
    state = env.state_space.shape[0]
    for text in (docs.RULES_MD.read_text(), ENV_MODULE.__doc__):
        assert f"Box(0, 1, ({obs},), float32)" in text
        assert f"Box(0, 1, ({mask},), int8)" in text
        assert f"Box(0, 1, ({state},), float32)" in text
    assert f"Discrete({env.action_space('player_0').n})" in docs.RULES_MD.read_text()


def test_fill_blocks_replaces_only_named_blocks():
    text = "a\n<!-- BEGIN x -->\nold\n<!-- END x -->\n<!-- BEGIN y -->\nkeep\n<!-- END y -->\n"
    out = fill_blocks(text, {"x": "new"})
    assert "new" in out and "old" not in out and "keep" in out
    assert re.search("BEGIN x", out)
