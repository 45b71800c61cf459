"""Play every lineup of a config on the same seeds and summarise it with 95% intervals.

A lineup is a seat composition: which agents sit at the table and how many seats each holds
(at 3 players, ``A×2 + B`` and ``A + B×2`` are different lineups). Its seats are dealt in one
canonical order (the agent with more seats first, ties by spec) and rotated by the seed, so a
lineup plays the same games whatever the order of ``agents:`` in the config.

Cooperative games: every agent as a whole team, and (cross-play) every two agents sharing the
table: ``crossplay: all`` plays every composition, ``focal`` only one agent under test with N−1
partners of one kind (the ad-hoc-teamwork figure). Competitive games: every two agents head to
head with balanced seats (both ways round at odd player counts), plus OpenSkill (Plackett-Luce)
ratings. Results never depend on the number of worker processes: games are seeded and sorted.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce
from tqdm import tqdm

from cauldron import envs
from cauldron.agents import Agent, AgentError, CheckedAgent, display_names, make_agent
from cauldron.envs.core.errors import IllegalActionError
from cauldron.eval import saved_games
from cauldron.eval.config import EvalConfig
from cauldron.eval.executors import executor
from cauldron.eval.play import GameResult, play_game
from cauldron.eval.provenance import provenance
from cauldron.eval.records import ActionLog, Kept, select
from cauldron.eval.stats import bootstrap_mean_interval, judged, wilson_interval

CHUNK = 50


@dataclass(frozen=True, order=True)
class Lineup:
    """Agents at the table (``agents[i]`` holds ``seats[i]`` seats) and what kind of row it is:
    ``team`` (one agent everywhere), ``crossplay`` or ``head_to_head``."""

    kind: str
    agents: tuple[str, ...]
    seats: tuple[int, ...]

    @property
    def players(self) -> int:
        return sum(self.seats)

    def label(self, names: Mapping[str, str] | None = None) -> str:
        """``A×2 + B`` (display names from ``names`` where given)."""
        names = names or {}
        return " + ".join(
            names.get(a, a) + (f"×{k}" if k > 1 else "")
            for a, k in zip(self.agents, self.seats, strict=True)
        )

    def composition(self) -> tuple[tuple[str, int], ...]:
        """The order-free identity of the lineup: (spec, seats) sorted by spec."""
        return tuple(sorted(zip(self.agents, self.seats, strict=True)))


def base_seats(lineup: Lineup) -> list[str]:
    """Seat order before rotation: agents by seats held (most first, ties by spec), dealt
    round-robin (``A×3 + B`` -> A, B, A, A; ``A×2 + B×2`` -> A, B, A, B)."""
    left = dict(sorted(lineup.composition(), key=lambda kv: (-kv[1], kv[0])))
    seats: list[str] = []
    while len(seats) < lineup.players:
        for agent in left:
            if left[agent]:
                seats.append(agent)
                left[agent] -= 1
    return seats


def seating(lineup: Lineup, seed: int) -> list[str]:
    """Seats for one game: the canonical order rotated by the seed."""
    base = base_seats(lineup)
    shift = seed % len(base)
    return base[shift:] + base[:shift]


def lineups(config: EvalConfig) -> list[Lineup]:
    """Every lineup of the config in report order (player count, then kind, then agents)."""
    out: list[Lineup] = []
    for n in config.players:
        if envs.spec(config.env).cooperative:
            out += [Lineup("team", (a,), (n,)) for a in config.agents]
            if config.crossplay != "none":
                top = 1 if config.crossplay == "focal" else n // 2
                for k in range(1, top + 1):
                    out += [
                        Lineup("crossplay", (a, b), (k, n - k))
                        for a, b in itertools.permutations(config.agents, 2)
                        if k < n - k or config.agents.index(a) < config.agents.index(b)
                    ]
        else:
            for a, b in itertools.combinations(config.agents, 2):
                out.append(Lineup("head_to_head", (a, b), ((n + 1) // 2, n // 2)))
                if n % 2:
                    out.append(Lineup("head_to_head", (a, b), (n // 2, (n + 1) // 2)))
    return out


def _make(name: str, source: str | Agent, env_id: str) -> Agent:
    """A fresh agent for one seat: from a spec string, or a deep copy of a given object (whose
    errors then name it)."""
    if isinstance(source, str):
        return make_agent(source, env_id)
    return CheckedAgent(copy.deepcopy(source), name)


class _Seat:
    """The agent at one seat: each call notes the seat in ``turn[0]``, so that an error names
    the seat that caused it (see :func:`_play`)."""

    def __init__(self, agent: Agent, seat: str, turn: list[str]) -> None:
        self.agent, self.seat, self.turn = agent, seat, turn

    def reset(self, seed: int | None = None) -> None:
        self.turn[0] = self.seat
        self.agent.reset(seed)

    def act(self, observation: Any, action_mask: Any) -> int:
        self.turn[0] = self.seat
        return self.agent.act(observation, action_mask)


def _play(env: Any, players: dict[str, Agent], seed: int, seats: list[str]) -> GameResult:
    """One game (:func:`play_game`). An illegal action, or an agent's error in ``reset`` or
    ``act``, raises one :class:`AgentError` naming the agent, the seat and the game's seed
    (``cauldron eval --debug`` shows the original traceback)."""
    turn = [""]
    by_seat = dict(zip(env.possible_agents, seats, strict=True))
    seated = {seat: _Seat(agent, seat, turn) for seat, agent in players.items()}
    try:
        return play_game(env, seated, seed, seats)
    except IllegalActionError as err:
        where = f"(seat {err.agent}, game seed {seed})"
        raise AgentError(
            f"agent {by_seat[err.agent]!r} returned an illegal action {where}: {err}"
        ) from err
    except AgentError as err:
        raise AgentError(f"{err} (seat {turn[0]}, game seed {seed})") from err


def _play_chunk(job: tuple) -> tuple[Lineup, list[GameResult], list[Kept]]:
    """Play some seeds of one lineup; every seat has its own agent object (agents may keep
    memory within a game), made once per seat and agent. With ``save`` games to save per
    lineup, also the chunk's candidates (:mod:`cauldron.eval.saved_games`)."""
    env_id, options, lineup, sources, save, seeds = job
    env = envs.make(env_id, num_players=lineup.players, **options)
    if save:
        env = ActionLog(env)
    spec = envs.spec(env_id)
    made: dict[tuple[str, str], Agent] = {}
    results, kept = [], []
    for seed in seeds:
        seats = seating(lineup, seed)
        players = {}
        for seat, name in zip(env.possible_agents, seats, strict=True):
            if (seat, name) not in made:
                made[seat, name] = _make(name, sources[name], env_id)
            players[seat] = made[seat, name]
        results.append(_play(env, players, seed, seats))
        if save:
            game = results[-1]
            kept.append(
                saved_games.keep(lineup.agents, game, env.actions, spec.cooperative, spec.score)
            )
    return lineup, results, [k for k, _ in select(kept, save)]


