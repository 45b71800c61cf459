"""Game records: a compact, versioned JSON Lines format, its writer, reader and replay check.

A record file holds one or more games. Each game is a header line, one line per decision and an
end line, all plain JSON objects (``json.loads`` reads every line; nothing is pickled)::

    {"record": "cauldron-game", "version": 1, "env": "<env id>", "players": 3, "options": {},
     "seed": 7, "agents": ["heuristic:greedy", ...], "meta": {...}}
    {"s": 0, "a": 12, "n": "ask: blue?", "r": [0.0, 1.0, 0.0], "e": [["ask", 0, 0]], "h": "…"}
    ...
    {"end": {"steps": 93, "returns": [...], "terminated": true, "truncated": false,
             "info": [{...}, ...], "state_sha256": "…"}}

Steps are counted from 1 (step k is the k-th decision; the viewer's step k shows the table after
it). A step line holds the acting seat ``s``, the action index ``a`` and its name ``n``; ``r``
(every seat's reward of that step) only when one is not zero; ``e`` (the public events the step
added to the table's log, as the renderers show them) only when there are some; and ``h`` (the
first 16 hex digits of the sha256 of ``state()`` as float32 bytes) after every
``CHECKPOINT``-th step. A policy's decision may carry what it thought
(:class:`cauldron.agents.base.Thought`; evaluation's ``record_thoughts``): ``p``, up to
:data:`cauldron.agents.base.TOP` ``[action, probability]`` pairs, distinct legal actions by
probability (rounded to 4 decimals, highest first, the chosen action among them), and ``v``, the
critic's estimate of the seat's return (absent when the agent cannot compute it at play time). They
are not part of the game: replay ignores them, and a record without them is the same game.
``agents`` names who sat in each seat (agent specs, or ``human``), ``meta`` is free-form (the
evaluation lineup, why the game was kept). The env id is never assumed: it comes from the record.

A record replays through the reference env from the seed and the actions (:func:`replay`), and
checks itself as it goes: the acting seat, that each action is legal, its name, the rewards, the
events and the checkpoint hashes at every step, and the returns, infos and full state hash at the
end. Any difference, a record of another format version, an unknown env id, a truncated or edited
file raises :class:`RecordError` naming the file, the line and the step.

Reading checks each line before anything is made from it: UTF-8 JSON nested at most
:data:`MAX_DEPTH` levels; a header whose ``players`` is in the game's range, whose ``seed`` is in
0..2**31-1 and whose ``agents`` names each seat with a string; no more step lines than the
game's ``max_steps`` allows; and thoughts of the right shape (``p``: 1 to
:data:`cauldron.agents.base.TOP` pairs of an action in the game's range and a probability in 0..1,
actions distinct, probabilities not increasing and summing to at most 1; ``v``: a finite
number). A tiny file cannot make the reader (or the replay, the viewer) build
anything large.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import os
import reprlib
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from cauldron import envs
from cauldron.agents import AgentError
from cauldron.agents.base import TOP, Agent, Thought, seat_seed
from cauldron.envs.core.errors import CauldronError, ConfigError
from cauldron.envs.core.options import CommonOptions
from cauldron.eval.config import SEED_LIMIT

FORMAT = "cauldron-game"
VERSION = 1
CHECKPOINT = 128
MAX_DEPTH = 32  # JSON nesting of a record line (events nest 4 deep)
RESERVED = ("env_id", "num_players", "render_mode")  # envs.make's own arguments, not options
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = _SHORT.maxlong = 60
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0)) if c != ord("\n")}


class RecordError(ConfigError):
    """A record that cannot be read or does not replay; the message names file, line and step
    (a :class:`ConfigError`, so commands report it as one line)."""

    def __init__(self, source: str, line: int | None, step: int | None, problem: str) -> None:
        where = source + (f", line {line}" if line is not None else "")
        where += f", step {step}" if step is not None else ""
        super().__init__(printable(f"{where}: {problem}").replace("\n", "\\n"))
        self.source, self.line, self.step, self.problem = source, line, step, problem

    def __reduce__(self):
        return type(self), (self.source, self.line, self.step, self.problem)


@dataclass
class GameRecord:
    """One game: ``header`` (env, players, options, seed, agents, meta), ``steps`` (one dict per
    decision, see the module docstring), ``end`` (final figures); ``source`` and ``lines`` (the
    line of the header, of each step and of the end) say where it was read from."""

    header: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    source: str = "<memory>"
    lines: list[int] = field(default_factory=list)

    def to_lines(self) -> list[str]:
        """The game as JSON Lines (compact separators), without newlines."""
        objects = [self.header, *self.steps, {"end": self.end}]
        return [json.dumps(o, separators=(",", ":"), default=jsonable) for o in objects]

    def line_of(self, index: int | None) -> int | None:
        """File line of the decision at ``index`` (from 0; ``None``: the header;
        ``len(steps)``: the end line)."""
        if not self.lines:
            return None
        return self.lines[0 if index is None else min(index + 1, len(self.lines) - 1)]

    def error(self, index: int | None, problem: str) -> RecordError:
        """A :class:`RecordError` at the decision ``index`` (from 0; ``None``: the header;
        ``len(steps)``: the end line, reported as after the last step). Steps are counted
        from 1, as the viewer and ``cauldron.eval.replay`` count them."""
        step = None if index is None else min(index + 1, len(self.steps))
        return RecordError(self.source, self.line_of(index), step, problem)


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data: tuples and arrays become lists, numpy scalars Python ones."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    return str(value)


def state_hash(env) -> str:
    """sha256 (hex) of the env's full ``state()`` as float32 bytes."""
    state = np.ascontiguousarray(env.unwrapped.state(), dtype=np.float32)
    return hashlib.sha256(state.tobytes()).hexdigest()


