"""Large evaluations on the batched engine: thousands of seeded games at once
(``cauldron eval-batched``).

The harness (``cauldron eval``) plays one reference game per process step and keeps every game
for its report; this module answers one question faster, for agents with a batched form
(``random``, ``heuristic:<name>``, ``torch:<checkpoint>`` played greedily, as the harness does,
or drawing from its policy with ``?sample=1``) and for ``python:<module>:<Class>`` agents, asked
row by row (:class:`cauldron.agents.batched.PerGameAgents`: slow but exact):

* cooperative games: each spec as a whole team, or with ``--partner P`` (ad-hoc teamwork) each
  spec other than the reference in one seat going round the table (game ``i`` seats it at
  ``i mod n``, every other seat ``P``) while the reference team stays whole (give it ``P``'s
  own team); its win rate (Wilson interval), mean score
  (``stuns``, ``scares``; percentile bootstrap) and length. With two teams or more, each team
  minus a reference team (the first, or ``--baseline``) deal by deal, in win rate and in score,
  each with the percentile-bootstrap interval of the per-deal differences (the protocol's
  paired comparison, as the harness's ``Paired differences``). ``--across-seeds`` reads the
  other teams as training seeds of one recipe (docs/benchmark_protocol.md): each seed's paired
  difference, their mean with a percentile-bootstrap interval over the seeds, and how many
  seeds' own intervals lie above 0 (:func:`across_seeds`);
* competitive games: ``agent`` against each opponent, the agent's seat going round the table
  (game ``i`` seats it at ``i mod n``, every other seat the opponent); the win rates of both
  sides (Wilson; a shared win counts for both, as in the harness), the paired difference
  "agent won − an opponent won" per game (which is what says who is stronger) and the mean
  score margin (the agent's score minus the opponents' mean, with the game's own scores: in
  Voodoo Mania the fewest points win). ``--agents K`` plays each of the first K specs against
  every later one; with ``--across-seeds`` the K agents are training seeds of one recipe: per
  opponent, each seed's "won − lost", their mean with a percentile-bootstrap interval over the
  seeds, and how many seeds' own intervals lie above 0 (:func:`across_seeds_against`).

Game ``i`` (from 0) is dealt from seed ``seed + i``, and all its chance (the deal, the draws of
play, the agents' own draws) comes from that seed's streams
(:class:`cauldron.envs.core.batched.RowStreams`), so a game's result depends neither on ``--chunk``
(how many games step at once) nor on the other games, and every team and opponent meets the same
deals. The deals differ from the harness's, which seeds reference games. Every row counts its
first game only (rows are played until each has finished one; later games, dealt by the
engine's auto-reset, are not counted), so short games are not over-represented.

``--out DIR`` writes ``report.md`` (the tables, the command and the provenance line),
``results.json`` (the command, the provenance of :func:`cauldron.eval.provenance.provenance` and
every game: ``seed``, ``won``, the score, ``steps``, and for competitive games ``lost`` and
``agent_seat``) and ``win_rates.png``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from cauldron import envs
from cauldron.agents.batched import BatchedNet, BatchedPolicy, PerGameAgents, make_batched_agent
from cauldron.agents.torch_policy import choose_threads
from cauldron.envs.core.batched import MAX_SEED, RowStreams, row_seeds
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.folders import lock_folder
from cauldron.envs.registry import MEASURES
from cauldron.eval import report, splits
from cauldron.eval.config import apply_override, check_option_names
from cauldron.eval.provenance import provenance
from cauldron.eval.splits import DEFAULT_SPLIT, SPLITS
from cauldron.eval.stats import (
    MIN_SEEDS,
    bootstrap_mean_interval,
    judged,
    paired_difference,
    wilson_interval,
)

ROW_AWARE = (PerGameAgents, BatchedNet)  # policies told which rows they act for, and new games
MAX_THREADS = 256  # as a training config's ``threads``
AGENT_SALT = 1  # the agents' streams, apart from the engine's (salt 0) on the same seeds


@dataclass
class Outcomes:
    """Per game, in game order: ``seed`` (uint64, its deal), ``won`` by the side under test,
    ``score`` (the team's score, or the agent's margin), ``steps``, ``truncated`` (cut short by
    a clock: nobody won); competitive games also ``lost`` (an opponent won); ``agent_seat``
    the seat of the agent under test (competitive games, and cooperative games with a
    partner), else None."""

    seed: np.ndarray
    won: np.ndarray
    score: np.ndarray
    steps: np.ndarray
    truncated: np.ndarray
    lost: np.ndarray | None = None
    agent_seat: np.ndarray | None = None

    def counts(self) -> dict[str, int]:
        """How the games ended, adding up to the games played: ``won`` (by the side under
        test alone), ``lost`` (by an opponent alone; a cooperative team's loss), ``drawn`` (a
        shared win, or no winner) and ``truncated`` (cut short by a clock)."""
        won = self.won.astype(bool)
        truncated = self.truncated.astype(bool)
        lost = ~won & ~truncated if self.lost is None else self.lost.astype(bool)
        alone = {"won": won & ~lost, "lost": lost & ~won}
        drawn = ~alone["won"] & ~alone["lost"] & ~truncated
        return {
            "won": int(alone["won"].sum()),
            "lost": int(alone["lost"].sum()),
            "drawn": int(drawn.sum()),
            "truncated": int(truncated.sum()),
        }


class AgentChance:
    """The agents' chance in a chunk: row ``b``'s draws come from its game's own stream (salted
    apart from the engine's), whichever rows a policy is asked about together (:meth:`focus`)."""

    def __init__(self) -> None:
        self.streams: RowStreams | None = None
        self.view: RowStreams | None = None

    def begin(self, seeds: torch.Tensor) -> None:
        self.streams = self.view = RowStreams(seeds, AGENT_SALT)

    def focus(self, rows: torch.Tensor) -> None:
        self.view = self.streams.take(rows)

    def rand(
        self,
        shape: tuple[int, ...],
        rows: torch.Tensor | None = None,
        dtype: torch.dtype | None = None,
    ) -> torch.Tensor:
        return self.view.rand(shape, rows, dtype)

    def randint(
        self, high: int, shape: tuple[int, ...], rows: torch.Tensor | None = None
    ) -> torch.Tensor:
        return self.view.randint(high, shape, rows)


