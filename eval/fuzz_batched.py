"""Fuzz the batched engines: many ``step`` calls at every player count under four policies,
with the engine's promises checked after every call (``cauldron fuzz-batched``).

    cauldron fuzz-batched [--calls N] [--batch B] [--games ID ...] [--seed S]
                                [--max-steps M]

For every batched game (``cauldron.envs.batched_ids()``, or ``--games``) the ``N`` calls are shared
evenly among its player counts (the registry's range) and the policies:

* ``random``: a uniformly random legal action per row;
* ``lowest`` / ``highest``: each row's lowest / highest legal action;
* ``penalty``: random legal play under option ``illegal_action: penalty``, where each row plays
  an illegal action with probability :data:`ILLEGAL_SHARE` per call (half of them a masked-out
  action, half one out of range). Every game has this option: :class:`~cauldron.envs.core.batched.
  BatchedEnv` implements it once for all engines (the row's game is restored, then ends with
  ``illegal_reward``).

After each call these must hold, or the call counts a violation:

* ``step`` raises nothing;
* every observation is float32 and inside the reference observation space's Box;
* every seat is in range, every reward finite, and every row has a legal action (after the
  engine's auto-reset every row is a live game);
* a row's game ends only (a) by an illegal action, exactly where one was played: ``done``, not
  truncated, ``illegal_reward`` for the seat (the team in a cooperative game); (b) by
  truncation, only once the row has played ``max_steps`` agent-steps (or by the game's own
  clock, :data:`CLOCKS`); (c) by its rules, with a result (a winner, or a cooperative outcome
  won or lost);
* no row plays past ``max_steps`` (plus the other seats of a simultaneous step) without ending.

The table counts, per game, player count and policy: calls, games ended by their rules, by a
penalty, by truncation, violations, and the cost per call (this process's CPU time, checks
included, so that other processes on the cores do not count); a summary follows, per game
and for the run: step calls, games ended, violations and CPU time. The exit status is 1 on
any violation (the first few of each row are printed).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import torch
from tqdm import tqdm

from cauldron import envs
from cauldron.agents.batched import BatchedRandom
from cauldron.envs.core.batched import MAX_SEED, BatchedEnv, checked_seed
from cauldron.envs.core.errors import ConfigError

POLICIES = ("random", "lowest", "highest", "penalty")
ILLEGAL_SHARE = 0.01  # per row and call, under the penalty policy
CLOCKS = {"voodoo_mania_v1": ("tick", "max_ticks")}  # a game's own clock: figure, option
SHOWN = 5  # violations printed per row of the table


@dataclass
class Tally:
    """What one game, player count and policy did."""

    calls: int = 0
    rules: int = 0
    penalty: int = 0
    truncated: int = 0
    violations: int = 0
    seconds: float = 0.0  # CPU time
    shown: list[str] = field(default_factory=list)

    def violate(self, where: str, problems: list[str]) -> None:
        """Count ``problems`` found at ``where``; keep the first few to show."""
        self.violations += len(problems)
        self.shown += [f"{where}: {p}" for p in problems][: SHOWN - len(self.shown)]

    def count(self, done: torch.Tensor, truncated: torch.Tensor, illegal: torch.Tensor) -> None:
        """Count the games that ended with a call: by a penalty, truncated, by their rules."""
        self.penalty += int((done & illegal).sum())
        self.truncated += int((done & truncated).sum())
        self.rules += int((done & ~truncated & ~illegal).sum())


class Fuzzer:
    """One engine of ``env_id`` at ``num_players`` with game ``options``, played by ``policy``
    and checked call by call."""

    def __init__(
        self,
        env_id: str,
        num_players: int,
        policy: str,
        batch: int,
        seed: int,
        options: dict[str, Any] | None = None,
    ) -> None:
        options = {**(options or {})}
        if policy == "penalty":
            options["illegal_action"] = "penalty"
        self.env_id, self.policy, self.seed = env_id, policy, seed
        self.benv: BatchedEnv = envs.make_batched(env_id, num_players, batch, **options)
        reference = envs.make(env_id, num_players, **options)
        box = reference.observation_space(reference.possible_agents[0])["observation"]
        self.low, self.high = torch.as_tensor(box.low), torch.as_tensor(box.high)
        self.generator = torch.Generator().manual_seed(seed)
        self.random = BatchedRandom(num_players, self.benv.device, self.generator)
        self.steps = torch.zeros(batch, dtype=torch.int64)
        self.out = self.benv.reset(seed=seed)

    def run(self, calls: int, tally: Tally, bar: tqdm) -> None:
        """Play ``calls`` checked calls into ``tally`` (the outputs of resets checked too)."""
        began = time.process_time()
        tally.violate("reset", self.check_output(self.out))
        for call in range(calls):
            actions, illegal = self.choose()
            try:
                out = self.benv.step(actions)
            except Exception as err:  # noqa: BLE001 - any exception is what the fuzz looks for
                tally.violate(f"call {call}", [f"{type(err).__name__}: {err}"])
                fresh = (self.seed + call + 1) % (MAX_SEED + 1)  # a fresh batch goes on
                self.out = self.benv.reset(seed=fresh)
                self.steps.zero_()
                tally.violate(f"reset after call {call}", self.check_output(self.out))
            else:
                self.steps += 1
                problems = self.check_output(out) + self.check_endings(out, illegal)
                tally.violate(f"call {call}", problems)
                tally.count(out["done"], out["truncated"], illegal)
                self.steps[out["done"]] = 0
                self.out = out
            tally.calls += 1
            bar.update(1)
        tally.seconds += time.process_time() - began

    def choose(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The policy's actions for the current output, and the rows given an illegal one."""
        out = self.out
        mask = out["action_mask"]
        rows, width = mask.shape
        none = torch.zeros(rows, dtype=torch.bool)
        if self.policy == "lowest":
            return mask.to(torch.int8).argmax(dim=1), none
        if self.policy == "highest":
            return width - 1 - mask.flip(1).to(torch.int8).argmax(dim=1), none
        actions = self.random.act(out["observation"], mask, out["seat"])
        if self.policy == "random":
            return actions, none
        draws = torch.rand(rows, 2, generator=self.generator)
        illegal = draws[:, 0] < ILLEGAL_SHARE
        masked_out = self.random.act(out["observation"], ~mask, out["seat"])
        out_of_range = torch.where(draws[:, 1] < 0.75, -1, width)
        inside = (draws[:, 1] < 0.5) & (~mask).any(dim=1)
        bad = torch.where(inside, masked_out, out_of_range)
        return torch.where(illegal, bad, actions), illegal

    def check_output(self, out: dict[str, Any]) -> list[str]:
        """What every output must be (of ``reset`` too): observations in their Box, seats in
        range, finite rewards, and a legal action in every row."""
        benv, problems = self.benv, []
        obs, mask, seat = out["observation"], out["action_mask"], out["seat"]
        if obs.dtype != torch.float32 or obs.shape != (benv.batch_size, len(self.low)):
            problems.append(f"observation of dtype {obs.dtype} and shape {tuple(obs.shape)}")
        else:
            outside = ~((obs >= self.low) & (obs <= self.high))  # NaN is outside too
            for b, i in outside.nonzero().tolist()[:2]:
                problems.append(f"row {b}: observation[{i}] = {float(obs[b, i])} outside its Box")
        if bool(((seat < 0) | (seat >= benv.num_players)).any()):
            problems.append(f"seats out of range: {seat.tolist()}")
        if not bool(torch.isfinite(out["reward"]).all()):
            problems.append("a reward that is not finite")
        for b in (~mask.any(dim=1)).nonzero().squeeze(1).tolist()[:2]:
            problems.append(f"row {b}: a live game without a legal action")
        return problems

    def check_endings(self, out: dict[str, Any], illegal: torch.Tensor) -> list[str]:
        """How each ended game ended (penalty, truncation, rules) and that none runs on."""
        benv, problems = self.benv, []
        done, truncated, reward = out["done"], out["truncated"], out["reward"]
        figures = out["figures"]
        limit = benv.options.max_steps
        for b in (illegal & (~done | truncated)).nonzero().squeeze(1).tolist()[:2]:
            problems.append(f"row {b}: an illegal action that did not end the game as a penalty")
        if bool(illegal.any()):
            expected = self.penalty_rewards()
            wrong = illegal & ~(reward == expected).all(dim=1)
            for b in wrong.nonzero().squeeze(1).tolist()[:2]:
                problems.append(f"row {b}: penalty rewards {reward[b].tolist()}")
        early = done & truncated & (self.steps < limit) & ~self.own_clock(figures)
        for b in early.nonzero().squeeze(1).tolist()[:2]:
            problems.append(f"row {b}: truncated after {int(self.steps[b])} of {limit} steps")
        undecided = done & ~truncated & ~illegal & ~decided(figures)
        for b in undecided.nonzero().squeeze(1).tolist()[:2]:
            problems.append(f"row {b}: ended without a result and without truncation")
        overdue = ~done & (self.steps >= limit + benv.num_players - 1)
        for b in overdue.nonzero().squeeze(1).tolist()[:2]:
            problems.append(f"row {b}: still playing after {int(self.steps[b])} steps")
        return problems

    def penalty_rewards(self) -> torch.Tensor:
        """``[B, n]``: the rewards an illegal action by the last output's seat must bring."""
        benv, seat = self.benv, self.out["seat"]
        penalty = float(benv.options.illegal_reward)
        if benv.game.cooperative:
            return torch.full((benv.batch_size, benv.num_players), penalty)
        seats = torch.arange(benv.num_players)
        return torch.where(seats[None, :] == seat[:, None], penalty, 0.0)

    def own_clock(self, figures: dict[str, torch.Tensor]) -> torch.Tensor:
        """``[B]`` bool: the game's own clock has run out (never, for a game without one)."""
        if self.env_id not in CLOCKS:
            return torch.zeros(self.benv.batch_size, dtype=torch.bool)
        figure, option = CLOCKS[self.env_id]
        return figures[figure] >= getattr(self.benv.options, option)


