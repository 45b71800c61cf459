"""What knowing the opponent's hand is worth in two-player Voodoo Mania, against the chain
heuristic.

cauldron voodoo-information [--games 4096] [--seed 1000]   # the table in RULES.md

Each player is ``heuristic:chain`` with one change: among the normal plays with chain's most
follow-ups in its own hand, it breaks the tie by what it knows of the opponent's hand; every
other choice is chain's. What it knows:

* ``chain``: nothing (no tie-break: chain itself, so its row measures only the noise);
* ``deck``: the public deck: the new wanted pair that the fewest cards outside its hand answer
  (``heuristic:blocker``'s measure);
* ``memory``: the pairs it saw the opponent cycle on (stuck), while at most ``HORIZON`` of the
  opponent's hand cards have been replaced since, in this round;
* ``sight``: the opponent's actual hand, read from ``state()`` (no rule allows this): the new
  wanted pair the fewest of its cards answer.

Each plays ``games`` games against chain on the batched engine, its seat alternating row by row;
every row counts its first game. The table gives both sides' win rates and the paired
difference won − lost (a shared win counts 0).
"""

from __future__ import annotations

import argparse

import torch
from tqdm import tqdm

from cauldron import envs
from cauldron.agents.voodoo_mania.batched import BatchedChain, answers, follow_ups
from cauldron.agents.voodoo_mania.heuristic import LAYOUT, deck_answers
from cauldron.envs.core.layout import Layout
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C
from cauldron.envs.voodoo_mania.encoding import SIDE, STATE_FIELDS
from cauldron.eval.stats import bootstrap_mean_interval, wilson_interval

ENV_ID = "voodoo_mania_v1"
Q, H = C.NUM_PAIRS, C.HAND_SIZE
KINDS = ("chain", "deck", "memory", "sight")
HORIZON = 4
TIE = 64  # tie scores lie in [0, TIE): follow-ups come first
FORGOTTEN = 1_000  # replacements since a pair was seen stuck, before it was ever seen
HANDS = Layout(STATE_FIELDS)["hands"]