def check_counts(games: int, seed: int, chunk: int) -> None:
    """A :class:`ConfigError` unless ``games`` and ``chunk`` are positive and every game's seed
    (``seed + i``) is one the engine takes (0 to 2**64 - 1)."""
    if games < 1 or chunk < 1:
        raise ConfigError(f"games and chunk must be positive, got {games} and {chunk}")
    if not 0 <= seed <= MAX_SEED - (games - 1):
        raise ConfigError(
            f"seed must be an integer from 0 to 2**64 - {games} (game i deals from seed + i, "
            f"{games} games here), got {seed}"
        )


def choose(
    policy: BatchedPolicy,
    rows: torch.Tensor,
    observation: torch.Tensor,
    mask: torch.Tensor,
    seat: torch.Tensor,
) -> torch.Tensor:
    """``policy``'s actions for ``rows`` of the batch (a per-game agent needs to know which)."""
    if isinstance(policy, ROW_AWARE):
        return policy.act_rows(rows, observation, mask, seat)
    return policy.act(observation, mask, seat)


def play_rows(
    env_id: str,
    num_players: int,
    policies: list[BatchedPolicy],
    owner: torch.Tensor,
    seeds: list[int],
    chance: AgentChance,
    options: dict[str, Any],
) -> dict[str, torch.Tensor]:
    """Play ``len(owner)`` games, row ``b``'s dealt from ``seeds[b]``, until each row's first
    game ends; seat ``s`` of row ``b`` is played by ``policies[owner[b, s]]``. Rows whose first
    game is over play their first legal action. Returns each row's figures at the end of its
    first game, its length in agent-steps (``"steps"``) and whether a clock cut it short
    (``"truncated"``)."""
    rows = len(owner)
    benv = envs.make_batched(env_id, num_players, batch_size=rows, **options)
    out = benv.reset(seed=seeds)
    chance.begin(row_seeds(seeds, rows))
    for policy in policies:
        if isinstance(policy, ROW_AWARE):
            policy.begin(seeds)
    index = torch.arange(rows)
    ended = torch.zeros(rows, dtype=torch.bool)
    figures: dict[str, torch.Tensor] = {}
    steps = torch.zeros(rows, dtype=torch.int64)
    truncated = torch.zeros(rows, dtype=torch.bool)
    while not bool(ended.all()):
        actions = out["action_mask"].to(torch.int8).argmax(1)
        who = torch.where(ended, -1, owner[index, out["seat"]])
        for k, policy in enumerate(policies):
            mine = (who == k).nonzero().squeeze(1)
            if len(mine):
                chance.focus(mine)
                obs, mask, seat = (out[key][mine] for key in ("observation", "action_mask", "seat"))
                actions[mine] = choose(policy, mine, obs, mask, seat)
        out = benv.step(actions)
        steps += ~ended
        first = out["done"] & ~ended
        for key, value in out["figures"].items():
            held = figures.setdefault(key, torch.zeros_like(value))
            held[first] = value[first]
        truncated[first] = out["truncated"][first]
        ended |= first
    return {**figures, "steps": steps, "truncated": truncated}


