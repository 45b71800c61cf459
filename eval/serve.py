"""Play in the browser: ``cauldron serve``.

cauldron serve --env ID --players N [--seat K] [--partners SPEC...] [--seed S]
                     [--save FILE] [--host 127.0.0.1] [--port 0]
cauldron serve --resume FILE [--partners SPEC...] [--save FILE] [--host 127.0.0.1]
                     [--port 0]

A local web server (the standard library's, one game at a time per process) where a person plays
seat K against or with agents, as in ``cauldron play`` (the same
:class:`cauldron.eval.human.Table`): the page shows the seat's drawn view (``render_for(seat,
"svg")``, hidden cards hidden) and the person plays by clicking what it draws: every thing an action
refers to (a card, a pile, a space, a seat) is a ``<g data-action="a b ...">`` group
(:meth:`cauldron.envs.core.svg.Drawing.target`); a click plays the one legal action the thing names,
or picks the thing when it names several, and a click on a second thing then plays the action the
two share. An action with nothing drawn is a button in a player's words (the drawing module's
``action_words``); a click on what cannot be played says why. The page shows the other seats' moves
one by one in words, a debug panel with the action numbers and the raw log, on request what an agent
thought (only when the seat sees all the agent saw: the drawing module's ``mind_shown``) and, at the
end, every hand and the result in words. A real-time game (its drawing module names ``CLOCK_IDLE``,
the action of a tick let pass: Voodoo Mania) runs on a server-side :class:`Clock`: off at first
(each tick waits for the person's click), then running (a tick the person lets pass for
``SPEEDS[speed]`` seconds is played as ``CLOCK_IDLE``; the agents decide on their own ticks; a click
lands on the current tick, and one that arrives after its tick has passed is refused, so a double
click plays at most once) or paused (nothing moves, clicks are refused). The server binds to
127.0.0.1 unless ``--host`` says otherwise (and then says so), fetches nothing, and serves one page
that fetches nothing but its own JSON:

* ``GET /state[?since=n&game=g]``: ``game`` (its number, from 1), ``seed``, ``seats``, ``you``,
  ``turn`` (decisions taken), ``to_act``, ``your_turn``, ``over``, ``status`` (``your turn``,
  ``waiting for player 2``, ...), ``svg`` (once over, the whole table), ``legal`` (``[id,
  words]`` pairs on the person's turn), ``buttons`` (those with nothing drawn), ``names``
  (``[id, name]``, the debug panel's), ``logged`` (the size of the seat's log: what it saw of
  every decision), ``log`` (the entries after ``since``), ``said`` (the same in a player's
  words), ``frames`` (``[n, svg]``: the view once the log had n entries, for the entries after
  ``since`` and since the person's last decision), ``result``, ``outcome`` (``words`` and
  ``scores`` once over), ``thought`` (``who`` and ``top``: ``[id, p, words]``), ``clock``
  (``mode``, ``speed``, ``speeds``, ``seconds``, ``left``; ``null`` without a clock), ``error``
  (an agent's failure) and ``saved``.
* ``POST /act {"action": id, "turn": n, "game": g, "since": k}``: the person's decision at
  decision ``n`` (``game`` and ``since`` optional); then the agents play until the person's next
  decision or the end. The answer is the state after log entry ``since`` (the entries the page
  has shown), so its size does not grow with the game.
* ``POST /new {"seed": s}`` (seed optional: a random one; the same seats) and ``POST /save``.
* ``POST /clock {"mode": "running" | "paused", "speed": "slow" | "normal" | "fast"}`` (either
  key optional): start, pause or resume a real-time game's clock, or change its speed.

A finished game is saved as a record (``--save``, checked before the first game; default
``runs/play/<env>_seed<S>.jsonl``; a game joins the games its file holds)
that ``cauldron replay`` and ``cauldron viewer`` read. A refused request (malformed:
400; an illegal action: 400; a stale turn or game, say from a second tab, a game that is over or
stopped, a paused clock, a click after its tick: 409) answers ``{"error": ...}``, which the page
shows before it shows the game as it is, and changes nothing. What the server prints of a file
or an agent passes through :func:`cauldron.eval.records.printable`. A port in use or outside
0..65535 is a one-line error. An agent that raises stops the game with its message in the page and
on the command line, and the decisions so far are written to a file of the game's own,
``<save>.game<N>-<random>.unfinished`` (the record's header and step lines, without an end
line); so is a game left unfinished by
``POST /save``, a new game, Ctrl-C, SIGTERM or SIGHUP (which then stop the server).

The server answers only requests whose Host is one of its own names (the loopback names and
addresses, or ``--host``, with its port: 403 otherwise, against DNS rebinding); every POST must
carry the session's random token (the page holds it and sends it as ``X-Cauldron-Token``) and,
when it has an Origin, come from the server's own (403 otherwise); a body must be JSON
(``Content-Type: application/json``, 415), at most ``MAX_BODY`` bytes (413) with a whole
``Content-Length`` (400); a connection silent for ``TIMEOUT`` seconds is closed. See
``docs/security.md``.

``--resume FILE`` continues such a game: FILE is a ``.unfinished`` file or any record file whose
last game has no end line. Its decisions are replayed through the reference env and checked as a
record's are (seat, legality, names, rewards, events, checkpoint hashes), then taken again at a
table with the same env, options, seed and agents (the person sits in its ``human`` seat; each
agent is shown its past observations, so a seeded agent goes on as it would have), and the game
continues at the seat to act. A file never names code to run: its agents are used only when all
are built in (``random``, ``heuristic:<name>``); any other (``python:``, ``torch:``, ``sb3:``,
``rllib:``) must be given again with ``--partners`` on the command line. The resume claims FILE
(a second resume of it fails while this one holds it); the finished game is saved as a whole
record (that replays) to ``--save``, by default the record FILE belongs to (its name without
``.game<N>-<random>.unfinished``; any other FILE: the new game's default), after the games that
file holds, and leaves FILE (removed when nothing else is in it); a resumed game left unfinished
again is saved back to FILE. A file that is not an unfinished game (a finished one, an empty
one, one that does not replay, one without a ``human`` seat) or whose agents cannot be built is
a one-line error; ``--env``, ``--players``, ``--seat`` and ``--seed`` come from FILE and may
not be given.
"""

