"""``heuristic:consensus`` for B observations at once (see
:mod:`cauldron.agents.hocus_pocus.consensus`).

Every rating is a small integer count plus fixed fractions, computed in float64 in the
reference's order, so each row gets the reference's action (ties to the first legal action in id
order, as the reference's ``max`` / ``min`` / ``argmax`` take them).
"""

from __future__ import annotations

from typing import Any

import torch

from cauldron.agents.hocus_pocus.batched_play import best_play
from cauldron.agents.hocus_pocus.cards import COLOUR, HAS, IS_SPELL_BOOK, KIND, LAYOUT, TOP_HAS
from cauldron.envs.core.batched_ops import any_along
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.phases import Phase

N, SPACES, SEATS = C.NUM_CARDS, C.NUM_SPACES, C.MAX_PLAYERS


class BatchedConsensus:
    """The public-target convention (``heuristic:consensus``) for B observations at once."""

    name = "heuristic:consensus"

    def __init__(self, num_players: int, device: Any, generator: torch.Generator) -> None:
        self.has = torch.as_tensor(HAS, device=device).long()  # [50, 10]
        self.top_has = torch.as_tensor(TOP_HAS, device=device).long()  # [55, 10]
        self.colour = torch.as_tensor(COLOUR, device=device)
        self.kind = torch.as_tensor(KIND, device=device)
        self.book = torch.as_tensor(IS_SPELL_BOOK, dtype=torch.float64, device=device)

    def act(
        self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor
    ) -> torch.Tensor:
        """``[B]`` int64: the reference consensus player's action in every row."""
        obs = observation
        rows = len(obs)
        phase = obs[:, LAYOUT["phase"]].argmax(1)
        hand = (obs[:, LAYOUT["hand"]] > 0).long()
        pile = obs[:, LAYOUT["pile_tops"]].view(rows, SPACES, N)
        empty = N + torch.arange(SPACES, device=obs.device)
        tops = torch.where(any_along(pile > 0, 2), pile.argmax(2), empty)
        top_has = self.top_has[tops]  # [B, 5, 10]
        on_tops = top_has.sum(1)  # [B, 10]
        own = hand @ self.has  # [B, 10]
        yes = obs[:, LAYOUT["answers_yes"]].view(rows, SEATS, 10)[:, 1:].double().sum(1)
        questions = obs[:, LAYOUT["questions_asked"]].view(rows, SEATS, 10)
        scores = 2.0 * on_tops.double() + yes + questions.double().sum(1) + 0.01 * own.double()
        target = scores.argmax(1)
        shown_target = on_tops.gather(1, target[:, None])[:, 0]
        asked = any_along(questions > 0, 1).gather(1, target[:, None])[:, 0]
        question = torch.where(asked, own.argmax(1), target)
        choice = torch.where(
            phase == Phase.ASK,
            A.ASK + question,
            torch.where(
                phase == Phase.ACT,
                self.play(mask, top_has, on_tops, target),
                self.choose(mask, on_tops, target),
            ),
        )
        choice = torch.where(phase == Phase.BINX, A.BINX + 1, choice)
        choice = torch.where(phase == Phase.STUN_CHOICE, A.STUN_WINIFRED, choice)
        salt = torch.where(shown_target >= 3, A.SALT_USE, A.SALT_DECLINE)
        choice = torch.where(phase == Phase.SALT, salt, choice)
        finish = (phase == Phase.DISCARD) & mask[:, A.FINISH]
        return torch.where(finish, A.FINISH, choice)

    def play(
        self, mask: torch.Tensor, top_has: torch.Tensor, on_tops: torch.Tensor, target: torch.Tensor
    ) -> torch.Tensor:
        """``[B]``: the play making the most tops show the target (a stun first), then the
        card's other attribute on the most tops, a Spell Book card last; with none, Billy
        Butcherson, Burning Rain of Death, or reveal a Spell."""

        # tops showing attribute q after card k goes on space s: on_tops[q] - top_has[s, q]
        # + has[k, q], for q the target and k's colour and type ([B, 50, 5] each); five of k's
        # colour or type is a stun (no other attribute can reach five)
        def after(question: torch.Tensor, card_has: torch.Tensor) -> torch.Tensor:
            tops_have = top_has.gather(2, question[:, None, :].expand(-1, SPACES, -1))
            return (on_tops.gather(1, question)[:, :, None] - tops_have.transpose(1, 2)) + card_has

        rows = len(mask)
        shown = after(target[:, None].expand(-1, N), self.has.T[target][:, :, None])
        colour = after(self.colour.expand(rows, -1), 1)
        kind = after(self.kind.expand(rows, -1), 1)
        targeted = self.has.T[target][:, :, None]  # [B, 50, 1]: the card has the target
        other = colour + kind - shown * targeted
        stun = 100.0 * ((colour == SPACES) | (kind == SPACES)).double()
        value = stun + shown.double() + 0.1 * other.double() - 0.5 * self.book[None, :, None]
        return best_play(mask, value)

    def choose(
        self, mask: torch.Tensor, on_tops: torch.Tensor, target: torch.Tensor
    ) -> torch.Tensor:
        """``[B]``: the legal card with the fewest attributes among the tops, off target."""
        worth = on_tops @ self.has.T + 5 * self.has.T[target]  # [B, 50]
        legal = mask[:, A.CHOOSE : A.FINISH]
        big = torch.iinfo(torch.int64).max
        return A.CHOOSE + torch.where(legal, worth, big).argmin(1)