def evaluate(
    env_id: str,
    num_players: int,
    spec: str,
    opponent: str | None = None,
    games: int = 1000,
    seed: int = 0,
    chunk: int = 1024,
    progress: bool = True,
    partner: str | None = None,
    **options: Any,
) -> Outcomes:
    """``games`` games of ``spec`` as a team (cooperative), in one seat beside ``partner`` in
    the others (cooperative, ad-hoc teamwork) or against ``opponent`` (competitive), the seat of
    ``spec`` going round the table in the last two; game ``i`` dealt from ``seed + i``, stepped
    ``chunk`` at a time (the results do not depend on ``chunk``)."""
    game = envs.spec(env_id)
    if game.cooperative != (opponent is None):
        need = "no opponent (a whole team)" if game.cooperative else "an opponent"
        raise ConfigError(f"{env_id} is {'co' if game.cooperative else 'non-co'}operative: {need}")
    if partner is not None and not game.cooperative:
        raise ConfigError(f"a partner is for cooperative games; {env_id} is competitive")
    other = opponent if partner is None else partner
    check_counts(games, seed, chunk)
    check_option_names(env_id, options)
    device = torch.device("cpu")
    chance = AgentChance()
    policies = [
        make_batched_agent(s, env_id, num_players, device, chance, per_game=True)
        for s in ([spec] if other is None else [spec, other])
    ]
    parts: list[dict[str, torch.Tensor]] = []
    seats = torch.arange(num_players)
    with tqdm(total=games, unit="game", disable=not progress, desc=spec) as bar:
        for start in range(0, games, chunk):
            rows = torch.arange(start, min(start + chunk, games))
            if other is None:
                owner = torch.zeros(len(rows), num_players, dtype=torch.int64)
            else:
                owner = (seats[None, :] != (rows % num_players)[:, None]).long()
            seeds = [seed + int(r) for r in rows]
            part = play_rows(env_id, num_players, policies, owner, seeds, chance, options)
            part["agent_seat"] = rows % num_players
            parts.append(part)
            bar.update(len(rows))
    figures = {k: torch.cat([p[k] for p in parts]) for k in parts[0]}
    dealt = np.array([seed + i for i in range(games)], dtype=np.uint64)
    steps, truncated = figures["steps"].numpy(), figures["truncated"].numpy()
    if game.cooperative:
        won = (figures["outcome"] == 1).numpy()
        seat = None if partner is None else figures["agent_seat"].numpy()
        score = figures[game.score].double().numpy()
        return Outcomes(dealt, won, score, steps, truncated, agent_seat=seat)
    mine = figures["agent_seat"]
    at = torch.arange(len(mine))
    winners, scores = figures["winners"], figures["scores"].double()
    others = seats[None, :] != mine[:, None]
    won = winners[at, mine]
    lost = (winners & others).sum(1) > 0
    margin = scores[at, mine] - (scores * others).sum(1) / (num_players - 1)
    return Outcomes(
        dealt, won.numpy(), margin.numpy(), steps, truncated, lost.numpy(), mine.numpy()
    )


def win_rate(hits: np.ndarray) -> dict[str, float]:
    """The share of ``hits`` with its Wilson 95% interval, as the harness's reports hold it."""
    low, high = wilson_interval(int(hits.sum()), len(hits))
    return {"rate": float(hits.mean()), "low": low, "high": high}


def interval(mean: float, low: float, high: float) -> dict[str, float]:
    return {"mean": mean, "low": low, "high": high}


