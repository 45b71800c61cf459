"""Play in the browser: ``python -m eval.serve``.

python -m eval.serve --env ID --players N [--seat K] [--partners SPEC...] [--seed S]
                     [--save FILE] [--host 127.0.0.1] [--port 0]
python -m eval.serve --resume FILE [--save FILE] [--host 127.0.0.1] [--port 0]

A local web server (the standard library's, one game at a time per process) where a person plays
seat K against or with agents, as in ``python -m eval.play`` (the same :class:`eval.human.Table`):
the page shows the seat's drawn view (``render_for(seat, "svg")``, hidden cards hidden), the legal
actions as a list of named buttons and, where the drawing marks them with ``data-action``, as
clickable cards, the other seats' moves one by one as the seat sees them, and the result. The
server binds to 127.0.0.1 unless ``--host`` says otherwise (and then says so), fetches nothing,
and serves one page that fetches nothing but its own JSON:

* ``GET /state[?since=n&game=g]``: ``game`` (its number, from 1), ``seed``, ``seats``, ``you``,
  ``turn`` (decisions taken), ``to_act``, ``your_turn``, ``over``, ``svg``, ``legal`` (``[id,
  name]`` pairs on the person's turn), ``logged`` (the size of the seat's log: what it saw of
  every decision), ``log`` (the entries after ``since``), ``frames`` (``[n, svg]``: the view once
  the log had n entries, for the entries after ``since`` and since the person's last decision),
  ``result``, ``error`` (an agent's failure) and ``saved``.
* ``POST /act {"action": id, "turn": n, "game": g, "since": k}``: the person's decision at
  decision ``n`` (``game`` and ``since`` optional); then the agents play until the person's next
  decision or the end. The answer is the state after log entry ``since`` (the entries the page
  has shown), so its size does not grow with the game.
* ``POST /new {"seed": s}`` (seed optional: a random one) and ``POST /save``.

A finished game is saved as a record (``--save``, checked before the first game; default
``runs/play/<env>_seed<S>.jsonl``; with ``--save`` the later games of the server are appended)
that ``python -m eval.replay`` and ``python -m eval.viewer`` read. A refused request (malformed:
400; an illegal action: 400; a stale turn or game, say from a second tab, a game that is over or
stopped: 409) answers ``{"error": ...}``, which the page shows before it shows the game as it
is, and changes nothing. A port in use is a one-line error naming it (give another, or 0). An
agent that raises stops the game with its message in the page and on the command line, and the
decisions so far are written to ``<save>.unfinished`` (the record's header and step lines,
without an end line); so is a game left unfinished by ``POST /save``, a new game or Ctrl-C.

``--resume FILE`` continues such a game: FILE is a ``.unfinished`` file or any record file whose
last game has no end line. Its decisions are replayed through the reference env and checked as a
record's are (seat, legality, names, rewards, events, checkpoint hashes), then taken again at a
table with the same env, options, seed and agents (the header's specs; the person sits in its
``human`` seat; each agent is shown its past observations, so a seeded agent goes on as it would
have), and the game continues at the seat to act. The finished game is saved as a whole record
(that replays) to ``--save``, by default FILE without ``.unfinished`` (any other FILE: the new
game's default), after the games that file holds. A file that is not an unfinished game (a
finished one, an empty one, one that does not replay, one without a ``human`` seat) or whose
agents cannot be built is a one-line error; ``--env``, ``--players``, ``--seat``, ``--partners``
and ``--seed`` come from FILE and may not be given.
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from envs.core.errors import ConfigError, run_command
from envs.core.views import action_text
from eval.demo import default_agent
from eval.human import HUMAN, Table, random_seed, table_arguments
from eval.records import (
    GameRecord,
    RecordError,
    check_output,
    jsonable,
    parse_games,
    replay,
    write_games,
)

LOCAL = "127.0.0.1"
PAGE = Path(__file__).with_name("serve_assets") / "play.html"
MAX_BODY = 4096  # bytes of a request body: a decision is a few dozen
UNFINISHED = ".unfinished"  # the suffix of a game saved before its end


class Refused(Exception):
    """A request the game refuses: the HTTP ``status`` and the message for the page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Session:
    """The server's game: a :class:`Table` played one request at a time (under ``lock``), the
    seat's view after each release of the log (``frames``), and where its record goes."""

    def __init__(
        self,
        env_id: str,
        players: int,
        seat: int,
        partners: list[str],
        seed: int,
        save: str | None = None,
        options: dict[str, Any] | None = None,
        table: Table | None = None,
    ) -> None:
        self.env_id, self.players, self.seat, self.partners = env_id, players, seat, partners
        self.save_option, self.options = save, options
        self.lock = threading.Lock()
        self.game = 0
        self.appending = table is not None  # a resumed game joins what its file holds
        self.resumed_at = None if table is None else table.turn  # the decisions replayed
        self.start(seed, table)

    def start(self, seed: int, table: Table | None = None) -> None:
        """A new game from ``seed`` (or ``table``, a game resumed), the agents then playing up
        to the person's decision; a game left unfinished is saved first (see
        :meth:`save_unfinished`)."""
        path = check_output(
            self.save_option or f"runs/play/{self.env_id}_seed{seed}.jsonl", "--save"
        )
        if table is None:
            table = Table(
                self.env_id, self.players, self.seat, self.partners, seed, "svg", self.options
            )
        if self.game and not self.table.over and self.table.turn and not self.error:
            print(f"game {self.game} left unfinished; saved to {self.save_unfinished()}")
        self.path, self.table = path, table
        self.game += 1
        self.frames: list[tuple[int, str]] = []
        self.error: str | None = None
        self.saved: str | None = None
        self.advance()

    def view(self) -> str:
        return self.table.base.render_for(self.table.you, "svg")

    def advance(self) -> None:
        """Let the agents play until the person's decision or the end, keeping the seat's view
        after every decision that adds to its log; an agent's error stops the game (saved so
        far); the finished game is saved."""
        table = self.table
        while True:
            before = len(table.log)
            try:
                moved = table.step_agent()
            except Exception as err:  # any agent failure: report it, keep the game so far
                name = table.env.agent_selection
                spec = table.seats[table.base.possible_agents.index(name)]
                where = self.save_unfinished()
                self.error = (
                    f"the agent {spec} of {name} failed at decision {table.turn + 1}: "
                    f"{type(err).__name__}: {err}; the game so far is saved to {where}"
                )
                print(f"error: {self.error}", file=sys.stderr)
                return
            if len(table.log) > before:
                self.frames.append((len(table.log), self.view()))
            if not moved:
                break
        if table.over and self.saved is None:
            written = write_games(self.path, [table.record], append=self.appending)
            self.appending = self.save_option is not None
            self.saved = str(written)
            print(f"game {self.game} over; saved: {written} (python -m eval.viewer {written})")

    def save_unfinished(self) -> str:
        """Write the game so far (header and step lines, no end line) beside the record."""
        where = self.path.with_name(self.path.name + UNFINISHED)
        lines = self.table.env._game.to_lines()[:-1]  # the Recorder's game in progress
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(where)

    def act(self, body: Any) -> None:
        """The person's decision (``{"action": id, "turn": n, "game": g, "since": k}``), checked
        first: :class:`Refused` for anything else, the game unchanged. The frames kept restart
        here: a page that is up to date has drawn the earlier ones."""
        if not isinstance(body, dict):
            raise Refused(400, 'expected a JSON object {"action": id, "turn": n}')
        for key in ("action", "turn", "since"):
            value = body.get(key, 0 if key == "since" else None)
            if not isinstance(value, int) or isinstance(value, bool):
                raise Refused(400, f"{key!r} must be an integer, got {json.dumps(value)[:40]}")
        table = self.table
        if body.get("game", self.game) != self.game:
            raise Refused(409, f"this page shows an earlier game; game {self.game} is on: reload")
        if self.error:
            raise Refused(409, f"the game is stopped: {self.error}")
        if table.over:
            raise Refused(409, "the game is over; start a new game")
        if body["turn"] != table.turn:
            raise Refused(
                409,
                f"stale page: you acted at decision {body['turn']}, the game is at decision "
                f"{table.turn} (another tab, or an old page); the page is refreshed",
            )
        legal = table.legal() if table.your_turn() else []
        if body["action"] not in legal:
            raise Refused(400, f"action {body['action']} is not legal now; legal: {legal}")
        before = len(table.log)
        self.frames = []
        table.play(body["action"])
        if len(table.log) > before:
            self.frames.append((len(table.log), self.view()))
        self.advance()

    def state(self, since: int = 0, game: int | None = None) -> dict[str, Any]:
        """The page's data (module docstring); frames after log entry ``since`` of ``game``."""
        table, base = self.table, self.table.base
        since = since if game == self.game else 0
        mine = table.your_turn() and not self.error
        record = table.record
        return {
            "env": self.env_id,
            "game": self.game,
            "seed": table.seed,
            "seats": table.seats,
            "you": table.you,
            "turn": table.turn,
            "to_act": None if table.over else table.env.agent_selection,
            "your_turn": mine,
            "over": table.over,
            "svg": self.view(),
            "legal": [[a, action_text(base, a)] for a in table.legal()] if mine else [],
            "logged": len(table.log),
            "log": table.log[since:],
            "frames": [[n, svg] for n, svg in self.frames if n > since],
            "result": None if record is None else jsonable(record.end),
            "error": self.error,
            "saved": self.saved,
        }

    def save(self) -> dict[str, Any]:
        """Save now: the record of a finished game, or the unfinished game's lines."""
        if self.saved:
            return {"saved": self.saved}
        if self.table.turn == 0:
            raise Refused(409, "nothing to save yet: no decision taken")
        return {"saved": self.save_unfinished(), "unfinished": True}


