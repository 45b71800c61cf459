"""Config fields and ``--set`` values that are no game options: one-line ConfigErrors naming
where they were given and the game's options, in the training and the evaluation configs."""

from __future__ import annotations

import pytest

from envs.core.errors import ConfigError
from eval.config import parse_config as parse_eval_config
from train.config import load_config

QUICKSTART = "configs/train/quickstart.yaml"
NOT_OPTIONS = ["num_players: 3", "render_mode: svg", "env_id: x", "batch_size: abc"]


def refused(where: str, name: str) -> str:
    return (
        rf"{where}: unknown option\(s\) '{name}' for headless_horseman_v1 \(the player "
        r"count, render mode, batch size and device are not game options\); its options: .*"
        "progress_reward"
    )


@pytest.mark.parametrize("given", NOT_OPTIONS)
def test_set_options_of_a_field_that_is_no_game_option_is_a_config_error(given):
    name, _, value = given.partition(": ")
    with pytest.raises(ConfigError, match=refused("options", name)):
        load_config(QUICKSTART, [f"options.{name}={value}"])


@pytest.mark.parametrize("given", NOT_OPTIONS)
def test_a_curriculum_stage_with_no_game_option_is_a_config_error(given):
    stages = f"[{{until_step: 1000, options: {{{given}}}}}, {{options: {{}}}}]"
    name = given.partition(":")[0]
    with pytest.raises(ConfigError, match=refused(r"curriculum\[0\]\.options", name)):
        load_config(QUICKSTART, [f"curriculum={stages}"])


def test_a_curriculum_of_game_options_is_accepted():
    stages = "[{until_step: 1000, options: {progress_reward: 2.0}}, {options: {}}]"
    assert load_config(QUICKSTART, [f"curriculum={stages}"]).curriculum[0].until_step == 1000


@pytest.mark.parametrize("given", NOT_OPTIONS)
def test_an_evaluation_config_with_no_game_option_is_a_config_error(given):
    name, _, value = given.partition(": ")
    config = {"env": "headless_horseman_v1", "players": [2], "agents": ["random"]}
    with pytest.raises(ConfigError, match=refused("options", name)):
        parse_eval_config({**config, "options": {name: value}})


@pytest.mark.parametrize("given", ["batch_size=abc", "num_players=abc", "env=nope"])
def test_set_of_a_badly_typed_field_names_the_field(given):
    field = given.partition("=")[0]
    with pytest.raises(ConfigError, match=rf"quickstart\.yaml: .*{field}"):
        load_config(QUICKSTART, [given])
