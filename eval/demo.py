"""Play one game between agents and print every move and the table whenever it changes.

cauldron demo [--env hocus_pocus_v1] [--players 4] [--agent heuristic:greedy] [--seed 0]

Every seat plays ``--agent`` (any agent spec; default: the game's first heuristic). Each decision
is printed as ``player_i: <action>``, and the table after every decision that changed it (in
Voodoo Mania, after every tick that changed it), so every turn of every game is shown.
"""

from __future__ import annotations

import argparse

from cauldron import envs
from cauldron.agents import HEURISTICS, make_agent
from cauldron.envs.core.errors import run_command


def default_agent(env_id: str) -> str:
    """The game's first heuristic, or ``random`` when it has none."""
    return next((f"heuristic:{h}" for h in HEURISTICS.get(env_id, {})), "random")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="cauldron demo", description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="hocus_pocus_v1", choices=envs.ids())
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--agent", help="agent spec for every seat (default: a heuristic)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="print only the final table")
    args = parser.parse_args(argv)
    spec = args.agent or default_agent(args.env)
    env = envs.make(args.env, num_players=args.players, render_mode="ansi")
    agents = {
        a: make_agent(spec, args.env, seed=args.seed + i) for i, a in enumerate(env.possible_agents)
    }
    env.reset(seed=args.seed)
    rules = env.unwrapped.rules
    shown, info, moves = env.render(), {}, []
    if not args.quiet:
        print(f"=== {args.env}, {args.players} players, {spec} in every seat, seed {args.seed} ===")
        print(shown)
    for name in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agents[name].act(obs["observation"], obs["action_mask"])
        moves.append(f"{name}: {rules.action_name(int(action))}")
        env.step(action)
        table = env.render()
        if not args.quiet and table != shown:
            print("\n" + "\n".join(moves) + f"\n\n{table}")
            shown, moves = table, []
    print(f"\n=== final ===\n{env.render()}\n\nresult: {info}")
    return info


if __name__ == "__main__":
    run_command(main)