def play_all(
    config: EvalConfig,
    objects: Mapping[str, Agent] | None = None,
    progress: bool = True,
    only: Sequence[Lineup] | None = None,
) -> dict[Lineup, list[GameResult]]:
    """Every lineup (or the lineups ``only`` lists, of ``config.agents``) on seeds ``seed ..
    seed + games - 1``. ``objects`` supplies agents built in Python for the names of
    ``config.agents`` that are not spec strings (copied for each seat). With ``save_games``,
    the kept games' records and viewer page go to the run folder."""
    sources: dict[str, str | Agent] = {a: (objects or {}).get(a, a) for a in config.agents}
    seeds = range(config.seed, config.seed + config.games)
    jobs = [
        (config.env, config.options, lineup, sources, config.save_games, seeds[i : i + CHUNK])
        for lineup in (lineups(config) if only is None else only)
        for i in range(0, len(seeds), CHUNK)
    ]
    results: dict[Lineup, list[GameResult]] = {}
    kept: dict[Lineup, list[Kept]] = {}
    total = sum(len(job[-1]) for job in jobs)
    with (
        tqdm(total=total, unit="game", desc=config.name, disable=not progress) as bar,
        executor(config.executor, config.workers, config.ray_address) as run,
    ):
        for key, chunk, candidates in run(_play_chunk, jobs):
            results.setdefault(key, []).extend(chunk)
            kept.setdefault(key, []).extend(candidates)
            bar.update(len(chunk))
    for games in results.values():
        games.sort(key=lambda g: g.seed)
    if config.save_games:
        save_games(config, kept, sources)
    return results


