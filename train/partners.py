"""Partners drawn from a population for a cooperative game on the batched engine (``partners``;
Fictitious Co-Play, Strouse et al. 2021): the learner learns to play with partners whose
conventions it did not make.

Seats: in each row's game the learner plays its own seat (``BatchedGames.learner_seat``: seat 0
in the first game, one seat further on in each next game of the row). Every other seat draws a
member, independently and with chance weight / total weight, when the game starts:

* ``self``: the current learner plays that seat too, and its decisions there train (ordinary
  self-play for that seat);
* ``snapshots``: one of the learner's frozen snapshots (``self_play_every``), uniformly; before
  the first snapshot, the current learner (as ``self``);
* an agent spec with a batched form (``random``, ``heuristic:<name>``, ``torch:<checkpoint>``):
  that frozen policy.

A member's ``epsilon`` replaces each of its choices, with that chance, by a uniformly random legal
action (a noisy partner). Only the learner's decisions train; the team reward is shared. Each
game counts, when it starts, once for the member drawn at each of its seats (``games``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from cauldron.agents.batched import BatchedPolicy, BatchedRandom, table_agent
from cauldron.envs.core.batched import uniform
from cauldron.train.config import SELF, SNAPSHOTS, Partner, TrainConfig

LEARNER = -1  # the player of a seat the learner decides
SNAPSHOT = -2  # a member whose player is one of the snapshots
REPORT = "partners.json"


def labels(members: list[Partner]) -> list[str]:
    """Each member's name in the metrics: its agent, ``~<epsilon>`` if noisy, ``#<index>`` when
    another member has the same name."""
    names = [m.agent + (f"~{m.epsilon:g}" if m.epsilon else "") for m in members]
    return [f"{n}#{i}" if names.count(n) > 1 else n for i, n in enumerate(names)]


class Partners:
    """Who plays every seat of ``rows`` games of ``seats`` seats: ``member [rows, seats]`` (the
    drawn member's index, -1 at the learner's own seat) and ``player [rows, seats]`` (-1 for
    the learner, else an index into ``policies`` followed by the trainer's snapshots)."""

    def __init__(
        self,
        config: TrainConfig,
        seats: int,
        device: torch.device,
        generator: torch.Generator,
    ) -> None:
        members = config.partners or []
        self.labels = labels(members)
        self.generator = generator
        self.policies: list[BatchedPolicy] = []
        slots = []
        for member in members:
            if member.agent in (SELF, SNAPSHOTS):
                slots.append(LEARNER if member.agent == SELF else SNAPSHOT)
            else:
                slots.append(len(self.policies))
                self.policies.append(
                    table_agent(member.agent, config.env, config.num_players, device, generator)
                )
        self.slot = torch.tensor(slots, device=device)
        weights = torch.tensor([m.weight for m in members], dtype=torch.float64, device=device)
        self.weights = weights / weights.sum()
        self.epsilon = torch.tensor([m.epsilon for m in members], device=device)
        self.member = torch.full((config.num_envs, seats), -1, device=device)
        self.player = torch.full_like(self.member, LEARNER)
        self.games = torch.zeros(len(members), dtype=torch.long, device=device)
        self.random = BatchedRandom(config.num_players, device, generator)

    def draw(self, rows: torch.Tensor, learner_seat: torch.Tensor, snapshots: int) -> None:
        """New members for every seat but the learner's own in ``rows`` (a boolean mask);
        ``snapshots``: how many snapshots follow ``policies``."""
        n, seats = self.member.shape
        drawn = torch.multinomial(self.weights, n * seats, True, generator=self.generator)
        own = torch.arange(seats, device=drawn.device) == learner_seat[:, None]
        drawn = drawn.view(n, seats).masked_fill(own, -1)
        player = self.slot[drawn.clamp(min=0)].masked_fill(own, LEARNER)
        if snapshots:
            shape = player.shape
            pick = len(self.policies) + torch.randint(
                snapshots, shape, generator=self.generator, device=drawn.device
            )
            player = torch.where(player == SNAPSHOT, pick, player)
        player = player.masked_fill(player == SNAPSHOT, LEARNER)
        self.member = torch.where(rows[:, None], drawn, self.member)
        self.player = torch.where(rows[:, None], player, self.player)
        started = self.member[rows]
        started = started[started >= 0]
        self.games.index_add_(0, started, torch.ones_like(started))

    def acting(self, seat: torch.Tensor) -> torch.Tensor:
        """``[rows]``: the player of each row's acting ``seat`` (-1: the learner)."""
        return self.player.gather(1, seat[:, None]).squeeze(1)

    def add_noise(
        self,
        chosen: torch.Tensor,
        observation: torch.Tensor,
        mask: torch.Tensor,
        seat: torch.Tensor,
    ) -> torch.Tensor:
        """``chosen`` (every row's action) with each partner's choice replaced, with its
        member's ``epsilon``, by a uniformly random legal action (the learner's never)."""
        member = self.member.gather(1, seat[:, None]).squeeze(1)
        noise = self.epsilon[member.clamp(min=0)]
        noise = noise.masked_fill((member < 0) | (self.acting(seat) == LEARNER), 0.0)
        if not bool(noise.any()):
            return chosen
        flip = (uniform(self.generator, noise.shape, noise.device) < noise).nonzero().squeeze(1)
        chosen = chosen.clone()
        chosen[flip] = self.random.act(observation[flip], mask[flip], seat[flip])
        return chosen

    def figures(self) -> dict[str, float]:
        """``partners/<label>/weight`` (the normalised sampling weight) and
        ``partners/<label>/games`` (the games and seats it was drawn for) of every member."""
        out = {}
        for label, weight, games in zip(
            self.labels, self.weights.tolist(), self.games.tolist(), strict=True
        ):
            out[f"partners/{label}/weight"] = weight
            out[f"partners/{label}/games"] = float(games)
        return out

    def write(self, folder: Path) -> str:
        """Write ``<folder>/partners.json`` (a list of ``{member, weight, games}``) and return
        a line per member to print."""
        rows = [
            {"member": label, "weight": weight, "games": games}
            for label, weight, games in zip(
                self.labels, self.weights.tolist(), self.games.tolist(), strict=True
            )
        ]
        (folder / REPORT).write_text(json.dumps(rows, indent=2) + "\n")
        return "\n".join(
            f"partner {r['member']}: weight {r['weight']:.3f}, {r['games']:,} games" for r in rows
        )

    def state_dict(self) -> dict[str, Any]:
        """The seats' members and players and the game counts (copies)."""
        return {
            "member": self.member.clone(),
            "player": self.player.clone(),
            "games": self.games.clone(),
        }

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        """Go on from a :meth:`state_dict` of the same population."""
        for name in ("member", "player", "games"):
            setattr(self, name, saved[name].to(self.member.device, copy=True))
