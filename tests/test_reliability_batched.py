"""The batched engines and ``cauldron.eval.batched`` under bad use: one device however it is
spelled, outputs that do not alias the engine's state, bad arguments refused up front with a
ConfigError that leaves the engine as it was, a python agent's bad action, options that are no game
options and a full disk each ending in one line that says what was wrong, and batched heuristics
asked for no rows."""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents.batched import BatchedRandom
from cauldron.agents.heuristics import batched_heuristics
from cauldron.agents.user import AgentError
from cauldron.envs.core.devices import torch_device
from cauldron.envs.core.errors import ConfigError, run_command
from cauldron.eval import batched as eval_batched

HORSEMAN = "headless_horseman_v1"
CPU = torch.device("cpu")


def first_legal(out: dict) -> torch.Tensor:
    return out["action_mask"].to(torch.int8).argmax(dim=1)


def state_tensors(benv) -> dict[str, torch.Tensor]:
    state = benv.game_state
    return {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}


def output_tensors(out: dict) -> dict[str, torch.Tensor]:
    flat = {k: v for k, v in out.items() if isinstance(v, torch.Tensor)}
    flat.update({f"figures.{k}": v for k, v in out["figures"].items()})
    return flat


def assert_same_games(a, b) -> None:
    ours, theirs = state_tensors(a), state_tensors(b)
    for name, value in ours.items():
        assert torch.equal(value, theirs[name]), name
    assert torch.equal(a.steps, b.steps)
    assert torch.equal(a.generator.get_state(), b.generator.get_state())


# ------------------------------------------------------------------- devices
@pytest.mark.parametrize("spelling", ["cpu", "cpu:0", torch.device("cpu"), torch.device("cpu:0")])
def test_every_cpu_spelling_is_the_device_cpu_tensors_report(spelling):
    assert torch_device(spelling) == torch.device("cpu")
    assert torch_device(spelling) == torch.zeros(1, device=spelling).device


@pytest.mark.parametrize(
    "built, acting", [("cpu:0", "cpu"), ("cpu", "cpu:0"), (torch.device("cpu:0"), "cpu")]
)
def test_an_engine_takes_actions_on_any_spelling_of_its_device(built, acting):
    benv = envs.make_batched(HORSEMAN, 2, batch_size=4, device=built)
    out = benv.reset(seed=0)
    out = benv.step(first_legal(out).to(acting))
    assert all(v.device == benv.device for v in output_tensors(out).values())


def test_a_batched_training_run_on_cpu0_trains(tmp_path):
    """``--set engine=batched --set device=cpu:0``: the trainer's own actions are taken."""
    from cauldron.train.config import parse_config
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog
    from tests.test_train_batched import tiny_batched

    config = parse_config(tiny_batched(HORSEMAN, tmp_path, device="cpu:0", total_steps=1024))
    checkpoint = train(config, RunLog(config.folder, quiet=True))
    assert checkpoint.exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_cuda_and_cuda0_are_one_device():
    assert torch_device("cuda") == torch.zeros(1, device="cuda").device
    for built, acting in (("cuda", "cuda:0"), ("cuda:0", "cuda")):
        benv = envs.make_batched(HORSEMAN, 2, batch_size=4, device=built)
        out = benv.step(first_legal(benv.reset(seed=0)).to(acting))
        assert out["observation"].device == benv.device


@pytest.mark.parametrize(
    "device, match",
    [
        ("cuda", "CUDA is not available here"),
        ("cuda:0", "CUDA is not available here"),
        ("tpu9", "device must name a torch device such as 'cpu'"),
        (0, "device must name a torch device"),
        ("meta", "the batched engines run on 'cpu', 'cuda' or 'cuda:<index>'"),
    ],
)
def test_a_device_that_cannot_work_is_a_config_error(device, match, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match=match):
        envs.make_batched(HORSEMAN, 2, batch_size=4, device=device)


# ------------------------------------------------------------------- aliasing
def stepped_twins(env_id: str, n: int, options: dict | None = None, batch: int = 8):
    """Two engines of one seed and the first outputs of each."""
    twins = [envs.make_batched(env_id, n, batch_size=batch, **(options or {})) for _ in (0, 1)]
    return twins, [benv.reset(seed=3) for benv in twins]


def scribble(out: dict) -> None:
    """Change every tensor of ``out`` in place."""
    for value in output_tensors(out).values():
        if value.dtype == torch.bool:
            value.logical_not_()
        else:
            value.add_(1)


