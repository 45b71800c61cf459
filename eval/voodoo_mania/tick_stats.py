"""How often players play at once, and how rounds end, in Voodoo Mania's tick model.

cauldron voodoo-ticks [--games 100]   # the table in RULES.md

Every seat of a game is played by one kind of agent (anything with ``act(observation, mask)``),
all choosing from the same table each tick as in the Parallel env. A tick is *contested* when two
or more players choose to play a card in it (one play wins, the others stay in hand).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cauldron.agents.random_agent import RandomAgent
from cauldron.agents.voodoo_mania.heuristic import ChainVoodoo, FastVoodoo
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania.encoding import Encoder
from cauldron.envs.voodoo_mania.options import VoodooManiaOptions
from cauldron.envs.voodoo_mania.rules import VoodooManiaRules


@dataclass
class TickStats:
    """Counts over many games: ticks, ticks with a play, contested ticks, rounds and how the
    rounds ended (a player ran out, the stalled-table rule, truncation)."""

    ticks: int = 0
    ticks_with_play: int = 0
    contested: int = 0
    rounds: int = 0
    stalled: int = 0
    truncated: int = 0

    def row(self) -> list[str]:
        """Contested share of all ticks and of ticks with a play; stalled share of rounds."""
        ended = self.rounds + self.truncated
        return [
            f"{self.contested / self.ticks:.1%}",
            f"{self.contested / max(self.ticks_with_play, 1):.1%}",
            f"{self.stalled / max(self.rounds, 1):.1%}",
            f"{self.truncated / max(ended, 1):.1%}",
        ]


def measure(
    num_players: int, make_agent: Callable[[int], Any], games: int, seed: int = 0
) -> TickStats:
    """Play ``games`` seeded games with ``make_agent(seat)`` in every seat; return the counts."""
    rules = VoodooManiaRules(num_players, VoodooManiaOptions())
    encoder = Encoder(rules)
    stats = TickStats()
    for game in range(games):
        state = rules.new_game(np.random.default_rng(seed + game))
        agents = [make_agent(seed + game * 10 + seat) for seat in range(num_players)]
        while not rules.is_over(state):
            joint = [
                agent.act(encoder.observe(state, seat), rules.legal_mask_for(state, seat))
                for seat, agent in enumerate(agents)
            ]
            players = sum(A.PLAY <= a < A.CYCLE for a in joint)
            stats.ticks += 1
            stats.ticks_with_play += players > 0
            stats.contested += players > 1
            before = state.round
            rules.apply_joint(state, joint)
            if state.round > before:
                stats.rounds += 1
                stats.stalled += ("stalled", before) in state.log
        stats.truncated += rules.is_truncated(state)
    return stats


def main() -> None:
    """Print the table of RULES.md: random and heuristic teams at 2–6 players."""
    parser = argparse.ArgumentParser(
        prog="cauldron voodoo-ticks", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=100, help="games per row (default 100)")
    games = parser.parse_args().games
    kinds = {
        "random": RandomAgent,
        "heuristic:fast": lambda seed: FastVoodoo(),
        "heuristic:chain": lambda seed: ChainVoodoo(),
    }
    columns = "contested ticks | of ticks with a play | stalled rounds | truncated games"
    print(f"| team | players | {columns} |")
    print("|---|---|---|---|---|---|")
    for name, make in kinds.items():
        for n in range(2, 7):
            print("| " + " | ".join([name, str(n), *measure(n, make, games).row()]) + " |")


if __name__ == "__main__":
    main()