from __future__ import annotations

import argparse
import errno
import hmac
import json
import re
import secrets
import socket
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from cauldron.agents.specs import parse_spec
from cauldron.envs.core.errors import ConfigError, run_command
from cauldron.envs.core.svg import plain, seat_name
from cauldron.envs.core.views import action_text
from cauldron.eval.demo import default_agent
from cauldron.eval.human import (
    HUMAN,
    UNFINISHED,
    Stopped,
    Table,
    UnfinishedFile,
    random_seed,
    seat_specs,
    stopping,
    table_arguments,
)
from cauldron.eval.records import (
    GameRecord,
    RecordError,
    check_output,
    jsonable,
    parse_games,
    printable,
    replay,
    write_games,
)

LOCAL = "127.0.0.1"
PAGE = Path(__file__).with_name("serve_assets") / "play.html"
MAX_BODY = 4096  # bytes of a request body: a decision is a few dozen
TIMEOUT = 5.0  # seconds a connection may stay silent
TOKEN_HEADER = "X-Cauldron-Token"
TOKEN_SLOT = "{{token}}"  # where the page takes the session's token
PORTS = range(65536)
BUILT_IN = ("random", "heuristic")  # the agent kinds a file may name: no code, no checkpoint
SPEEDS = {"slow": 2.0, "normal": 1.2, "fast": 0.5}  # seconds a tick of a game on a clock lasts
CLOCK_STEP = 0.05  # seconds between the clock's looks at the game
TARGETS = re.compile(r'data-action="([\d ]+)"')  # the actions of the drawn things
ENTRY = re.compile(r"player_(\d+)(?:: (.*) \(action (\d+)\)|( .*))", re.DOTALL)  # a log entry