@pytest.mark.parametrize("env_id", envs.batched_ids())
def test_no_output_shares_memory_with_the_engine(env_id):
    (benv, _), (out, _) = stepped_twins(env_id, 2, {"illegal_action": "penalty"})
    policy = BatchedRandom(2, benv.device, torch.Generator().manual_seed(0))
    for step in range(40):
        actions = policy.act(out["observation"], out["action_mask"], out["seat"])
        actions[step % 8] = -1  # a penalty row now and then: the restoring path too
        out = benv.step(actions)
        held = [*state_tensors(benv).values(), benv.steps, benv._mask]
        storages = {t.untyped_storage().data_ptr() for t in held}
        for name, value in output_tensors(out).items():
            assert value.untyped_storage().data_ptr() not in storages, name


@pytest.mark.parametrize("env_id", envs.batched_ids())
def test_changing_outputs_in_place_changes_no_game(env_id):
    """Every output of ``reset`` and ``step`` scribbled over in one twin; both play on with the
    same actions (chosen from the clean twin) and stay equal."""
    (scribbled, clean), (out, clean_out) = stepped_twins(env_id, 3)
    policy = BatchedRandom(3, clean.device, torch.Generator().manual_seed(1))
    for _ in range(150):
        scribble(out)
        actions = policy.act(clean_out["observation"], clean_out["action_mask"], clean_out["seat"])
        out, clean_out = scribbled.step(actions), clean.step(actions)
        assert_same_games(scribbled, clean)
        for name, value in output_tensors(clean_out).items():
            assert torch.equal(output_tensors(out)[name], value), name


def test_a_held_seat_is_not_changed_by_later_steps():
    """A caller that keeps ``out["seat"]`` (a rollout buffer) keeps what it was given."""
    benv = envs.make_batched("hocus_pocus_v1", 4, batch_size=16)
    out = benv.reset(seed=0)
    policy = BatchedRandom(4, benv.device, torch.Generator().manual_seed(0))
    for _ in range(30):
        seat, kept = out["seat"], out["seat"].clone()
        out = benv.step(policy.act(out["observation"], out["action_mask"], out["seat"]))
        assert torch.equal(seat, kept)


# ------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize("seed", [2**64, -1, "abc", float("nan"), 1.5, True])
def test_a_bad_seed_is_refused_and_the_engine_left_as_it_was(seed):
    (benv, twin), (out, _) = stepped_twins(HORSEMAN, 2)
    benv.step(first_legal(out))
    out = twin.step(first_legal(out))
    with pytest.raises(ConfigError, match=r"seed must be None or an integer from 0 to 2\*\*64 - 1"):
        benv.reset(seed=seed)
    assert_same_games(benv, twin)
    assert_same_games_after_a_step(benv, twin, out)


def assert_same_games_after_a_step(benv, twin, out) -> None:
    actions = first_legal(out)
    assert torch.equal(benv.step(actions)["observation"], twin.step(actions)["observation"])
    assert_same_games(benv, twin)


@pytest.mark.parametrize("seed", [0, 2**64 - 1, np.int64(7)])
def test_every_seed_a_generator_takes_is_accepted(seed):
    (benv, twin), _ = stepped_twins(HORSEMAN, 2)
    benv.reset(seed=seed)
    twin.reset(seed=int(seed))
    assert_same_games(benv, twin)


@pytest.mark.parametrize("batch_size", [2**70, 2**20 + 1, 0, -3, 2.0, "8", True])
def test_a_bad_batch_size_is_a_config_error(batch_size):
    with pytest.raises(ConfigError, match=r"batch_size must be an integer from 1 to 1,048,576"):
        envs.make_batched(HORSEMAN, 2, batch_size=batch_size)


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--threads", "-1"], r"--threads must be 0 \(one per core\) to 256, got -1"),
        (["--threads", "300"], r"--threads must be 0 \(one per core\) to 256, got 300"),
        (["--seed", str(2**70)], r"seed must be an integer from 0 to 2\*\*64 - 1"),
        (["--seed", "-1"], r"seed must be an integer from 0 to 2\*\*64 - 1"),
        (["--seed", str(2**64 - 2), "--games", "3", "--chunk", "1"], r"2\*\*64 - 3 \(game i"),
    ],
)
def test_eval_batched_refuses_bad_threads_and_seeds_before_any_game(extra, match, tmp_path):
    out = tmp_path / "report"
    with pytest.raises(ConfigError, match=match):
        eval_batched.main(["hexenflug_v1", "random", "random", "--out", str(out), *extra])
    assert not out.exists()


def test_eval_batched_threads_0_is_one_per_core():
    eval_batched.main(["hexenflug_v1", "random", "random", "--games", "2", "--threads", "0"])
    assert torch.get_num_threads() == os.cpu_count()