def save_games(
    config: EvalConfig,
    kept: dict[Lineup, list[Kept]],
    sources: Mapping[str, str | Agent] | None = None,
) -> None:
    """Write the kept games of every played lineup (in report order) to the run folder; with
    ``record_thoughts``, the agents ``sources`` names (specs or objects) explain their moves."""
    spec = envs.spec(config.env)
    names = display_names(config.agents, config.labels)
    by_label = {
        f"{lineup.label(names)}, {lineup.players} players": (
            lineup.players,
            saved_games.measure(spec.cooperative, spec.score, lineup.agents),
            kept[lineup],
        )
        for lineup in lineups(config)
        if lineup in kept
    }
    folder = Path(config.out) / config.name
    sources = sources or {a: a for a in config.agents}
    make = (lambda name: _make(name, sources[name], config.env)) if config.record_thoughts else None
    saved_games.save(
        folder, config.env, config.options, by_label, config.save_games, make, config.save_page
    )


def rate(count: int, trials: int) -> dict[str, float]:
    low, high = wilson_interval(count, trials)
    return {"rate": count / trials, "low": low, "high": high, "count": count, "games": trials}


def mean(values: list[float]) -> dict[str, float]:
    m, low, high = bootstrap_mean_interval(values)
    return {"mean": m, "low": low, "high": high}


def game_rows(lineup: Lineup, games: list[GameResult], cooperative: bool, score: str) -> dict:
    """Per-game columns (one entry per game, in seed order): ``seed``, ``seating`` (each seat's
    index into the row's ``lineup``), ``returns`` (by seat), ``steps``, and ``outcome`` and the
    team ``score`` (cooperative) or ``winners`` (seats) and ``scores`` (by seat)."""
    index = {a: i for i, a in enumerate(lineup.agents)}
    columns: dict[str, list] = {"seed": [], "seating": [], "returns": [], "steps": []}
    extra = ["outcome", score] if cooperative else ["winners", "scores"]
    columns.update({key: [] for key in extra})
    for g in games:
        columns["seed"].append(g.seed)
        columns["seating"].append([index[a] for a in g.seating])
        columns["returns"].append(list(g.returns.values()))
        columns["steps"].append(g.steps)
        for key in extra:
            columns[key].append(g.info.get(key, []))
    return columns


def ends(lineup: Lineup, games: list[GameResult], cooperative: bool) -> dict[str, int]:
    """How the games ended, adding up to the games played: cooperative ``won`` / ``lost`` by
    the team; head to head ``won`` by the first agent alone, ``lost`` (the second alone),
    ``drawn`` (a shared win or none); and ``truncated`` (cut short by a clock)."""
    counts = dict.fromkeys(("won", "lost", "drawn", "truncated"), 0)
    for g in games:
        if g.truncated:
            key = "truncated"
        elif cooperative:
            key = "won" if g.info["outcome"] == 1 else "lost"
        else:
            won = {g.seating[s] for s in g.info.get("winners", [])}
            a, b = lineup.agents
            key = "won" if won == {a} else "lost" if won == {b} else "drawn"
        counts[key] += 1
    return counts