class EventLog:
    """The events each step adds to a game state's ``log`` (a list of tuples the game keeps for
    its renderer and trims from the front); games without a log have no events."""

    def __init__(self, env) -> None:
        self.base = env.unwrapped
        log = getattr(self.base.game, "log", None) or []
        self.size, self.last = len(log), (log[-1] if log else None)

    def new(self) -> list:
        """Events appended since the last call (the game's own tuples; :func:`jsonable` makes
        them JSON data), found by the last seen entry's identity, so a trim from the front does
        not hide them."""
        log = getattr(self.base.game, "log", None) or []
        size, last = self.size, self.last
        if last is None:
            start = 0
        elif len(log) >= size and log[size - 1] is last:
            start = size  # not trimmed
        else:
            start = next(
                (i + 1 for i in range(min(size, len(log)) - 1, -1, -1) if log[i] is last), 0
            )
        if start == len(log):
            return []
        self.size, self.last = len(log), log[-1]
        return log[start:]


def thought_fields(thought: Thought) -> dict[str, Any]:
    """The step fields of ``thought`` (module docstring): ``p`` and, when known, ``v``."""
    fields = {"p": [[int(a), float(p)] for a, p in thought.top]}
    if thought.value is not None:
        fields["v"] = float(thought.value)
    return fields


def changed_options(options: Any) -> dict[str, Any]:
    """The fields of an env's options dataclass that differ from their defaults (as JSON)."""
    defaults = type(options)()
    return {
        f.name: jsonable(getattr(options, f.name))
        for f in fields(options)
        if getattr(options, f.name) != getattr(defaults, f.name)
    }


def _ended(env) -> bool:
    base = env.unwrapped
    return all(base.terminations[a] or base.truncations[a] for a in base.agents)


def _end(env, steps: int, returns: list[float]) -> dict[str, Any]:
    base = env.unwrapped
    return {
        "steps": steps,
        "returns": returns,
        "terminated": any(base.terminations.values()),
        "truncated": any(base.truncations.values()),
        "info": [jsonable(base.infos[a]) for a in base.possible_agents],
        "state_sha256": state_hash(env),
    }


