"""Training and config loading under hostile input: a fresh run clears only a folder a
run marked as its own; YAML aliases cannot hang validation or flood the message; every numeric
field of the training config has a finite, sane range; bad bytes, damaged sidecars, damaged run
folders and Ctrl-C give one line; a checkpoint cannot declare a network larger than its weights
or a prior that loads itself; stale temporary files of dead processes are cleared."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from cauldron import envs
from cauldron.agents import make_agent, torch_policy
from cauldron.agents.batched import make_batched_agent
from cauldron.agents.torch_policy import PolicyNet, save_checkpoint
from cauldron.eval import __main__ as eval_cli
from cauldron.eval.config import load_config as load_eval_config
from cauldron.train import __main__ as train_cli
from cauldron.train import results, runfolder
from cauldron.train.config import TrainConfig, load_config, parse_config
from tests.test_train import tiny

HH = "headless_horseman_v1"
ROOT = Path(__file__).resolve().parents[1]


def one_line_error(call, *match: str) -> str:
    with pytest.raises(envs.ConfigError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message, message
    for part in match:
        assert part in message, message
    return message


def write_config(tmp_path: Path, **extra) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(tiny(HH, "torch", tmp_path, **extra)))
    return path


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# Item 2: a fresh run clears only a folder a run marked as its own


def test_a_fresh_run_refuses_a_folder_with_files_it_did_not_write(tmp_path):
    """``out``/``name`` pointing at a folder with a checkpoints/ of other files and a
    config.yaml: refused naming the folder and the ways out, every file intact (no lock
    file either)."""
    folder = tmp_path / "project"
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "checkpoints" / "shipped.pt").write_bytes(b"weights")
    (folder / "config.yaml").write_text("something: else\n")
    before = tree(folder)
    path = write_config(tmp_path, out=str(tmp_path), name="project")
    message = one_line_error(
        lambda: train_cli.main([str(path), "--quiet"]), str(folder), "another name or out"
    )
    assert "empty the folder" in message
    assert tree(folder) == before and not (folder / ".lock").exists()


def test_a_folder_holding_a_project_is_never_cleared_even_marked(tmp_path):
    folder = tmp_path / "repo"
    shutil.copytree(ROOT / "checkpoints", folder / "checkpoints")
    (folder / "pyproject.toml").write_text("[project]\n")
    (folder / runfolder.MARKER).write_text(runfolder.RUN_FORMAT + "\n")
    before = tree(folder)
    config = parse_config(tiny(HH, "torch", tmp_path, name="repo"))
    one_line_error(lambda: runfolder.claim(config).__enter__(), "holds a project")
    assert tree(folder) == before


def test_marked_empty_and_earlier_run_folders_are_claimed_and_marked(tmp_path):
    """A folder the run marked, an empty one and a run folder of an earlier version (a
    config.yaml naming it beside a metrics.csv) are cleared of artifacts and marked; a
    config.yaml naming another folder is not an earlier run."""
    config = parse_config(tiny(HH, "torch", tmp_path))
    folder = config.folder
    folder.mkdir(parents=True)
    with runfolder.claim(config):  # empty
        pass
    assert (folder / runfolder.MARKER).read_text().strip() == runfolder.RUN_FORMAT
    (folder / runfolder.MARKER).unlink()
    (folder / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json")))
    (folder / "metrics.csv").write_text("step,key,value\n")
    (folder / "train_state.pt").write_text("old")
    with runfolder.claim(config):  # an earlier version's run folder
        assert not (folder / "train_state.pt").exists()
    assert (folder / runfolder.MARKER).is_file()
    (folder / runfolder.MARKER).unlink()
    (folder / "config.yaml").write_text(yaml.safe_dump({**config.model_dump(), "name": "other"}))
    (folder / "metrics.csv").write_text("step,key,value\n")
    one_line_error(lambda: runfolder.claim(config).__enter__(), "no training run marked")
    assert (folder / "config.yaml").is_file()


# Item 10: stale temporary files, a prior that loads itself


def dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_a_claiming_run_removes_temporary_files_of_dead_processes(tmp_path):
    config = parse_config(tiny(HH, "torch", tmp_path))
    runfolder.save_state(config, 128, {})
    folder = config.folder
    (folder / "checkpoints").mkdir()
    pid = dead_pid()
    stale = [
        folder / f".train_state.pt.{pid}.tmp",
        folder / "checkpoints" / f".step_1.pt.{pid}.tmp",
    ]
    live = folder / f".final.pt.{os.getpid()}.tmp"
    for path in [*stale, live]:
        path.write_bytes(b"half a save")
    with runfolder.claim(config.model_copy(update={"resume": True})):
        assert not any(path.exists() for path in stale) and live.exists()


def prior_checkpoint(path: Path, prior: str) -> None:
    """A Headless Horseman checkpoint whose ``prior`` is ``prior`` (written as a crafted file
    would be: the trainer only writes batched heuristics there)."""
    env = envs.make(HH)
    obs = env.observation_space("player_0")["observation"].shape[0]
    actions = env.action_space("player_0").n
    net = PolicyNet(obs, actions, [8], 0, 0, "flat", HH, "heuristic:safe", 1.0, 3)
    save_checkpoint(net, HH, path)
    data = torch.load(path, weights_only=True)
    torch.save({**data, "prior": prior}, path)


def test_a_checkpoint_whose_prior_loads_itself_or_another_in_a_cycle_is_refused(tmp_path):
    one, two = tmp_path / "one.pt", tmp_path / "two.pt"
    prior_checkpoint(one, f"torch:{one}")
    env = envs.make(HH, num_players=3)
    env.reset(seed=0)
    observation = env.observe(env.agent_selection)

    def play_self() -> None:
        agent = make_agent(f"torch:{one}", HH)
        agent.act(observation["observation"], observation["action_mask"])

    one_line_error(play_self, str(one), "prior", "heuristic:safe")
    prior_checkpoint(one, f"torch:{two}")
    prior_checkpoint(two, f"torch:{one}")

    def play_cycle() -> None:
        policy = make_batched_agent(f"torch:{one}", HH, 3, torch.device("cpu"), torch.Generator())
        obs = torch.as_tensor(observation["observation"])[None]
        policy.act(obs, torch.as_tensor(observation["action_mask"])[None].bool(), torch.zeros(1))

    one_line_error(play_cycle, "prior", "not a batched heuristic")


# Item 5: a checkpoint cannot declare a network larger than its weights


def test_a_checkpoint_declaring_larger_layers_than_it_stores_is_refused_before_building(
    tmp_path, monkeypatch
):
    """Metadata ``hidden: [3000, 3000]`` over 8-unit weights: refused naming the file, and no
    network larger than the stored weights is ever allocated."""
    path = tmp_path / "big.pt"
    prior_checkpoint(path, "heuristic:safe")
    data = torch.load(path, weights_only=True)
    stored = sum(t.numel() for t in data["state_dict"].values())
    torch.save({**data, "hidden": [3000, 3000]}, path)
    built: list[int] = []

    class Recording(PolicyNet):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            built.append(sum(p.numel() for p in self.parameters() if not p.is_meta))

    monkeypatch.setattr(torch_policy, "PolicyNet", Recording)
    one_line_error(lambda: make_agent(f"torch:{path}", HH), str(path), "does not match")
    assert max(built, default=0) <= stored


# Item 3: YAML aliases


HEADS = {"train": f"env: {HH}\n", "eval": f"env: {HH}\nplayers: [3]\nagents: [random]\n"}
LOADERS = {"train": load_config, "eval": load_eval_config}


def laughs(head: str, levels: int) -> str:
    """A "billion laughs": ``levels`` lists of nine aliases of the list before, in options."""
    parts = ["&l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    parts += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return f"{head}options:\n  max_steps: [{', '.join(parts)}]\n"


@pytest.mark.parametrize("kind", ["train", "eval"])
def test_yaml_aliases_cannot_hang_validation_or_flood_the_message(tmp_path, kind):
    """A few hundred bytes that expand to gigabytes are refused at once; a document under the
    expansion limit still gets a short message; an alias inside its own anchor is refused."""
    load = LOADERS[kind]
    huge = tmp_path / "huge.yaml"
    huge.write_text(laughs(HEADS[kind], 9))
    assert huge.stat().st_size < 600
    started = time.monotonic()
    one_line_error(lambda: load(huge), "huge.yaml", "expands beyond")
    assert time.monotonic() - started < 20
    big = tmp_path / "big.yaml"
    big.write_text(laughs(HEADS[kind], 5))
    message = one_line_error(lambda: load(big), "max_steps")
    assert len(message) < 2000
    recursive = tmp_path / "recursive.yaml"
    recursive.write_text(f"{HEADS[kind]}options: &a {{x: *a}}\n")
    one_line_error(lambda: load(recursive), "recursive")


def test_anchors_within_the_limit_still_work(tmp_path):
    path = tmp_path / "anchors.yaml"
    path.write_text(f"env: {HH}\nhidden: &h [16, 16]\nlearning_rate: 3e-4\ncurriculum: []\n")
    config = load_config(path)
    assert config.hidden == [16, 16] and config.learning_rate == pytest.approx(3e-4)


# Item 7: names and numbers


@pytest.mark.parametrize("field", ["name", "out"])
def test_a_question_mark_in_name_or_out_is_refused(tmp_path, field):
    data = tiny(HH, "torch", tmp_path, **{field: f"{tmp_path}/a?b" if field == "out" else "a?b"})
    one_line_error(lambda: parse_config(data), field, "'?'")


def numeric_fields() -> list[tuple[str, type]]:
    """Every number field of the training config, dotted inside warm_start and curriculum."""
    fields = []
    for prefix, model in [
        ("", TrainConfig),
        ("warm_start.", TrainConfig.model_fields["warm_start"].annotation.__args__[0]),
        ("curriculum.0.", TrainConfig.model_fields["curriculum"].annotation.__args__[0]),
    ]:
        for name, field in model.model_fields.items():
            kinds = {int, float} & {field.annotation, *getattr(field.annotation, "__args__", ())}
            if kinds and field.annotation is not bool:
                fields.append((prefix + name, kinds.pop()))
    return [*fields, ("hidden", int)]  # each layer's size


def with_value(tmp_path, dotted: str, value) -> dict:
    data = tiny(HH, "torch", tmp_path)
    if dotted.startswith("warm_start."):
        data["warm_start"] = {"agent": "random", "games": 1, dotted.split(".")[1]: value}
    elif dotted.startswith("curriculum."):
        data["curriculum"] = [{dotted.split(".")[2]: value}]
    else:
        data[dotted] = [value] if dotted == "hidden" else value
    return data


def test_the_numeric_fields_are_all_covered():
    names = {name for name, _ in numeric_fields()}
    assert {"ent_coef", "prior_weight", "total_steps", "warm_start.bc_coef"} <= names
    assert "curriculum.0.until_step" in names and len(names) > 30


@pytest.mark.parametrize("field, kind", numeric_fields())
def test_every_numeric_field_refuses_an_absurd_magnitude(tmp_path, field, kind):
    huge = 10**30 if kind is int else 1e300
    one_line_error(lambda: parse_config(with_value(tmp_path, field, huge)), field.split(".")[-1])


@pytest.mark.parametrize("field", [n for n, kind in numeric_fields() if kind is float])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_every_float_field_refuses_non_finite_values(tmp_path, field, value):
    one_line_error(lambda: parse_config(with_value(tmp_path, field, value)), field.split(".")[-1])


@pytest.mark.parametrize(
    "option, value", [("max_steps", 10**30), ("illegal_reward", 1e300), ("progress_reward", -1e9)]
)
def test_absurd_option_magnitudes_are_refused_with_the_range(tmp_path, option, value):
    data = tiny(HH, "torch", tmp_path, options={option: value})
    one_line_error(lambda: parse_config(data), option, "must be from")


# Item 8: one line, no traceback


@pytest.mark.parametrize("cli", ["train", "eval"])
def test_a_config_that_is_not_utf8_is_a_one_line_error(tmp_path, cli):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(f"env: {HH}\nname: caf\xe9\n".encode("latin-1"))
    main = train_cli.main if cli == "train" else eval_cli.main
    one_line_error(lambda: main([str(path)]), "latin1.yaml", "not UTF-8")


@pytest.mark.parametrize("net_arch", ["abc", [-1], [[64]], {"pi": "x", "vf": []}, [4000, 4000]])
def test_a_damaged_sb3_sidecar_is_a_one_line_error(tmp_path, net_arch):
    for name in ("headless_horseman_sb3.zip", "headless_horseman_sb3.zip.cauldron.json"):
        shutil.copy(ROOT / "checkpoints" / name, tmp_path / name)
    sidecar = tmp_path / "headless_horseman_sb3.zip.cauldron.json"
    sidecar.write_text(json.dumps({**json.loads(sidecar.read_text()), "net_arch": net_arch}))
    one_line_error(
        lambda: make_agent(f"sb3:{tmp_path / 'headless_horseman_sb3.zip'}", HH), "net_arch"
    )


def test_train_results_on_a_missing_or_damaged_folder_is_one_line(tmp_path):
    command = [sys.executable, "-m", "cauldron.train.results", str(tmp_path / "missing")]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "missing" in done.stderr
    folder = tmp_path / "damaged"
    (folder / "evaluation").mkdir(parents=True)
    (folder / "config.yaml").write_text(f"env: {HH}\ntrainer: torch\nnum_players: 2\n")
    for text in ['{"rows": [', '{"config": {"agents": ["x"]}, "rows": [], "cooperative": false}']:
        (folder / "evaluation" / "results.json").write_text(text)
        one_line_error(lambda: results.main([str(folder)]), str(folder))
        one_line_error(lambda: results.main(["--across-seeds", str(folder)]), str(folder))


def test_ctrl_c_during_training_is_one_line_and_the_run_resumes(tmp_path):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) once a state is saved: exit
    status 130, an "interrupted" line saying how to resume, no traceback from the trainer or
    its worker; then the run resumes from the saved state."""
    path = write_config(
        tmp_path, total_steps=10**6, eval_every=1, workers=1, eval_games=1, final_eval_games=1
    )
    folder = tmp_path / f"{HH}-torch"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "cauldron.train", str(path), "--quiet"]
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while not (folder / "train_state.pt").is_file() and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read()
            time.sleep(0.2)
        os.killpg(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "interrupted:" in stderr and "resume=true" in stderr
    step = torch.load(folder / "train_state.pt", weights_only=True)["step"]
    overrides = ["--set", "resume=true", "--set", f"total_steps={step + 128}", "--quiet"]
    train_cli.main([str(path), *overrides])
    resumed = torch.load(folder / "train_state.pt", weights_only=True)["step"]
    assert resumed > step and (folder / "final.pt").is_file()
