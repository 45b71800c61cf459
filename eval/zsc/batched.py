"""The protocol's games on the batched engine (``engine: batched``).

Every lineup is played as the harness would seat it (:func:`cauldron.eval.harness.seating`: the
canonical seat order rotated by the game's seed), ``games`` games dealt from seeds ``seed`` to
``seed + games - 1``, but on the game's batched engine (:func:`cauldron.eval.batched.play_rows`),
where game ``i``'s deal and every draw come from its own seed's streams: the same deals for every
lineup, other deals than the harness's. Agents play in their batched form (torch checkpoints
greedily, as in the harness; random; heuristics with a batched form; python agents row by
row), each loaded once.

A game's result carries its seed, length, seating and the team's ``outcome`` and score, as
the harness's :class:`cauldron.eval.play.GameResult`; the batched engine keeps no per-seat returns,
so ``returns`` is empty.
"""

from __future__ import annotations

from typing import Any

import torch
from tqdm import tqdm

from cauldron import envs
from cauldron.agents.batched import BatchedPolicy, make_batched_agent
from cauldron.eval.batched import AgentChance, play_rows
from cauldron.eval.harness import Lineup, seating
from cauldron.eval.play import GameResult

CHUNK = 1024  # games stepped at once (the results do not depend on it)


def play(
    env_id: str,
    num_players: int,
    lineups: list[Lineup],
    games: int,
    seed: int,
    options: dict[str, Any],
    progress: bool = True,
) -> dict[Lineup, list[GameResult]]:
    """Every lineup's ``games`` games, in seed order (see the module docstring)."""
    score = envs.spec(env_id).score
    chance = AgentChance()
    device = torch.device("cpu")
    agents: dict[str, BatchedPolicy] = {}
    for spec in dict.fromkeys(a for lineup in lineups for a in lineup.agents):
        agents[spec] = make_batched_agent(spec, env_id, num_players, device, chance, per_game=True)
    results: dict[Lineup, list[GameResult]] = {}
    with tqdm(total=games * len(lineups), unit="game", disable=not progress, desc="lineups") as bar:
        for lineup in lineups:
            index = {a: i for i, a in enumerate(lineup.agents)}
            policies = [agents[a] for a in lineup.agents]
            played: list[GameResult] = []
            for start in range(seed, seed + games, CHUNK):
                seeds = list(range(start, min(start + CHUNK, seed + games)))
                seats = [tuple(seating(lineup, s)) for s in seeds]
                owner = torch.tensor([[index[a] for a in row] for row in seats])
                figures = play_rows(env_id, num_players, policies, owner, seeds, chance, options)
                for b, (game_seed, row) in enumerate(zip(seeds, seats, strict=True)):
                    info = {"outcome": int(figures["outcome"][b]), score: float(figures[score][b])}
                    steps, cut = int(figures["steps"][b]), bool(figures["truncated"][b])
                    played.append(GameResult(game_seed, {}, steps, info, row, cut))
                bar.update(len(seeds))
            results[lineup] = played
    return results