class Recorder:
    """Wraps an AEC env (from :func:`cauldron.envs.make`) and records every game played through it.

    Play as usual (``reset``, ``agent_iter``, ``last``, ``step``); call :meth:`next_game` before
    ``reset`` to name the seats' agents and add ``meta``. The header keeps the env's options that
    differ from their defaults. After the game's last decision,
    :attr:`record` holds the finished :class:`GameRecord`.
    """

    def __init__(self, env) -> None:
        self.env = env
        self.base = env.unwrapped  # read directly: the wrappers' attribute lookups cost time
        self.env_id = self.base.metadata["name"]
        self.seat_agents: list[str] = []
        self.meta: dict[str, Any] = {}
        self.record: GameRecord | None = None
        self._names: dict[int, str] = {}
        self._seats = {a: i for i, a in enumerate(self.base.possible_agents)}
        self.last = env.last  # bound once: no lookup through the wrappers at every step

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def next_game(self, agents: Iterable[str] = (), meta: dict[str, Any] | None = None) -> None:
        """Name who sits in each seat and what to keep in ``meta`` for the next game."""
        self.seat_agents, self.meta = list(agents), dict(meta or {})

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is None:
            raise ValueError("a recorded game needs a seed: reset(seed=...)")
        problem = seed_problem(seed)
        if problem:
            raise ConfigError(f"a recorded game's seed {problem}")
        self.env.reset(seed=seed, options=options)
        base = self.base
        header = {
            "record": FORMAT,
            "version": VERSION,
            "env": self.env_id,
            "players": base.rules.num_players,
            "options": changed_options(base.options),
            "seed": int(seed),
            "agents": self.seat_agents or list(base.possible_agents),
            "meta": jsonable(self.meta),
        }
        self._game = GameRecord(header)
        self._returns = [0.0] * base.rules.num_players
        self._events = EventLog(self.env)
        self.record = None

    def step(self, action: Any, thought: Thought | None = None) -> None:
        """Play ``action``; ``thought``, what the acting agent thought, goes on its line."""
        base = self.base
        agent = base.agent_selection
        if base.terminations[agent] or base.truncations[agent]:
            self.env.step(action)
            return
        self.env.step(action)
        index = int(action)
        name = self._names.get(index)
        if name is None:
            name = self._names[index] = base.rules.action_name(index)
        line: dict[str, Any] = {"s": self._seats[agent], "a": index, "n": name}
        if thought is not None:
            line.update(thought_fields(thought))
        rewards = [base.rewards.get(a, 0.0) for a in self._seats]
        if any(rewards):
            line["r"] = rewards
            self._returns = [x + y for x, y in zip(self._returns, rewards, strict=True)]
        events = self._events.new()
        if events:
            line["e"] = events
        steps = self._game.steps
        steps.append(line)
        if len(steps) % CHECKPOINT == 0:
            line["h"] = state_hash(base)[:16]
        if base.terminations[agent] or base.truncations[agent]:  # the table ends together
            self._game.end = _end(base, len(steps), self._returns)
            self.record = self._game


def write_games(path: str | Path, games: Iterable[GameRecord], append: bool = True) -> Path:
    """Add ``games`` to the record file ``path``, after the games it holds (a file that does not
    exist yet is made). A file that holds anything but games of this format is refused
    (:class:`RecordError`) and left as it is; so is one that cannot take the new games (a full
    disk): the games are written in one piece and fsynced, and a failed write is cut off again,
    so the earlier games stay readable. A record file is never truncated: ``append`` is accepted
    from callers that still pass it and changes nothing."""
    path = Path(path)
    text = "".join(line + "\n" for game in games for line in _finished(game).to_lines())
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.stat().st_size:
        _check_holds_games(path)
    try:
        _append(path, text.encode("utf-8"))
    except OSError as err:
        raise RecordError(
            str(path), None, None, f"cannot save the games ({err.strerror}); the file is unchanged"
        ) from None
    return path