def decided(figures: dict[str, torch.Tensor]) -> torch.Tensor:
    """``[B]`` bool: the game has a result: a winner (competitive games' ``winners``) or an
    outcome won or lost (cooperative games' ``outcome``, 0 while undecided)."""
    if "winners" in figures:
        return figures["winners"].any(dim=1)
    return figures["outcome"] != 0


def fuzz(
    games: list[str],
    calls: int,
    batch: int = 16,
    seed: int = 0,
    max_steps: int | None = None,
    progress: bool = True,
) -> dict[tuple[str, int, str], Tally]:
    """``calls`` checked calls per game, shared evenly among its player counts and
    :data:`POLICIES`; a :class:`Tally` per game, player count and policy."""
    plan = []
    for env_id in games:
        low, high = envs.spec(env_id).players
        runs = [(n, policy) for n in range(low, high + 1) for policy in POLICIES]
        plan += [(env_id, n, policy, math.ceil(calls / len(runs))) for n, policy in runs]
    tallies: dict[tuple[str, int, str], Tally] = {}
    with tqdm(total=sum(p[3] for p in plan), unit="call", disable=not progress) as bar:
        for env_id, n, policy, share in plan:
            bar.set_description(f"{env_id} {n}p {policy}")
            tally = tallies[env_id, n, policy] = Tally()
            options = {} if max_steps is None else {"max_steps": max_steps}
            Fuzzer(env_id, n, policy, batch, seed, options).run(share, tally, bar)
    return tallies


