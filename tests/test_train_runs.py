"""Run folders: nothing in a run folder can run code when loaded, resumes continue
the saved run or refuse, fresh runs start clean, one run per folder, readable metrics."""

from __future__ import annotations

import json
import os
import pickle
import zipfile

import pandas
import pytest
import torch
import yaml

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.train import __main__ as train_cli
from cauldron.train import runfolder
from cauldron.train.config import parse_config
from cauldron.train.runlog import read_metrics
from tests.test_train import tiny


class WritesMarker:
    """Unpickling this object would create a file: proof that code ran."""

    def __init__(self, marker) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def write_config(tmp_path, trainer: str = "torch", **extra) -> str:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(tiny("headless_horseman_v1", trainer, tmp_path, **extra)))
    return str(path)


def one_line_error(call, *match: str) -> str:
    with pytest.raises(envs.ConfigError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message and "weights_only" not in message, message
    for part in match:
        assert part in message, message
    return message


def write_raw_pickle(data, path) -> None:
    with open(path, "wb") as file:
        pickle.dump(data, file)


@pytest.mark.parametrize("writer", [torch.save, write_raw_pickle], ids=["torch.save", "pickle"])
@pytest.mark.parametrize("trainer", ["torch", "sb3"])
def test_a_train_state_that_would_run_code_is_refused_unrun(tmp_path, trainer, writer):
    marker = tmp_path / "marker"
    config = parse_config(tiny("headless_horseman_v1", trainer, tmp_path, resume=True))
    config.folder.mkdir(parents=True)
    writer({"net": WritesMarker(marker)}, config.folder / "train_state.pt")
    path = write_config(tmp_path, trainer, resume=True)
    one_line_error(
        lambda: train_cli.main([path, "--quiet"]), "train_state.pt", "refused without running"
    )
    assert not marker.exists()


def test_torch_and_sb3_checkpoints_that_would_run_code_are_refused_unrun(tmp_path):
    marker = tmp_path / "marker"
    evil = tmp_path / "evil.pt"
    torch.save({"format": "cauldron-torch-v1", "state_dict": WritesMarker(marker)}, evil)
    one_line_error(lambda: make_agent(f"torch:{evil}", "hexenflug_v1"), "evil.pt", "refused")
    env = envs.make("hexenflug_v1")
    sb3 = tmp_path / "evil.zip"
    with zipfile.ZipFile(sb3, "w") as archive, archive.open("policy.pth", "w") as member:
        torch.save({"weights": WritesMarker(marker)}, member)
    (tmp_path / "evil.zip.cauldron.json").write_text(
        json.dumps(
            {
                "env_id": "hexenflug_v1",
                "obs_size": int(env.observation_space("player_0")["observation"].shape[0]),
                "num_actions": int(env.action_space("player_0").n),
                "net_arch": [8],
            }
        )
    )
    one_line_error(lambda: make_agent(f"sb3:{sb3}", "hexenflug_v1"), "evil.zip", "refused")
    assert not marker.exists()
    (tmp_path / "evil.zip.cauldron.json").write_text("{not json")
    one_line_error(lambda: make_agent(f"sb3:{sb3}", "hexenflug_v1"), "cauldron.json")


def test_a_truncated_train_state_gives_one_line_naming_the_file(tmp_path):
    config = parse_config(tiny("headless_horseman_v1", "torch", tmp_path))
    runfolder.save_state(config, 128, {"net": {"w": torch.zeros(50, 50)}})
    state = config.folder / "train_state.pt"
    state.write_bytes(state.read_bytes()[:2000])
    resumed = config.model_copy(update={"resume": True})
    one_line_error(lambda: runfolder.load_state(resumed), str(state), "damaged")


def test_resume_refuses_a_changed_field_that_shapes_the_training(tmp_path):
    config = parse_config(tiny("headless_horseman_v1", "torch", tmp_path))
    runfolder.save_state(config, 128, {})
    for field, value in [
        ("num_envs", 4),
        ("rollout_steps", 32),
        ("hidden", [32]),
        ("options", {"progress_reward": 1.0}),
        ("trainer", "sb3"),
    ]:
        changed = parse_config({**config.model_dump(), field: value, "resume": True})
        one_line_error(
            lambda c=changed: runfolder.load_state(c), f"changed since it was saved: {field}"
        )
    longer = parse_config({**config.model_dump(), "total_steps": 10**6, "resume": True})
    assert runfolder.load_state(longer)["step"] == 128


def test_resume_without_a_saved_state_is_an_error(tmp_path):
    path = write_config(tmp_path, resume=True)
    one_line_error(lambda: train_cli.main([path, "--quiet"]), "nothing to resume")


def test_a_fresh_run_clears_the_previous_runs_artifacts_only(tmp_path):
    config = parse_config(tiny("headless_horseman_v1", "torch", tmp_path))
    folder = config.folder
    with runfolder.claim(config):  # the previous run, which marks the folder as its own
        pass
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "final_rllib").mkdir()
    for name in ("final.pt", "train_state.pt", "train_state.zip", "checkpoints/step_1.pt"):
        (folder / name).write_text("old")
    (folder / "notes.txt").write_text("mine")
    with runfolder.claim(config):
        assert sorted(p.name for p in folder.iterdir()) == [".cauldron-run", ".lock", "notes.txt"]


