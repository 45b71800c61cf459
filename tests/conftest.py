"""Shared helpers: every registered id with every allowed player count, and random legal play."""

from __future__ import annotations

import numpy as np
import pytest

from cauldron import envs

# Rulebook variants that the conformance suite also runs, per environment.
VARIANTS: dict[str, list[dict]] = {
    "headless_horseman_v1": [{"speed_tile": 4}, {"handless_seats": (1,)}, {"reshuffle": True}],
}

ENV_CASES = [
    (env_id, n, options)
    for env_id in envs.ids()
    for n in range(envs.spec(env_id).players[0], envs.spec(env_id).players[1] + 1)
    for options in [{}] + VARIANTS.get(env_id, [])
]


PARALLEL_CASES = [case for case in ENV_CASES if envs.spec(case[0]).parallel]


def case_id(case: tuple[str, int, dict]) -> str:
    env_id, n, options = case
    extra = "".join(f"-{k}={v}" for k, v in options.items())
    return f"{env_id}-{n}p{extra}"


@pytest.fixture(params=ENV_CASES, ids=case_id)
def env_case(request) -> tuple[str, int, dict]:
    return request.param


def random_legal_action(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random action among the unmasked ones."""
    return int(rng.choice(np.flatnonzero(mask)))


def play_random(env, rng: np.random.Generator, max_steps: int = 100_000) -> int:
    """Play one game with random legal actions through agent_iter; return the steps taken."""
    steps = 0
    for _ in env.agent_iter(max_steps):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else random_legal_action(obs["action_mask"], rng))
        steps += 1
    return steps


@pytest.fixture(params=PARALLEL_CASES, ids=case_id)
def parallel_case(request) -> tuple[str, int, dict]:
    return request.param


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread in every test, as the trainer uses: two threads spinning against each
    other on two busy cores made batched steps and small networks 10-20 times slower (a
    300k-step training test took 22 minutes instead of 1). Restored after."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def serving(tmp_path):
    """Starts play servers (``start(env_id, players, seat, seed=4)``: the person in ``seat``,
    the game's default agent in the others, records under ``tmp_path``), all closed after the
    test."""
    from cauldron.eval import serve
    from cauldron.eval.demo import default_agent
    from tests.test_serve import Running

    servers: list[Running] = []

    def start(env_id: str, players: int, seat: int, seed: int = 4) -> Running:
        path = str(tmp_path / f"{env_id}.jsonl")
        partners = [default_agent(env_id)]
        servers.append(Running(serve.Session(env_id, players, seat, partners, seed, path)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