class Refused(Exception):
    """A request the game refuses: the HTTP ``status`` and the message for the page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Clock:
    """The clock of a real-time game (one whose drawing module names ``CLOCK_IDLE``, the action
    of a tick let pass): ``off`` until the person starts it (each tick then waits for the
    person's click, as in a turn-based game), then ``running`` (a tick the person lets pass for
    ``SPEEDS[speed]`` seconds is played as ``idle``) or ``paused`` (nothing moves and the
    person's clicks are refused). ``since`` is when the person's current tick began."""

    idle: int
    mode: str = "off"
    speed: str = "normal"
    since: float = 0.0

    def due(self, now: float) -> bool:
        """Whether the person's tick is over at ``now`` (the clock running)."""
        return self.mode == "running" and now - self.since >= SPEEDS[self.speed]

    def view(self, now: float) -> dict[str, Any]:
        """The page's data: mode, speed, the speeds, a tick's seconds and the seconds left."""
        seconds = SPEEDS[self.speed]
        left = max(0.0, seconds - (now - self.since)) if self.mode == "running" else None
        return {
            "mode": self.mode,
            "speed": self.speed,
            "speeds": list(SPEEDS),
            "seconds": seconds,
            "left": left,
        }

    def set(self, body: Any) -> None:
        """Apply ``{"mode": "running"|"paused", "speed": name}`` (either key optional);
        :class:`Refused` for anything else."""
        if not isinstance(body, dict) or set(body) - {"mode", "speed"}:
            raise Refused(400, 'expected {"mode": "running" or "paused", "speed": name}')
        mode, speed = body.get("mode", self.mode), body.get("speed", self.speed)
        if mode not in ("running", "paused") and mode != self.mode:
            raise Refused(400, f"the clock's mode is running or paused, got {str(mode)[:40]!r}")
        if speed not in SPEEDS:
            raise Refused(400, f"the speeds are {', '.join(SPEEDS)}; got {str(speed)[:40]!r}")
        if mode == "running" and self.mode != "running":
            self.since = time.monotonic()  # a resumed tick starts whole
        self.mode, self.speed = mode, speed


class Session:
    """The server's game: a :class:`Table` played one request at a time (under ``lock``), the
    seat's view after each release of the log (``frames``), its log in a player's words
    (``said``), where its record goes, where it is kept while unfinished (``unfinished``), the
    random ``token`` every POST must carry and, for a real-time game, its :class:`Clock`, run
    by a thread of its own until :meth:`close`."""

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
        unfinished: UnfinishedFile | None = None,
    ) -> None:
        self.env_id, self.players, self.seat, self.partners = env_id, players, seat, partners
        self.save_option, self.options = save, options
        self.lock = threading.Lock()
        self.token = secrets.token_urlsafe(32)
        self.game = 0
        self.resumed_at = None if table is None else table.turn  # the decisions replayed
        self.closed = threading.Event()
        self.clock: Clock | None = None
        self.start(seed, table, unfinished)
        if self.clock is not None:
            threading.Thread(target=self.run_clock, daemon=True).start()

    def close(self) -> None:
        """Stop the clock's thread (the game stays as it is)."""
        self.closed.set()

    def run_clock(self) -> None:
        """The clock's thread: every :data:`CLOCK_STEP` seconds, :meth:`tick`."""
        while not self.closed.wait(CLOCK_STEP):
            with self.lock:
                self.tick()

    def tick(self) -> bool:
        """Let the person's tick pass when the clock says its time is up (the clock's idle
        action is played for the person, then the agents play on); whether it did."""
        clock, table = self.clock, self.table
        if clock is None or not clock.due(time.monotonic()) or self.error:
            return False
        if not table.your_turn():
            return False
        self.decide(clock.idle)
        return True

    def start(
        self, seed: int, table: Table | None = None, unfinished: UnfinishedFile | None = None
    ) -> None:
        """A new game from ``seed`` (or ``table``, a game resumed from ``unfinished``), the
        agents then playing up to the person's decision; a game left unfinished is saved
        first (see :meth:`leave`)."""
        path = check_output(
            self.save_option or f"runs/play/{self.env_id}_seed{seed}.jsonl", "--save"
        )
        if table is None:
            table = Table(
                self.env_id, self.players, self.seat, self.partners, seed, "svg", self.options
            )
        if self.game:
            left = self.leave()
            if left:
                print(printable(f"game {self.game} left unfinished; saved to {left}"))
        self.path, self.table = path, table
        self.drawing = sys.modules[type(table.base).svg_table.__module__]
        idle = getattr(self.drawing, "CLOCK_IDLE", None)
        self.clock = None if idle is None else Clock(idle)
        self.game += 1
        self.unfinished = unfinished or UnfinishedFile(path, self.game)
        self.frames: list[tuple[int, str]] = []
        self.said: list[str] = []
        self.choices: dict[int, dict[int, str]] = {}  # per decision not yet said: its words
        self.say_released()  # a resumed game's decisions so far
        self.thought: dict[str, Any] | None = None
        self.error: str | None = None
        self.saved: str | None = None
        self.advance()

    def leave(self) -> Path | None:
        """Leave the game: saved unfinished unless it is over, not begun or stopped (saved
        then), its file's claim freed; where it was saved now."""
        saved = None if self.error else self.table.save_unfinished(self.unfinished)
        self.unfinished.release()
        return saved

    def view(self) -> str:
        """The person's view of the table; once the game is over, the whole table (every hand
        revealed)."""
        base = self.table.base
        return base.draw(None, "svg") if self.table.over else base.render_for(self.table.you, "svg")

    def words(self, action: int) -> str:
        """``action`` of the seat to act, in a player's words (the drawing module's)."""
        base = self.table.base
        return self.drawing.action_words(base.rules, base.game, action)

    def note_choices(self) -> None:
        """Keep the words of the legal actions of the decision about to be taken, so that its
        log entry, once released, says them."""
        self.choices[self.table.turn] = {a: self.words(a) for a in self.table.legal()}

    def say_released(self) -> None:
        """Add the log entries released since the last call to ``said``, in a player's words:
        seats by name (``you`` for the person), public actions by the words kept for them."""
        log, you = self.table.log, self.table.seat
        for k in range(len(self.said), len(log)):
            match = ENTRY.fullmatch(log[k])
            choices = self.choices.pop(k, {})
            if match is None:
                self.said.append(plain(log[k], you))
                continue
            seat, name, action, secret = match.groups()
            who = seat_name(int(seat), you)
            if secret is not None:
                self.said.append(plain(who + secret, you))
            else:
                self.said.append(f"{who}: {choices.get(int(action), plain(name, you))}")

    def step_agent(self) -> bool:
        """One step of an agent (:meth:`Table.step_agent`), its words kept, and what it thought
        kept when the person may see all that the agent saw (the drawing module's
        ``mind_shown``) and the agent can say (``explain()``)."""
        table, base = self.table, self.table.base
        name = table.env.agent_selection
        actor = base.possible_agents.index(name)
        ended = base.terminations.get(name, True) or base.truncations.get(name, True)
        if not table.over and not ended:
            self.note_choices()
        agent = table.agents.get(name)
        shown = (
            not table.over
            and hasattr(agent, "explain")
            and self.drawing.mind_shown(base.rules, base.game, actor, table.seat)
        )
        choices = self.choices.get(table.turn, {})
        moved = table.step_agent()
        if moved and shown:
            self.keep_thought(actor, agent.explain(), choices)
        return moved

    def keep_thought(self, actor: int, thought: Any, choices: dict[int, str]) -> None:
        """What the agent at ``actor`` thought (its top actions and their probabilities)."""
        if thought is None:
            return
        top = [[int(a), round(float(p), 3), choices.get(int(a), "")] for a, p in thought.top]
        self.thought = {"who": seat_name(actor, self.table.seat), "top": top}

    def advance(self) -> None:
        """Let the agents play until the person's decision or the end, keeping the seat's view
        after every decision that adds to its log; an agent's error stops the game (saved so
        far); the finished game is saved."""
        table = self.table
        while True:
            before = len(table.log)
            try:
                moved = self.step_agent()
            except Exception as err:  # any agent failure: report it, keep the game so far
                self.stop_on(err)
                return
            self.say_released()
            if len(table.log) > before:
                self.frames.append((len(table.log), self.view()))
            if not moved:
                break
        if self.clock is not None:
            self.clock.since = time.monotonic()  # the person's tick begins
        if table.over and self.saved is None:
            self.saved = str(self.keep(table.record))
            print(
                printable(
                    f"game {self.game} over; saved: {self.saved} (cauldron viewer {self.path})"
                )
            )

    def stop_on(self, err: Exception) -> None:
        """Stop the game on an agent's error, saved so far, the error kept for the page."""
        table = self.table
        name = table.env.agent_selection
        spec = table.seats[table.base.possible_agents.index(name)]
        where = table.save_unfinished(self.unfinished)
        self.error = (
            f"the agent {spec} of {name} failed at decision {table.turn + 1}: "
            f"{type(err).__name__}: {err}; "
            + (f"the game so far is saved to {where}" if where else "no decision to save")
        )
        print(printable(f"error: {self.error}"), file=sys.stderr)

    def keep(self, record: GameRecord) -> Path:
        """Write the finished game's record and drop the game from its unfinished file (the
        record goes into that file instead when it is the record file)."""
        kept = self.unfinished.path
        if kept is not None and kept.resolve() == self.path.resolve():
            return self.unfinished.finish(record.to_lines())
        written = write_games(self.path, [record])
        self.unfinished.finish()
        return written

    def act(self, body: Any) -> None:
        """The person's decision (``{"action": id, "turn": n, "game": g, "since": k}``), checked
        first: :class:`Refused` for anything else, the game unchanged. The frames kept restart
        here: a page that is up to date has drawn the earlier ones."""
        if not isinstance(body, dict):
            raise Refused(400, 'expected a JSON object {"action": id, "turn": n}')
        for key in ("action", "turn", "since"):
            value = body.get(key, 0 if key == "since" else None)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                shown = json.dumps(value)[:40]
                raise Refused(400, f"{key!r} must be an integer from 0, got {shown}")
        table = self.table
        if body.get("game", self.game) != self.game:
            raise Refused(409, f"this page shows an earlier game; game {self.game} is on: reload")
        if self.error:
            raise Refused(409, f"the game is stopped: {self.error}")
        if table.over:
            raise Refused(409, "the game is over; start a new game")
        if self.clock is not None and self.clock.mode == "paused":
            raise Refused(409, "the game is paused: resume the clock to play")
        if self.clock is not None and self.clock.mode != "off" and body["turn"] < table.turn:
            raise Refused(
                409,
                f"too late: the tick you clicked on has passed (decision {body['turn']}, now "
                f"{table.turn}); nothing was played",
            )
        if body["turn"] != table.turn:
            raise Refused(
                409,
                f"stale page: you acted at decision {body['turn']}, the game is at decision "
                f"{table.turn} (another tab, or an old page); the page is refreshed",
            )
        legal = table.legal() if table.your_turn() else []
        if body["action"] not in legal:
            raise Refused(400, f"action {body['action']} is not legal now; legal: {legal}")
        self.frames = []
        self.decide(body["action"])

    def decide(self, action: int) -> None:
        """The person's legal decision ``action``, its words kept; then the agents play."""
        table = self.table
        before = len(table.log)
        self.note_choices()
        self.thought = None
        table.play(action)
        self.say_released()
        if len(table.log) > before:
            self.frames.append((len(table.log), self.view()))
        self.advance()

    def state(self, since: int = 0, game: int | None = None) -> dict[str, Any]:
        """The page's data (module docstring); frames after log entry ``since`` of ``game``."""
        table, base = self.table, self.table.base
        since = since if game == self.game else 0
        mine = table.your_turn() and not self.error
        record = table.record
        svg = self.view()
        drawn = {int(a) for ids in TARGETS.findall(svg) for a in ids.split()}
        legal = [[a, self.words(a)] for a in table.legal()] if mine else []
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
            "status": self.status(),
            "svg": svg,
            "legal": legal,
            "buttons": [pair for pair in legal if pair[0] not in drawn],
            "names": [[a, action_text(base, a)] for a, _ in legal],
            "logged": len(table.log),
            "log": table.log[since:],
            "said": self.said[since:],
            "frames": [[n, frame] for n, frame in self.frames if n > since],
            "result": None if record is None else jsonable(record.end),
            "outcome": self.outcome() if table.over else None,
            "thought": self.thought,
            "clock": None if self.clock is None else self.clock.view(time.monotonic()),
            "error": self.error,
            "saved": self.saved,
        }

    def status(self) -> str:
        """Whose move it is, in a player's words."""
        table = self.table
        if self.error:
            return "game stopped"
        if table.over:
            return "game over"
        if table.your_turn():
            return "your turn"
        actor = table.base.possible_agents.index(table.env.agent_selection)
        return f"waiting for {seat_name(actor)}"

    def outcome(self) -> dict[str, Any]:
        """The finished game in words: the result (who won and why) and every seat's score."""
        base, you = self.table.base, self.table.seat
        seats = self.table.record.end["info"]
        if "scores" in seats[0]:
            scores = [
                f"{seat_name(k, you)}: {plural_points(v)}" for k, v in enumerate(seats[0]["scores"])
            ]
        else:  # a team game: the team's figures
            shown = {k: v for k, v in seats[0].items() if k not in ("phase", "outcome")}
            scores = [f"the team: {', '.join(f'{k} {v}' for k, v in shown.items())}"]
        return {"words": self.drawing.outcome_words(base.rules, base.game), "scores": scores}

    def set_clock(self, body: Any) -> dict[str, Any]:
        """Start, pause or resume the clock, or change its speed (:meth:`Clock.set`)."""
        if self.clock is None:
            raise Refused(409, "this game has no clock: it is played turn by turn")
        self.clock.set(body)
        return self.state()

    def save(self) -> dict[str, Any]:
        """Save now: the record of a finished game, or the unfinished game's lines."""
        if self.saved:
            return {"saved": self.saved}
        where = self.table.save_unfinished(self.unfinished)
        if where is None:
            raise Refused(409, "nothing to save yet: no decision taken")
        return {"saved": str(where), "unfinished": True}