class Handler(BaseHTTPRequestHandler):
    """The page, its JSON endpoints (module docstring) and 404 for anything else."""

    session: Session  # set on the subclass made by :func:`make_server`

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass  # quiet: the command line shows the games, not every request

    def send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status: int, data: Any) -> None:
        self.send(status, json.dumps(data).encode("utf-8"), "application/json")

    def do_GET(self) -> None:  # noqa: N802 - the base's name
        url = urlparse(self.path)
        if url.path == "/":
            self.send(200, PAGE.read_bytes(), "text/html; charset=utf-8")
            return
        if url.path != "/state":
            self.send_json(404, {"error": f"no page {url.path}"})
            return
        query = parse_qs(url.query)
        try:
            since = int(query.get("since", ["0"])[0])
            game = int(query["game"][0]) if "game" in query else None
        except ValueError:
            self.send_json(400, {"error": "since and game must be integers"})
            return
        with self.session.lock:
            self.send_json(200, self.session.state(since, game))

    def do_POST(self) -> None:  # noqa: N802 - the base's name
        path = urlparse(self.path).path
        try:
            size = int(self.headers.get("Content-Length") or 0)
            if not 0 <= size <= MAX_BODY:
                raise Refused(400, f"a request body holds at most {MAX_BODY} bytes")
            text = self.rfile.read(size).decode("utf-8") if size else "{}"
            try:
                body = json.loads(text)
            except ValueError:
                raise Refused(400, "the request body is not JSON") from None
            with self.session.lock:
                since, game = 0, None
                if path == "/act":
                    self.session.act(body)
                    since, game = body.get("since", 0), body.get("game", self.session.game)
                elif path == "/new":
                    seed = body.get("seed") if isinstance(body, dict) else None
                    if seed is None:
                        seed = random_seed()
                    try:
                        self.session.start(seed)
                    except ConfigError as err:
                        raise Refused(400, str(err)) from None
                elif path == "/save":
                    self.send_json(200, self.session.save())
                    return
                else:
                    raise Refused(404, f"no endpoint {path}")
                self.send_json(200, self.session.state(since, game))
        except Refused as refused:
            self.send_json(refused.status, {"error": str(refused)})
        except UnicodeDecodeError:
            self.send_json(400, {"error": "the request body is not UTF-8"})