def test_a_second_run_into_a_locked_folder_fails_fast(tmp_path):
    config = parse_config(tiny("headless_horseman_v1", "torch", tmp_path))
    with runfolder.claim(config):
        one_line_error(
            lambda: train_cli.main([write_config(tmp_path), "--quiet"]),
            "is in use by another run",
            f"process {os.getpid()}",
        )
    with runfolder.claim(config):  # released when the first run is done
        pass


def test_kill_and_resume_leaves_no_duplicate_metrics_and_a_readable_csv(tmp_path):
    """A run stopped after rows past its last save: the resume drops those rows and rewrites
    them once; pandas reads the header row as column names."""
    path = write_config(tmp_path, eval_every=2)
    train_cli.main([path, "--quiet"])
    folder = tmp_path / "headless_horseman_v1-torch"
    with (folder / "metrics.csv").open("a") as file:
        file.write("384,train/mean_return,0.5\n")  # written by an update that was never saved
    train_cli.main([path, "--quiet", "--set", "total_steps=512", "--set", "resume=true"])
    table = pandas.read_csv(folder / "metrics.csv")
    assert list(table.columns) == ["step", "key", "value"]
    assert not table.duplicated(["step", "key"]).any()
    assert sorted(table.loc[table.key == "train/mean_return", "step"]) == [128, 256, 384, 512]
    assert sorted(table.loc[table.key == "eval/win_rate", "step"]) == [256, 512]


def test_sb3_resume_continues_from_the_saved_tensors(tmp_path):
    path = write_config(tmp_path, "sb3")
    train_cli.main([path, "--quiet"])
    folder = tmp_path / "headless_horseman_v1-sb3"
    saved = torch.load(folder / "train_state.pt", weights_only=True)
    assert saved["step"] == 256 and "policy" in saved and "optimizer" in saved
    assert not (folder / "train_state.zip").exists()
    train_cli.main([path, "--quiet", "--set", "total_steps=512", "--set", "resume=true"])
    pairs = [(step, key) for step, key, _ in read_metrics(folder / "metrics.csv")]
    assert max(pairs)[0] == 512 and len(pairs) == len(set(pairs))
    resumed = torch.load(folder / "train_state.pt", weights_only=True)
    assert resumed["step"] == 512 and resumed["n_updates"] > saved["n_updates"]


def test_an_unwritable_run_folder_is_refused_before_any_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    path = write_config(tmp_path, out=str(blocker))
    one_line_error(lambda: train_cli.main([path, "--quiet"]), "cannot write the run folder")


def test_a_clock_limited_run_shows_elapsed_and_remaining_time_not_a_step_total(tmp_path, capsys):
    import time

    from cauldron.train.runlog import RunLog

    log = RunLog(tmp_path / "clock", plot=False)
    log.start(total=100_000_000, deadline=time.perf_counter() + 600)
    log.scalars(4096, {"train/mean_return": 0.5})
    log.finish()
    shown = capsys.readouterr().err
    assert "elapsed" in shown and "left" in shown and "steps=4,096" in shown
    assert "100000000" not in shown and "100,000,000" not in shown
    plain = RunLog(tmp_path / "steps", plot=False)
    plain.start(total=8192)
    plain.scalars(4096, {"train/mean_return": 0.5})
    plain.finish()
    assert "4096/8192" in capsys.readouterr().err