class Handler(BaseHTTPRequestHandler):
    """The page, its JSON endpoints (module docstring) and 404 for anything else; a request
    whose Host is not the server's is refused (403), and so is a POST from another origin or
    without the session's token."""

    session: Session  # set on the subclass made by :func:`make_server`
    hosts: frozenset[str] = frozenset()  # the Host header values this server answers
    timeout = TIMEOUT

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass  # quiet: the command line shows the games, not every request

    def send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status: int, data: Any) -> None:
        self.send(status, json.dumps(data).encode("utf-8"), "application/json")

    def checked_host(self) -> str:
        """The request's Host, one of the server's own names; :class:`Refused` otherwise."""
        host = (self.headers.get("Host") or "").strip().lower()
        if host not in self.hosts:
            allowed = ", ".join(sorted(self.hosts))
            raise Refused(403, f"Host {host[:80]!r} is not this server's; use one of {allowed}")
        return host

    def check_sender(self, host: str) -> None:
        """A POST comes from this server's page (its Origin, when sent, is this server) and
        carries the session's token; :class:`Refused` otherwise."""
        origin = self.headers.get("Origin")
        if origin is not None and origin.strip().lower() != f"http://{host}":
            raise Refused(403, f"cross-origin request refused: Origin {origin[:80]!r}")
        token = self.headers.get(TOKEN_HEADER, "").encode("utf-8", "replace")
        if not hmac.compare_digest(token, self.session.token.encode()):
            raise Refused(
                403, f"missing or wrong {TOKEN_HEADER} header: send the token of this server's page"
            )

    def body(self) -> Any:
        """The request's JSON body (``{}`` when empty), its size and type checked first."""
        if self.headers.get("Transfer-Encoding") is not None:
            raise Refused(400, "Transfer-Encoding is not accepted: send a Content-Length")
        lengths = self.headers.get_all("Content-Length") or ["0"]
        text = lengths[0].strip()
        if len(lengths) > 1 or not (text.isascii() and text.isdigit()):
            raise Refused(
                400, f"Content-Length must be one whole number of bytes, got {lengths[0][:40]!r}"
            )
        size = int(text) if len(text) < 12 else MAX_BODY + 1
        if size > MAX_BODY:
            raise Refused(413, f"a request body holds at most {MAX_BODY} bytes, got {size}")
        if size and self.headers.get_content_type() != "application/json":
            raise Refused(415, "send the request body as Content-Type: application/json")
        raw = self.rfile.read(size)
        if len(raw) < size:
            raise Refused(400, f"the body ended after {len(raw)} of its {size} bytes")
        try:
            return json.loads(raw.decode("utf-8")) if size else {}
        except UnicodeDecodeError:
            raise Refused(400, "the request body is not UTF-8") from None
        except (ValueError, RecursionError):
            raise Refused(400, "the request body is not JSON (or nests too deep)") from None

    def do_GET(self) -> None:  # noqa: N802 - the base's name
        url = urlparse(self.path)
        try:
            self.checked_host()
            if url.path == "/":
                page = PAGE.read_text(encoding="utf-8").replace(TOKEN_SLOT, self.session.token)
                self.send(200, page.encode("utf-8"), "text/html; charset=utf-8")
                return
            if url.path != "/state":
                raise Refused(404, f"no page {url.path[:80]}")
            query = parse_qs(url.query)
            try:
                since = int(query.get("since", ["0"])[0])
                game = int(query["game"][0]) if "game" in query else None
            except ValueError:
                raise Refused(400, "since and game must be integers") from None
            if since < 0:
                raise Refused(400, f"since must be 0 or more, got {since}")
            with self.session.lock:
                self.send_json(200, self.session.state(since, game))
        except Refused as refused:
            self.send_json(refused.status, {"error": str(refused)})

    def do_POST(self) -> None:  # noqa: N802 - the base's name
        path = urlparse(self.path).path
        try:
            self.check_sender(self.checked_host())
            body = self.body()
            with self.session.lock:
                self.send_json(200, self.answer(path, body))
        except Refused as refused:
            self.send_json(refused.status, {"error": str(refused)})
        except TimeoutError:
            self.close_connection = True
            self.send_json(408, {"error": f"the request body did not come within {self.timeout} s"})

    def answer(self, path: str, body: Any) -> dict[str, Any]:
        """The answer to the POST of ``body`` to ``path`` (under the session's lock)."""
        session = self.session
        if path == "/act":
            session.act(body)
            return session.state(body.get("since", 0), body.get("game", session.game))
        if path == "/new":
            seed = body.get("seed") if isinstance(body, dict) else None
            try:
                session.start(random_seed() if seed is None else seed)
            except ConfigError as err:
                raise Refused(400, str(err)) from None
            return session.state()
        if path == "/save":
            return session.save()
        if path == "/clock":
            return session.set_clock(body)
        raise Refused(404, f"no endpoint {path[:80]}")


