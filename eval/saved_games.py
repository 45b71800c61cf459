"""An evaluation's saved games (``save_games: N``): which games to keep, their records and page.

Every game of a lineup is played through an :class:`~cauldron.eval.records.ActionLog` (its actions
only); each chunk of seeds keeps its candidates (both ends by score, then the first seeds) and the
whole run keeps, per lineup, the best and the worst game by score and then the first seeds
(:func:`cauldron.eval.records.select`, the same whatever the workers). Best follows the measure's
direction (the game's ``lower_is_better`` in :mod:`cauldron.envs.registry`): the fewest scares in
the Headless Horseman, the lowest margin of points in Voodoo Mania, the most of anything else. The
kept games are played again from their seeds and actions into full records, each checked against
the returns of the game it repeats, and written to ``games.jsonl`` beside the viewer page
``games.html`` in the run folder. With ``record_thoughts``, the agents that can explain
themselves (``explain()``: the ``torch:``, ``rllib:`` and ``sb3:`` agents) play their seats of
the kept games again, and each decision's line carries what they thought (``p`` and ``v``,
:mod:`cauldron.eval.records`); each must repeat its moves. Only the kept games pay for the thoughts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cauldron import envs
from cauldron.agents import Agent
from cauldron.eval.play import GameResult
from cauldron.eval.records import Kept, rebuild, select, write_games
from cauldron.eval.viewer import write_page

RECORDS, PAGE = "games.jsonl", "games.html"


def score(
    agents: Sequence[str],
    seating: Sequence[str],
    info: Mapping[str, Any],
    cooperative: bool,
    key: str,
) -> float:
    """A game's score for its lineup: in a cooperative game the team's ``info[key]``; in a
    competitive one the first agent's mean seat score (``info["scores"]``) minus the second's."""
    if cooperative:
        return float(info[key])
    by: dict[str, list[float]] = {a: [] for a in agents}
    for seat, value in enumerate(info["scores"]):
        by[seating[seat]].append(float(value))
    first, second = (sum(by[a]) / len(by[a]) for a in agents[:2])
    return first - second


def measure(cooperative: bool, key: str, agents: Sequence[str]) -> str:
    """What :func:`score` measures, in words."""
    return key if cooperative else f"{agents[0]}'s score margin over {agents[1]}"


def keep(
    agents: Sequence[str], game: GameResult, actions: Sequence[int], cooperative: bool, key: str
) -> Kept:
    """A played game (seed, seating, info, returns) and its actions as a candidate to save, with
    its :func:`score`."""
    value = score(agents, game.seating, game.info, cooperative, key)
    return Kept(value, game.seed, tuple(game.seating), tuple(actions), tuple(game.returns.values()))


def save(
    folder: Path,
    env_id: str,
    options: Mapping[str, Any],
    kept: Mapping[str, tuple[int, str, list[Kept]]],
    per_lineup: int,
    make: Callable[[str], Agent] | None = None,
    page: bool = True,
) -> Path:
    """Rebuild and write the kept games of every lineup (label -> (players, what the score
    measures, candidates)) to ``folder``, and with ``page`` their viewer page; the page's path
    (or the records'). With ``make`` (an agent's name -> a fresh agent), the agents that explain
    themselves add what they thought."""
    games = []
    lower = envs.spec(env_id).lower_is_better
    made: dict[tuple[int, str], Agent] = {}
    for label, (players, measured, candidates) in kept.items():
        for game, why in select(candidates, per_lineup, lower):
            thinkers = {}
            for seat, name in enumerate(game.agents) if make else ():
                if (seat, name) not in made:
                    made[seat, name] = make(name)
                if hasattr(made[seat, name], "explain"):
                    thinkers[seat] = made[seat, name]
            meta = {
                "lineup": label,
                "kept": why,
                "score": game.score,
                "score_is": measured,
                "better": "lower" if lower else "higher",
            }
            record = rebuild(
                env_id,
                players,
                dict(options),
                game.seed,
                list(game.actions),
                list(game.agents),
                meta,
                thinkers,
            )
            # Equal up to rounding: the record sums each step's rewards, the evaluation each
            # agent's accumulated rewards (PettingZoo's), so shaped fractions can differ in ulps.
            replayed = record.end["returns"]
            if len(replayed) != len(game.returns) or not all(
                math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9)
                for x, y in zip(replayed, game.returns, strict=False)
            ):
                raise RuntimeError(
                    f"{label} seed {game.seed}: replaying the evaluated game's actions gave "
                    f"returns {record.end['returns']}, the game had {list(game.returns)}"
                )
            games.append(record)
    written = write_games(folder / RECORDS, games)
    return write_page([written], folder / PAGE) if page else written


def summary(per_lineup: int, page: bool = True) -> dict[str, Any]:
    """What the report says about the saved games: the files (the page, or ``None`` when it
    was not drawn) and how many per lineup."""
    return {"records": RECORDS, "viewer": PAGE if page else None, "per_lineup": per_lineup}
