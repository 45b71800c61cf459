"""A training run's final evaluation: the trained agent beside every baseline on the same deals.

The baselines are random play, every heuristic of the game and the config's own ``opponents``.
Every game uses the config's options without reward shaping (:func:`without_shaping`), so the
returns reported are the game's own. The baseline teams' games are played once and reused by
later runs and seeds (:mod:`cauldron.train.baselines`).

* ``engine: reference`` (or a competitive game): the evaluation harness on the seeds the
  baselines' reports use (from 0, like ``cauldron eval``): every team of one agent and every
  lineup with the trained agent in it. The best and the worst game of each pairing with the
  trained agent are saved as records (``evaluation/games.jsonl``; ``cauldron viewer``
  draws them: drawing every view of every step takes longer than the evaluation).
* ``engine: batched`` in a cooperative game: every team on the batched engine
  (:func:`cauldron.eval.batched.evaluate`, game i dealt from seed i), thousands of games in the time
  the harness plays a few hundred; no cross-play rows and no saved games. A game the batched engine
  ends without a win counts as lost (its return −1: a truncated game, which the harness scores 0,
  does not occur within the engines' step limits in these games).

Both write the same summary (:func:`cauldron.eval.harness.summarize`) and report.
"""

from __future__ import annotations

from pathlib import Path

from cauldron import envs
from cauldron.agents import HEURISTICS
from cauldron.envs.core.options import without_shaping
from cauldron.eval import harness, report
from cauldron.eval.config import EvalConfig
from cauldron.eval.harness import Lineup
from cauldron.eval.play import GameResult
from cauldron.train import baselines
from cauldron.train.config import TrainConfig

SAVED_GAMES = 2  # per pairing: the best and the worst game, as records with a viewer page


def final_evaluation(
    config: TrainConfig, checkpoint: Path, workers: int | None = None, progress: bool = True
) -> dict:
    """The summary of the final evaluation of ``checkpoint`` (see the module docstring), also
    written to ``<run folder>/evaluation/``. ``workers`` (harness only) defaults to 2
    processes, or 1 for fewer than 100 games per pairing (starting the processes would take
    longer than the games); ``progress`` shows progress bars."""
    mine = f"{config.trainer}:{checkpoint}"
    heuristics = [f"heuristic:{h}" for h in HEURISTICS.get(config.env, {})]
    agents = list(dict.fromkeys([mine, "random", *heuristics, *config.opponents]))
    batched = config.engine == "batched" and envs.spec(config.env).cooperative
    if workers is None:
        workers = 1 if config.final_eval_games < 100 else 2
    eval_config = EvalConfig(
        env=config.env,
        players=[config.num_players],
        agents=agents,
        games=config.final_eval_games,
        seed=0,
        workers=workers,
        options=without_shaping(envs.options_class(config.env), config.options),
        out=str(config.folder),
        name="evaluation",
        save_games=0 if batched else SAVED_GAMES,
        save_page=False,
    )
    every = harness.lineups(eval_config)
    if batched:
        every = [lineup for lineup in every if lineup.kind == "team"]
    with_mine = [lineup for lineup in every if mine in lineup.agents]
    teams = [lineup for lineup in every if lineup.kind == "team" and lineup not in with_mine]

    def play(only: list[Lineup], save: bool) -> dict[Lineup, list[GameResult]]:
        if batched:
            return batched_teams(eval_config, only, progress)
        unsaved = eval_config if save else eval_config.model_copy(update={"save_games": 0})
        return harness.play_all(unsaved, progress=progress, only=only)

    played = play(with_mine, save=True)
    folder = Path(config.out) / ".baselines"
    cached, reused = baselines.cached_results(
        eval_config, teams, lambda only: play(only, save=False), folder, config.engine
    )
    if reused and progress:
        print(f"{reused} baseline team(s) read from {folder}")
    summary = harness.summarize(eval_config, {**played, **cached})
    summary["engine"] = "batched" if batched else "reference"
    report.write(summary, config.folder / "evaluation")
    return summary


def batched_teams(
    config: EvalConfig, lineups: list[Lineup], progress: bool
) -> dict[Lineup, list[GameResult]]:
    """Each team of ``lineups`` on the batched engine, as the harness's game results (game i
    dealt from ``config.seed + i``; every seat's return the outcome, +1 won or −1)."""
    from cauldron.eval import batched

    score = envs.spec(config.env).score
    results = {}
    for lineup in lineups:
        (spec,) = lineup.agents
        players = lineup.players
        outcomes = batched.evaluate(
            config.env,
            players,
            spec,
            None,
            config.games,
            config.seed,
            progress=progress,
            **config.options,
        )
        results[lineup] = [
            GameResult(
                int(seed),
                {f"player_{k}": 1.0 if won else -1.0 for k in range(players)},
                int(steps),
                {"outcome": 1 if won else -1, score: float(value)},
                (spec,) * players,
            )
            for seed, won, value, steps in zip(
                outcomes.seed, outcomes.won, outcomes.score, outcomes.steps, strict=True
            )
        ]
    return results
