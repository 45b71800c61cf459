"""Large evaluations on the batched engine: thousands of seeded games at once
(``python -m eval.batched``).

The harness (``python -m eval``) plays one reference game per process step and keeps every game
for its report; this module answers one question faster, for agents with a batched form
(``random``, ``heuristic:<name>``, ``torch:<checkpoint>`` played greedily, as the harness does,
or drawing from its policy with ``?sample=1``):

* cooperative games: each spec as a whole team; its win rate (Wilson interval) and mean score
  (``stuns``, ``scares``; percentile bootstrap);
* competitive games: ``agent`` against each opponent, the agent's seat going round the table
  row by row (row ``b`` seats it at ``b mod n``, every other seat the opponent); the win rates of
  both sides (Wilson; a shared win counts for both, as in the harness), the paired difference
  "agent won − an opponent won" per game (which is what says who is stronger) and the mean
  score margin (the agent's score minus the opponents' mean, with the game's own scores: in
  Voodoo Mania the fewest points win).

Teams of one command play the same deals (the same seed deals the same games; the chance drawn
later follows the play), so each team after the first also gets its paired score difference
from the first team, deal by deal: tighter than comparing two intervals.

Every row of the batch counts exactly one game, its first: rows are played until each has
finished one (later games of a row, dealt by the engine's auto-reset, are not counted), so short
games are not over-represented. Chunk ``c`` of ``chunk`` rows deals from seed ``seed + c``:
same seed, same games; the deals differ from the harness's, which seeds reference games.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

import envs
from agents.batched import BatchedPolicy, make_batched_agent
from envs.core.batched import MAX_SEED
from envs.core.errors import ConfigError
from envs.core.folders import lock_folder
from eval import report
from eval.provenance import provenance
from eval.stats import bootstrap_mean_interval, wilson_interval
from train.config import apply_override

MAX_THREADS = 256  # as a training config's ``threads``


@dataclass
class Outcomes:
    """Per game (one per row): ``won`` by the side under test, ``lost`` (an opponent won;
    competitive only), ``score`` (the team's score, or the agent's margin) and ``steps``."""

    won: np.ndarray
    lost: np.ndarray
    score: np.ndarray
    steps: np.ndarray


def check_counts(games: int, seed: int, chunk: int) -> None:
    """A :class:`ConfigError` unless ``games`` and ``chunk`` are positive and every chunk's
    seed (``seed + c``) is one the engine takes (0 to 2**64 - 1)."""
    if games < 1 or chunk < 1:
        raise ConfigError(f"games and chunk must be positive, got {games} and {chunk}")
    chunks = -(-games // chunk)
    if not 0 <= seed <= MAX_SEED - (chunks - 1):
        raise ConfigError(
            f"seed must be an integer from 0 to 2**64 - {chunks} (chunk c deals from seed + c, "
            f"{chunks} chunks here), got {seed}"
        )


def play_rows(
    env_id: str,
    num_players: int,
    policies: list[BatchedPolicy],
    owner: torch.Tensor,
    seed: int,
    options: dict[str, Any],
) -> dict[str, torch.Tensor]:
    """Play ``len(owner)`` games, one per row, until each row's first game ends; seat ``s`` of
    row ``b`` is played by ``policies[owner[b, s]]``. Returns each row's figures at the end of
    its first game and its length in agent-steps (``"steps"``)."""
    rows = len(owner)
    benv = envs.make_batched(env_id, num_players, batch_size=rows, **options)
    out = benv.reset(seed=seed)
    index = torch.arange(rows)
    ended = torch.zeros(rows, dtype=torch.bool)
    figures: dict[str, torch.Tensor] = {}
    steps = torch.zeros(rows, dtype=torch.int64)
    while not bool(ended.all()):
        if len(policies) == 1:  # a team: every row's seat is the same policy's
            actions = policies[0].act(out["observation"], out["action_mask"], out["seat"])
        else:
            who = owner[index, out["seat"]]
            actions = torch.zeros(rows, dtype=torch.int64)
            for k, policy in enumerate(policies):
                mine = (who == k).nonzero().squeeze(1)
                if len(mine):
                    actions[mine] = policy.act(
                        out["observation"][mine], out["action_mask"][mine], out["seat"][mine]
                    )
        out = benv.step(actions)
        steps += ~ended
        first = out["done"] & ~ended
        for key, value in out["figures"].items():
            held = figures.setdefault(key, torch.zeros_like(value))
            held[first] = value[first]
        ended |= first
    return {**figures, "steps": steps}


def evaluate(
    env_id: str,
    num_players: int,
    spec: str,
    opponent: str | None = None,
    games: int = 1000,
    seed: int = 0,
    chunk: int = 1024,
    progress: bool = True,
    **options: Any,
) -> Outcomes:
    """``games`` games of ``spec`` as a team (cooperative) or against ``opponent`` (competitive,
    the agent's seat going round the table), in chunks of ``chunk`` rows."""
    game = envs.spec(env_id)
    if game.cooperative != (opponent is None):
        need = "no opponent (a whole team)" if game.cooperative else "an opponent"
        raise ConfigError(f"{env_id} is {'co' if game.cooperative else 'non-co'}operative: {need}")
    check_counts(games, seed, chunk)
    device = torch.device("cpu")
    generator = torch.Generator().manual_seed(seed)
    policies = [
        make_batched_agent(s, env_id, num_players, device, generator)
        for s in ([spec] if opponent is None else [spec, opponent])
    ]
    parts: list[dict[str, torch.Tensor]] = []
    seats = torch.arange(num_players)
    with tqdm(total=games, unit="game", disable=not progress, desc=spec) as bar:
        for c, start in enumerate(range(0, games, chunk)):
            rows = torch.arange(start, min(start + chunk, games))
            if opponent is None:
                owner = torch.zeros(len(rows), num_players, dtype=torch.int64)
            else:
                owner = (seats[None, :] != (rows % num_players)[:, None]).long()
            part = play_rows(env_id, num_players, policies, owner, seed + c, options)
            part["agent_seat"] = rows % num_players
            parts.append(part)
            bar.update(len(rows))
    figures = {k: torch.cat([p[k] for p in parts]) for k in parts[0]}
    steps = figures["steps"].numpy()
    if opponent is None:
        won = (figures["outcome"] == 1).numpy()
        return Outcomes(won, np.zeros_like(won), figures[game.score].double().numpy(), steps)
    mine = figures["agent_seat"]
    at = torch.arange(len(mine))
    winners, scores = figures["winners"], figures["scores"].double()
    others = seats[None, :] != mine[:, None]
    won = winners[at, mine]
    lost = (winners & others).sum(1) > 0
    margin = scores[at, mine] - (scores * others).sum(1) / (num_players - 1)
    return Outcomes(won.numpy(), lost.numpy(), margin.numpy(), steps)


def win_rate(hits: np.ndarray) -> dict[str, float]:
    """The share of ``hits`` with its Wilson 95% interval, as the harness's reports hold it."""
    low, high = wilson_interval(int(hits.sum()), len(hits))
    return {"rate": float(hits.mean()), "low": low, "high": high}


def summary_row(
    label: str, outcomes: Outcomes, competitive: bool, first: Outcomes | None = None
) -> str:
    """A markdown table row: games, win rate [95%], (loss rate), mean score [95%], length and
    a paired difference: for an agent, won − an opponent won, game by game (a shared win
    counts 0); for a team, its score minus the ``first`` team's on the same deals."""
    mean, low, high = bootstrap_mean_interval(outcomes.score.tolist())
    cells = [label, f"{len(outcomes.won):,}", report.pct(win_rate(outcomes.won))]
    if competitive:
        cells.append(report.pct(win_rate(outcomes.lost)))
    cells += [f"{mean:.3f} [{low:.3f}, {high:.3f}]", f"{outcomes.steps.mean():.0f}"]
    if competitive:
        won = outcomes.won.astype(float) - outcomes.lost.astype(float)
        diff, low, high = bootstrap_mean_interval(won.tolist())
        cells.append(f"{diff:+.1%} [{low:+.1%}, {high:+.1%}]")
    else:
        cells.append("–")
        if first is not None and first is not outcomes:
            diff, low, high = bootstrap_mean_interval((outcomes.score - first.score).tolist())
            cells[-1] = f"{diff:+.3f} [{low:+.3f}, {high:+.3f}]"
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", help=f"environment id: {', '.join(envs.batched_ids())}")
    parser.add_argument("specs", nargs="+", help="agent specs (each a team, or the agent first)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--games", type=int, default=1000, help="games per row of the table")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=1024, help="games stepped at once")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: one per core)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a game option"
    )
    parser.add_argument(
        "--out", type=Path, help="folder for report.md, results.json (every game) and a plot"
    )
    args = parser.parse_args(argv)
    if not 0 <= args.threads <= MAX_THREADS:
        raise ConfigError(
            f"--threads must be 0 (one per core) to {MAX_THREADS}, got {args.threads}"
        )
    check_counts(args.games, args.seed, args.chunk)
    torch.set_num_threads(args.threads or os.cpu_count() or 1)
    options: dict[str, Any] = {}
    for pair in args.set:
        apply_override(options, pair)
    game = envs.spec(args.env)
    competitive = not game.cooperative
    if competitive and len(args.specs) < 2:
        raise ConfigError("a competitive game needs the agent and at least one opponent")
    score = "score margin" if competitive else f"mean {game.score}"
    header = ["agent" if competitive else "team", "games", "win"]
    header += ["opponent wins"] if competitive else []
    header += [f"{score} [95% CI]", "length"]
    header += (
        ["agent won − opponent won [95% CI]"]
        if competitive
        else [f"{game.score} − first team's, same deals [95% CI]"]
    )
    lines = [
        f"{args.env}, {args.players} players, batched engine, seed {args.seed}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    matches = (
        [(s, None, s) for s in args.specs]
        if not competitive
        else [(args.specs[0], o, f"{args.specs[0]} vs {o}") for o in args.specs[1:]]
    )
    if args.out:
        report.prepare(args.out)
    # one evaluation at a time writes the folder
    with lock_folder(args.out) if args.out else contextlib.nullcontext():
        played = []
        for spec, opponent, label in matches:
            outcomes = evaluate(
                args.env, args.players, spec, opponent, args.games, args.seed, args.chunk, **options
            )
            played.append((spec, opponent, outcomes))
            lines.append(summary_row(label, outcomes, competitive, played[0][2]))
        print("\n".join(lines))
        if args.out:
            config = {**vars(args), "out": str(args.out), "options": options}
            write(args.out, lines, config, played)
    return lines


