"""The play server and the person-play command against hostile input: files that name code,
requests from other sites or hosts, bad bodies and silent sockets, games saved unfinished side
by side, a game resumed twice, and stop signals."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from cauldron.envs.core.errors import ConfigError
from cauldron.eval import fuzz_server, serve
from cauldron.eval.human import Stopped
from cauldron.eval.records import read_games
from cauldron.eval.replay import frames
from tests.test_serve import Running, play_last_legal

ENV = "headless_horseman_v1"
MARK = Path(os.environ.get("TMPDIR", "/tmp")) / "cauldron_agent_ran"


class Marker:
    """An agent whose making leaves a mark: proof that a spec was loaded."""

    def __init__(self) -> None:
        MARK.write_text("ran")

    def reset(self, seed) -> None:
        pass

    def act(self, observation, mask):
        return int(mask.nonzero()[0][0])


@pytest.fixture
def session(tmp_path):
    """A Horseman session, person in seat 0, saving under ``tmp_path``."""
    made: list[serve.Session] = []

    def start(name: str = "g.jsonl", seed: int = 4) -> serve.Session:
        made.append(serve.Session(ENV, 2, 0, ["random"], seed, str(tmp_path / name)))
        return made[-1]

    yield start
    for s in made:
        s.unfinished.release()


def cut(session: serve.Session, decisions: int = 3) -> Path:
    """Play ``decisions`` of the person's decisions and save the game unfinished."""
    for _ in range(decisions):
        session.act({"action": session.table.legal()[-1], "turn": session.table.turn})
    return Path(session.save()["saved"])


def with_agent(path: Path, spec: str) -> Path:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0]["agents"][1] = spec
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(
    "spec",
    [
        f"python:{__name__}:Marker",
        "python:subprocess:run?args=touch&shell=true",
        "torch:runs/some/final.pt",
        "sb3:model.zip",
        "rllib:checkpoint",
    ],
)
def test_a_file_never_names_code_to_run_or_a_checkpoint_to_load(spec, session):
    MARK.unlink(missing_ok=True)
    path = with_agent(cut(session()), spec)
    with pytest.raises(ConfigError, match=r"pass --partners on the command line") as err:
        serve.resume(str(path))
    assert "\n" not in str(err.value) and repr(spec) in str(err.value)
    assert not MARK.exists()
    with pytest.raises(ConfigError, match="pass --partners"):
        serve.main(["--resume", str(path), "--port", "0"])
    assert not MARK.exists()


def test_the_command_line_may_give_the_agents_of_a_resumed_game(session):
    MARK.unlink(missing_ok=True)
    spec = f"python:{__name__}:Marker"
    path = with_agent(cut(session()), spec)
    with pytest.raises(ConfigError, match=r"seats \['human', 'random'\], but the game was played"):
        serve.resume(str(path), partners=["random"])
    resumed = serve.resume(str(path), partners=[spec])
    try:
        assert MARK.exists() and resumed.table.seats == ["human", spec]
    finally:
        resumed.leave()
    MARK.unlink()


def test_built_in_agents_resume_from_the_file_alone(session):
    path = with_agent(cut(session()), "heuristic:safe")
    resumed = serve.resume(str(path))
    assert resumed.table.seats == ["human", "heuristic:safe"]
    resumed.leave()


def test_two_unfinished_games_in_one_folder_keep_a_file_each(session, capsys):
    first = session()
    one = cut(first)
    first.start(5)  # a new game: the first is left unfinished
    two = cut(first, 2)
    other = cut(session(), 4)  # another server, the same record file
    assert len({one, two, other}) == 3 and all(p.exists() for p in (one, two, other))
    assert re.fullmatch(r"g\.jsonl\.game1-[0-9a-f]+\.unfinished", one.name)
    assert re.fullmatch(r"g\.jsonl\.game2-[0-9a-f]+\.unfinished", two.name)
    turns = []
    for path in (one, two, other):
        resumed = serve.resume(str(path))
        turns.append((resumed.table.seed, resumed.resumed_at))
        resumed.leave()
    assert [seed for seed, _ in turns] == [4, 5, 4]
    assert len(set(turns)) == 3
    assert f"saved to {one}" in capsys.readouterr().out


def test_a_game_is_resumed_once_and_its_record_replaces_its_file(session, tmp_path):
    path = cut(session())
    first = serve.resume(str(path))
    with pytest.raises(ConfigError, match="being resumed already .* a game is resumed once"):
        serve.resume(str(path))
    with pytest.raises(ConfigError, match="being resumed already"):
        serve.main(["--resume", str(path)])
    server = Running(first)
    try:
        last = play_last_legal(server)
    finally:
        server.close()
    assert last["saved"] == str(tmp_path / "g.jsonl") and not path.exists()
    assert not Path(f"{path}.lock").exists()
    [game] = read_games(last["saved"])
    assert len(frames(game)) == len(game.steps) + 1
    with pytest.raises(ConfigError, match="no such file"):
        serve.resume(str(path))