def test_eval_batched_seed_too_large_is_one_line_without_a_traceback():
    done = subprocess.run(
        [sys.executable, "-m", "cauldron.eval.batched", "hexenflug_v1", "random", "random"]
        + ["--seed", str(2**70)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert done.stderr.startswith("error: seed must be an integer from 0 to 2**64 - 1")


# ------------------------------------------------------------------- cauldron.eval.batched errors
RETURNS = "python:tests.batched_python_agents:Returns"


@pytest.mark.parametrize(
    "options, shown",
    [
        ("action=-1", "-1"),
        ("action=first_illegal", r"\d+"),
        (f"action={2**70}", str(2**70)),
        (f"action={2**64 - 1}&dtype=uint64", r"np\.uint64\(18446744073709551615\)"),
        ("action=329&dtype=int16", r"np\.int16\(329\)"),
    ],
)
def test_a_python_agent_s_bad_action_names_the_agent_seat_action_and_legal_ones(options, shown):
    spec = f"{RETURNS}?{options}"
    refused = (
        rf"agent '{re.escape(spec)}' at seat 0 in the game of seed 5 returned {shown}, not a "
        r"legal action; actions are 0 to 328, legal here: 0, 1, 2, .*9$"
    )
    with pytest.raises(AgentError, match=refused):
        eval_batched.evaluate("hocus_pocus_v1", 2, spec, games=2, seed=5, progress=False)


@pytest.mark.parametrize("dtype", ["uint64", "int16", "uint16", "int32"])
def test_a_python_agent_s_numpy_integer_actions_are_played(dtype):
    spec = f"{RETURNS}?action=first_legal&dtype={dtype}"
    outcomes = eval_batched.evaluate("hocus_pocus_v1", 2, spec, games=2, progress=False)
    assert len(outcomes.won) == 2


def test_a_python_agent_s_illegal_action_ends_the_command_in_one_line(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cauldron.eval.batched",
            "hexenflug_v1",
            f"{RETURNS}?action=-5",
            "random",
        ]
        + ["--games", "2", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert "Traceback" not in done.stderr, done.stderr
    assert re.fullmatch(
        r"error: agent '.*Returns\?action=-5' at seat \d in the game of seed \d returned -5, "
        r"not a legal action; actions are 0 to \d+, legal here: [\d, ]+",
        last,
    ), last


@pytest.mark.parametrize("option", ["num_players=3", "batch_size=abc", "env_id=x", "seed=1"])
def test_eval_batched_set_of_a_field_that_is_no_game_option_is_a_config_error(option, tmp_path):
    name = option.partition("=")[0]
    refused = rf"--set: unknown option\(s\) '{name}' for hexenflug_v1 .*its options: .*max"
    with pytest.raises(ConfigError, match=refused):
        eval_batched.main(["hexenflug_v1", "random", "random", "--set", option])


def test_eval_batched_evaluate_refuses_options_that_are_no_game_options():
    with pytest.raises(ConfigError, match=r"unknown option\(s\) 'render_mode'"):
        eval_batched.evaluate("hexenflug_v1", 2, "random", "random", render_mode="ansi")


def test_a_full_disk_is_one_line_naming_the_file_and_keeps_the_earlier_results(
    tmp_path, monkeypatch
):
    out = tmp_path / "out"
    argv = ["hexenflug_v1", "random", "random", "--games", "2", "--out", str(out)]
    eval_batched.main(argv)
    before = {path.name: path.read_bytes() for path in out.iterdir()}

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(SystemExit) as stop:
        run_command(lambda: eval_batched.main([*argv[:-2], "--games", "3", "--out", str(out)]))
    assert str(stop.value.code) == (
        f"error: cannot write {str(out / 'results.json')!r}: No space left on device; an "
        "earlier file there is kept"
    )
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


@pytest.mark.parametrize(
    ("env_id", "name"),
    [(env_id, name) for env_id in envs.ids() for name in batched_heuristics(env_id)],
)
def test_batched_heuristics_answer_an_empty_batch(env_id, name):
    """A batched heuristic asked for no rows (a step where no game has that seat to move, as a
    residual prior meets beside partners) answers with no actions instead of failing."""
    env = envs.make(env_id)
    env.reset(seed=0)
    agent = env.agents[0]
    size = env.observation_space(agent)["observation"].shape[0]
    actions = env.action_space(agent).n
    heuristic = batched_heuristics(env_id)[name](len(env.agents), CPU, torch.Generator())
    chosen = heuristic.act(
        torch.zeros(0, size),
        torch.zeros(0, actions, dtype=torch.bool),
        torch.zeros(0, dtype=torch.int64),
    )
    assert chosen.shape == (0,)
    assert chosen.dtype == torch.int64
