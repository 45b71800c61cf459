"""A person at the table with agents: ``python -m eval.play``.

python -m eval.play --env ID --players N --seat K [--partners SPEC...] [--seed S] [--save FILE]

The person plays seat K; the other seats play ``--partners`` (one agent spec for every other
seat, or one per other seat in seat order; default: the game's first heuristic). At each of the
person's decisions the command shows what the others did since, as seat K may see it (another
seat's secret choice, a card passed or chosen face down, reads as its public text: see
:mod:`envs.core.views`; in simultaneous games only once every seat has chosen), seat K's private
view (``render_for``, also at the end) and the legal actions by number and name. Type a number
or a name; anything else is asked again. ``q``, Ctrl-C or the end of the input abandons the game
unsaved (an unfinished game is no record: a record replays to the game's end). A finished game
is saved as a record (default ``runs/play/<env>_seed<S>.jsonl``; the path is checked before the
game starts) that ``python -m eval.replay`` and ``python -m eval.viewer`` read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import envs
from agents import make_agent
from agents.base import seat_seed
from envs.core.errors import ConfigError, IllegalActionError
from envs.core.views import seen_action
from eval.config import SEED_LIMIT
from eval.demo import default_agent
from eval.records import GameRecord, Recorder, check_output, seed_problem, write_games
from eval.replay import number

HUMAN = "human"


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
    time (the terminal's :func:`play_human` and the browser's ``eval.serve`` share it), on the
    env made with ``options`` (none: the game's defaults).

    ``log`` holds what seat ``seat`` has seen of every decision so far (its own and the
    others', see :func:`envs.core.views.seen_action`), in order; a decision of a simultaneous
    step joins it only once the step has resolved. ``turn`` counts the decisions taken."""

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
    ask, say = ask or input, say or print
    table = Table(env_id, players, seat, partners, seed)
    base, you, shown = table.base, table.you, 0
    say(
        f"=== {env_id}, {players} players, seed {seed}: you are {you}; {', '.join(table.seats)} ==="
    )
    while True:
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
        table.play(action)
    record = table.record
    say("\n".join(table.log[shown:]) + f"\n\n=== game over ===\n{base.render_for(you)}\n")
    say(f"result: {record.end['info'][seat]}; returns {record.end['returns']}")
    return record


def random_seed() -> int:
    """A fresh seed in 0..2**31-1, for a game whose seed was not given."""
    return int(np.random.SeedSequence().entropy % SEED_LIMIT)


def table_arguments(
    parser: argparse.ArgumentParser, required: bool = True
) -> argparse.ArgumentParser:
    """``parser`` with the options that seat a person at a table (``eval.play`` and
    ``eval.serve``): ``--env``, ``--players``, ``--seat``, ``--partners``, ``--seed`` and
    ``--save``. Unless ``required``, ``--env`` and ``--players`` may be left out and ``--seat``
    defaults to ``None`` (the command checks them: ``eval.serve --resume`` takes them from a
    file)."""
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
        argparse.ArgumentParser(prog="python -m eval.play", description=__doc__.splitlines()[0])
    )
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random_seed()
    partners = args.partners or [default_agent(args.env)]
    path = check_output(args.save or f"runs/play/{args.env}_seed{seed}.jsonl", "--save")
    try:
        record = play_human(args.env, args.players, args.seat, partners, seed)
    except KeyboardInterrupt:
        print("\ninterrupted: game abandoned, nothing saved", file=sys.stderr)
        raise SystemExit(130) from None
    if record is not None:
        print(f"saved: {write_games(path, [record])} (python -m eval.replay {path})")
    return record
