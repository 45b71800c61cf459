"""A person at the table with agents: ``cauldron play``.

cauldron play --env ID --players N --seat K [--partners SPEC...] [--seed S] [--save FILE]

The person plays seat K; the other seats play ``--partners`` (one agent spec for every other
seat, or one per other seat in seat order; default: the game's first heuristic). At each of the
person's decisions the command shows what the others did since, as seat K may see it (another
seat's secret choice, a card passed or chosen face down, reads as its public text: see
:mod:`cauldron.envs.core.views`; in simultaneous games only once every seat has chosen), seat K's
private view (``render_for``, also at the end) and the legal actions by number and name. Type a
number or a name; anything else is asked again. ``q`` or the end of the input abandons the game
unsaved; Ctrl-C, SIGTERM or SIGHUP saves the game so far (header and step lines, no end line)
to a file of its own beside the record, ``<save>.game1-<random>.unfinished``, that
``cauldron serve --resume`` continues, then exits. A finished game is saved as a record
(default ``runs/play/<env>_seed<S>.jsonl``; the path is checked before the game starts) that
``cauldron replay`` and ``cauldron viewer`` read.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import secrets
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.agents.base import seat_seed
from cauldron.envs.core.errors import ConfigError, IllegalActionError
from cauldron.envs.core.views import seen_action
from cauldron.eval.config import SEED_LIMIT
from cauldron.eval.demo import default_agent
from cauldron.eval.records import GameRecord, Recorder, check_output, seed_problem, write_games
from cauldron.eval.replay import number

HUMAN = "human"
UNFINISHED = ".unfinished"  # the suffix of a game saved before its end
STOPPING = (signal.SIGTERM, signal.SIGHUP)


class Stopped(BaseException):
    """SIGTERM or SIGHUP: the command saves the game in progress, then exits. A
    ``BaseException``, as ``KeyboardInterrupt`` is, so no ``except Exception`` on its way
    (socketserver's per-request one among them) can swallow the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _stop(signum: int, frame: Any) -> None:
    raise Stopped(signum)


@contextmanager
def stopping() -> Iterator[None]:
    """Within, SIGTERM and SIGHUP raise :class:`Stopped` in the main thread (as Ctrl-C raises
    ``KeyboardInterrupt``), so the command can save its game and exit cleanly."""
    before = {signum: signal.signal(signum, _stop) for signum in STOPPING}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


@contextmanager
def held() -> Iterator[None]:
    """Within, Ctrl-C, SIGTERM and SIGHUP wait: a decision is taken whole or not at all."""
    signals = {signal.SIGINT, *STOPPING}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)