def summarize(outcomes: Outcomes, reference: Outcomes | None = None) -> dict[str, Any]:
    """Figures of one row: ``count`` (games), ``counts`` (:meth:`Outcomes.counts`), ``win``
    (Wilson), ``score`` (bootstrap), ``length``; competitive: ``opponent_win`` and
    ``won_minus_lost`` (the game's measure, per game a shared win counting 0, judged by
    :func:`cauldron.eval.stats.judged`); cooperative, given another team's ``reference`` outcomes on
    the same deals: ``paired``, this team's win (the game's measure, judged) and score (a
    diagnostic) minus the reference's, deal by deal."""
    row: dict[str, Any] = {
        "count": len(outcomes.won),
        "counts": outcomes.counts(),
        "win": win_rate(outcomes.won),
        "score": interval(*bootstrap_mean_interval(outcomes.score.tolist())),
        "length": float(outcomes.steps.mean()),
    }
    if outcomes.lost is not None:
        row["opponent_win"] = win_rate(outcomes.lost)
        row["won_minus_lost"] = judged(outcomes.won.astype(float) - outcomes.lost.astype(float))
    elif reference is not None:
        if not np.array_equal(outcomes.seed, reference.seed):
            raise ValueError("paired differences need the same deals on both sides")
        row["paired"] = {
            "win": judged(outcomes.won.astype(float) - reference.won.astype(float)),
            "score": interval(*paired_difference(outcomes.score, reference.score)),
        }
    return row