def write(
    folder: Path,
    lines: list[str],
    config: dict[str, Any],
    played: list[tuple[str, str | None, Outcomes]],
) -> None:
    """``report.md`` (the table), ``results.json`` (the command, its provenance and every game
    of every row) and ``win_rates.png`` (the harness's plot of win rates with 95% intervals),
    each written whole (:func:`eval.report.write_text`)."""
    n = config["players"]
    rows, plotted = [], []
    for spec, opponent, outcomes in played:
        games = {k: v.tolist() for k, v in vars(outcomes).items()}
        rows.append({"spec": spec, "opponent": opponent, "games": games})

        if opponent is None:
            plotted.append(
                {"kind": "team", "lineup": [spec], "players": n, "win": win_rate(outcomes.won)}
            )
        else:
            other = opponent if opponent != spec else f"{opponent} (opponent)"
            wins = {spec: win_rate(outcomes.won), other: win_rate(outcomes.lost)}
            plotted.append(
                {
                    "kind": "head_to_head",
                    "lineup": list(wins),
                    "seats": [1, n - 1],
                    "players": n,
                    "wins": wins,
                }
            )
    summary = {"config": {"env": config["env"], "agents": config["specs"]}, "rows": plotted}
    results = {
        "config": config,
        "provenance": provenance(summary["config"]),
        "table": lines,
        "rows": rows,
    }
    report.write_text(folder / "results.json", json.dumps(results, indent=1, default=str))
    report.write_text(folder / "report.md", "\n".join(lines) + "\n")
    report.plot_win_rates(summary, folder / "win_rates.png")


if __name__ == "__main__":
    from envs.core.errors import run_command

    run_command(main)
