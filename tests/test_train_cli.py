"""The training CLI: --set reads values as YAML 1.2 numbers and dotted option keys,
run folders named by seed, seed sweeps with a table across seeds, checkpoints that record what
they were trained with, and the final evaluation on the baselines' seeds."""

from __future__ import annotations

import json

import pytest
import yaml

from cauldron import envs
from cauldron.train import __main__ as train_cli
from cauldron.train import results
from cauldron.train.config import load_config
from tests.test_train import tiny


def write(tmp_path, text: str, name: str = "quick.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_numbers_read_as_written_in_files_and_set(tmp_path):
    path = write(tmp_path, "env: headless_horseman_v1\nlearning_rate: 3e-4\n")
    assert load_config(path).learning_rate == pytest.approx(3e-4)
    config = load_config(path, ["learning_rate=1.5e-3", "ent_coef=0"])
    assert config.learning_rate == pytest.approx(1.5e-3) and config.ent_coef == 0


def test_a_dotted_set_changes_one_option_and_keeps_the_others(tmp_path):
    path = write(tmp_path, "env: headless_horseman_v1\noptions: {progress_reward: 1.0}\n")
    config = load_config(path, ["options.speed_tile=4"])
    assert config.options == {"progress_reward": 1.0, "speed_tile": 4}
    with pytest.raises(envs.ConfigError, match="only options takes a dotted key"):
        load_config(path, ["hidden.0=4"])
    with pytest.raises(envs.ConfigError, match="unknown option"):
        load_config(path, ["options.speedtile=4"])


def test_run_folders_carry_the_seed_unless_named(tmp_path):
    path = write(tmp_path, "env: headless_horseman_v1\n")
    assert load_config(path).folder.name == "quick-seed0"
    assert load_config(path, ["seed=3"]).folder.name == "quick-seed3"
    assert load_config(path, ["name=mine"]).folder.name == "mine"
    assert load_config(path, ["name=mine"], seed=2).folder.name == "mine-seed2"  # a sweep
    with pytest.raises(envs.ConfigError, match="plain folder name"):
        load_config(path, ["name=../elsewhere"])


def test_malformed_yaml_is_a_one_line_error_naming_file_and_line(tmp_path):
    path = write(tmp_path, "env: headless_horseman_v1\nhidden: [64, 64\n")
    with pytest.raises(envs.ConfigError) as caught:
        load_config(path)
    assert "quick.yaml: not valid YAML at line" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_yaml_tags_that_would_run_code_are_refused(tmp_path):
    """Configs are plain data: a ``!!python`` tag (which an unsafe loader would execute) is a
    YAML error, in a file and in ``--set``, and nothing runs."""
    marker = tmp_path / "ran"
    tag = f'!!python/object/apply:os.system ["touch {marker}"]'
    path = write(tmp_path, f"env: headless_horseman_v1\nname: {tag}\n")
    with pytest.raises(envs.ConfigError, match="not valid YAML"):
        load_config(path)
    with pytest.raises(envs.ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "env: headless_horseman_v1\n"), [f"name={tag}"])
    assert not marker.exists()


@pytest.mark.parametrize("text", ["0,0", "1,x", "-1,2"])
def test_bad_seed_lists_are_refused_before_any_run(tmp_path, monkeypatch, text):
    monkeypatch.setattr(train_cli, "run", lambda *a: pytest.fail("ran"))
    with pytest.raises(envs.ConfigError, match="--seeds"):
        train_cli.main([write(tmp_path, "env: headless_horseman_v1\n"), f"--seeds={text}"])