def write_whole(path: Path, lines: list[str]) -> None:
    """Replace ``path`` by ``lines`` at once (a file beside it renamed over it): a reader, or a
    stop half-way, sees the old file or the new one, never a part."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        temporary.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


class UnfinishedFile:
    """Where one game left unfinished is kept: its header and step lines (no end line), after
    ``prefix`` (the finished games of the file it was resumed from), each save replacing the
    file whole (:func:`write_whole`).

    A new game's file is ``<record>.game<N>-<random>.unfinished``, made exclusively at its first
    save, so two games never share one. A resumed game keeps the file it was resumed from,
    claimed (:meth:`claim`) until the game is finished or left: a second resume of it fails."""

    def __init__(self, record: Path, game: int = 1) -> None:
        self.record, self.game = record, game
        self.path: Path | None = None
        self.prefix: list[str] = []
        self._lock: int | None = None

    @classmethod
    def claim(cls, path: Path, what: str = "--resume") -> UnfinishedFile:
        """``path``, claimed for one resume (an exclusive lock on ``<path>.lock``, freed by the
        system if the process dies); :class:`ConfigError` when another resume holds it."""
        lock = path.with_name(path.name + ".lock")
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as err:
            raise ConfigError(f"{what} {path}: cannot claim it ({err.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_ino != os.stat(lock).st_ino:
                raise FileNotFoundError(lock)  # released and removed as we opened it
        except OSError:
            os.close(fd)
            raise ConfigError(
                f"{what} {path}: the game is being resumed already (by another server or "
                "command); a game is resumed once: stop that one, and its game is saved back "
                "here"
            ) from None
        unfinished = cls(path)
        unfinished.path, unfinished._lock = path, fd
        return unfinished

    def write(self, lines: list[str]) -> Path:
        """Save the game so far (``lines``: header and steps) after the prefix."""
        if self.path is None:
            self.path = self._reserve()
        write_whole(self.path, self.prefix + lines)
        return self.path

    def finish(self, lines: Sequence[str] = ()) -> Path | None:
        """The game is over, its record saved: the file keeps the prefix and ``lines`` (the
        record, when it goes back into this file), or is removed when that is nothing; the
        claim is freed."""
        kept = self.prefix + list(lines)
        if self.path is not None:
            if kept:
                write_whole(self.path, kept)
            else:
                self.path.unlink(missing_ok=True)
        self.release()
        return self.path

    def release(self) -> None:
        """Free the claim (the game stays in the file as last saved)."""
        if self._lock is not None:
            self.path.with_name(self.path.name + ".lock").unlink(missing_ok=True)
            os.close(self._lock)
            self._lock = None

    def _reserve(self) -> Path:
        self.record.parent.mkdir(parents=True, exist_ok=True)
        while True:
            path = self.record.with_name(
                f"{self.record.name}.game{self.game}-{secrets.token_hex(4)}{UNFINISHED}"
            )
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            except FileExistsError:
                continue
            return path


def seat_specs(players: int, seat: int, partners: list[str]) -> list[str]:
    """Who sits where: ``human`` at ``seat``, the partner specs elsewhere (one spec for every
    other seat, or one per other seat in seat order)."""
    if not 0 <= seat < players:
        raise ConfigError(f"--seat must be 0..{players - 1} for {players} players, got {seat}")
    if len(partners) == 1:
        partners = partners * (players - 1)
    if len(partners) != players - 1:
        raise ConfigError(
            f"--partners takes one spec for every other seat or {players - 1} specs "
            f"(one per other seat), got {len(partners)}"
        )
    return partners[:seat] + [HUMAN] + partners[seat:]


def check_game(env_id: str, players: int, seed: int) -> None:
    """Refuse, before anything is made, a player count outside the game's range and a seed
    outside 0..2**31-1 (the seeds a record holds)."""
    low, high = envs.spec(env_id).players
    if not low <= players <= high:
        raise ConfigError(f"--players must be {low}..{high} for {env_id}, got {players}")
    problem = seed_problem(seed)
    if problem:
        raise ConfigError(f"--seed {problem}")


def legal_list(rules, legal: list[int]) -> str:
    """The legal actions, one per line, as ``number: name``."""
    return "\n".join(f"  {a:>4}: {rules.action_name(a)}" for a in legal)


def choose(
    rules, legal: list[int], ask: Callable[[str], str], say: Callable[[str], None]
) -> int | None:
    """Ask until the answer is a legal action's number or name; ``None`` to quit."""
    names = {rules.action_name(a).lower(): a for a in legal}
    while True:
        try:
            answer = ask("your action (number or name; ? lists them; q quits)> ").strip()
        except EOFError:
            return None
        if answer.lower() in ("q", "quit"):
            return None
        if answer == "?":
            say(legal_list(rules, legal))
            continue
        if answer.lower() in names:
            return names[answer.lower()]
        if number(answer) in legal:
            return number(answer)
        say(
            f"{answer!r} is not a legal action now; type one of the numbers "
            f"{legal[0]}..{legal[-1]} listed or its name (? lists them again)"
        )


