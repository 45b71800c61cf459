"""Throughput of the batched engines, beside Pgx's in the same run (``cauldron bench
--batched``).

Every row plays uniformly random legal actions (one torch thread) for ``steps`` batched steps
after a warm-up and
reports agent-steps per second (batch size × steps / seconds; median of ``repeats``), the state's
bytes per game and, for the largest batch, the peak resident memory of a fresh process that
steps it. Pgx rows (``leduc_holdem``, ``connect_four`` at B = 1,024, jitted on the CPU) need the
optional ``bench`` extra; without Pgx they are skipped with a note.
"""

from __future__ import annotations

import dataclasses
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import torch

from cauldron import envs
from cauldron.agents.batched import BatchedRandom

BATCH_SIZES = (1, 64, 1024, 4096)
PGX_PEERS = ("leduc_holdem", "connect_four")
PGX_BATCH = 1024


def _median_rate(run: Callable[[], None], agent_steps: int, repeats: int) -> float:
    rates = []
    for _ in range(repeats):
        began = time.perf_counter()
        run()
        rates.append(agent_steps / (time.perf_counter() - began))
    return statistics.median(rates)


def engine_rate(
    env_id: str, num_players: int, batch_size: int, steps: int, repeats: int, device: str = "cpu"
) -> tuple[float, float]:
    """Agent-steps/s of random play on the batched engine, and the state's bytes per game."""
    benv = envs.make_batched(env_id, num_players, batch_size=batch_size, device=device)
    out = benv.reset(seed=0)
    policy = BatchedRandom(num_players, benv.device, torch.Generator(benv.device).manual_seed(0))
    box = {"out": out}

    def play() -> None:
        for _ in range(steps):
            o = box["out"]
            box["out"] = benv.step(policy.act(o["observation"], o["action_mask"], o["seat"]))
        if benv.device.type == "cuda":
            torch.cuda.synchronize()

    play()  # warm-up
    state = benv.game_state
    nbytes = sum(getattr(state, f.name).nbytes for f in dataclasses.fields(state))
    return _median_rate(play, steps * batch_size, repeats), nbytes / batch_size


def pgx_rate(name: str, batch_size: int, steps: int, repeats: int) -> float | None:
    """Agent-steps/s of random play in Pgx's ``name``, or None without Pgx. Pgx at its best:
    action choice, step and auto-reset fused in one jitted loop (``lax.fori_loop``) over
    ``steps`` steps of the vmapped batch."""
    try:
        import jax
        import jax.numpy as jnp
        import pgx
    except ImportError:
        return None
    env = pgx.make(name)
    init = jax.vmap(env.init)

    def one_step(_, carry):
        state, key = carry
        key, k_act, k_step, k_init = jax.random.split(key, 4)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(k_act, logits, axis=-1)
        state = jax.vmap(env.step)(state, action, jax.random.split(k_step, batch_size))
        done = state.terminated | state.truncated
        fresh = init(jax.random.split(k_init, batch_size))
        state = jax.tree_util.tree_map(
            lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), b, a),
            state,
            fresh,
        )
        return state, key

    loop = jax.jit(lambda carry: jax.lax.fori_loop(0, steps, one_step, carry))
    key, sub = jax.random.split(jax.random.PRNGKey(0))
    box = {"carry": (jax.jit(init)(jax.random.split(sub, batch_size)), key)}

    def play() -> None:
        box["carry"] = loop(box["carry"])
        jax.block_until_ready(box["carry"])

    play()
    return _median_rate(play, steps * batch_size, repeats)


# The child's own peak: Linux's VmHWM belongs to the process image and starts afresh at exec,
# where ``ru_maxrss`` keeps the resident size of the process that launched it (this one, Pgx
# and all), which would hide a small engine's peak.
HIGH_WATER = (
    "def high_water():\n"
    "    try:\n"
    "        with open('/proc/self/status') as status:\n"
    "            return next(int(l.split()[1]) for l in status if l.startswith('VmHWM'))\n"
    "    except (OSError, StopIteration):\n"
    "        import resource\n"
    "        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
)


def peak_memory_mib(
    env_id: str, num_players: int, batch_size: int, steps: int = 50
) -> tuple[float, float]:
    """Peak resident MiB of a fresh process stepping ``batch_size`` games, and of a process that
    only imports the same modules."""
    base = HIGH_WATER + "import torch, envs, cauldron.agents.batched\nprint(high_water())\n"
    run = HIGH_WATER + (
        "import torch, envs\n"
        "from cauldron.agents.batched import BatchedRandom\n"
        f"b = envs.make_batched({env_id!r}, {num_players}, batch_size={batch_size})\n"
        "o = b.reset(seed=0)\n"
        "p = BatchedRandom(0, b.device, torch.Generator().manual_seed(0))\n"
        f"for _ in range({steps}):\n"
        "    o = b.step(p.act(o['observation'], o['action_mask'], o['seat']))\n"
        "print(high_water())\n"
    )
    kib = [
        int(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout.split()[-1]
        )
        for code in (base, run)
    ]
    return kib[1] / 1024, kib[0] / 1024


def main(quick: bool = False) -> None:
    """Print the batched throughput table row by row (``quick``: fewer steps and repeats)."""
    steps, repeats = (20, 3) if quick else (100, 5)
    torch.set_num_threads(1)  # two threads collapse as soon as anything else loads the cores
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    print(
        f"random legal play, median of {repeats} × {steps} batched steps"
        + (" (--quick: rougher figures)" if quick else "")
    )
    print("| env | B | device | agent-steps/s | × pgx leduc_holdem | state bytes/game |")
    print("|---|---|---|---|---|---|")
    peers = {}
    for name in PGX_PEERS:
        rate = pgx_rate(name, PGX_BATCH, steps, repeats)
        if rate is None:
            print(f"pgx {name}: skipped (pgx and jax not installed: pip install -e '.[bench]')")
            continue
        peers[name] = rate
        ratio = rate / peers["leduc_holdem"] if "leduc_holdem" in peers else 1.0
        print(f"| pgx {name} | {PGX_BATCH} | cpu | {rate:,.0f} | {ratio:.2f} | |", flush=True)
    leduc = peers.get("leduc_holdem")
    for env_id in envs.batched_ids():
        low, _ = envs.spec(env_id).players
        for device in devices:
            for batch in BATCH_SIZES:
                rate, per_game = engine_rate(env_id, low, batch, steps, repeats, device)
                ratio = f"{rate / leduc:.2f}" if leduc else "—"
                print(
                    f"| {env_id} ({low}p) | {batch} | {device} | {rate:,.0f} | {ratio} | "
                    f"{per_game:,.0f} |",
                    flush=True,
                )
        peak, imports = peak_memory_mib(env_id, low, BATCH_SIZES[-1])
        print(
            f"{env_id}: peak resident memory at B = {BATCH_SIZES[-1]}: {peak:,.0f} MiB "
            f"({imports:,.0f} MiB of it for Python, torch and the imports alone)",
            flush=True,
        )