def test_seeds_run_one_folder_each_then_the_table_across_seeds(tmp_path, monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(train_cli, "run", lambda config, quiet: ran.append(config) or {})
    monkeypatch.setattr(results, "seed_table", lambda folders: f"table of {len(folders)}")
    path = write(tmp_path, f"env: headless_horseman_v1\nout: {tmp_path}\n")
    train_cli.main([path, "--seeds", "0,1,2"])
    assert [c.seed for c in ran] == [0, 1, 2]
    assert [c.folder.name for c in ran] == ["quick-seed0", "quick-seed1", "quick-seed2"]
    assert capsys.readouterr().out.strip().endswith("table of 3")


def fake_run(folder, seed: int, rate: float, env: str = "headless_horseman_v1") -> None:
    """A finished cooperative run folder with only what the results tables read."""
    folder.mkdir(parents=True)
    config = {"env": env, "num_players": 2, "trainer": "torch", "seed": seed, "name": folder.name}
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    (folder / "metrics.csv").write_text("step,key,value\n128,train/mean_return,0.5\n")
    (folder / "final.pt").write_bytes(b"")
    (folder / "evaluation").mkdir()
    win = {"rate": rate, "low": rate - 0.05, "high": rate + 0.05}
    rows = [{"lineup": ["torch:x"], "win": win}, {"lineup": ["random"], "win": win}]
    data = {"config": {"agents": ["torch:x", "random"]}, "cooperative": True, "rows": rows}
    (folder / "evaluation" / "results.json").write_text(json.dumps(data))


def test_the_table_across_seeds_gives_each_seed_and_a_bootstrap_mean(tmp_path):
    folders = [tmp_path / f"q-seed{s}" for s in range(3)]
    for seed, (folder, rate) in enumerate(zip(folders, [0.6, 0.7, 0.8], strict=True)):
        fake_run(folder, seed, rate)
    header, _, row = results.seed_table(folders).splitlines()
    assert "mean [95% CI over seeds]" in header
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:5] == [
        "headless_horseman (2p)",
        "torch",
        "0, 1, 2",
        "trained team win rate",
        "60.0%, 70.0%, 80.0%",
    ]
    mean, interval = cells[5].split(" ", 1)
    low, high = (float(x) for x in interval.strip("[]").split(","))
    assert mean == "70.0%" and 60.0 <= low < 70.0 < high <= 80.0
    fake_run(tmp_path / "other", 3, 0.5, env="hocus_pocus_v1")
    with pytest.raises(envs.ConfigError, match="differs .* in env: not seeds of one config"):
        results.seed_table([*folders, tmp_path / "other"])


@pytest.mark.parametrize("trainer", ["torch", "sb3"])
def test_checkpoints_record_players_and_options_and_final_evaluation_seeds_from_0(
    tmp_path, trainer
):
    options = {"progress_reward": 0.5}
    data = tiny("headless_horseman_v1", trainer, tmp_path, total_steps=128, eval_every=1)
    path = write(tmp_path, yaml.safe_dump({**data, "options": options, "final_eval_games": 2}))
    summaries = train_cli.main([path, "--quiet"])
    folder = tmp_path / data["name"]
    assert summaries[str(folder)]["config"]["seed"] == 0
    if trainer == "torch":
        import torch

        for file in [folder / "final.pt", *(folder / "checkpoints").iterdir()]:
            saved = torch.load(file, weights_only=True)
            assert (saved["num_players"], saved["options"]) == (2, options)
    else:
        for file in [folder / "final.zip", *(folder / "checkpoints").glob("*.zip")]:
            meta = json.loads(file.with_name(file.name + ".cauldron.json").read_text())
            assert (meta["num_players"], meta["options"]) == (2, options)


@pytest.mark.slow
def test_a_real_seed_sweep_prints_the_table_across_seeds(tmp_path, capsys):
    data = tiny("headless_horseman_v1", "torch", tmp_path, total_steps=128, final_eval_games=4)
    del data["name"]
    train_cli.main([write(tmp_path, yaml.safe_dump(data)), "--quiet", "--seeds", "0,1"])
    assert {p.name for p in tmp_path.iterdir()} >= {"quick-seed0", "quick-seed1"}
    row = capsys.readouterr().out.strip().splitlines()[-1]
    assert row.startswith("| headless_horseman (2p) | torch | 0, 1 | trained team win rate |")


def test_evaluate_only_plays_a_finished_run_again_and_keeps_its_training(tmp_path):
    data = tiny("headless_horseman_v1", "torch", tmp_path, total_steps=128, eval_every=1)
    path = write(tmp_path, yaml.safe_dump({**data, "final_eval_games": 2}))
    with pytest.raises(envs.ConfigError, match="has no final.pt or final.zip; train it first"):
        train_cli.main([path, "--evaluate-only"])
    train_cli.main([path, "--quiet"])
    folder = tmp_path / data["name"]
    kept = {name: (folder / name).read_bytes() for name in ("final.pt", "metrics.csv")}
    (folder / "evaluation" / "results.json").unlink()
    summaries = train_cli.main([path, "--evaluate-only", "--set", "final_eval_games=3"])
    assert {name: (folder / name).read_bytes() for name in kept} == kept
    rows = json.loads((folder / "evaluation" / "results.json").read_text())["rows"]
    assert summaries[str(folder)]["config"]["games"] == 3
    assert any(f"torch:{folder / 'final.pt'}" in row["lineup"] for row in rows)