class Table:
    """One game with a person at ``seat`` and agents in the other seats, played a decision at a
    time (the terminal's :func:`play_human` and the browser's ``cauldron.eval.serve`` share it), on
    the env made with ``options`` (none: the game's defaults).

    ``log`` holds what seat ``seat`` has seen of every decision so far (its own and the
    others', see :func:`cauldron.envs.core.views.seen_action`), in order; a decision of a
    simultaneous step joins it only once the step has resolved. ``turn`` counts the decisions
    taken."""

    def __init__(
        self,
        env_id: str,
        players: int,
        seat: int,
        partners: list[str],
        seed: int,
        render_mode: str = "ansi",
        options: dict[str, Any] | None = None,
    ) -> None:
        check_game(env_id, players, seed)
        self.env_id, self.seed, self.seat = env_id, seed, seat
        self.seats = seat_specs(players, seat, partners)
        env = envs.make(env_id, num_players=players, render_mode=render_mode, **(options or {}))
        self.env = Recorder(env)
        self.base = self.env.unwrapped
        self.agents = {
            name: make_agent(spec, env_id, seed=seed + i)
            for i, (name, spec) in enumerate(
                zip(self.base.possible_agents, self.seats, strict=True)
            )
            if spec != HUMAN
        }
        self.env.next_game(self.seats, {"human_seat": seat})
        self.env.reset(seed=seed)
        for i, name in enumerate(self.base.possible_agents):
            if name in self.agents:
                self.agents[name].reset(seat_seed(seed, i))
        self.you = self.base.possible_agents[seat]
        self.log: list[str] = []
        self.turn = 0
        self._hidden: list[str] = []

    @property
    def over(self) -> bool:
        """Whether the game has ended (every seat terminated or truncated)."""
        return not self.env.agents

    @property
    def record(self) -> GameRecord | None:
        """The finished game's record (``None`` before the end)."""
        return self.env.record

    def save_unfinished(self, unfinished: UnfinishedFile) -> Path | None:
        """Save the game so far to ``unfinished`` and say where; ``None``, saving nothing, once
        the game is over or before its first decision."""
        if self.over or not self.turn:
            return None
        return unfinished.write(self.env._game.to_lines()[:-1])  # the Recorder's game so far

    def your_turn(self) -> bool:
        """Whether the person is to decide now."""
        you = self.you
        if self.over or self.env.agent_selection != you:
            return False
        return not (self.base.terminations[you] or self.base.truncations[you])

    def legal(self) -> list[int]:
        """The actions of the seat to act."""
        return self.base.legal_actions()

    def step_agent(self) -> bool:
        """Take one step that is not the person's (an agent's decision, or the no-op step of a
        seat whose game ended); ``False``, doing nothing, when the person is to decide or the
        game is over. An agent's error propagates, the game unchanged by it."""
        if self.over or self.your_turn():
            return False
        obs, _, term, trunc, _ = self.env.last()
        if term or trunc:
            self.env.step(None)
            return True
        name = self.env.agent_selection
        self._take(self.agents[name].act(obs["observation"], obs["action_mask"]))
        return True

    def play(self, action: int) -> None:
        """The person's decision ``action``; :class:`IllegalActionError` (the game unchanged)
        when it is not the person's turn or not a legal action now."""
        legal = self.legal()
        if not self.your_turn() or action not in legal:
            phase = self.base.rules.phase_name(self.base.game)
            names = [self.base.rules.action_name(a) for a in legal] if self.your_turn() else []
            raise IllegalActionError(action, self.you, phase, names)
        self._take(action)

    def follow(self, action: int) -> None:
        """Take ``action``, a decision already made (resuming a saved game): first the no-op
        steps of seats whose game ended; an agent's seat is shown its observation and takes
        ``action`` whatever it answers (so an agent's memory within the game comes back, and a
        seeded agent goes on as it would have); the person's seat as :meth:`play`."""
        while not self.over and not self.your_turn():
            obs, _, term, trunc, _ = self.env.last()
            if not (term or trunc):
                self.agents[self.env.agent_selection].act(obs["observation"], obs["action_mask"])
                self._take(action)
                return
            self.env.step(None)
        self.play(action)

    def _take(self, action: int) -> None:
        self._hidden.append(seen_action(self.base, int(action), self.seat))
        self.env.step(action)
        self.turn += 1
        if not self.base.rules.mid_step(self.base.game):
            self.log, self._hidden = self.log + self._hidden, []