def unfinished_game(path: str) -> GameRecord:
    """The last game of the record file ``path``, which must have no end line (a
    ``<save>.unfinished`` file, or a record cut short), its decisions so far checked by replaying
    them through the reference env as a record's are; :class:`ConfigError` (naming the file)
    for anything else."""
    source = Path(path)
    if not source.is_file():
        raise ConfigError(f"--resume {path}: no such file")
    try:
        lines = source.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"--resume {path}: cannot read it as a record ({err})") from None
    last = next((line for line in reversed(lines) if line.strip()), "")
    if not last:
        raise ConfigError(f"--resume {path}: the file is empty, not an unfinished game")
    try:
        final = json.loads(last)
    except ValueError:
        final = None  # not JSON: parse_games below says where
    if isinstance(final, dict) and "end" in final:
        raise ConfigError(
            f"--resume {path}: its last game is finished (it has an end line), nothing to "
            f"resume; python -m eval.viewer {path} shows it"
        )
    try:
        game = parse_games([*lines, json.dumps({"end": {}})], str(path))[-1]
        game.end = None
        agents = game.header["agents"]
        if agents.count(HUMAN) != 1:
            raise ConfigError(
                f"--resume {path}: its last game seats no one person (agents {agents}); "
                "--resume continues a person's game of python -m eval.serve"
            )
        for done, _ in replay(game):
            if done == len(game.steps):
                break
    except RecordError as err:
        raise ConfigError(f"--resume {err}") from None
    return game


