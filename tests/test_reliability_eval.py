"""Reliability of the evaluation harness, without Ray: a ``ray_address`` where
something else listens fails fast, one evaluation at a time writes an output folder and every
file appears whole, Ctrl-C stops the workers cleanly, and an agent's illegal action is one
message naming the agent, the seat and the game's seed."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml

from cauldron import eval as eval_api
from cauldron.agents import AgentError
from cauldron.envs.core import folders
from cauldron.envs.core.errors import ConfigError, run_command
from cauldron.eval import __main__ as eval_cli
from cauldron.eval import batched as eval_batched
from cauldron.eval import executors, harness, report, zsc
from cauldron.eval.config import parse_config
from cauldron.eval.zsc.config import parse_zsc_config

ROOT = Path(__file__).resolve().parent.parent
SERVER_SECONDS = 30  # every test server stops by itself after this long


# ------------------------------------------------------------------ ray_address


@contextlib.contextmanager
def local_server(answer: Callable[[socket.socket], None]) -> Iterator[str]:
    """A TCP server on 127.0.0.1 that calls ``answer`` on each connection; its address. It
    stops when the block ends, and by itself after :data:`SERVER_SECONDS`."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()
    deadline = time.monotonic() + SERVER_SECONDS

    def serve() -> None:
        with server:
            while not stop.is_set() and time.monotonic() < deadline:
                try:
                    connection, _ = server.accept()
                except TimeoutError:
                    continue
                with connection:
                    connection.settimeout(SERVER_SECONDS)
                    with contextlib.suppress(OSError):
                        answer(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)


def http_server(connection: socket.socket) -> None:
    """What an HTTP server (Ray's dashboard is one) does with a request it cannot parse."""
    connection.recv(1024)
    connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def silent_server(connection: socket.socket) -> None:
    """Accepts, reads, never answers (until the client goes)."""
    while connection.recv(1024):
        pass


def closing_server(connection: socket.socket) -> None:
    """Accepts and closes at once."""