def plural_points(points: int) -> str:
    """``1 point``, ``12 points``."""
    return f"{points} point{'s' * (points != 1)}"


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
            f"resume; cauldron viewer {path} shows it"
        )
    try:
        game = parse_games([*lines, json.dumps({"end": {}})], str(path))[-1]
        game.end = None
        agents = game.header["agents"]
        if agents.count(HUMAN) != 1:
            raise ConfigError(
                f"--resume {path}: its last game seats no one person (agents {agents}); "
                "--resume continues a person's game of cauldron serve"
            )
        for done, _ in replay(game):
            if done == len(game.steps):
                break
    except RecordError as err:
        raise ConfigError(f"--resume {err}") from None
    return game


def record_of(path: str) -> str | None:
    """The record file a ``.unfinished`` file's game belongs to (its name without
    ``.game<N>-<random>.unfinished`` or ``.unfinished``); ``None`` for any other file."""
    match = re.fullmatch(r"(.+?)(\.game\d+-[0-9a-f]+)?" + re.escape(UNFINISHED), path, re.DOTALL)
    return match[1] if match else None


def built_in(spec: str) -> bool:
    """Whether ``spec`` names a built-in agent (``random``, ``heuristic:<name>``): one a file
    may name, since it runs no code from elsewhere and loads no checkpoint."""
    try:
        return parse_spec(spec).kind in BUILT_IN
    except ConfigError:
        return False


