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

import numpy as np

import envs
from agents import make_agent
from envs.core.errors import ConfigError
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
    check_game(env_id, players, seed)
    seats = seat_specs(players, seat, partners)
    env = Recorder(envs.make(env_id, num_players=players, render_mode="ansi"))
    base = env.unwrapped
    agents = {
        name: make_agent(spec, env_id, seed=seed + i)
        for i, (name, spec) in enumerate(zip(base.possible_agents, seats, strict=True))
        if spec != HUMAN
    }
    env.next_game(seats, {"human_seat": seat})
    env.reset(seed=seed)
    for i, name in enumerate(base.possible_agents):
        if name in agents:
            agents[name].reset(seed + 7919 * (i + 1))
    you = base.possible_agents[seat]
    say(f"=== {env_id}, {players} players, seed {seed}: you are {you}; {', '.join(seats)} ===")
    hidden: list[str] = []
    seen: list[str] = []
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if name == you:
            if seen:
                say("\n".join(seen))
                seen = []
            say(f"\n{base.render_for(you)}\n\nyour legal actions:")
            legal = base.legal_actions()
            say(legal_list(base.rules, legal))
            action = choose(base.rules, legal, ask, say)
            if action is None:
                say("game abandoned; nothing saved")
                return None
        else:
            action = agents[name].act(obs["observation"], obs["action_mask"])
        hidden.append(seen_action(base, int(action), seat))
        env.step(action)
        if not base.rules.mid_step(base.game):
            seen, hidden = seen + hidden, []
    record = env.record
    say("\n".join(seen) + f"\n\n=== game over ===\n{base.render_for(you)}\n")
    say(f"result: {record.end['info'][seat]}; returns {record.end['returns']}")
    return record


def main(argv: list[str] | None = None) -> GameRecord | None:
    parser = argparse.ArgumentParser(
        prog="python -m eval.play", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--env", required=True, choices=envs.ids())
    parser.add_argument("--players", type=int, required=True)
    parser.add_argument("--seat", type=int, default=0, help="your seat (from 0)")
    parser.add_argument(
        "--partners", nargs="+", help="agent spec(s) for the other seats (default: a heuristic)"
    )
    parser.add_argument(
        "--seed", type=int, help=f"the deal, 0..{SEED_LIMIT - 1} (default: a random one)"
    )
    parser.add_argument("--save", help="record file (default: runs/play/<env>_seed<S>.jsonl)")
    args = parser.parse_args(argv)
    seed = (
        args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % SEED_LIMIT)
    )
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
