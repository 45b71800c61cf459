"""Play one game between baseline agents and print the table after every turn.

python -m eval.demo [--env hocus_pocus_v0] [--players 4] [--agent heuristic:greedy] [--seed 0]
"""

from __future__ import annotations

import argparse

import envs
from agents import make_agent


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="hocus_pocus_v0", choices=envs.ids())
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--agent", default="heuristic:greedy", help="random | heuristic:<name>")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="print only the final table")
    args = parser.parse_args(argv)
    env = envs.make(args.env, num_players=args.players, render_mode="ansi")
    agents = {
        a: make_agent(args.agent, args.env, seed=args.seed + i)
        for i, a in enumerate(env.possible_agents)
    }
    env.reset(seed=args.seed)
    turn, info = -1, {}
    for name in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        game_turn = getattr(env.unwrapped.game, "turns", None)
        if not args.quiet and game_turn != turn:
            turn = game_turn
            print(f"\n=== turn {turn}: {name} ===\n{env.render()}")
        env.step(agents[name].act(obs["observation"], obs["action_mask"]))
    print(f"\n=== final ===\n{env.render()}\n\nresult: {info}")
    return info


if __name__ == "__main__":
    main()
