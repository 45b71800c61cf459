"""Batched Hocus Pocus baselines: observation and mask tensors in, one action per game out.

``HEURISTICS`` lists every one: :class:`BatchedGreedy` (below),
:class:`cauldron.agents.hocus_pocus.planner_batched.BatchedPlanner` and
:class:`cauldron.agents.hocus_pocus.consensus_batched.BatchedConsensus`.

:class:`BatchedGreedy` picks, row by row, the action that
``cauldron.agents.hocus_pocus.heuristic.HocusPocusHeuristic`` (``heuristic:greedy``) picks on the
same observation and mask: the same target attribute, question, play values (in float64, summed in
the same order), trick, Circle of Salt and discard choices, with ties going to the first legal
action in id order as the reference's ``max`` / ``min`` / stable sort do. Random play is
:class:`cauldron.agents.batched.BatchedRandom`. Built as ``cls(num_players, device, generator)``
(see
:mod:`cauldron.agents.batched`).
"""

from __future__ import annotations

from typing import Any

import torch

from cauldron.agents.hocus_pocus.batched_play import best_play
from cauldron.agents.hocus_pocus.cards import ATTRIBUTES, CAULDRON_SPELLS, IS_SPELL_BOOK, LAYOUT
from cauldron.agents.hocus_pocus.consensus_batched import BatchedConsensus
from cauldron.agents.hocus_pocus.planner_batched import BatchedPlanner
from cauldron.envs.core.batched_ops import any_along
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.phases import Phase

N, SPACES = C.NUM_CARDS, C.NUM_SPACES


class BatchedGreedy:
    """The greedy, question-using player (``heuristic:greedy``) for B observations at once."""

    name = "heuristic:greedy"

    def __init__(self, num_players: int, device: Any, generator: torch.Generator) -> None:
        attribute = torch.zeros(N, 10, dtype=torch.float64)
        attribute[torch.arange(N)[:, None], torch.as_tensor(ATTRIBUTES)] = 1.0
        self.attribute = attribute.to(device)  # [50, 10]: the card's colour and type questions
        self.book = torch.as_tensor(IS_SPELL_BOOK, dtype=torch.float64, device=device)
        cauldron = torch.zeros(len(C.SPELL_NAMES), dtype=torch.bool)
        cauldron[list(CAULDRON_SPELLS)] = True
        self.cauldron = cauldron.to(device)

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """``[B]`` int64: the reference heuristic's action in every row."""
        obs = observation
        rows = len(obs)
        phase = obs[:, LAYOUT["phase"]].argmax(1)
        hand = (obs[:, LAYOUT["hand"]] > 0).double()
        tops = obs[:, LAYOUT["pile_tops"]].view(rows, SPACES, N)
        has_top = any_along(tops > 0, 2)
        top_attribute = self.attribute[tops.argmax(2)] * has_top[:, :, None]  # [B, 5, 10]
        on_tops = top_attribute.sum(1)  # [B, 10]
        yes = obs[:, LAYOUT["answers_yes"]].view(rows, 6, 10)[:, 1:].double().sum(1)
        scores = 2.0 * on_tops + hand @ self.attribute + yes
        target = scores.argmax(1)
        shared_target = top_attribute.gather(2, target[:, None, None].expand(-1, SPACES, 1))
        choice = torch.where(
            phase == Phase.ASK,
            self._ask(obs, scores),
            torch.where(
                phase == Phase.ACT,
                self._act(mask, top_attribute, on_tops, target),
                self._choose(mask, top_attribute, target),
            ),
        )
        choice = torch.where(phase == Phase.BINX, A.BINX, choice)
        choice = torch.where(phase == Phase.STUN_CHOICE, A.STUN_WINIFRED, choice)
        spell = obs[:, LAYOUT["current_spell"]].argmax(1)
        salt = self.cauldron[spell] & (shared_target.sum((1, 2)) >= 2)
        choice = torch.where(
            phase == Phase.SALT, torch.where(salt, A.SALT_USE, A.SALT_DECLINE), choice
        )
        finish = (phase == Phase.DISCARD) & mask[:, A.FINISH]
        return torch.where(finish, A.FINISH, choice)

    @staticmethod
    def _ask(obs: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """A question not yet asked this round (if any) of the highest score, the first of
        equal ones."""
        asked = obs[:, LAYOUT["questions_asked"]][:, :10]
        fresh = asked == asked.amin(1, keepdim=True)
        return A.ASK + torch.where(fresh, scores, -torch.inf).argmax(1)

    def _act(
        self,
        mask: torch.Tensor,
        top_attribute: torch.Tensor,
        on_tops: torch.Tensor,
        target: torch.Tensor,
    ) -> torch.Tensor:
        """The play of highest value: a stun first, then the tops sharing the target, the most
        tops sharing anything, a Spell Book card last; with no play, Billy Butcherson, Burning
        Rain of Death, or reveal a Spell."""
        rows = len(mask)
        # counts of the questions on the tops after card k goes on space s: [B, 50, 5, 10]
        after = (
            on_tops[:, None, None, :]
            - top_attribute[:, None, :, :]
            + self.attribute[None, :, None, :]
        )
        best = after.amax(3)
        stun = torch.where(best == SPACES, 100.0, 0.0)
        on_target = after.gather(3, target.view(rows, 1, 1, 1).expand(-1, N, SPACES, 1))[..., 0]
        value = stun + on_target + 0.3 * best - 0.5 * self.book[None, :, None]
        return best_play(mask, value)

    def _choose(
        self, mask: torch.Tensor, top_attribute: torch.Tensor, target: torch.Tensor
    ) -> torch.Tensor:
        """The least useful card to give up: off the target, sharing little with the tops."""
        shares = (top_attribute @ self.attribute.T) > 0  # [B, 5, 50]
        usefulness = 2.0 * self.attribute[:, target].T + shares.sum(1)
        legal = mask[:, A.CHOOSE : A.FINISH]
        return A.CHOOSE + torch.where(legal, usefulness, torch.inf).argmin(1)


HEURISTICS = {"greedy": BatchedGreedy, "planner": BatchedPlanner, "consensus": BatchedConsensus}