def test_a_resumed_game_left_again_goes_back_to_its_file_and_resumes_again(session):
    path = cut(session())
    first = serve.resume(str(path))
    cut(first, 2)
    assert first.leave() == path
    second = serve.resume(str(path))
    assert second.resumed_at == first.table.turn
    second.leave()


def test_a_record_resumed_into_itself_ends_as_whole_records(session, tmp_path):
    s = session("both.jsonl")
    finished = Running(s)
    try:
        play_last_legal(finished)
    finally:
        finished.close()
    s.start(6)
    both = tmp_path / "both.jsonl"
    both.write_text(both.read_text() + cut(s).read_text())
    resumed = serve.resume(str(both), str(both))
    server = Running(resumed)
    try:
        play_last_legal(server)
    finally:
        server.close()
    first, second = read_games(both)
    assert (first.header["seed"], second.header["seed"]) == (4, 6)


def raw(server: Running, method: str, path: str, body: str | None = None, **headers) -> tuple:
    """A request with exactly ``headers`` (``_`` for ``-`` in names); status and message."""
    host, port = server.server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=30)
    connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for name, value in headers.items():
        connection.putheader(name.replace("_", "-"), value)
    data = body.encode() if body is not None else None
    if data is not None and "Content_Length" not in headers:
        connection.putheader("Content-Length", str(len(data)))
    connection.endheaders(data)
    answer = connection.getresponse()
    status, text = answer.status, answer.read().decode()
    connection.close()
    return status, json.loads(text)["error"] if status >= 400 and text.startswith("{") else text


@pytest.fixture
def guarded(session):
    server = Running(session())
    host, port = server.server.server_address[:2]
    yield server, f"{host}:{port}"
    server.close()


def test_only_the_page_of_this_server_may_act(guarded):
    server, host = guarded
    token = server.session.token
    act = json.dumps({"action": server.session.table.legal()[0], "turn": 0})
    kind = "application/json"
    status, page = raw(server, "GET", "/", Host=host)
    assert status == 200 and f'<meta name="cauldron-token" content="{token}">' in page
    assert '"X-Cauldron-Token": token' in page
    refused = [
        ("GET", "/state", None, {"Host": "evil.example"}, "Host 'evil.example' is not"),
        ("GET", "/", None, {"Host": f"rebound.example:{host.split(':')[1]}"}, "is not this"),
        ("POST", "/act", act, {"Host": "evil.example", "X_Cauldron_Token": token}, "Host"),
        ("POST", "/act", act, {"Host": host, "Content_Type": "text/plain"}, "token"),
        (
            "POST",
            "/act",
            act,
            {"Host": host, "Origin": "http://evil.example", "X_Cauldron_Token": token},
            "cross-origin request refused",
        ),
        ("POST", "/act", act, {"Host": host, "X_Cauldron_Token": "x" * 43}, "wrong X-Cauldron"),
    ]
    for method, path, body, headers, words in refused:
        status, message = raw(server, method, path, body, **headers)
        assert status == 403 and words in message, (headers, message)
        assert server.session.table.turn == 0
    status, state = raw(
        server,
        "POST",
        "/act",
        act,
        Host=host,
        X_Cauldron_Token=token,
        Content_Type=kind,
        Origin=f"http://{host}",
    )
    assert status == 200 and json.loads(state)["turn"] > 0
    status, _ = raw(
        server,
        "POST",
        "/save",
        "{}",
        Host=f"localhost:{host.split(':')[1]}",
        X_Cauldron_Token=token,
        Content_Type=kind,
    )
    assert status == 200  # no Origin (not a browser), with the token


@pytest.mark.parametrize(
    ("length", "status", "words"),
    [
        ("abc", 400, "Content-Length must be one whole number of bytes, got 'abc'"),
        ("-5", 400, "got '-5'"),
        ("99999999999999999999", 413, "at most 4096 bytes"),
        ("5000", 413, "at most 4096 bytes, got 5000"),
    ],
)
def test_a_bad_content_length_is_refused_in_one_line(guarded, length, status, words):
    server, host = guarded
    headers = {"Host": host, "X_Cauldron_Token": server.session.token}
    got, message = raw(server, "POST", "/act", "{}", Content_Length=length, **headers)
    assert got == status and words in message
    assert raw(server, "GET", "/state", Host=host)[0] == 200


