"""Throughput benchmark: agent-steps/s of uniformly random legal play.

Runs the standard loop (``agent_iter`` / ``last`` / ``action_space(agent).sample(mask)`` / ``step``)
on every registered environment and on PettingZoo's ``connect_four_v3`` and ``hanabi_v5``
(``pip install -e ".[bench]"``) in the same process, and prints the median of several repeats,
the ratio to each peer, the median reset cost and the peak Python heap of a run (tracemalloc: it
does not see memory that a C++ core such as Hanabi's allocates).

    cauldron bench [--steps 20000] [--repeats 5] [--all-players] [--quick]
    cauldron bench --batched [--quick]   # the batched engines beside Pgx
    (cauldron.eval.bench_batched)

A progress bar counts the runs; ``--quick`` (2,000 steps, one repeat) gives rough figures fast.

Simultaneous games are also measured through their Parallel env (``[parallel]`` rows), where a
joint step of k agents counts k agent-steps.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
import tracemalloc
from collections.abc import Callable

from pettingzoo import ParallelEnv
from tqdm import tqdm

from cauldron import envs

PEERS = {
    "connect_four_v3": "pettingzoo.classic.connect_four_v3",
    "hanabi_v5": "pettingzoo.classic.hanabi_v5",
}


def run_random(env, steps: int, seed: int) -> float:
    """Agent-steps per second over ``steps`` steps of random legal play (resetting as needed)."""
    env.reset(seed=seed)
    for agent in env.possible_agents:
        env.action_space(agent).seed(seed)
    done = 0
    start = time.perf_counter()
    while done < steps:
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else env.action_space(agent).sample(obs["action_mask"])
            env.step(action)
            done += 1
        env.reset()
    return done / (time.perf_counter() - start)


def run_random_parallel(env, steps: int, seed: int) -> float:
    """Agent-steps per second of a Parallel env: a joint step of k agents counts k."""
    observations, _ = env.reset(seed=seed)
    for agent in env.possible_agents:
        env.action_space(agent).seed(seed)
    done = 0
    start = time.perf_counter()
    while done < steps:
        if not env.agents:
            observations, _ = env.reset()
        actions = {
            a: env.action_space(a).sample(observations[a]["action_mask"]) for a in env.agents
        }
        observations, *_ = env.step(actions)
        done += len(actions)
    return done / (time.perf_counter() - start)


def reset_cost(env, count: int = 200) -> float:
    """Median seconds per ``reset``."""
    times = []
    for seed in range(count):
        start = time.perf_counter()
        env.reset(seed=seed)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_memory(make: Callable, steps: int) -> float:
    """Peak traced Python memory (MiB) of making an env and playing ``steps`` random steps."""
    tracemalloc.start()
    env = make()
    (run_random_parallel if isinstance(env, ParallelEnv) else run_random)(env, steps, seed=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def candidates(all_players: bool) -> dict[str, Callable]:
    """Name -> env constructor, for our environments and the installed peers."""
    out: dict[str, Callable] = {}
    for env_id in envs.ids():
        low, high = envs.spec(env_id).players
        counts = range(low, high + 1) if all_players else [None]
        for n in counts:
            label = env_id if n is None else f"{env_id} ({n}p)"
            out[label] = lambda env_id=env_id, n=n: envs.make(env_id, num_players=n)
            if envs.spec(env_id).parallel:
                out[f"{label} [parallel]"] = lambda env_id=env_id, n=n: envs.make_parallel(
                    env_id, num_players=n
                )
    for name, module in PEERS.items():
        try:
            make = importlib.import_module(module).env
            make()  # Hanabi imports OpenSpiel only when made
        except ImportError as err:
            print(f"peer {name} skipped: {err} (pip install -e '.[bench]')")
            continue
        out[name] = make
    return out


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(prog="cauldron bench", description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="agent-steps per repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats (median reported)")
    parser.add_argument("--all-players", action="store_true", help="every player count")
    parser.add_argument(
        "--quick", action="store_true", help="2,000 steps and one repeat (rough figures)"
    )
    parser.add_argument(
        "--batched", action="store_true", help="the batched engines beside Pgx instead"
    )
    args = parser.parse_args(argv)
    if args.batched:
        from cauldron.eval import bench_batched

        bench_batched.main(quick=args.quick)
        return {}
    if args.quick:
        args.steps, args.repeats = min(args.steps, 2_000), 1
    makers = candidates(args.all_players)
    results: dict[str, dict[str, float]] = {}
    with tqdm(total=len(makers) * (args.repeats + 1), desc="benchmark", unit="run") as bar:
        for repeat in range(args.repeats):  # interleaved, so drift hits every env alike
            for name, make in makers.items():
                env = make()
                run = run_random_parallel if isinstance(env, ParallelEnv) else run_random
                rate = run(env, args.steps, seed=repeat)
                results.setdefault(name, {"rates": []})["rates"].append(rate)
                bar.update()
        for name, make in makers.items():
            entry = results[name]
            entry["median"] = statistics.median(entry.pop("rates"))
            entry["reset_us"] = reset_cost(make()) * 1e6
            entry["peak_mib"] = peak_memory(make, min(args.steps, 5_000))
            bar.update()
    print(format_table(results))
    if args.quick:
        print(f"\nQuick run ({args.steps:,} steps, one repeat): rough figures, not for the README.")
    return results


def format_table(results: dict[str, dict[str, float]]) -> str:
    """A Markdown table with ratios to every peer that was measured."""
    peers = [p for p in PEERS if p in results]
    head = ["env", "agent-steps/s (median)"] + [f"× {p}" for p in peers]
    head += ["reset (µs)", "peak MiB"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, r in results.items():
        ratios = [f"{r['median'] / results[p]['median']:.2f}" for p in peers]
        cells = [
            name,
            f"{r['median']:,.0f}",
            *ratios,
            f"{r['reset_us']:.0f}",
            f"{r['peak_mib']:.1f}",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
