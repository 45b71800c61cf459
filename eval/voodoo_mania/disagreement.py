"""Where a Voodoo Mania player departs from the chain heuristic, decision by decision.

cauldron voodoo-disagreement torch:checkpoints/voodoo_mania_torch.pt [--games 50]

The player plays two-player games against ``heuristic:chain`` (its seat alternating game by
game, deals from ``--seed`` on). At each of its decisions chain is asked what it would do in the
player's place; the table gives, per kind of decision (:func:`decision_kind`), how often the two
agree, with a 95% Wilson interval. Where they part between several normal plays, the player's
play is compared by chain's own measure, the follow-ups it leaves in the hand.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.agents.voodoo_mania.heuristic import LAYOUT, ChainVoodoo
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C
from cauldron.eval.stats import wilson_interval

ENV_ID = "voodoo_mania_v1"
KINDS = (
    "forced (one legal action)",
    "stuck (cycle or wait)",
    "one normal play",
    "several normal plays",
    "Voodoo! only",
    "normal or Voodoo!, chain calls Voodoo!",
    "normal or Voodoo!, chain plays normal",
)


def decision_kind(observation: np.ndarray, mask: np.ndarray, chain_action: int) -> str:
    """The kind of a decision (one of :data:`KINDS`) from the legal plays, normal and Voodoo!,
    that the observation and mask show, and chain's choice there."""
    plays = observation[LAYOUT["hand_plays"]].reshape(C.HAND_SIZE * 2, 2) > 0
    legal = mask[A.PLAY : A.CYCLE] > 0
    normal, voodoo = int((plays[:, 0] & legal).sum()), int((plays[:, 1] & legal).sum())
    if mask.sum() == 1:
        return KINDS[0]
    if normal and voodoo:
        chain_voodoo = bool(plays[chain_action - A.PLAY, 1]) if chain_action < A.CYCLE else False
        return KINDS[5] if chain_voodoo else KINDS[6]
    if voodoo:
        return KINDS[4]
    if normal:
        return KINDS[3] if normal > 1 else KINDS[2]
    return KINDS[1]


def follow_ups(observation: np.ndarray, action: int) -> int:
    """Chain's measure of the play ``action``: the other hand cards that could answer the pair
    it leaves wanted."""
    hand = observation[LAYOUT["hand"]].reshape(C.HAND_SIZE, 2, -1)
    slot, side = divmod(action - A.PLAY, 2)
    return ChainVoodoo._follow_ups(hand, slot, side)


@dataclass
class Tally:
    """Decisions and agreements per kind, and how the player's departures between several
    normal plays compare by follow-ups (``as many`` / ``fewer`` / ``more``)."""

    decisions: Counter = field(default_factory=Counter)
    agreed: Counter = field(default_factory=Counter)
    departures: Counter = field(default_factory=Counter)

    def add(self, observation: np.ndarray, mask: np.ndarray, action: int, chain: int) -> None:
        kind = decision_kind(observation, mask, chain)
        self.decisions[kind] += 1
        self.agreed[kind] += action == chain
        if kind == KINDS[3] and action != chain:
            if not A.PLAY <= action < A.CYCLE:
                self.departures["no play"] += 1
            else:
                mine, theirs = follow_ups(observation, action), follow_ups(observation, chain)
                self.departures[
                    "as many" if mine == theirs else "fewer" if mine < theirs else "more"
                ] += 1


def tally(spec: str, games: int, seed: int = 1000, quiet: bool = False) -> Tally:
    """Play ``games`` two-player games of ``spec`` against chain and tally its decisions."""
    env = envs.make(ENV_ID, num_players=2)
    chain, player = ChainVoodoo(), make_agent(spec, ENV_ID)
    out = Tally()
    for game in tqdm(range(games), desc="games", disable=quiet):
        env.reset(seed=seed + game)
        player.reset(seed=seed + game)
        seat = env.possible_agents[game % 2]
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            observation, mask = obs["observation"], obs["action_mask"]
            reference = chain.act(observation, mask)
            if agent != seat:
                env.step(reference)
                continue
            action = player.act(observation, mask)
            out.add(observation, mask, action, reference)
            env.step(action)
    env.close()
    return out


def table(result: Tally) -> str:
    """The Markdown table of :func:`tally`'s figures, and a line on the departures."""
    total = sum(result.decisions.values())
    lines = [
        "| decision | share of decisions | agrees with chain [95% CI] |",
        "|---|---|---|",
    ]
    for kind in KINDS:
        n = result.decisions[kind]
        if n:
            low, high = wilson_interval(result.agreed[kind], n)
            rate = result.agreed[kind] / n
            lines.append(f"| {kind} | {n / total:.1%} | {rate:.1%} [{low:.1%}, {high:.1%}] |")
    agreed = sum(result.agreed.values())
    low, high = wilson_interval(agreed, total)
    lines.append(f"| all ({total:,}) | 100% | {agreed / total:.1%} [{low:.1%}, {high:.1%}] |")
    parted = sum(result.departures.values())
    if parted:
        shares = ", ".join(f"{k} {v / parted:.0%}" for k, v in sorted(result.departures.items()))
        lines.append(
            f"\nWhere it parts from chain between several normal plays ({parted:,}), its play "
            f"leaves, by chain's count of follow-ups in the hand: {shares}."
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="cauldron voodoo-disagreement", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("agent", help="the player, as an agent spec (e.g. torch:path.pt)")
    parser.add_argument("--games", type=int, default=50, help="games against chain")
    parser.add_argument("--seed", type=int, default=1000, help="the first game's seed")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    print(table(tally(args.agent, args.games, args.seed)))


if __name__ == "__main__":
    main()
