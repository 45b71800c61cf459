"""Play seeded games between agents through the standard AEC loop."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.agents.base import seat_seed


@dataclass(frozen=True)
class GameResult:
    """One finished game: the seed, every agent's return, the steps, the final info, who sat
    in each seat (agent specs or names, by seat; empty when not given) and whether a clock
    (``max_steps``, a game's own clock) cut it short."""

    seed: int
    returns: dict[str, float]
    steps: int
    info: dict[str, Any]
    seating: tuple[str, ...] = ()
    truncated: bool = False


def play_game(env, agents: dict[str, Any], seed: int, seating: Sequence[str] = ()) -> GameResult:
    """Play one game with ``agents`` (agent name -> Agent) on ``env`` reset with ``seed``;
    ``seating`` names who sits in each seat, for the record."""
    env.reset(seed=seed)
    for i, agent in enumerate(agents.values()):
        agent.reset(seat_seed(seed, i))
    returns = dict.fromkeys(env.agents, 0.0)
    steps, info, cut = 0, {}, False
    for name in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        returns[name] += reward
        if term or trunc:
            cut = cut or (trunc and not term)
            env.step(None)
            continue
        env.step(agents[name].act(obs["observation"], obs["action_mask"]))
        steps += 1
    return GameResult(seed, returns, steps, dict(info), tuple(seating), cut)


def play_team(env_id: str, num_players: int, spec: str, seeds: range, **options) -> list:
    """Games of a team whose every seat is ``spec``, one per seed."""
    env = envs.make(env_id, num_players=num_players, **options)
    agents = {a: make_agent(spec, env_id) for a in env.possible_agents}
    return [play_game(env, agents, seed) for seed in seeds]


if __name__ == "__main__":  # cauldron play: a person at the table (cauldron.eval.human)
    from cauldron.envs.core.errors import run_command
    from cauldron.eval.human import main

    run_command(main)