def http2_server(connection: socket.socket) -> None:
    """What a gRPC server (Ray's GCS) does first: read the client's preface, send SETTINGS."""
    connection.recv(1024)
    connection.sendall(bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
    while connection.recv(1024):
        pass


@pytest.mark.parametrize(
    "answer, said",
    [
        (http_server, r"answers b'HTTP/1.1 ', not as Ray does .*Ray's dashboard \(port 8265\)"),
        (silent_server, r"something listens there but sent no answer within 1 s"),
        (closing_server, r"closed the connection without an answer"),
    ],
    ids=["http", "silent", "closing"],
)
def test_an_address_where_ray_does_not_answer_fails_within_seconds(monkeypatch, answer, said):
    """Before the probe, a TCP connection was enough, and ``ray.init`` then waited forever."""
    monkeypatch.setattr(executors, "CONNECT_SECONDS", 1.0)
    with local_server(answer) as address:
        for given in (address, f"ray://{address}"):
            began = time.monotonic()
            with pytest.raises(ConfigError) as caught:
                executors.check_address(given)
            assert time.monotonic() - began < 20
            message = str(caught.value)
            assert re.search(said, message), message
            assert f"ray_address {given!r}" in message and "expected a Ray cluster" in message
            assert "\n" not in message


def test_an_address_that_speaks_http2_passes_the_probe():
    """The probe opens with HTTP/2's connection preface, and a SETTINGS frame back is enough."""
    prefaces: list[bytes] = []

    def recording(connection: socket.socket) -> None:
        prefaces.append(connection.recv(24))
        http2_server(connection)

    with local_server(recording) as address:
        for given in (address, f"ray://{address}"):
            assert executors.check_address(given) is None
    assert prefaces == [b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"] * 2


# ------------------------------------------------------------------ the output folder

HOCUS = {"env": "hocus_pocus_v1", "players": [2], "agents": ["random"], "workers": 1}


def write_config(tmp_path: Path, **extra) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump({**HOCUS, "games": 4, "out": str(tmp_path / "out"), **extra}))
    return path


def no_games(*args, **kwargs):
    pytest.fail("games were played in a folder another evaluation holds")


def test_a_second_evaluation_into_a_locked_folder_is_refused(tmp_path, monkeypatch):
    """The first evaluation (here: the lock it holds) is left alone; the second stops before
    any game with one line naming the folder and the holder."""
    path = write_config(tmp_path)
    folder = tmp_path / "out" / "cfg"
    with folders.lock_folder(folder):
        monkeypatch.setattr(harness, "play_all", no_games)
        with pytest.raises(ConfigError, match="is in use by another run") as caught:
            eval_cli.main([str(path)])
        assert str(folder) in str(caught.value) and f"process {os.getpid()}" in str(caught.value)
        assert "\n" not in str(caught.value)
        with pytest.raises(ConfigError, match="is in use by another run"):
            eval_api.evaluate(
                "hocus_pocus_v1", {"r": "random"}, games=2, out=tmp_path / "out", name="cfg"
            )
        monkeypatch.undo()
    summary = eval_cli.main([str(path)])  # released when the first one is done
    assert summary["rows"][0]["win"]["games"] == 4


def test_a_second_batched_evaluation_into_a_locked_folder_is_refused(tmp_path, monkeypatch):
    """``cauldron.eval.batched --out`` holds the folder's lock too, and writes its files whole."""
    folder = tmp_path / "batched"
    argv = ["headless_horseman_v1", "random", "--games", "8", "--chunk", "8", "--out", str(folder)]
    with folders.lock_folder(folder):
        monkeypatch.setattr(eval_batched, "evaluate", no_games)
        with pytest.raises(ConfigError, match="is in use by another run"):
            eval_batched.main(argv)
        monkeypatch.undo()
    written = []
    monkeypatch.setattr(report, "write_text", lambda path, text: written.append(path.name))
    eval_batched.main(argv)
    assert sorted(written) == ["report.md", "results.json"]


def test_a_second_zsc_protocol_into_a_locked_folder_is_refused(tmp_path, monkeypatch):
    train = tmp_path / "tiny.yaml"
    train.write_text(yaml.safe_dump({"env": "headless_horseman_v1", "num_players": 2}))
    config = parse_zsc_config(
        {
            "env": "headless_horseman_v1",
            "num_players": 2,
            "train": str(train),
            "seeds": [0, 1, 2],
            "partners": ["random"],
            "out": str(tmp_path / "zsc"),
        }
    )
    monkeypatch.setattr(zsc, "seed_runs", no_games)
    with folders.lock_folder(tmp_path / "zsc"), pytest.raises(ConfigError, match="in use"):
        zsc.run(config, quiet=True)


def test_every_output_file_is_written_atomically(tmp_path, monkeypatch):
    """Each file of the folder appears by a rename of a whole temporary file from the same
    folder (so a reader never sees a half-written file, nor one run's file half over
    another's), and no temporary file is left."""
    replaced = []
    real_replace = os.replace

    def replace(source, target):
        replaced.append((Path(source), Path(target)))
        real_replace(source, target)

    monkeypatch.setattr(folders.os, "replace", replace)
    for env, agents in (
        ("hocus_pocus_v1", ["random"]),
        ("hexenflug_v1", ["random", "heuristic:greedy"]),
    ):
        folder = tmp_path / "out" / env
        eval_cli.main([str(write_config(tmp_path, env=env, agents=agents, name=env))])
        written = {p for p in folder.iterdir() if p.name != ".lock"}
        assert {p.name for p in written} >= {"results.json", "report.md", "win_rates.png"}
        assert {target for _, target in replaced if target.parent == folder} == written
        assert all(source.parent == target.parent for source, target in replaced)
        assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_an_atomic_write_that_fails_leaves_the_old_file(tmp_path):
    target = tmp_path / "results.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), folders.atomic_file(target) as file:
        file.write("half of the new")
        raise RuntimeError("the writer fails midway")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
    report.write_text(target, "new")
    assert target.read_text() == "new"


# ------------------------------------------------------------------ Ctrl-C


def group_members(group: int) -> list[int]:
    """Processes (not zombies) of process group ``group``."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group and fields[0] != "Z":
                members.append(int(stat.parent.name))
    return members


class SleepyAgent:
    """Plays the lowest legal action, a second per move: a chunk of its games lasts minutes."""

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        time.sleep(1)
        return int(np.flatnonzero(action_mask)[0])


@pytest.mark.parametrize("group", [True, False], ids=["ctrl-c", "kill-int"])
def test_ctrl_c_stops_an_evaluation_with_workers_cleanly(tmp_path, group):
    """SIGINT (Ctrl-C: to the whole process group, as a terminal sends it; or to the main
    process alone) while two workers play minutes-long chunks, after the first games are
    counted: the run ends within seconds with one "interrupted" line, no traceback (the main
    process's or a worker's), and no process of the run is left."""
    sleepy = f"python:{__name__}:SleepyAgent"
    path = write_config(
        tmp_path, agents=["random", sleepy], games=100, workers=2, crossplay="none", name="long"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "cauldron.eval", str(path)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, apart from the test's
    )
    err = bytearray()

    def read() -> None:
        for chunk in iter(lambda: process.stderr.read1(4096), b""):
            err.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 180
        while not re.search(rb" (50|100)/200 \[", err):  # the random team's; sleepy ones next
            assert process.poll() is None, bytes(err).decode(errors="replace")
            assert time.monotonic() < deadline, "the first games were not played within 180 s"
            time.sleep(0.2)
        (os.killpg if group else os.kill)(process.pid, signal.SIGINT)
        process.wait(timeout=20)
        reader.join(20)
        deadline = time.monotonic() + 20
        while group_members(process.pid):
            assert time.monotonic() < deadline, f"left running: {group_members(process.pid)}"
            time.sleep(0.2)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    text = bytes(err).decode(errors="replace")
    assert process.returncode == 130, text
    assert text.rstrip().endswith("interrupted") and "Traceback" not in text, text


# ------------------------------------------------------------------ agents' errors


class IllegalAgent:
    """Returns the first action its mask forbids."""

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.flatnonzero(action_mask == 0)[0])


class BrokenAgent:
    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        raise RuntimeError("the broken agent gives up")


ILLEGAL = f"python:{__name__}:IllegalAgent"
BROKEN = f"python:{__name__}:BrokenAgent"


def cli(argv: list[str], capsys) -> str:
    """Run ``cauldron eval argv`` as its ``__main__`` does; what it printed to stderr, then
    the message it exits with."""
    with pytest.raises(SystemExit) as caught:
        run_command(lambda: eval_cli.main(argv))
    return capsys.readouterr().err + str(caught.value.code)


@pytest.mark.parametrize("workers", [1, 2])
def test_an_illegal_action_is_one_message_naming_agent_seat_and_seed(tmp_path, capsys, workers):
    """Before: three tracebacks ending in "illegal action ... for player_0". Now one line
    names the agent spec, the seat and the game's seed, the same with worker processes; the
    whole traceback is behind --debug."""
    path = write_config(tmp_path, agents=[ILLEGAL], workers=workers, seed=7)
    err = cli([str(path)], capsys)
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    assert "Traceback" not in err
    assert re.fullmatch(
        rf"error: agent '{ILLEGAL}' returned an illegal action \(seat player_[01], game seed "
        r"7\): illegal action \d+ for player_[01] in phase '\w+'; legal actions: .*",
        line,
    ), line
    debug = cli([str(path), "--debug"], capsys)
    assert "Traceback" in debug and "IllegalActionError" in debug
    assert debug.splitlines()[-1] == line, (debug.splitlines()[-1], line)


def test_an_agent_that_raises_names_its_seat_and_seed(tmp_path):
    config = parse_config({**HOCUS, "agents": [BROKEN], "games": 3, "seed": 4})
    with pytest.raises(AgentError) as caught:
        harness.play_all(config, progress=False)
    assert str(caught.value) == (
        f"agent '{BROKEN}' raised in act: RuntimeError: the broken agent gives up "
        "(seat player_0, game seed 4)"
    )