def resumed_partners(path: str, header: dict[str, Any], partners: list[str] | None) -> list[str]:
    """The agents of a resumed game: ``partners`` from the command line, which must seat the
    file's agents; without them, the file's agents when all are built in (:func:`built_in`).
    A file never names code to run: :class:`ConfigError` for any other agent it names."""
    agents, seat = header["agents"], header["agents"].index(HUMAN)
    if partners is not None:
        given = seat_specs(header["players"], seat, partners)
        if given != agents:
            raise ConfigError(
                f"--resume {path}: --partners {partners} seats {given}, but the game was "
                f"played by {agents}; give its agents, in seat order, without {HUMAN!r}"
            )
    foreign = [spec for spec in agents if spec != HUMAN and not built_in(spec)]
    if foreign and partners is None:
        raise ConfigError(
            f"--resume {path}: the file names the agent(s) {foreign}, which run code or load a "
            "checkpoint; a file may name only random and heuristic:<name> agents. If you trust "
            "them, pass --partners on the command line with the game's agents, in seat order"
        )
    return [spec for spec in agents if spec != HUMAN]


def resume(path: str, save: str | None = None, partners: list[str] | None = None) -> Session:
    """A session that continues the unfinished game in ``path`` (:func:`unfinished_game`),
    claimed for this session (a second resume of it fails until the game is finished or
    left): the same env, options, seed and agents (:func:`resumed_partners`; the person sits
    in the ``human`` seat), the decisions so far taken again (:meth:`Table.follow`), the game
    then at the seat to act. Its record goes to ``save``, by default the record the
    ``.unfinished`` file belongs to (:func:`record_of`; for any other file the new game's
    default), after the games it holds, and the game leaves ``path``."""
    if not Path(path).is_file():
        raise ConfigError(f"--resume {path}: no such file")
    claim = UnfinishedFile.claim(Path(path))
    try:
        return _resume(path, claim, save if save is not None else record_of(path), partners)
    except BaseException:
        claim.release()
        raise


