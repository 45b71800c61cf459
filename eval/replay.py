"""Step through a game record in the terminal: ``cauldron replay FILE``.

cauldron replay FILE [--game K] [--seat N] [--step S] [--all]

The record is replayed through the reference env and checked as it goes (a record that does not
replay stops with the file, line and step). Interactively, each step shows the whole table (or
seat N's private view with ``--seat``: only what seat N could know then, so another seat's secret
choice reads as "player_1 plays a card face down"), the action taken, the rewards and, when the
record holds them, what the acting agent thought (in the table and the actor's own view only);
keys:
Enter or ``n`` next, ``b`` back, ``g S`` go to step S, ``v N`` seat N's view, ``t`` the table,
``q`` quit. With ``--all``, or when the input is not a terminal, every step is printed at once.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cauldron.envs.core.errors import ConfigError, run_command
from cauldron.envs.core.views import action_text, figures, seen_action
from cauldron.eval.records import EventLog, GameRecord, jsonable, printable, read_games, replay


@dataclass(frozen=True)
class Frame:
    """The table after ``step`` decisions: ``table`` (the whole table as text), ``views`` (each
    seat's private view), ``info`` (each seat's figures, from the game state), ``returns``
    (each seat's return so far), ``to_act`` (the seat to decide, ``None`` once over), the step's
    ``action`` (the record's step line: seat ``s``, action ``a``, name ``n``; ``None`` for the
    dealt table) and what was seen of it: ``move`` by the whole table, ``seen`` by each seat
    (:func:`cauldron.envs.core.views.seen_action`: a secret action reads as its public text in the
    others' views; empty for the dealt table); ``events``, the public events the step added to the
    table's log (for the dealt table, the log after the deal) as the game's renderer words them;
    ``svg``, with ``frames(game, svg=True)``, the whole table and then each seat's view as SVG;
    ``policy`` and ``value``, what the acting agent thought (the record's ``p`` as ``(action,
    name, probability)``, named before the action was applied, and ``v``; ``None`` when the
    record has none)."""

    step: int
    table: str
    views: tuple[str, ...]
    info: tuple[dict[str, Any], ...]
    returns: tuple[float, ...]
    to_act: int | None
    action: dict[str, Any] | None
    move: str = ""
    seen: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    svg: tuple[str, ...] = ()
    policy: tuple[tuple[int, str, float], ...] | None = None
    value: float | None = None


def frames(game: GameRecord, svg: bool = False) -> list[Frame]:
    """Every table of ``game``, from the deal to the end, replayed and checked (with ``svg``,
    drawn as SVG too)."""
    out: list[Frame] = []
    players = game.header["players"]
    returns = [0.0] * players
    moves: list[tuple[str, tuple[str, ...], tuple[tuple[int, str, float], ...] | None]] = []
    log: EventLog | None = None

    def look(env, line: dict[str, Any]) -> None:
        action = line["a"]
        seats = tuple(seen_action(env, action, seat) for seat in range(players))
        policy = tuple((a, action_text(env, a), p) for a, p in line["p"]) if "p" in line else None
        moves.append((seen_action(env, action, None), seats, policy))

    for done, env in replay(game, render=True, before=look):
        base = env.unwrapped
        if log is None:
            log = EventLog(env)
            added = list(getattr(base.game, "log", None) or [])
        else:
            added = log.new()
        line = game.steps[done - 1] if done else None
        if line and "r" in line:
            returns = [x + y for x, y in zip(returns, line["r"], strict=True)]
        over = all(base.terminations[a] or base.truncations[a] for a in base.possible_agents)
        move, seen, policy = moves[done - 1] if done else ("", (), None)
        drawn = (
            (base.draw(None, "svg"), *(base.render_for(a, "svg") for a in base.possible_agents))
            if svg
            else ()
        )
        out.append(
            Frame(
                step=done,
                table=env.render(),
                views=tuple(base.render_for(a) for a in base.possible_agents),
                info=tuple(jsonable(x) for x in figures(env)),
                returns=tuple(returns),
                to_act=None if over else base.possible_agents.index(env.agent_selection),
                action=line,
                move=move,
                seen=seen,
                events=event_texts(env, added),
                svg=drawn,
                policy=policy,
                value=line.get("v") if line else None,
            )
        )
    return out


def event_texts(env, events: list[tuple]) -> tuple[str, ...]:
    """``events`` (entries of the game state's ``log``) worded by the game's ``event_text``,
    defined beside its ``render_table`` (some take the rules first)."""
    base = env.unwrapped
    module = sys.modules[type(base).render_table.__module__]
    word = getattr(module, "event_text", None)
    if word is None or not events:
        return ()
    if len(inspect.signature(word).parameters) == 2:
        return tuple(word(base.rules, event) for event in events)
    return tuple(word(event) for event in events)


def thought(frame: Frame) -> str:
    """What the acting agent thought at ``frame``'s step, ``""`` when the record does not say:
    ``policy: play 4/1 62% · ask: blue? 20% · value 0.41``. Only the whole table and the actor's
    own view may show it (it can reveal the actor's hidden hand)."""
    parts = [f"{name} {p:.0%}" for _, name, p in frame.policy or ()]
    if frame.value is not None:
        parts.append(f"value {frame.value:.2f}")
    if not parts:
        return ""
    return ("policy: " if frame.policy else "") + " · ".join(parts)


def describe(game: GameRecord, seat: int | None = None) -> str:
    """One line naming a game: env, players, seed, seat agents and meta; for ``seat``'s eyes
    (``player_K's view`` instead of the seed, which would tell the deal)."""
    h = game.header
    meta = " ".join(f"{k}={v}" for k, v in h["meta"].items())
    known = f"seed {h['seed']}" if seat is None else f"player_{seat}'s view"
    return f"{h['env']}, {h['players']} players, {known}: {', '.join(h['agents'])} {meta}"


def show(frame: Frame, total: int, seat: int | None) -> str:
    """A frame as text: a heading (step, the action as the table or ``seat`` saw it, rewards,
    what the actor thought when ``seat`` may see it, who acts next) and the table or ``seat``'s
    view."""
    head = f"--- step {frame.step}/{total}"
    if frame.action:
        head += f" · {frame.move if seat is None else frame.seen[seat]}"
        if "r" in frame.action:
            head += f" · rewards {frame.action['r']}"
        said = thought(frame)
        if said and (seat is None or seat == frame.action["s"]):
            head += f" · {said}"
    head += " · game over" if frame.to_act is None else f" · player_{frame.to_act} to act"
    view = "table" if seat is None else f"player_{seat}'s view"
    return f"{head} · {view}\n{frame.table if seat is None else frame.views[seat]}"


def number(text: str) -> int | None:
    """The integer a person typed (``int`` reads it: ASCII or other decimal digits, a sign),
    ``None`` for anything else (``²`` and ``--5`` pass ``str.isdigit`` but are no numbers)."""
    try:
        return int(text)
    except ValueError:
        return None


def echo(text: str) -> None:
    """Print ``text`` made :func:`~cauldron.eval.records.printable`: a record's text (agent names,
    meta) cannot send the terminal its control sequences."""
    print(printable(text))


def browse(
    shown: list[Frame],
    seat: int | None,
    start: int,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = echo,
) -> None:
    """Interactive stepping through ``shown`` (keys in the module docstring); bad keys re-ask."""
    at, total = start, len(shown) - 1
    say(show(shown[at], total, seat))
    while True:
        try:
            key = ask("[Enter] next · b back · g S go to step · v N seat view · t table · q quit> ")
        except EOFError:
            return
        word, _, arg = key.strip().partition(" ")
        if word in ("", "n"):
            at = min(at + 1, total)
        elif word == "b":
            at = max(at - 1, 0)
        elif word == "q":
            return
        elif word == "t":
            seat = None
        elif word in ("g", "v") and (value := number(arg)) is not None:
            if word == "g" and 0 <= value <= total:
                at = value
            elif word == "v" and 0 <= value < len(shown[0].views):
                seat = value
            else:
                say(f"out of range: steps 0..{total}, seats 0..{len(shown[0].views) - 1}")
                continue
        else:
            say(f"unknown key {key.strip()!r}")
            continue
        say(show(shown[at], total, seat))


def main(argv: list[str] | None = None) -> int:
    """Check and show a record (module docstring); the number of steps. Ctrl-C stops it with
    an ``interrupted`` line (exit status 130), not a traceback."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        raise SystemExit(130) from None


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="cauldron replay", description=__doc__.splitlines()[0])
    parser.add_argument("file", help="a record file (JSON Lines)")
    parser.add_argument("--game", type=int, default=1, help="which game of the file (from 1)")
    parser.add_argument("--seat", type=int, help="show this seat's private view")
    parser.add_argument("--step", type=int, default=0, help="start at this step")
    parser.add_argument("--all", action="store_true", help="print every step, no prompt")
    args = parser.parse_args(argv)
    games = read_games(args.file)
    if not 1 <= args.game <= len(games):
        raise ConfigError(f"--game must be 1..{len(games)} ({args.file} holds {len(games)})")
    game = games[args.game - 1]
    players = game.header["players"]
    if args.seat is not None and not 0 <= args.seat < players:
        raise ConfigError(f"--seat must be 0..{players - 1} for this {players}-player game")
    shown = frames(game)
    if not 0 <= args.step < len(shown):
        raise ConfigError(f"--step must be 0..{len(shown) - 1}")
    echo(f"game {args.game}/{len(games)}: {describe(game)}")
    echo(f"replay check: OK ({len(game.steps)} steps, final state hash matches)")
    if args.all or not sys.stdin.isatty():
        for frame in shown[args.step :]:
            echo(show(frame, len(shown) - 1, args.seat))
    else:
        browse(shown, args.seat, args.step)
    return len(shown) - 1


if __name__ == "__main__":
    run_command(main)