def _check_holds_games(path: Path) -> None:
    """:class:`RecordError` unless the file ``path`` is a record file of this format."""
    try:
        read_games(path)
    except RecordError as err:
        problem = (
            f"{err.problem}; games are added only to a file of {FORMAT} version {VERSION} "
            "records (nothing written)"
        )
        raise RecordError(err.source, err.line, err.step, problem) from None


def _finished(game: GameRecord) -> GameRecord:
    if game.end is None:
        raise ValueError("cannot write an unfinished game (it has no end line)")
    return game


def _append(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` (after a newline if its last line lacks one) and fsync; on
    any failure cut the file back to its former length (a file made here is removed)."""
    existed = path.exists()
    with path.open("a+b", buffering=0) as out:
        size = out.seek(0, os.SEEK_END)
        try:
            if size:
                out.seek(size - 1)
                if out.read(1) != b"\n":
                    data = b"\n" + data
            view = memoryview(data)
            while view:
                view = view[out.write(view) :]
            os.fsync(out.fileno())
        except OSError:
            out.truncate(size)
            os.fsync(out.fileno())
            if not existed:
                path.unlink()
            raise


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: every control character but the newline (escape
    sequences, carriage returns, C1 controls) written as its ``\\xNN`` escape."""
    return text.translate(_CONTROLS)


def shown(value: Any) -> str:
    """``value``'s repr, cut short (a record's text may be huge)."""
    return _SHORT.repr(value)


def seed_problem(seed: Any) -> str | None:
    """What is wrong with ``seed`` as a recorded game's (``None``: nothing): seeds are ints in
    0..2**31-1, as in evaluation configs (agents seed their generators from the game's)."""
    if isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < SEED_LIMIT:
        return None
    return f"must be an int in 0..{SEED_LIMIT - 1}, got {shown(seed)}"


def check_output(path: str | Path, what: str) -> Path:
    """``path`` as a file to write, checked before any work that would be lost if it cannot
    be: not a folder (nor written as one, with a trailing ``/``), and inside a folder that exists
    or can be made (its nearest existing ancestor is a folder we may write in). Raises
    :class:`ConfigError` naming ``what`` (the option that gave it) and what is allowed."""
    allowed = "give a file path whose folder exists or can be created"
    text = os.fspath(path)
    out = Path(text)
    try:
        if text.endswith(("/", os.sep)) or out.is_dir():
            raise ConfigError(f"{what} {text!r} is a folder; {allowed}, e.g. {str(out / 'x')!r}")
        if out.exists() and not os.access(out, os.W_OK):
            raise ConfigError(f"{what} {text!r} exists and may not be written; {allowed}")
        folder = out.absolute().parent
        while not folder.exists():
            folder = folder.parent
        if not folder.is_dir():
            raise ConfigError(
                f"{what} {text!r}: {str(folder)!r} is a file, not a folder; {allowed}"
            )
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ConfigError(f"{what} {text!r}: the folder {str(folder)!r} may not be written in")
    except OSError as err:
        raise ConfigError(f"{what} {text!r} cannot be used ({err.strerror}); {allowed}") from None
    return out


def _header_problem(header: Any) -> str | None:
    """Why ``header`` is not a game header this version reads, checking every size (players,
    seed, agents) against the game's range before anything is made from it."""
    if not isinstance(header, dict) or header.get("record") != FORMAT:
        return f'expected a game header line (an object with "record": "{FORMAT}")'
    if header.get("version") != VERSION:
        return (
            f"record format version {shown(header.get('version'))} is not supported; this "
            f"Cauldron reads version {VERSION} only"
        )
    if header.get("env") not in envs.ids():
        return (
            f"env id {shown(header.get('env'))} is not registered here (registered: "
            f"{envs.ids()}); the record was made with another version of the game"
        )
    kinds = {"players": int, "seed": int, "options": dict, "agents": list, "meta": dict}
    for key, kind in kinds.items():
        if not isinstance(header.get(key), kind) or isinstance(header.get(key), bool):
            return f"header field {key!r} must be a {kind.__name__}, got {shown(header.get(key))}"
    low, high = envs.spec(header["env"]).players
    players, agents = header["players"], header["agents"]
    if not low <= players <= high:
        return f"header field 'players' must be {low}..{high} for this game, got {shown(players)}"
    if seed_problem(header["seed"]):
        return f"header field 'seed' {seed_problem(header['seed'])}"
    if len(agents) != players or not all(isinstance(a, str) for a in agents):
        return (
            f"header field 'agents' must name the agent of each of the {players} seats "
            f"(a list of {players} strings), got {shown(agents)}"
        )
    reserved = sorted(set(RESERVED) & set(header["options"]))
    if reserved:
        return f"header field 'options' may not set {reserved} (not env options)"
    try:
        json.dumps(header, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "the header holds text that is not valid Unicode (an unpaired surrogate escape)"
    return None


def _step_limit(header: dict[str, Any]) -> int:
    """The most decisions a game of ``header`` can have: its ``max_steps`` (a simultaneous
    round that reaches it still finishes, hence the players added)."""
    max_steps = header["options"].get("max_steps", CommonOptions.max_steps)
    if not isinstance(max_steps, int) or isinstance(max_steps, bool):
        max_steps = CommonOptions.max_steps  # make_env refuses it with the options' own message
    return max(1, max_steps) + header["players"]


def _step_problem(line: Any, header: dict[str, Any]) -> str | None:
    if not isinstance(line, dict):
        return "expected a step or end line (a JSON object)"
    for key, kind in (("s", int), ("a", int), ("n", str)):
        if not isinstance(line.get(key), kind) or isinstance(line.get(key), bool):
            return f"step field {key!r} must be a {kind.__name__}, got {shown(line.get(key))}"
    unknown = sorted(set(line) - {"s", "a", "n", "r", "e", "h", "p", "v"})
    if unknown:
        return f"unknown step field(s) {shown(unknown)}"
    return _thought_problem(line, header) if "p" in line or "v" in line else None


def _number(value: Any) -> bool:
    """Whether ``value`` is a finite JSON number (not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@functools.lru_cache(maxsize=64)
def _action_count(env_id: str, players: int) -> int:
    return int(envs.make(env_id, num_players=players).action_space("player_0").n)


def _thought_problem(line: dict[str, Any], header: dict[str, Any]) -> str | None:
    """What is wrong with a step's ``p`` and ``v`` (module docstring), if anything."""
    if "v" in line and not _number(line["v"]):
        return f"step field 'v' must be a finite number, got {shown(line['v'])}"
    if "p" not in line:
        return None
    pairs, size = line["p"], _action_count(header["env"], header["players"])
    form = (
        f"step field 'p' must list 1 to {TOP} [action, probability] pairs (an action in "
        f"0..{size - 1}, a probability in 0..1)"
    )
    if not isinstance(pairs, list) or not 1 <= len(pairs) <= TOP:
        return f"{form}, got {shown(pairs)}"
    for pair in pairs:
        if not (
            isinstance(pair, list)
            and len(pair) == 2
            and isinstance(pair[0], int)
            and not isinstance(pair[0], bool)
            and 0 <= pair[0] < size
            and _number(pair[1])
            and 0 <= pair[1] <= 1
        ):
            return f"{form}, got {shown(pair)}"
    actions, probs = [a for a, _ in pairs], [p for _, p in pairs]
    if len(set(actions)) != len(actions):
        return f"step field 'p' names an action twice: {shown(actions)}"
    if any(x < y for x, y in itertools.pairwise(probs)):
        return f"step field 'p' must list probabilities highest first, got {shown(probs)}"
    if sum(probs) > 1 + TOP * 5e-5:  # each rounded to 4 decimals
        return f"step field 'p': probabilities sum to {sum(probs):.4f}, more than 1"
    return None


def _too_deep(text: str, value: Any) -> bool:
    """Whether JSON data ``value`` (read from ``text``) nests deeper than :data:`MAX_DEPTH`,
    walked level by level without recursion (and not at all when ``text`` holds too few
    brackets to nest that deep)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    level, depth = [value], 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return True
        level = [
            v
            for item in level
            for v in (item.values() if isinstance(item, dict) else item)
            if isinstance(v, (dict, list))
        ]
    return False


def _load(text: str, source: str, number: int, step: int | None) -> Any:
    """The JSON object of one record line; :class:`RecordError` when it is not JSON, holds a
    number too long to read or nests deeper than :data:`MAX_DEPTH`."""
    deep = f"nested deeper than {MAX_DEPTH} levels, the most a record line may be"
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(source, number, step, f"not valid JSON ({err.msg})") from None
    except RecursionError:
        raise RecordError(source, number, step, f"not valid JSON ({deep})") from None
    except ValueError:  # the only other error: an integer longer than Python reads
        digits = sys.get_int_max_str_digits()
        problem = f"not valid JSON (an integer of more than {digits} digits)"
        raise RecordError(source, number, step, problem) from None
    if isinstance(obj, (dict, list)) and _too_deep(text, obj):
        raise RecordError(source, number, step, deep)
    return obj


def parse_games(lines: Iterable[str], source: str = "<memory>") -> list[GameRecord]:
    """Every game in JSON Lines ``lines``; :class:`RecordError` for anything malformed, at the
    first line that is (a game's header is checked before any of its steps is kept)."""
    games: list[GameRecord] = []
    game: GameRecord | None = None
    number = limit = 0
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        obj = _load(text, source, number, len(game.steps) + 1 if game else None)
        if game is None:
            problem = _header_problem(obj)
            if problem:
                raise RecordError(source, number, None, problem)
            game = GameRecord(obj, source=source, lines=[number])
            limit = _step_limit(obj)
        elif isinstance(obj, dict) and "end" in obj:
            if not isinstance(obj["end"], dict):
                raise RecordError(source, number, len(game.steps), "the end line must hold a dict")
            game.end, game.lines = obj["end"], [*game.lines, number]
            games.append(game)
            game = None
        else:
            problem = _step_problem(obj, game.header)
            if not problem and len(game.steps) == limit:
                problem = (
                    f"more than {limit} steps, more than the game's max_steps allows: the record "
                    "goes on after the game must have ended"
                )
            if problem:
                raise RecordError(source, number, len(game.steps) + 1, problem)
            game.steps.append(obj)
            game.lines.append(number)
    if game is not None:
        raise RecordError(
            source,
            number,
            len(game.steps),
            f"the file ends inside game {len(games) + 1} (no end line): the record is truncated",
        )
    if not games:
        raise RecordError(source, None, None, "no game in the file")
    return games


def _text_lines(path: Path) -> Iterator[str]:
    """The lines of the file ``path`` as text; :class:`RecordError` at the first line that is not
    UTF-8."""
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise RecordError(
                    str(path),
                    number,
                    None,
                    f"not UTF-8 text (byte 0x{raw[err.start]:02x} at column {err.start + 1}); "
                    "records are UTF-8 JSON Lines",
                ) from None


def read_games(path: str | Path) -> list[GameRecord]:
    """Every game of the record file ``path``; :class:`RecordError` (naming the file) for a file
    that is missing, unreadable or not a record."""
    path = Path(path)
    try:
        if not path.is_file():
            raise RecordError(str(path), None, None, "no such record file")
        return parse_games(_text_lines(path), str(path))
    except OSError as err:
        raise RecordError(str(path), None, None, f"cannot read it ({err.strerror})") from None


def make_env(game: GameRecord, render: bool = False):
    """The reference env the record was played on (render_mode ``ansi`` when ``render``)."""
    header = game.header
    try:
        return envs.make(
            header["env"],
            num_players=header["players"],
            render_mode="ansi" if render else None,
            **header["options"],
        )
    except CauldronError as err:
        raise game.error(None, f"cannot make the env: {err}") from None


def replay(
    game: GameRecord,
    render: bool = False,
    before: Callable[[Any, dict[str, Any]], None] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Replay ``game`` through the reference env, checking every step (module docstring).

    Yields ``(steps_done, env)`` after the reset (0) and after every step; the final checks run
    when the iteration ends. ``before(env, line)``, if given, sees the env before each step, once
    the step's line (seat, action, name) is checked. Raises :class:`RecordError` at the first
    difference."""
    env = make_env(game, render)
    base = env.unwrapped
    env.reset(seed=game.header["seed"])
    events = EventLog(env)
    penalty = base.options.illegal_action == "penalty"
    returns = [0.0] * base.rules.num_players
    yield 0, env
    for k, line in enumerate(game.steps):
        if _ended(env):
            raise game.error(k, f"the game is already over after {k} steps; the record goes on")
        seat = base.possible_agents.index(env.agent_selection)
        if line["s"] != seat:
            raise game.error(
                k, f"the record says seat {shown(line['s'])} acts, the game says {seat}"
            )
        action, size = line["a"], base.action_space(env.agent_selection).n
        if not 0 <= action < size:
            raise game.error(k, f"action {shown(action)} is outside the game's 0..{size - 1}")
        legal = base.legal_actions()
        if action not in legal and not penalty:
            names = ", ".join(f"{a} ({base.rules.action_name(a)})" for a in legal[:12])
            raise game.error(
                k,
                f"action {action} is illegal here (phase {base.rules.phase_name(base.game)!r}); "
                f"legal: {names}" + (" ..." if len(legal) > 12 else ""),
            )
        name = base.rules.action_name(action)
        if line["n"] != name:
            raise game.error(
                k, f"action {action} is named {name!r}, the record says {shown(line['n'])}"
            )
        if before is not None:
            before(env, line)
        env.step(action)
        rewards = [env.rewards.get(a, 0.0) for a in base.possible_agents]
        expected = line.get("r", [0.0] * len(rewards))
        if rewards != expected:
            raise game.error(k, f"rewards {rewards} differ from the record's {shown(expected)}")
        returns = [x + y for x, y in zip(returns, rewards, strict=True)]
        added, recorded = jsonable(events.new()), jsonable(line.get("e", []))
        if added != recorded:
            raise game.error(k, f"events {added} differ from the record's {shown(recorded)}")
        if "h" in line and state_hash(env)[:16] != line["h"]:
            raise game.error(k, "the state differs from the record's (checkpoint hash)")
        yield k + 1, env
    _check_end(game, env, returns)


def _check_end(game: GameRecord, env, returns: list[float]) -> None:
    steps = len(game.steps)
    if not _ended(env):
        raise game.error(steps, f"the record ends after {steps} steps but the game is not over")
    actual = _end(env, steps, returns)
    for key in ("steps", "returns", "terminated", "truncated", "info", "state_sha256"):
        if game.end.get(key) != actual[key]:
            raise game.error(
                steps,
                f"final {key} {actual[key]!r} differs from the record's {shown(game.end.get(key))}",
            )


def check(game: GameRecord) -> int:
    """Replay ``game`` and check it (see :func:`replay`); the number of steps."""
    for _ in replay(game):
        pass
    return len(game.steps)


def bytes_per_step(games: list[GameRecord]) -> float:
    """Average record size (bytes, header and end lines included) per decision."""
    size = sum(len(line) + 1 for g in games for line in g.to_lines())
    return size / max(1, sum(len(g.steps) for g in games))


class ActionLog:
    """Wraps an AEC env and keeps only the actions of the current game (``actions``): the cheap
    way to record every game of an evaluation, completed into records by :func:`rebuild` for
    the games kept."""

    def __init__(self, env) -> None:
        self.env = env
        self.last = env.last  # bound once: no lookup through the wrappers at every step
        self.actions: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.actions = []
        self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        if action is not None:
            self.actions.append(int(action))
        self.env.step(action)


def rebuild(
    env_id: str,
    players: int,
    options: dict[str, Any],
    seed: int,
    actions: list[int],
    agents: list[str],
    meta: dict[str, Any] | None = None,
    thinkers: Mapping[int, Agent] | None = None,
) -> GameRecord:
    """The full record of a game known by its seed and actions (from an :class:`ActionLog`),
    played again through a :class:`Recorder`; ``ValueError`` if the actions do not finish it.

    ``thinkers`` (seat index -> agent with ``explain()``) are the agents that played those seats,
    reset as :func:`cauldron.eval.play.play_game` reset them and asked for every decision of their
    seat again: each must choose the recorded action (an :class:`cauldron.agents.AgentError`
    otherwise: an agent that does not repeat its games from the seed), and what it thought goes on
    the line (:func:`thought_fields`). Only the kept games pay for their thoughts."""
    thinkers = thinkers or {}
    env = Recorder(envs.make(env_id, num_players=players, **options))
    env.next_game(agents, meta)
    env.reset(seed=seed)
    for seat, agent in thinkers.items():
        agent.reset(seat_seed(seed, seat))
    seats = {a: i for i, a in enumerate(env.possible_agents)}
    for k, action in enumerate(actions):
        seat, thought = seats.get(env.agent_selection), None
        if seat in thinkers:
            obs = env.observe(env.agent_selection)
            chosen = int(thinkers[seat].act(obs["observation"], obs["action_mask"]))
            if chosen != action:
                raise AgentError(
                    f"{env_id} seed {seed}, step {k + 1}: {agents[seat]!r} (seat {seat}) chose "
                    f"{chosen} when asked again, {action} in the game; its thoughts cannot be "
                    "recorded (an agent that explains itself must repeat its games from the seed)"
                )
            thought = thinkers[seat].explain()
        env.step(action, thought)
    if env.record is None or len(env.record.steps) != len(actions):
        raise ValueError(f"{env_id} seed {seed}: the {len(actions)} actions do not end the game")
    return env.record


@dataclass(frozen=True)
class Kept:
    """A game an evaluation may save: its ``score`` (the lineup's measure: the team's figure, or
    the first agent's score margin; :func:`select` knows which way is better), seed, who sat
    where, its actions and its returns (to check the rebuilt record)."""

    score: float
    seed: int
    agents: tuple[str, ...]
    actions: tuple[int, ...]
    returns: tuple[float, ...]


def select(
    candidates: Iterable[Kept], n: int, lower_is_better: bool | None = None
) -> list[tuple[Kept, str]]:
    """Up to ``n`` games with why each was kept: the best and the worst by score (ties: the
    lowest seed), then the lowest seeds. The best is the highest score, or the lowest where
    ``lower_is_better`` (the Horseman's scares, Voodoo Mania's points). Without a direction
    (``None``, as when an evaluation's chunks are cut down before the whole is seen), both ends
    are kept, as ``highest`` and ``lowest``, even for ``n = 1``. The same whatever order or
    chunks the games came in, so selecting the selections of parts gives the selection of the
    whole, whichever way the measure points."""
    pool = sorted(candidates, key=lambda k: k.seed)
    if n < 1 or not pool:
        return []
    high = max(pool, key=lambda k: (k.score, -k.seed))
    low = min(pool, key=lambda k: (k.score, k.seed))
    if lower_is_better is None:
        ends, n = [(high, "highest"), (low, "lowest")], max(n, 2)
    else:
        best, worst = (low, high) if lower_is_better else (high, low)
        ends = [(best, "best"), (worst, "worst")][:n]
    chosen = [ends[0], *(end for end in ends[1:] if end[0] is not ends[0][0])]
    taken = {k.seed for k, _ in chosen}
    chosen += [(k, "first seeds") for k in pool if k.seed not in taken][: n - len(chosen)]
    return chosen
