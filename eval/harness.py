"""Play every pairing of a config on the same seeds and summarise it with 95% intervals.

Cooperative games: each agent as a whole team, and (cross-play) every two agents sharing the
table, seats alternating A, B, A, ... and rotating each game. Competitive games: every two agents
head to head, seated the same way, plus OpenSkill (Plackett-Luce) ratings over all games.
Results never depend on the number of worker processes: games are seeded and sorted.
"""

from __future__ import annotations

import itertools
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from openskill.models import PlackettLuce
from tqdm import tqdm

import envs
from agents import make_agent
from eval.config import EvalConfig
from eval.play import GameResult, play_game
from eval.stats import bootstrap_mean_interval, wilson_interval

CHUNK = 50
Lineup = tuple[str, ...]


def seating(lineup: Lineup, num_players: int, seed: int) -> list[str]:
    """Seats for one game: the lineup repeated around the table, rotated by the seed."""
    base = [lineup[i % len(lineup)] for i in range(num_players)]
    shift = seed % num_players
    return base[shift:] + base[:shift]


def lineups(config: EvalConfig) -> list[Lineup]:
    pairs = list(itertools.combinations(config.agents, 2))
    if envs.spec(config.env).cooperative:
        return [(a,) for a in config.agents] + (pairs if config.crossplay else [])
    return pairs


def _play_chunk(job: tuple) -> tuple[tuple[Lineup, int], list[GameResult]]:
    """Play some seeds of one lineup; every seat has its own agent object (agents may keep
    memory within a game), made once per seat and spec."""
    env_id, options, n, lineup, seeds = job
    env = envs.make(env_id, num_players=n, **options)
    made: dict[tuple[str, str], object] = {}
    results = []
    for seed in seeds:
        seats = seating(lineup, n, seed)
        players = {}
        for agent, spec in zip(env.possible_agents, seats, strict=True):
            if (agent, spec) not in made:
                made[agent, spec] = make_agent(spec, env_id)
            players[agent] = made[agent, spec]
        results.append(play_game(env, players, seed))
    return (lineup, n), results


def play_all(config: EvalConfig) -> dict[tuple[Lineup, int], list[GameResult]]:
    """Every lineup at every player count, on seeds ``seed .. seed + games - 1``."""
    seeds = range(config.seed, config.seed + config.games)
    jobs = [
        (config.env, config.options, n, lineup, seeds[i : i + CHUNK])
        for lineup in lineups(config)
        for n in config.players
        for i in range(0, len(seeds), CHUNK)
    ]
    results: dict[tuple[Lineup, int], list[GameResult]] = {}
    total = len(jobs) and sum(len(job[-1]) for job in jobs)
    with tqdm(total=total, unit="game", desc=config.name) as bar:
        if config.workers == 1:
            outputs = map(_play_chunk, jobs)
            for key, chunk in outputs:
                results.setdefault(key, []).extend(chunk)
                bar.update(len(chunk))
        else:
            # spawn, not fork: a forked child of a process that has used torch can deadlock
            spawn = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(config.workers, mp_context=spawn) as pool:
                for key, chunk in pool.map(_play_chunk, jobs):
                    results.setdefault(key, []).extend(chunk)
                    bar.update(len(chunk))
    for games in results.values():
        games.sort(key=lambda g: g.seed)
    return results


def rate(count: int, trials: int) -> dict[str, float]:
    low, high = wilson_interval(count, trials)
    return {"rate": count / trials, "low": low, "high": high, "count": count, "games": trials}


def mean(values: list[float]) -> dict[str, float]:
    m, low, high = bootstrap_mean_interval(values)
    return {"mean": m, "low": low, "high": high}


def summarize(config: EvalConfig, results: dict) -> dict[str, Any]:
    """Plain-data summary: team/cross-play rows for cooperative games, head-to-head rows and
    ratings for competitive ones. Every rate and mean carries its 95% interval."""
    spec = envs.spec(config.env)
    rows = []
    order = {lineup: i for i, lineup in enumerate(lineups(config))}
    for (lineup, n), games in sorted(results.items(), key=lambda kv: (kv[0][1], order[kv[0][0]])):
        row: dict[str, Any] = {
            "lineup": list(lineup),
            "players": n,
            "length": mean([float(g.steps) for g in games]),
        }
        if spec.cooperative:
            row["win"] = rate(sum(g.info["outcome"] == 1 for g in games), len(games))
            row[spec.score] = mean([float(g.info[spec.score]) for g in games])
        else:
            a, b = lineup
            wins = {a: 0, b: 0}
            margins = []
            for g in games:
                seats = seating(lineup, n, g.seed)
                for winner in {seats[s] for s in g.info.get("winners", [])}:
                    wins[winner] += 1
                by = {a: [], b: []}
                for seat, score in enumerate(g.info["scores"]):
                    by[seats[seat]].append(score)
                margins.append(sum(by[a]) / len(by[a]) - sum(by[b]) / len(by[b]))
            row["wins"] = {s: rate(wins[s], len(games)) for s in lineup}
            row["margin"] = mean(margins)
        rows.append(row)
    summary: dict[str, Any] = {
        "config": config.model_dump(),
        "cooperative": spec.cooperative,
        "score": spec.score,
        "rows": rows,
    }
    if not spec.cooperative:
        summary["ratings"] = ratings(config, results)
    return summary


def ratings(config: EvalConfig, results: dict) -> dict[str, dict[str, dict[str, float]]]:
    """OpenSkill Plackett-Luce ratings per player count from every head-to-head game, in seed
    order: a game is a win for the side with a winner and not the other, else a draw."""
    model = PlackettLuce()
    out: dict[str, dict[str, dict[str, float]]] = {}
    for n in config.players:
        table = {a: model.rating(name=a) for a in config.agents}
        games = [(lineup, g) for (lineup, m), gs in sorted(results.items()) if m == n for g in gs]
        for lineup, g in sorted(games, key=lambda x: (x[1].seed, x[0])):
            a, b = lineup
            seats = seating(lineup, n, g.seed)
            won = {seats[s] for s in g.info.get("winners", [])}
            ranks = [0 if a in won else 1, 0 if b in won else 1]
            [[table[a]], [table[b]]] = model.rate([[table[a]], [table[b]]], ranks=ranks)
        out[str(n)] = {
            a: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for a, r in table.items()
        }
    return out