def _resume(
    path: str, claim: UnfinishedFile, save: str | None, partners: list[str] | None
) -> Session:
    game = unfinished_game(path)
    lines = Path(path).read_text(encoding="utf-8").split("\n")[: game.lines[0] - 1]
    claim.prefix = [line for line in lines if line.strip()]
    header = game.header
    seat = header["agents"].index(HUMAN)
    partners = resumed_partners(path, header, partners)
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
    return Session(env_id, players, seat, partners, seed, save, options, table, claim)


class Server(ThreadingHTTPServer):
    """The threaded server, saying in one line (not a traceback) why a request failed."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        err = sys.exc_info()[1]
        if not isinstance(err, OSError):  # a client gone or silent is no news
            failed = f"error: a request failed: {type(err).__name__}: {err}"
            print(printable(failed), file=sys.stderr)


def server_names(host: str) -> set[str]:
    """The names a browser may use for a server bound to ``host``: the loopback names, and
    ``host`` itself (for a wildcard address, this machine's names and addresses)."""
    names = {"localhost", "127.0.0.1", "[::1]"}
    if host not in ("", "0.0.0.0", "::"):
        return names | {f"[{host}]" if ":" in host else host}
    try:
        here = socket.gethostname()
        return names | {here, socket.getfqdn(), *socket.gethostbyname_ex(here)[2]}
    except OSError:
        return names | {socket.gethostname()}


def check_port(port: int) -> None:
    """Refuse a port outside 0..65535 (:class:`ConfigError`)."""
    if port not in PORTS:
        raise ConfigError(f"--port must be {PORTS[0]}..{PORTS[-1]} (0: a free one), got {port}")


def make_server(
    session: Session, host: str = LOCAL, port: int = 0, timeout: float = TIMEOUT
) -> Server:
    """The server of ``session`` bound to ``host``:``port`` (0: a free port), answering only
    requests for its own names (:func:`server_names`) and leaving a connection silent for
    ``timeout`` seconds; :class:`ConfigError` for a port outside 0..65535, a port in use or an
    address that cannot be bound."""
    check_port(port)
    handler = type("SessionHandler", (Handler,), {"session": session, "timeout": timeout})
    try:
        server = Server((host, port), handler)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"--port {port} on {host} is in use; give another port, or 0 for a free one"
            ) from None
        raise ConfigError(f"cannot listen on {host}:{port} ({err.strerror or err})") from None
    bound = server.server_address[1]
    names = {name.lower() for name in server_names(host)}
    handler.hosts = frozenset(
        {f"{name}:{bound}" for name in names} | (names if bound == 80 else set())
    )
    return server


