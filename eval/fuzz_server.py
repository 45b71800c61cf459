"""Hostile requests against the play server (``cauldron fuzz-server``).

    cauldron fuzz-server [--env ID] [--random N] [--seed S] [--timeout SECONDS]

Starts ``cauldron.eval.serve``'s server in this process on 127.0.0.1 (a free port; the games it
saves go to a temporary folder) and sends it a fixed set of hostile requests (a bad, negative,
doubled or huge ``Content-Length``, a body too big or cut short, chunked bodies, a wrong or missing
Host, another Origin, a cross-site ``text/plain`` form post, a missing or wrong token, malformed or
deep JSON, unknown paths and methods, illegal and stale actions, silent and slow sockets), then
``N`` random ones (a request without the session's token, bytes changed at random; seeded).
Each must be refused with its expected status (any refusal for a random one; a silent socket
closed within the timeout), the game unchanged after it, and at the end the server must still
serve the game (a legal decision is taken). Prints a table; exits 1 on any violation. It
contacts nothing but 127.0.0.1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cauldron.envs.core.errors import run_command
from cauldron.eval import serve
from cauldron.eval.demo import default_agent

LOCAL = "127.0.0.1"  # the only address this command contacts
REFUSED = frozenset({400, 403, 404, 408, 409, 411, 413, 415, 431, 501})
CLOSED = 0  # the status of a connection closed without an answer


@dataclass(frozen=True)
class Case:
    """One hostile request: the bytes sent (then, for ``silent``, nothing more) and the
    statuses allowed in answer (``CLOSED``: no answer)."""

    name: str
    data: bytes
    allowed: frozenset[int]
    silent: bool = False


@dataclass(frozen=True)
class Outcome:
    """What became of a case: the status got, the seconds it took and any violation."""

    case: Case
    status: int
    seconds: float
    problem: str | None


class Target:
    """The server under test: a session on 127.0.0.1 served from a thread."""

    def __init__(self, env_id: str, folder: str, timeout: float) -> None:
        session = serve.Session(
            env_id, 2, 0, [default_agent(env_id)], 0, str(Path(folder) / "fuzz.jsonl")
        )
        self.session, self.timeout = session, timeout
        self.server = serve.make_server(session, LOCAL, 0, timeout)
        self.port = self.server.server_address[1]
        self.host = f"{LOCAL}:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)

    def request(
        self,
        method: str,
        path: str,
        body: bytes | str | None = None,
        headers: dict[str, str] | None = None,
        token: bool = True,
    ) -> bytes:
        """A request's bytes: Host this server's, the session's token (unless ``token`` is
        false), a JSON body's type and length, then ``headers`` (a value ``""`` drops one)."""
        data = body.encode() if isinstance(body, str) else body
        fields = {"Host": self.host}
        if token:
            fields[serve.TOKEN_HEADER] = self.session.token
        if data is not None:
            fields |= {"Content-Type": "application/json", "Content-Length": str(len(data))}
        fields |= headers or {}
        lines = [f"{method} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in fields.items() if v]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (data or b"")

    def send(self, data: bytes, wait: float) -> int:
        """Send ``data`` and read until the server closes; the answer's status (``CLOSED``:
        none). Raises ``TimeoutError`` when the server says nothing for ``wait`` seconds."""
        with socket.create_connection((LOCAL, self.port), timeout=wait) as sock:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(data)  # refused before the whole body was sent: an answer may wait
            answer = b""
            try:
                while chunk := sock.recv(65536):
                    answer += chunk
            except ConnectionResetError:
                pass
        parts = answer.split(b" ", 2)
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else CLOSED

    def state(self) -> dict:
        """The game as served (a well-formed request)."""
        status, body = self.exchange(self.request("GET", "/state"))
        if status != 200:
            raise RuntimeError(f"GET /state answered {status}")
        return json.loads(body)

    def exchange(self, data: bytes) -> tuple[int, bytes]:
        """A well-formed request's status and body."""
        with socket.create_connection((LOCAL, self.port), timeout=30) as sock:
            sock.sendall(data)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        return int(head.split(b" ", 2)[1]), body


def fixed_cases(t: Target) -> list[Case]:
    """The hostile requests every run sends."""
    state = t.state()
    legal = [a for a, _ in state["legal"]]
    illegal = next(a for a in range(10_000) if a not in legal)
    act = json.dumps({"action": legal[0], "turn": state["turn"]})
    other = f"http://evil.example:{t.port}"
    post = t.request

    def case(name: str, data: bytes, *allowed: int, silent: bool = False) -> Case:
        return Case(name, data, frozenset(allowed), silent)

    return [
        case("Content-Length: abc", post("POST", "/act", act, {"Content-Length": "abc"}), 400),
        case("Content-Length: -5", post("POST", "/act", act, {"Content-Length": "-5"}), 400),
        case("Content-Length: 1e3", post("POST", "/act", act, {"Content-Length": "1e3"}), 400),
        case("Content-Length huge", post("POST", "/act", act, {"Content-Length": "9" * 30}), 413),
        case("body of 1 MB", post("POST", "/act", b"[" * 1_000_000), 413, CLOSED),
        case(
            "two Content-Lengths",
            post("POST", "/act", act).replace(
                b"\r\n\r\n", f"\r\nContent-Length: {len(act) + 1}\r\n\r\n".encode(), 1
            ),
            400,
        ),
        case(
            "chunked body",
            post("POST", "/act", None, {"Transfer-Encoding": "chunked"})
            + f"{len(act):x}\r\n{act}\r\n0\r\n\r\n".encode(),
            400,
        ),
        case(
            "body cut short",
            post("POST", "/act", act, {"Content-Length": "200"}),
            408,
            CLOSED,
            silent=True,
        ),
        case("wrong Host", post("GET", "/state", None, {"Host": f"evil.example:{t.port}"}), 403),
        case("wrong Host port", post("GET", "/", None, {"Host": f"{LOCAL}:{t.port + 1}"}), 403),
        case("no Host", post("GET", "/state", None, {"Host": ""}), 403),
        case("rebound Host POST", post("POST", "/act", act, {"Host": "evil.example"}), 403),
        case("cross-origin POST", post("POST", "/act", act, {"Origin": other}), 403),
        case("Origin null", post("POST", "/act", act, {"Origin": "null"}), 403),
        case(
            "text/plain form post",
            post("POST", "/act", act, {"Content-Type": "text/plain", "Origin": other}, token=False),
            403,
        ),
        case("no token", post("POST", "/act", act, token=False), 403),
        case("wrong token", post("POST", "/act", act, {serve.TOKEN_HEADER: "x" * 43}), 403),
        case(
            "token in the URL", post("POST", f"/act?token={t.session.token}", act, token=False), 403
        ),
        case("form type", post("POST", "/act", act, {"Content-Type": "text/plain"}), 415),
        case("malformed JSON", post("POST", "/act", "{not json"), 400),
        case("deep JSON", post("POST", "/act", "[" * 4000), 400),
        case("not UTF-8", post("POST", "/act", b"\xff\xfe{}"), 400),
        case("JSON not an object", post("POST", "/act", "[1, 2]"), 400),
        case("action a string", post("POST", "/act", act.replace(f"{legal[0]}", '"0"', 1)), 400),
        case("action huge", post("POST", "/act", '{"action": 1e999, "turn": 0}'), 400),
        case(
            "illegal action",
            post("POST", "/act", json.dumps({"action": illegal, "turn": state["turn"]})),
            400,
        ),
        case(
            "stale turn",
            post("POST", "/act", json.dumps({"action": legal[0], "turn": state["turn"] + 1})),
            409,
        ),
        case(
            "negative since",
            post(
                "POST", "/act", json.dumps({"action": legal[0], "turn": state["turn"], "since": -3})
            ),
            400,
        ),
        case("bad seed for /new", post("POST", "/new", '{"seed": -1}'), 400),
        case("GET since=x", post("GET", "/state?since=x"), 400),
        case("GET since=-1", post("GET", "/state?since=-1"), 400),
        case("unknown page", post("GET", "/../../etc/passwd"), 404),
        case("unknown endpoint", post("POST", "/shutdown", "{}"), 404),
        case("method PUT", post("PUT", "/act", act), 501),
        case("garbage request line", b"\x00\x01 nonsense\r\n\r\n", 400, CLOSED),
        case(
            "header line of 70 kB", post("GET", "/state", None, {"X-Pad": "a" * 70_000}), 431, 400
        ),
        case("silent socket", b"", 408, CLOSED, silent=True),
        case("half a header", b"GET /state HTTP/1.1\r\nHo", 408, CLOSED, silent=True),
    ]


def random_cases(t: Target, count: int, seed: int) -> list[Case]:
    """``count`` requests without the session's token, a few of their bytes changed at
    random: every one must be refused."""
    rng = random.Random(seed)
    base = t.request("POST", "/act", '{"action": 0, "turn": 0}', token=False)
    cases = []
    for k in range(count):
        data = bytearray(base)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        cases.append(Case(f"random {k}", bytes(data), REFUSED | {CLOSED}))
    return cases


def run_case(t: Target, case: Case, before: dict) -> Outcome:
    """Send ``case``; a violation when its answer is not allowed, takes longer than the
    server's timeout allows, or the game changed."""
    started = time.perf_counter()
    wait = t.timeout + 5
    try:
        status = t.send(case.data, wait)
    except TimeoutError:
        return Outcome(case, CLOSED, wait, f"no answer within {wait:.0f} s")
    seconds = time.perf_counter() - started
    problem = None
    if status not in case.allowed:
        problem = f"status {status or 'none'}, expected {sorted(case.allowed)}"
    elif case.silent and seconds > t.timeout + 2:
        problem = f"closed after {seconds:.1f} s, the timeout is {t.timeout} s"
    elif t.state() != before:
        problem = "the game changed"
    return Outcome(case, status, seconds, problem)


def still_serves(t: Target) -> str | None:
    """Take a legal decision the well-formed way: ``None`` when the server takes it."""
    state = t.state()
    body = json.dumps({"action": state["legal"][0][0], "turn": state["turn"]})
    status, answer = t.exchange(t.request("POST", "/act", body))
    if status != 200 or json.loads(answer)["turn"] <= state["turn"]:
        return f"a legal decision afterwards answered {status}: {answer[:200]!r}"
    return None


def table(outcomes: list[Outcome]) -> list[str]:
    """The summary: one row per fixed case, the random ones counted in one row."""
    fixed = [o for o in outcomes if not o.case.name.startswith("random")]
    randoms = [o for o in outcomes if o.case.name.startswith("random")]
    rows = [f"{'case':<24} {'expected':<12} {'got':>5} {'seconds':>8}  result"]
    for o in fixed:
        expected = "/".join(str(s or "closed") for s in sorted(o.case.allowed))
        got = o.status or "closed"
        rows.append(
            f"{o.case.name:<24} {expected:<12} {got:>5} {o.seconds:>8.2f}  {o.problem or 'ok'}"
        )
    if randoms:
        bad = sum(o.problem is not None for o in randoms)
        statuses = "/".join(str(s or "closed") for s in sorted({o.status for o in randoms}))
        rows.append(
            f"{f'random x{len(randoms)}':<24} {'refused':<12} {'-':>5} "
            f"{sum(o.seconds for o in randoms):>8.2f}  {f'{bad} violations' if bad else 'ok'} "
            f"(got {statuses})"
        )
    return rows


def fuzz(
    env_id: str, count: int, seed: int, timeout: float, say: Callable[[str], None] = print
) -> list[str]:
    """Run the fixed and ``count`` random cases against a fresh server; the violations."""
    with tempfile.TemporaryDirectory() as folder:
        target = Target(env_id, folder, timeout)
        try:
            before = target.state()
            cases = fixed_cases(target) + random_cases(target, count, seed)
            outcomes = [run_case(target, case, before) for case in cases]
            say("\n".join(table(outcomes)))
            problems = [f"{o.case.name}: {o.problem}" for o in outcomes if o.problem]
            last = still_serves(target)
        finally:
            target.close()
    return problems + ([last] if last else [])


def main(argv: list[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(
        prog="cauldron fuzz-server", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--env", default="headless_horseman_v1", help="the game served")
    parser.add_argument("--random", type=int, default=100, help="random requests (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random requests")
    parser.add_argument(
        "--timeout", type=float, default=1.0, help="the server's idle timeout (seconds)"
    )
    args = parser.parse_args(argv)
    problems = fuzz(args.env, args.random, args.seed, args.timeout)
    if problems:
        print(f"\n{len(problems)} violations:", file=sys.stderr)
        print("\n".join(f"  {p}" for p in problems), file=sys.stderr)
        raise SystemExit(1)
    print("\nevery hostile request was refused cleanly; the server still serves the game")
    return problems


if __name__ == "__main__":
    run_command(main)
