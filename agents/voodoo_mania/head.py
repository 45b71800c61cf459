"""The factored action head of Voodoo Mania for :class:`cauldron.agents.torch_policy.PolicyNet`.

Whatever the play, the pair it leaves wanted is the one its side misses (a normal play lays a
side showing the wanted pair, so the new wanted pair is the one that side misses; a Voodoo! lays
a side missing the wanted pair, which stays wanted). Whether the player's own hand can answer that
pair again is a match between two cards' 25 pairs, which a flat head must learn for every pair of
hand slots: a clone of ``heuristic:chain`` with a flat head makes chain's choice between several
normal plays only about 3 times in 5 (:mod:`cauldron.eval.voodoo_mania.disagreement`).

Here one small network, shared by the six "play slot k, side s" actions (index ``1 + 2k + s``),
scores a play from the trunk's hidden vector (through one linear layer) and ``PLAY_FEATURES``:

* whether the play is normal, and whether it is a Voodoo! (``hand_plays``);
* how many of the other hand cards have a side showing the pair it leaves wanted (they could
  follow with a normal play), a side missing it (a Voodoo!), or either, each / 2;
* how many cards of the deck could answer that pair (public component data), / the most for any
  pair.

"Cycle slot k" (7–9) is scored by a second shared network from the trunk's hidden vector and
card k's ``CYCLE_FEATURES``: the 25 pairs it could answer (a side showing or missing each) and
whether the slot is empty. "Wait" keeps a flat output row.
"""

from __future__ import annotations

import torch
from torch import nn

from cauldron.agents.voodoo_mania.batched import answers
from cauldron.agents.voodoo_mania.heuristic import LAYOUT, deck_answers
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C

Q = C.NUM_PAIRS
H = C.HAND_SIZE
PLAY_FEATURES = 6  # normal, Voodoo!, followers by normal / Voodoo! / either / 2, deck answers
CYCLE_FEATURES = Q + 1  # pairs the card answers, empty slot


class VoodooManiaHead(nn.Module):
    """Logits ``[B, 10]`` from the observation ``[B, 421]`` and the trunk's hidden vector
    ``[B, hidden]``, in the flat action layout (see the module docstring)."""

    fixed_options: tuple[str, ...] = ()  # the deck is data, not an option

    def __init__(self, hidden: int, obs_size: int, num_actions: int, width: int = 64) -> None:
        super().__init__()
        if (obs_size, num_actions) != (LAYOUT.size, A.NUM_ACTIONS):
            raise ConfigError(
                f"the Voodoo Mania factored head needs {LAYOUT.size} observation entries and "
                f"{A.NUM_ACTIONS} actions, got {obs_size} and {num_actions}"
            )
        self.wait = nn.Linear(hidden, 1)
        self.play_context = nn.Linear(hidden, width)
        self.play_pair = nn.Linear(PLAY_FEATURES, width, bias=False)
        self.play_out = nn.Linear(width, 1)
        self.cycle_context = nn.Linear(hidden, width)
        self.cycle_card = nn.Linear(CYCLE_FEATURES, width, bias=False)
        self.cycle_out = nn.Linear(width, 1)
        answers = torch.as_tensor(deck_answers(), dtype=torch.float32)
        self.register_buffer("deck_answers", answers / answers.max(), persistent=False)

    def features(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``[B, 6, PLAY_FEATURES]`` per play (slot-major, as the actions) and ``[B, 3,
        CYCLE_FEATURES]`` per hand slot, read from a batch of observations."""
        batch = obs.shape[0]
        sides = obs[:, LAYOUT["hand"]].reshape(batch, H, 2, 2 * Q)
        shows, misses = sides[..., :Q], sides[..., Q:]
        card_shows, card_misses = shows.amax(2), misses.amax(2)  # [B, 3, 25]
        card_answers = answers(sides).to(obs.dtype)
        others = 1.0 - torch.eye(H, dtype=obs.dtype, device=obs.device)  # [slot k, card j]

        def followers(card_pairs: torch.Tensor) -> torch.Tensor:
            """[B, 3, 2]: other hand cards whose ``card_pairs`` hold the pair a play leaves."""
            matches = torch.einsum("bksp,bjp->bksj", misses, card_pairs)
            return (matches * others[None, :, None, :]).sum(-1) / (H - 1)

        kinds = obs[:, LAYOUT["hand_plays"]].reshape(batch, H, 2, 2)
        play = torch.cat(
            [
                kinds,
                followers(card_shows)[..., None],
                followers(card_misses)[..., None],
                followers(card_answers)[..., None],
                (misses @ self.deck_answers.to(obs.dtype))[..., None],
            ],
            dim=-1,
        )
        empty = 1.0 - card_answers.amax(-1, keepdim=True)
        return play.reshape(batch, 2 * H, PLAY_FEATURES), torch.cat([card_answers, empty], -1)

    def forward(self, obs: torch.Tensor, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The logits of every action (the caller masks the illegal ones)."""
        play, cycle = self.features(obs)
        play_hidden = torch.tanh(self.play_context(hidden)[:, None] + self.play_pair(play))
        cycle_hidden = torch.tanh(self.cycle_context(hidden)[:, None] + self.cycle_card(cycle))
        return torch.cat(
            [
                self.wait(hidden),
                self.play_out(play_hidden).squeeze(-1),
                self.cycle_out(cycle_hidden).squeeze(-1),
            ],
            dim=1,
        )