def main(argv: list[str] | None = None) -> None:
    parser = table_arguments(
        argparse.ArgumentParser(prog="cauldron serve", description=__doc__.splitlines()[0]),
        required=False,
    )
    parser.add_argument("--resume", metavar="FILE", help="continue the unfinished game in FILE")
    parser.add_argument("--host", default=LOCAL, help="address to listen on (default: local only)")
    parser.add_argument(
        "--port", type=int, default=0, help="port, 0..65535 (default 0: a free one)"
    )
    args = parser.parse_args(argv)
    check_port(args.port)
    session = resumed(args) if args.resume is not None else new_session(args)
    server = make_server(session, args.host, args.port)
    host, port = server.server_address[:2]
    resumed_from = f"; {args.resume} resumed after decision {session.resumed_at}"
    print(
        printable(
            f"playing {session.env_id}, {session.players} players, you are seat {session.seat}, "
            f"seed {session.table.seed}" + (resumed_from if args.resume else "")
        )
    )
    if args.host != LOCAL:
        print(printable(f"note: listening on {host}, not {LOCAL}: other machines may reach it"))
    print(f"open http://{host}:{port}/ in a browser (Ctrl-C stops the server)", flush=True)
    try:
        with stopping():
            server.serve_forever()
    except (KeyboardInterrupt, Stopped):
        with session.lock:
            left = session.leave()
        if left:
            print(printable(f"unfinished game saved to {left}"))
        print("server stopped", flush=True)
    finally:
        session.close()
        server.server_close()


def resumed(args: argparse.Namespace) -> Session:
    """The session of ``--resume``: env, players, seat and seed come from its file alone."""
    given = [f"--{k}" for k in ("env", "players", "seat", "seed") if vars(args)[k] is not None]
    if given:
        raise ConfigError(
            f"--resume takes the env, players, seat and seed from {args.resume}; "
            f"drop {' '.join(given)}"
        )
    return resume(args.resume, args.save, args.partners)


def new_session(args: argparse.Namespace) -> Session:
    """The session of a new game from the command line's options."""
    if args.env is None or args.players is None:
        raise ConfigError("give --env and --players for a new game, or --resume FILE")
    seed = args.seed if args.seed is not None else random_seed()
    partners = args.partners or [default_agent(args.env)]
    seat = args.seat if args.seat is not None else 0
    return Session(args.env, args.players, seat, partners, seed, args.save)


if __name__ == "__main__":
    run_command(main)