def resume(path: str, save: str | None = None) -> Session:
    """A session that continues the unfinished game in ``path`` (:func:`unfinished_game`):
    the same env, options, seed and agents (the header's specs; the person sits in the
    ``human`` seat), the decisions so far taken again (:meth:`Table.follow`), the game then at
    the seat to act. Its record goes to ``save``, by default the file ``path`` without
    ``.unfinished`` (for any other file the new game's default), after the games it holds."""
    if save is None and path.endswith(UNFINISHED):
        save = path[: -len(UNFINISHED)]
    game = unfinished_game(path)
    header = game.header
    seat = header["agents"].index(HUMAN)
    partners = [spec for spec in header["agents"] if spec != HUMAN]
    env_id, players, seed, options = (header[k] for k in ("env", "players", "seed", "options"))
    if save is not None:
        check_output(save, "--save")
    try:
        table = Table(env_id, players, seat, partners, seed, "svg", options)
    except Exception as err:  # any agent loader's failure: one line naming the specs
        raise ConfigError(
            f"--resume {path}: cannot build the game's agents {partners}: "
            f"{type(err).__name__}: {err}"
        ) from None
    for k, line in enumerate(game.steps):
        try:
            table.follow(line["a"])
        except Exception as err:  # an agent shown its past observation failed
            raise ConfigError(
                f"--resume {path}: the agent {table.seats[line['s']]} of player_{line['s']} "
                f"failed replaying decision {k + 1}: {type(err).__name__}: {err}"
            ) from None
    return Session(env_id, players, seat, partners, seed, save, options, table)


def make_server(session: Session, host: str = LOCAL, port: int = 0) -> ThreadingHTTPServer:
    """The server of ``session`` bound to ``host``:``port`` (0: a free port);
    :class:`ConfigError` for a port in use or an address that cannot be bound."""
    handler = type("SessionHandler", (Handler,), {"session": session})
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"--port {port} on {host} is in use; give another port, or 0 for a free one"
            ) from None
        raise ConfigError(f"cannot listen on {host}:{port} ({err.strerror or err})") from None
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> None:
    parser = table_arguments(
        argparse.ArgumentParser(prog="python -m eval.serve", description=__doc__.splitlines()[0]),
        required=False,
    )
    parser.add_argument("--resume", metavar="FILE", help="continue the unfinished game in FILE")
    parser.add_argument("--host", default=LOCAL, help="address to listen on (default: local only)")
    parser.add_argument("--port", type=int, default=0, help="port (default 0: a free one)")
    args = parser.parse_args(argv)
    if args.resume is not None:
        table_options = ("env", "players", "seat", "partners", "seed")
        given = [f"--{k}" for k in table_options if vars(args)[k] is not None]
        if given:
            raise ConfigError(
                f"--resume takes the env, players, seat, partners and seed from {args.resume}; "
                f"drop {' '.join(given)}"
            )
        session = resume(args.resume, args.save)
    elif args.env is None or args.players is None:
        raise ConfigError("give --env and --players for a new game, or --resume FILE")
    else:
        seed = args.seed if args.seed is not None else random_seed()
        partners = args.partners or [default_agent(args.env)]
        seat = args.seat if args.seat is not None else 0
        session = Session(args.env, args.players, seat, partners, seed, args.save)
    server = make_server(session, args.host, args.port)
    host, port = server.server_address[:2]
    table = session.table
    print(
        f"playing {session.env_id}, {session.players} players, you are seat {session.seat}, "
        f"seed {table.seed}"
        + (f"; {args.resume} resumed after decision {session.resumed_at}" if args.resume else "")
    )
    print(f"open http://{host}:{port}/ in a browser (Ctrl-C stops the server)")
    if args.host != LOCAL:
        print(f"note: listening on {host}, not {LOCAL}: other machines may reach this game")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        with session.lock:
            table = session.table
            if not table.over and table.turn and not session.error:
                print(f"unfinished game saved to {session.save_unfinished()}")
        print("server stopped")
    finally:
        server.server_close()


if __name__ == "__main__":
    run_command(main)
