"""Config fields and ``--set`` values that are no game options: one-line ConfigErrors naming
where they were given and the game's options, in the training and the evaluation configs."""

from __future__ import annotations

import shutil

import pytest

from cauldron.envs.core.errors import ConfigError
from cauldron.eval.config import parse_config as parse_eval_config
from cauldron.eval.config import read_config_file
from cauldron.train.config import load_config

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


def test_a_config_derives_from_its_base_and_overrides_it_key_by_key(tmp_path):
    (tmp_path / "root.yaml").write_text(
        "name: root\nenv: hocus_pocus_v1\noptions: {stun_reward: 0.2, match_reward: 0.5}\n"
        "hidden: [64]\n"
    )
    (tmp_path / "mid.yaml").write_text("base: root.yaml\noptions: {match_reward: 0.0}\n")
    (tmp_path / "leaf.yaml").write_text("base: mid.yaml\nhidden: [32, 32]\n")
    assert read_config_file(tmp_path / "leaf.yaml") == {
        "env": "hocus_pocus_v1",
        "options": {"stun_reward": 0.2, "match_reward": 0.0},
        "hidden": [32, 32],
    }


def test_a_missing_base_or_a_cycle_names_the_chain_of_files(tmp_path):
    (tmp_path / "a.yaml").write_text("base: b.yaml\nenv: hocus_pocus_v1\n")
    (tmp_path / "b.yaml").write_text("base: c.yaml\n")
    with pytest.raises(ConfigError, match=r"b.yaml: base 'c.yaml' not found \(bases: .*a.yaml"):
        read_config_file(tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("base: a.yaml\n")
    with pytest.raises(ConfigError, match=r"the bases form a cycle: .*a.yaml -> .*b.yaml -> "):
        read_config_file(tmp_path / "a.yaml")
    (tmp_path / "d.yaml").write_text("base: 3\n")
    with pytest.raises(ConfigError, match="base must name a config file, got 3"):
        read_config_file(tmp_path / "d.yaml")


def test_an_evaluation_config_may_derive_from_a_checkpoint_a_training_config_may_not(tmp_path):
    shutil.copyfile("checkpoints/hexenflug_torch.pt", tmp_path / "m.pt")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "eval.yaml").write_text("base: ../m.pt\ngames: 7\n")
    derived = read_config_file(tmp_path / "configs" / "eval.yaml", checkpoints=True)
    assert derived["agents"][0] == f"torch:{(tmp_path / 'm.pt').as_posix()}"
    assert (derived["games"], derived["env"]) == (7, "hexenflug_v1")
    with pytest.raises(ConfigError, match="m.pt: not a YAML config: not UTF-8 text"):
        read_config_file(tmp_path / "configs" / "eval.yaml")
    with pytest.raises(ConfigError, match="hexenflug_torch.pt: not a YAML config"):
        load_config("checkpoints/hexenflug_torch.pt")