def table(tallies: dict[tuple[str, int, str], Tally], batch: int) -> list[str]:
    """A markdown table of the tallies, one row per game, player count and policy."""
    lines = [
        f"batched step calls of {batch} rows each",
        "",
        "| game | players | policy | calls | ended by rules | penalised | truncated "
        "| violations | CPU ms/call |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (env_id, n, policy), t in tallies.items():
        cost = 1000 * t.seconds / max(t.calls, 1)
        lines.append(
            f"| {env_id} | {n} | {policy} | {t.calls:,} | {t.rules:,} | {t.penalty:,} "
            f"| {t.truncated:,} | {t.violations:,} | {cost:.2f} |"
        )
    return lines


def summary(tallies: dict[tuple[str, int, str], Tally], wall: float) -> list[str]:
    """A line per game and one for the run: step calls, games ended, violations, CPU time (and
    the run's wall-clock time)."""
    games: dict[str, list[Tally]] = {}
    for (env_id, _, _), tally in tallies.items():
        games.setdefault(env_id, []).append(tally)
    lines = [""]
    for name, group in [*games.items(), (f"all {len(games)} game(s)", list(tallies.values()))]:
        calls, violations = sum(t.calls for t in group), sum(t.violations for t in group)
        ended = sum(t.rules + t.penalty + t.truncated for t in group)
        cpu = sum(t.seconds for t in group)
        lines.append(
            f"{name}: {calls:,} step calls, {ended:,} games ended, {violations:,} violations, "
            f"{cpu:.1f} s CPU"
        )
    lines[-1] += f", {wall:.1f} s wall-clock"
    return lines


def main(argv: list[str] | None = None) -> dict[tuple[str, int, str], Tally]:
    """Parse the command line, fuzz, print the table; exit status 1 on any violation."""
    parser = argparse.ArgumentParser(
        prog="cauldron fuzz-batched", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--calls", type=int, default=100_000, help="step calls per game")
    parser.add_argument("--batch", type=int, default=16, help="rows per engine")
    parser.add_argument(
        "--games", nargs="+", default=envs.batched_ids(), help="environment ids (default: all)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seeds the engines and the policies")
    parser.add_argument(
        "--max-steps", type=int, help="the games' max_steps option (default: each game's own)"
    )
    args = parser.parse_args(argv)
    unknown = [g for g in args.games if g not in envs.batched_ids()]
    if unknown:
        raise ConfigError(f"no batched engine for {unknown}; games with one: {envs.batched_ids()}")
    if args.calls < 1:
        raise ConfigError(f"--calls must be at least 1, got {args.calls}")
    checked_seed(args.seed)
    torch.set_num_threads(1)  # rows of 16 gain nothing from more, and the CPU time stays one core's
    began = time.perf_counter()
    tallies = fuzz(args.games, args.calls, args.batch, args.seed, args.max_steps)
    wall = time.perf_counter() - began
    print("\n".join(table(tallies, args.batch) + summary(tallies, wall)))
    failed = {key: t for key, t in tallies.items() if t.violations}
    for (env_id, n, policy), t in failed.items():
        print(f"\n{env_id}, {n} players, {policy}: {t.violations} violations", file=sys.stderr)
        print("\n".join(f"  {line}" for line in t.shown), file=sys.stderr)
    if failed:
        sys.exit(1)
    return tallies


if __name__ == "__main__":
    from cauldron.envs.core.errors import run_command

    run_command(main)