def test_a_silent_client_is_timed_out(session):
    server = serve.make_server(session(), timeout=0.5)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        for sent in (b"", b"POST /act HTTP/1.1\r\nContent-Length: 50\r\n"):
            with socket.create_connection(server.server_address[:2], timeout=10) as sock:
                sock.sendall(sent)
                started = time.perf_counter()
                assert sock.recv(1024) == b""  # closed, no answer
                assert time.perf_counter() - started < 5
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_a_port_out_of_range_is_a_one_line_error(port, tmp_path):
    argv = ["--env", ENV, "--players", "2", "--save", str(tmp_path / "g.jsonl"), "--port", port]
    with pytest.raises(
        ConfigError, match=rf"^--port must be 0\.\.65535 \(0: a free one\), got {port}$"
    ):
        serve.main(argv)
    out = subprocess.run(
        [sys.executable, "-m", "cauldron.eval.serve", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1 and out.stderr.strip().count("\n") == 0, out.stderr
    assert "65535" in out.stderr and "Traceback" not in out.stderr


def read_until(process: subprocess.Popen, pattern: str, seconds: float = 60) -> str:
    """The process's output up to and including ``pattern`` (a regular expression)."""
    seen, end = "", time.monotonic() + seconds
    while not re.search(pattern, seen):
        assert time.monotonic() < end and process.poll() is None, seen
        seen += os.read(process.stdout.fileno(), 4096).decode()
    return seen


def spawn(*argv: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def test_a_signal_landing_while_a_request_starts_stops_the_server():
    """The signal raises in the main thread, which may be inside socketserver's own
    ``except Exception`` around starting a request: it stops the server, not that request."""

    class SignalledServer(serve.Server):
        def process_request(self, request, client_address):
            self.shutdown_request(request)
            raise Stopped(signal.SIGHUP)

    server = SignalledServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    host, port = server.server_address[:2]
    client = threading.Thread(target=lambda: socket.create_connection((host, port)).close())
    swallowed = threading.Timer(10, server.shutdown)  # ends the loop if the signal is lost
    client.start()
    swallowed.start()
    try:
        with pytest.raises(Stopped):
            server.serve_forever(poll_interval=0.05)
    finally:
        swallowed.cancel()
        client.join()
        server.server_close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_server_saves_the_game_and_stops_it(signum, tmp_path):
    save = tmp_path / "g.jsonl"
    process = spawn(
        "cauldron.eval.serve", "--env", ENV, "--players", "2", "--seed", "3", "--save", str(save)
    )
    try:
        url = re.search(r"open (http://\S+)/ ", read_until(process, r"open http://\S+/ "))[1]
        host = url.removeprefix("http://")
        connection = http.client.HTTPConnection(host, timeout=30)
        connection.request("GET", "/")
        page = connection.getresponse().read().decode()
        token = re.search(r'name="cauldron-token" content="([^"]+)"', page)[1]
        for _ in range(2):
            connection = http.client.HTTPConnection(host, timeout=30)
            connection.request("GET", "/state")
            state = json.loads(connection.getresponse().read())
            body = json.dumps({"action": state["legal"][-1][0], "turn": state["turn"]})
            connection = http.client.HTTPConnection(host, timeout=30)
            headers = {"X-Cauldron-Token": token, "Content-Type": "application/json"}
            connection.request("POST", "/act", body, headers)
            answer = connection.getresponse()
            assert answer.status == 200
            after = json.loads(answer.read())
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0 and b"Traceback" not in err, err
    assert b"server stopped" in out
    [kept] = tmp_path.glob("g.jsonl.game1-*.unfinished")
    assert f"unfinished game saved to {kept}".encode() in out
    resumed = serve.resume(str(kept))
    assert resumed.resumed_at == after["turn"]
    resumed.leave()


def test_a_signal_to_the_play_command_saves_the_game(tmp_path):
    save = tmp_path / "p.jsonl"
    process = spawn(
        "cauldron.eval.play", "--env", ENV, "--players", "2", "--seed", "3", "--save", str(save)
    )
    try:
        shown = read_until(process, r"your action .*> ")
        first = re.findall(r"^\s+(\d+): ", shown, re.MULTILINE)[0]
        process.stdin.write(f"{first}\n".encode())
        process.stdin.flush()
        read_until(process, r"your action .*> ")
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM and b"Traceback" not in err, err
    [kept] = tmp_path.glob("p.jsonl.game1-*.unfinished")
    assert f"saved to {kept}".encode() in err
    resumed = serve.resume(str(kept))
    assert resumed.resumed_at >= 1 and resumed.table.seats[0] == "human"
    resumed.leave()


def test_the_hostile_request_command_finds_no_violation(capsys):
    assert fuzz_server.main(["--random", "20", "--timeout", "0.5"]) == []
    out = capsys.readouterr().out
    assert "text/plain form post" in out and "random x20" in out
    assert "every hostile request was refused cleanly" in out