def play_human(
    env_id: str,
    players: int,
    seat: int,
    partners: list[str],
    seed: int,
    ask: Callable[[str], str] | None = None,
    say: Callable[[str], None] | None = None,
) -> GameRecord | None:
    """Play one game with a person at ``seat`` (input from ``ask``, output to ``say``; by default
    the terminal); the finished game's record, or ``None`` when the person quit."""
    return play_table(Table(env_id, players, seat, partners, seed), ask, say)


def play_table(
    table: Table,
    ask: Callable[[str], str] | None = None,
    say: Callable[[str], None] | None = None,
) -> GameRecord | None:
    """Play ``table``'s game to its end in the terminal (as :func:`play_human`); every decision
    is taken whole (:func:`held`), so a stop leaves the game at a decision's boundary."""
    ask, say = ask or input, say or print
    base, you, shown = table.base, table.you, 0
    who = f"you are {you}; {', '.join(table.seats)}"
    say(f"=== {table.env_id}, {len(table.seats)} players, seed {table.seed}: {who} ===")
    while True:
        with held():
            while table.step_agent():
                pass
        if table.over:
            break
        if len(table.log) > shown:
            say("\n".join(table.log[shown:]))
            shown = len(table.log)
        say(f"\n{base.render_for(you)}\n\nyour legal actions:")
        legal = table.legal()
        say(legal_list(base.rules, legal))
        action = choose(base.rules, legal, ask, say)
        if action is None:
            say("game abandoned; nothing saved")
            return None
        with held():
            table.play(action)
    record = table.record
    say("\n".join(table.log[shown:]) + f"\n\n=== game over ===\n{base.render_for(you)}\n")
    say(f"result: {record.end['info'][table.seat]}; returns {record.end['returns']}")
    return record


def random_seed() -> int:
    """A fresh seed in 0..2**31-1, for a game whose seed was not given."""
    return int(np.random.SeedSequence().entropy % SEED_LIMIT)


def table_arguments(
    parser: argparse.ArgumentParser, required: bool = True
) -> argparse.ArgumentParser:
    """``parser`` with the options that seat a person at a table (``cauldron.eval.play`` and
    ``cauldron.eval.serve``): ``--env``, ``--players``, ``--seat``, ``--partners``, ``--seed`` and
    ``--save``. Unless ``required``, ``--env`` and ``--players`` may be left out and ``--seat``
    defaults to ``None`` (the command checks them: ``cauldron.eval.serve --resume`` takes them from
    a file)."""
    parser.add_argument("--env", required=required, choices=envs.ids())
    parser.add_argument("--players", type=int, required=required)
    parser.add_argument(
        "--seat", type=int, default=0 if required else None, help="your seat (from 0)"
    )
    parser.add_argument(
        "--partners", nargs="+", help="agent spec(s) for the other seats (default: a heuristic)"
    )
    parser.add_argument(
        "--seed", type=int, help=f"the (first) deal, 0..{SEED_LIMIT - 1} (default: a random one)"
    )
    parser.add_argument("--save", help="record file (default: runs/play/<env>_seed<S>.jsonl)")
    return parser


def main(argv: list[str] | None = None) -> GameRecord | None:
    parser = table_arguments(
        argparse.ArgumentParser(prog="cauldron play", description=__doc__.splitlines()[0])
    )
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random_seed()
    partners = args.partners or [default_agent(args.env)]
    path = check_output(args.save or f"runs/play/{args.env}_seed{seed}.jsonl", "--save")
    table = Table(args.env, args.players, args.seat, partners, seed)
    try:
        with stopping():
            record = play_table(table)
    except (KeyboardInterrupt, Stopped) as stop:
        saved = table.save_unfinished(UnfinishedFile(path))
        said = f"game so far saved to {saved} (cauldron serve --resume {saved})"
        print(f"\nstopped: {said if saved else 'nothing to save'}", file=sys.stderr)
        raise SystemExit(128 + stop.signum if isinstance(stop, Stopped) else 130) from None
    if record is not None:
        print(f"saved: {write_games(path, [record])} (cauldron replay {path})")
    return record