def over_seeds(per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    """Paired figures of several training seeds of one recipe: ``per_seed`` (each seed's
    mean), ``mean`` with the 95% percentile-bootstrap interval over the seeds (rough with 3 to 5
    seeds), ``above`` and ``below`` (the seeds whose own interval lies above or below 0)."""
    means = [m["mean"] for m in per_seed]
    return {
        "per_seed": means,
        "mean": interval(*bootstrap_mean_interval(means)),
        "above": sum(m["low"] > 0 for m in per_seed),
        "below": sum(m["high"] < 0 for m in per_seed),
    }


def across_seeds(
    rows: list[dict[str, Any]], played: list[Outcomes], reference: int
) -> dict[str, dict[str, Any]]:
    """The paired rows (each a training seed of one recipe against the ``reference`` team)
    summarised per figure (``win``, the game's measure; ``score``, a diagnostic) by
    :func:`over_seeds`; the measure also ``pooled``: the seeds' mean win minus the
    reference's, deal by deal, judged (:func:`cauldron.eval.stats.judged`)."""
    paired = [row["paired"] for row in rows if "paired" in row]
    summary = {key: over_seeds([p[key] for p in paired]) for key in ("win", "score")}
    base = played[reference].won.astype(float)
    seeds = [o.won.astype(float) for k, o in enumerate(played) if k != reference]
    summary["win"]["pooled"] = judged(np.mean(seeds, axis=0) - base)
    return summary


def across_seeds_against(
    rows: list[dict[str, Any]], played: list[Outcomes]
) -> dict[str, dict[str, Any]]:
    """Competitive rows of several agents (training seeds of one recipe) against the same
    opponents, summarised per opponent by :func:`over_seeds` of "won − lost", with the seeds'
    mean "won − lost" deal by deal judged as ``pooled``."""
    summary = {}
    for opponent in dict.fromkeys(row["opponent"] for row in rows):
        mine = [k for k, row in enumerate(rows) if row["opponent"] == opponent]
        entry = over_seeds([rows[k]["won_minus_lost"] for k in mine])
        margins = [played[k].won.astype(float) - played[k].lost.astype(float) for k in mine]
        entry["pooled"] = judged(np.mean(margins, axis=0))
        summary[opponent] = entry
    return summary


def seeds_table(
    summary: dict[str, dict[str, Any]], title: str, names: dict[str, tuple[str, str]]
) -> list[str]:
    """The lines of an across-seeds table (:func:`across_seeds`, :func:`across_seeds_against`):
    ``title``, then a row per key of ``names`` (its first cell and number format)."""
    count = len(next(iter(summary.values()))["per_seed"])
    lines = [
        "",
        f"Across seeds: {title}; the mean over seeds with its percentile-bootstrap interval over "
        "the seeds (rough with few seeds)",
        "",
        "| measure | per seed | mean over seeds [95% CI] | seeds with their interval above 0 | "
        "below 0 | the seeds together, paired [95% CI] | verdict | detectable |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key, (name, form) in names.items():
        m, mean = summary[key], summary[key]["mean"]
        per_seed = ", ".join(f"{v:{form}}" for v in m["per_seed"])
        interval_cell = f"{mean['mean']:{form}} [{mean['low']:{form}}, {mean['high']:{form}}]"
        together = _judged(m["pooled"]) if "pooled" in m else "(a diagnostic) | | "
        lines.append(
            f"| {name} | {per_seed} | {interval_cell} | {m['above']} of {count} | "
            f"{m['below']} of {count} | {together} |"
        )
    if count < MIN_SEEDS:
        lines += ["", f"warning: {count} seeds; the protocol asks for at least {MIN_SEEDS}"]
    return lines


def _mean(m: dict[str, float], sign: str = "") -> str:
    return f"{m['mean']:{sign}.3f} [{m['low']:{sign}.3f}, {m['high']:{sign}.3f}]"


def _ends(counts: dict[str, int]) -> str:
    return " / ".join(f"{counts[k]:,}" for k in ("won", "lost", "drawn", "truncated"))


def _judged(m: dict[str, Any]) -> str:
    """A measure's paired cells: the difference, the verdict, the detectable difference."""
    return f"{report.signed_pct(m)} | {m['verdict']} | ±{m['detectable']:.1%}"


def tables(
    env_id: str, players: int, split: str, seed: int, games: int, rows: list[dict[str, Any]]
) -> list[str]:
    """The markdown tables: teams, then their paired differences (cooperative), or agent against
    each opponent (competitive); verdicts by the game's measure
    (:data:`cauldron.envs.registry.MEASURES`), "detectable" being the smallest difference these
    games would find (80% power)."""
    game = envs.spec(env_id)
    lines = [
        f"{env_id}, {players} players, batched engine, {split} split, {games:,} games per row, "
        f"game i dealt from seed {seed:,} + i (seeds {seed:,}–{seed + games - 1:,}); measure: "
        f"{MEASURES[game.measure]}",
        "",
    ]
    if game.cooperative:
        lines += [
            f"| team | games | won / lost / drawn / truncated | win [95% CI] | "
            f"mean {game.score} [95% CI] | length |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['label']} | {r['count']:,} | {_ends(r['counts'])} | {report.pct(r['win'])} | "
            f"{_mean(r['score'])} | {r['length']:.0f} |"
            for r in rows
        ]
        paired = [r for r in rows if "paired" in r]
        if paired:
            lines += [
                "",
                "Paired differences (same deals): each team minus the reference team, with the "
                "bootstrap interval of the per-deal differences; the verdict is the win rate's, "
                f"{game.score} is a diagnostic",
                "",
                f"| team | reference | win rate, paired [95% CI] | verdict | detectable | "
                f"{game.score}, paired [95% CI] |",
                "|---|---|---|---|---|---|",
            ]
            lines += [
                f"| {r['label']} | {r['reference']} | {_judged(r['paired']['win'])} | "
                f"{_mean(r['paired']['score'], '+')} |"
                for r in paired
            ]
        return lines
    lines += [
        "| agent | games | won / lost / drawn / truncated | win [95% CI] | "
        "opponent wins [95% CI] | score margin [95% CI] | length | "
        "agent won − opponent won [95% CI] | verdict | detectable |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['label']} | {r['count']:,} | {_ends(r['counts'])} | {report.pct(r['win'])} | "
        f"{report.pct(r['opponent_win'])} | {_mean(r['score'])} | {r['length']:.0f} | "
        f"{_judged(r['won_minus_lost'])} |"
        for r in rows
    ]
    return lines


def main(argv: list[str] | None = None) -> list[str]:
    """The command: prints the tables (returned as lines) and, with ``--out``, writes the
    folder (:func:`write`)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(
        prog="cauldron eval-batched", description=__doc__.splitlines()[0]
    )
    parser.add_argument("env", help=f"environment id: {', '.join(envs.batched_ids())}")
    parser.add_argument("specs", nargs="+", help="agent specs (each a team, or the agent first)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--games", type=int, default=1000, help="games per row of the table")
    parser.add_argument(
        "--split",
        default=DEFAULT_SPLIT,
        help=f"the deals: {', '.join(s.describe() for s in SPLITS.values())}",
    )
    parser.add_argument(
        "--seed", type=int, help="game i is dealt from seed + i (default: the split's first seed)"
    )
    parser.add_argument("--chunk", type=int, default=1024, help="games stepped at once")
    parser.add_argument(
        "--baseline", help="cooperative: the team the others are compared with (default: first)"
    )
    parser.add_argument(
        "--partner",
        help="cooperative: every team but the reference plays one seat (going round the table) "
        "with this agent in the others; make the reference this agent's own team",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: one per core)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a game option"
    )
    parser.add_argument(
        "--out", type=Path, help="folder for report.md, results.json (every game) and a plot"
    )
    parser.add_argument(
        "--agents",
        type=int,
        default=1,
        help="competitive: the first K specs are agents, each played against every later spec",
    )
    parser.add_argument(
        "--across-seeds",
        action="store_true",
        help="the teams other than the reference (cooperative) or the --agents (competitive) are "
        "training seeds of one recipe; add their mean paired difference or won − lost with an "
        "interval over the seeds",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.threads <= MAX_THREADS:
        raise ConfigError(
            f"--threads must be 0 (one per core) to {MAX_THREADS}, got {args.threads}"
        )
    check_counts(args.games, args.seed or 0, args.chunk)
    args.seed = splits.first_seed(args.split, args.seed, args.games)
    choose_threads(args.threads or os.cpu_count() or 1)
    options: dict[str, Any] = {}
    for pair in args.set:
        apply_override(options, pair)
    check_option_names(args.env, options, "--set")
    competitive = not envs.spec(args.env).cooperative
    if competitive and len(args.specs) < 2:
        raise ConfigError("a competitive game needs the agent and at least one opponent")
    if args.baseline is not None and (competitive or args.baseline not in args.specs):
        raise ConfigError(
            f"--baseline must be one of the teams {args.specs} (cooperative games only), "
            f"got {args.baseline!r}"
        )
    if competitive and not 1 <= args.agents < len(args.specs):
        raise ConfigError(
            f"--agents must be 1 to {len(args.specs) - 1}: the agents come first and at least "
            f"one opponent after them; got {args.agents}"
        )
    if args.partner is not None and competitive:
        raise ConfigError(f"--partner is for cooperative games; {args.env} is competitive")
    if not competitive and args.agents != 1:
        raise ConfigError(f"--agents is for competitive games; {args.env} is cooperative")
    if args.across_seeds and (args.agents < 2 if competitive else len(args.specs) < 3):
        raise ConfigError(
            "--across-seeds needs the seeds: in a cooperative game at least 2 teams besides the "
            f"reference (got {len(args.specs)} team(s)), in a competitive game --agents 2 or "
            f"more; {args.env} is {'competitive' if competitive else 'cooperative'}"
        )
    agents = args.specs[: args.agents]
    reference = 0 if args.baseline is None else args.specs.index(args.baseline)
    matches = (
        [(a, o, f"{a} vs {o}") for a in agents for o in args.specs[args.agents :]]
        if competitive
        else [(s, None, teamed(s, args.partner, k == reference)) for k, s in enumerate(args.specs)]
    )
    config = {**vars(args), "out": str(args.out), "options": options}
    command = "cauldron eval-batched " + shlex.join(argv)
    source = {**provenance(shaping(config)), "command": command}
    if args.out:
        report.prepare(args.out)
    # one evaluation at a time writes the folder
    with lock_folder(args.out) if args.out else contextlib.nullcontext():
        played = [
            evaluate(
                args.env,
                args.players,
                spec,
                opponent,
                args.games,
                args.seed,
                args.chunk,
                partner=None if label == spec else args.partner,
                **options,
            )
            for spec, opponent, label in matches
        ]
        rows = []
        for k, ((spec, opponent, label), outcomes) in enumerate(zip(matches, played, strict=True)):
            other = played[reference] if len(played) > 1 and k != reference else None
            row = {"spec": spec, "opponent": opponent, "label": label}
            row.update(summarize(outcomes, None if competitive else other))
            if "paired" in row:
                row["reference"] = matches[reference][2]
            rows.append(row)
        lines = tables(args.env, args.players, args.split, args.seed, args.games, rows)
        seeds = None
        if args.across_seeds and competitive:
            seeds = across_seeds_against(rows, played)
            title = f"the {len(agents)} agents as training seeds of one recipe, agent won − lost"
            names = {o: (f"won − lost against {o}", "+.1%") for o in seeds}
            lines += seeds_table(seeds, title, names)
        elif args.across_seeds:
            seeds = across_seeds(rows, played, reference)
            title = (
                f"the {len(rows) - 1} teams after the reference as training seeds of one recipe, "
                f"each minus {matches[reference][2]} deal by deal"
            )
            score = envs.spec(args.env).score
            names = {"win": ("win rate, paired", "+.1%"), "score": (f"{score}, paired", "+.3f")}
            lines += seeds_table(seeds, title, names)
        print("\n".join(lines))
        if args.out:
            write(args.out, lines, config, source, rows, played, seeds)
    return lines


def teamed(spec: str, partner: str | None, reference: bool) -> str:
    """A cooperative row's label: the team ``spec``, or ``spec`` in one seat ``+ partner``."""
    return spec if partner is None or reference else f"{spec} + {partner}"


def shaping(config: dict[str, Any]) -> dict[str, Any]:
    """What of the command's ``config`` shapes the games, for the config hash: not ``chunk``,
    ``threads`` or ``out``."""
    keys = ("env", "players", "games", "split", "seed", "baseline", "partner", "options")
    return {"agents": config["specs"], **{key: config[key] for key in keys}}


def write(
    folder: Path,
    lines: list[str],
    config: dict[str, Any],
    source: dict[str, Any],
    rows: list[dict[str, Any]],
    played: list[Outcomes],
    seeds: dict[str, dict[str, Any]] | None = None,
) -> None:
    """``report.md`` (a title, the command, the provenance line and the tables),
    ``results.json`` (the command, the config, its ``source``: the provenance taken before the
    games were played, the tables, every game of every row and, with ``--across-seeds``,
    ``across_seeds``) and ``win_rates.png`` (the harness's plot of win rates with 95%
    intervals), each written whole (:func:`cauldron.eval.report.write_text`)."""
    n, score = config["players"], envs.spec(config["env"]).score
    command = source["command"]
    plotted = []
    for row, outcomes in zip(rows, played, strict=True):
        spec, opponent = row["spec"], row["opponent"]
        columns: dict[str, Any] = {
            "seed": [int(s) for s in outcomes.seed],
            "won": outcomes.won.tolist(),
            "truncated": outcomes.truncated.tolist(),
            (score if opponent is None else "margin"): outcomes.score.tolist(),
            "steps": outcomes.steps.tolist(),
        }
        if outcomes.agent_seat is not None:
            columns["agent_seat"] = outcomes.agent_seat.tolist()
        if opponent is None:
            plotted.append(
                {"kind": "team", "lineup": [row["label"]], "players": n, "win": row["win"]}
            )
        else:
            columns["lost"] = outcomes.lost.tolist()
            other = opponent if opponent != spec else f"{opponent} (opponent)"
            wins = {spec: row["win"], other: row["opponent_win"]}
            plotted.append(
                {
                    "kind": "head_to_head",
                    "lineup": list(wins),
                    "seats": [1, n - 1],
                    "players": n,
                    "wins": wins,
                }
            )
        row["games"] = columns
    summary = {"config": {"env": config["env"]}, "provenance": source, "rows": plotted}
    results = {
        "command": command,
        "config": config,
        "provenance": source,
        "table": lines,
        "rows": rows,
    }
    if seeds:
        results["across_seeds"] = seeds
    text = [
        f"# Batched evaluation: {config['env']}, {n} players",
        "",
        f"`{command}`",
        "",
        report.provenance_line(summary),
        "",
        *lines,
        "",
        "![win rates](win_rates.png)",
    ]
    saved = report.dumps(results)
    written(folder / "results.json", lambda path: report.write_text(path, saved))
    written(folder / "report.md", lambda path: report.write_text(path, "\n".join(text) + "\n"))
    written(folder / "win_rates.png", lambda path: report.plot_win_rates(summary, path))


def written(path: Path, write: Callable[[Path], None]) -> None:
    """``write(path)`` (a whole-file write, which leaves any earlier file as it was if it
    fails); an ``OSError`` (a full disk, no permission) becomes a one-line :class:`ConfigError`
    naming ``path`` and the system's reason."""
    try:
        write(path)
    except OSError as err:
        raise ConfigError(
            f"cannot write {str(path)!r}: {err.strerror or err}; an earlier file there is kept"
        ) from None


if __name__ == "__main__":
    from cauldron.envs.core.errors import run_command

    run_command(main)