def summarize(config: EvalConfig, results: dict[Lineup, list[GameResult]]) -> dict[str, Any]:
    """Plain-data summary of the played lineups (every one of the config's, or those
    :func:`play_all` was given): team and cross-play rows for cooperative games, head-to-head
    rows and ratings for competitive ones, paired differences, and every game. Every rate and
    mean carries its 95% interval."""
    spec = envs.spec(config.env)
    rows = []
    for lineup in (lineup for lineup in lineups(config) if lineup in results):
        games = results[lineup]
        row: dict[str, Any] = {
            "kind": lineup.kind,
            "lineup": list(lineup.agents),
            "seats": list(lineup.seats),
            "label": lineup.label(),
            "players": lineup.players,
            "length": mean([float(g.steps) for g in games]),
        }
        row["ends"] = ends(lineup, games, spec.cooperative)
        if spec.cooperative:
            row["win"] = rate(sum(g.info["outcome"] == 1 for g in games), len(games))
            row[spec.score] = mean([float(g.info[spec.score]) for g in games])
        else:
            a, b = lineup.agents
            wins = {a: 0, b: 0}
            margins, differences = [], []
            for g in games:
                won = {g.seating[s] for s in g.info.get("winners", [])}
                for winner in won:
                    wins[winner] += 1
                differences.append(float(a in won) - float(b in won))
                by: dict[str, list[float]] = {a: [], b: []}
                for seat, score in enumerate(g.info["scores"]):
                    by[g.seating[seat]].append(score)
                margins.append(sum(by[a]) / len(by[a]) - sum(by[b]) / len(by[b]))
            row["wins"] = {s: rate(wins[s], len(games)) for s in lineup.agents}
            row["win_difference"] = judged(differences)
            row["margin"] = mean(margins)
        row["games"] = game_rows(lineup, games, spec.cooperative, spec.score)
        rows.append(row)
    summary: dict[str, Any] = {
        "config": config.model_dump(),
        "cooperative": spec.cooperative,
        "score": spec.score,
        "labels": display_names(config.agents, config.labels),
        "provenance": provenance(config.model_dump()),
        "rows": rows,
    }
    if spec.cooperative:
        summary["paired"] = paired_differences(config, results, spec.score)
    else:
        summary["ratings"] = ratings(config, results)
    if config.save_games:
        summary["saved_games"] = saved_games.summary(config.save_games, config.save_page)
    return summary


def paired(
    a: list[GameResult], b: list[GameResult], value, measure: bool = False
) -> dict[str, Any]:
    """Mean of ``value(game of a) − value(game of b)`` over the same seeds, with its percentile
    bootstrap interval (paired: the deal's own difficulty cancels); for the game's ``measure``
    also judged (:func:`cauldron.eval.stats.judged`)."""
    if [g.seed for g in a] != [g.seed for g in b]:
        raise ValueError("paired differences need the same seeds on both sides")
    differences = [value(x) - value(y) for x, y in zip(a, b, strict=True)]
    return judged(differences) if measure else mean(differences)


def paired_differences(config: EvalConfig, results: dict, score: str) -> list[dict[str, Any]]:
    """Cooperative comparisons on the same deals: every two teams (A×N − B×N), and, for each
    cross-play lineup ``A + B×(N−1)``, what putting A in one of B's seats does (minus B×N; at
    2 players both ways round)."""
    pairs: list[tuple[Lineup, Lineup]] = []
    for n in config.players:
        team = {a: Lineup("team", (a,), (n,)) for a in config.agents}
        pairs += [(team[a], team[b]) for a, b in itertools.combinations(config.agents, 2)]
        for lineup in results:
            if lineup.kind == "crossplay" and lineup.players == n:
                pairs += [
                    (lineup, team[background])
                    for focal, background in (lineup.agents, lineup.agents[::-1])
                    if dict(lineup.composition())[focal] == 1
                ]
    out = []
    for x, y in pairs:
        out.append(
            {
                "players": x.players,
                "a": x.label(),
                "b": y.label(),
                "win": paired(
                    results[x], results[y], lambda g: float(g.info["outcome"] == 1), measure=True
                ),
                score: paired(results[x], results[y], lambda g: float(g.info[score])),
            }
        )
    return out


def ratings(config: EvalConfig, results: dict) -> dict[str, dict[str, dict[str, float]]]:
    """OpenSkill Plackett-Luce ratings per player count from every head-to-head game, in the
    order (seed, lineup): a game is a win for the side with a winner and not the other, else a
    draw."""
    model = PlackettLuce()
    out: dict[str, dict[str, dict[str, float]]] = {}
    for n in config.players:
        table = {a: model.rating(name=a) for a in config.agents}
        games = [
            (lineup.composition(), lineup, g)
            for lineup, gs in results.items()
            if lineup.players == n
            for g in gs
        ]
        for _, lineup, g in sorted(games, key=lambda x: (x[2].seed, x[0])):
            a, b = lineup.agents
            won = {g.seating[s] for s in g.info.get("winners", [])}
            ranks = [0 if a in won else 1, 0 if b in won else 1]
            [[table[a]], [table[b]]] = model.rate([[table[a]], [table[b]]], ranks=ranks)
        out[str(n)] = {
            a: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for a, r in table.items()
        }
    return out