class InformedChain:
    """``heuristic:chain`` that breaks its ties between normal plays by ``kind`` (see the module
    docstring), for the seat ``seat_of[b]`` of row ``b``. ``memory`` keeps, per row, the pair
    wanted at its last decision and how many opponent cards were replaced since each pair was
    seen stuck; two players only."""

    def __init__(self, kind: str, seat_of: torch.Tensor) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; kinds: {list(KINDS)}")
        rows = len(seat_of)
        self.kind, self.seat_of = kind, seat_of
        self.chain = BatchedChain(2, seat_of.device, torch.Generator())
        self.slots = torch.arange(H)
        self.outside = torch.tensor(deck_answers())
        self.replaced = torch.full((rows, Q), FORGOTTEN)
        self.last_wanted = torch.full((rows,), -1)
        self.last_round = torch.full((rows,), -1)

    def act(
        self,
        rows: torch.Tensor,
        observation: torch.Tensor,
        mask: torch.Tensor,
        state: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``[len(rows)]``: the action of the rows ``rows`` (where this player is to act);
        ``state`` (``[len(rows), state_size]``) is read by ``sight`` only."""
        chosen = self.chain.act(observation, mask, self.seat_of[rows])
        if self.kind == "memory":
            self._remember(rows, observation)
        plays = observation[:, LAYOUT["hand_plays"]].view(-1, H * 2, 2) > 0
        normal = plays[:, :, 0] & mask[:, A.PLAY : A.CYCLE]
        side = (chosen - A.PLAY).clamp(0, 2 * H - 1)
        chain_normal = (
            (chosen >= A.PLAY) & (chosen < A.CYCLE) & normal.gather(1, side[:, None])[:, 0]
        )
        hand = observation[:, LAYOUT["hand"]].view(-1, H, 2, SIDE)
        asked = hand[:, :, :, Q:].argmax(dim=3).flatten(1)  # [B, 6] the pair each play asks
        ups = follow_ups(hand, self.slots)
        score = ups * TIE + self._tie(rows, ups, asked, state)
        best = A.PLAY + torch.where(normal, score, -1).argmax(dim=1)
        return torch.where(chain_normal, best, chosen)

    def _tie(
        self,
        rows: torch.Tensor,
        ups: torch.Tensor,
        asked: torch.Tensor,
        state: torch.Tensor | None,
    ) -> torch.Tensor:
        """``[B, 6]`` in ``[0, TIE)``: the tie score of each play, higher preferred (``ups``:
        its follow-ups, ``asked``: the pair it asks for)."""
        if self.kind == "chain":
            return torch.zeros_like(asked)
        if self.kind == "deck":
            return TIE - 1 - (self.outside[asked] - ups)
        if self.kind == "memory":
            return (self.replaced[rows].gather(1, asked) <= HORIZON).long()
        if state is None:
            raise ValueError("kind 'sight' reads the opponent's hand from state()")
        hands = state[:, HANDS].view(-1, C.MAX_PLAYERS, H, 2, SIDE)
        opponent = hands[torch.arange(len(rows)), 1 - self.seat_of[rows]]
        return H - answers(opponent).sum(dim=1).gather(1, asked)

    def _remember(self, rows: torch.Tensor, observation: torch.Tensor) -> None:
        """Update the rows' memory from last tick: a cycle by the opponent (relative seat 1)
        shows it held no answer to the pair wanted at this player's previous decision, and
        replaced one card; a winning play by it replaced one card. A new round forgets."""
        cycled = observation[:, LAYOUT["last_cyclers"]][:, 1] > 0
        played = observation[:, LAYOUT["last_player"]].argmax(dim=1) == 2
        round_ = observation[:, LAYOUT["round"]].argmax(dim=1)
        replaced = self.replaced[rows] + (cycled | played).long()[:, None]
        replaced[round_ != self.last_round[rows]] = FORGOTTEN
        stuck = (cycled & (self.last_wanted[rows] >= 0)).nonzero().squeeze(1)
        replaced[stuck, self.last_wanted[rows][stuck]] = 1
        self.replaced[rows] = replaced.clamp(max=FORGOTTEN)
        self.last_wanted[rows] = observation[:, LAYOUT["wanted"]].argmax(dim=1)
        self.last_round[rows] = round_


def play(kind: str, games: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``games`` games of ``kind`` against chain, its seat ``b mod 2`` in row ``b``; returns
    ``[games]`` bool: it won, chain won (both, for a shared win)."""
    benv = envs.make_batched(ENV_ID, 2, batch_size=games)
    out = benv.reset(seed=seed)
    me = torch.arange(games) % 2
    player = InformedChain(kind, me)
    chain = BatchedChain(2, torch.device("cpu"), torch.Generator())
    at = torch.arange(games)
    ended = torch.zeros(games, dtype=torch.bool)
    won, lost = torch.zeros_like(ended), torch.zeros_like(ended)
    while not bool(ended.all()):
        actions = chain.act(out["observation"], out["action_mask"], out["seat"])
        mine = (out["seat"] == me).nonzero().squeeze(1)
        state = benv.state()[mine] if kind == "sight" else None
        actions[mine] = player.act(mine, out["observation"][mine], out["action_mask"][mine], state)
        out = benv.step(actions)
        first = out["done"] & ~ended
        winners = out["figures"]["winners"]
        won[first], lost[first] = winners[at, me][first], winners[at, 1 - me][first]
        ended |= first
    return won, lost


def table(games: int, seed: int, chunk: int = 1024) -> list[str]:
    """The markdown table: one row per kind, ``games`` games each in chunks of ``chunk``."""
    lines = [
        "| tie-break by | games | wins | chain's wins | won − lost |",
        "|---|---|---|---|---|",
    ]
    for kind in tqdm(KINDS, desc="kinds"):
        parts = [
            play(kind, min(chunk, games - s), seed + c)
            for c, s in enumerate(range(0, games, chunk))
        ]
        won = torch.cat([p[0] for p in parts])
        lost = torch.cat([p[1] for p in parts])
        diff, low, high = bootstrap_mean_interval((won.double() - lost.double()).tolist())
        cells = [kind, f"{games:,}"]
        for hits in (won, lost):
            lo, hi = wilson_interval(int(hits.sum()), games)
            cells.append(f"{hits.double().mean():.1%} [{lo:.1%}, {hi:.1%}]")
        cells.append(f"{diff:+.1%} [{low:+.1%}, {high:+.1%}]")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="cauldron voodoo-information", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=4096, help="games per row")
    parser.add_argument("--seed", type=int, default=1000)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print("\n".join(table(args.games, args.seed)))


if __name__ == "__main__":
    main()
