"""The factored action head of Hocus Pocus for :class:`cauldron.agents.torch_policy.PolicyNet`.

A flat head learns each of the 250 "play card k on space s" actions (index ``10 + 5k + s``) as
its own output row, so "the card must match the top" and "this play makes more tops share a
colour" are learnt 250 times over. Here one small network, shared by every (card, space) pair,
scores a play from:

* the trunk's hidden vector (through one linear layer into the shared network's hidden layer);
* card k's attributes: colour and type one-hot, Spell Book and Binx flags (``CARD_FEATURES``);
* space s as the observation shows it: its top's colour and type, an empty flag, the printed
  colour and type of an empty space, the colour and type of the card right under the top (what a
  Spell that strips the top uncovers), the pile size and the space one-hot (``SPACE_FEATURES``);
* the pair: whether card k fits space s's top (``FITS``), and the tops' attribute counts if k
  were played there (how many of the five tops would show each colour and type), their maximum
  and whether it is 5, a stun (``PAIR_FEATURES``). A bilinear term adds the trunk's preference
  over the ten attributes (a linear map of the hidden vector) times those counts, which is the
  form of ``heuristic:greedy``'s play value.

"Choose card k" (260–309: discard, pass, burn, swap) is factored the same way over the cards:
card k's attributes, whether it is in hand, how many tops share its colour and its type, on how
many spaces it fits and the most tops one play of it could make share an attribute
(``CHOICE_FEATURES``), plus the trunk's attribute preference times k's attributes. Every other
action keeps a flat output row. Card and board tables assume the default components, as the
heuristics do (:mod:`cauldron.agents.hocus_pocus.cards`).
"""

from __future__ import annotations

import torch
from torch import nn

from cauldron.agents.hocus_pocus.cards import HAS, IS_SPELL_BOOK, LAYOUT
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C

K, S = C.NUM_CARDS, C.NUM_SPACES
CARD_FEATURES = 12  # colour 5, type 5, Spell Book, Binx
SPACE_FEATURES = 37  # top attributes 10, empty 1, printed attributes if empty 10, under-top 10,
# pile size 1, space one-hot 5
PAIR_FEATURES = 13  # fits 1, attribute counts after the play / 5 (10), their max / 5, stun
CHOICE_FEATURES = 5  # in hand, tops sharing colour / 5, tops sharing type / 5, fitting spaces /
# 5, best count one play of the card reaches / 5


def _card_table() -> torch.Tensor:
    """``[50, CARD_FEATURES]``: each card's colour and type one-hot, Spell Book and Binx flags."""
    binx = torch.zeros(K)
    for colour, kind in C.DEFAULT_BINX:
        binx[(colour * 5 + kind) * 2] = 1.0
    attributes = torch.as_tensor(HAS, dtype=torch.float32)
    spell_book = torch.as_tensor(IS_SPELL_BOOK, dtype=torch.float32)
    return torch.cat([attributes, spell_book[:, None], binx[:, None]], dim=1)


def _printed_table() -> torch.Tensor:
    """``[5, 10]``: the colour and type printed on each Cauldron space, one-hot."""
    printed = torch.zeros(S, 10)
    for space, (colour, kind) in enumerate(C.DEFAULT_BOARD):
        printed[space, colour] = printed[space, 5 + kind] = 1.0
    return printed


class HocusPocusHead(nn.Module):
    """Logits ``[B, 329]`` from the observation ``[B, 1186]`` and the trunk's hidden vector
    ``[B, hidden]``, in the flat action layout (see the module docstring)."""

    # Options whose change would make the card and board tables wrong (refused in training).
    fixed_options = ("board", "binx_cards", "spell_book_cards")

    def __init__(self, hidden: int, obs_size: int, num_actions: int, width: int = 64) -> None:
        super().__init__()
        if (obs_size, num_actions) != (LAYOUT.size, A.NUM_ACTIONS):
            raise ConfigError(
                f"the Hocus Pocus factored head needs {LAYOUT.size} observation entries and "
                f"{A.NUM_ACTIONS} actions, got {obs_size} and {num_actions}"
            )
        self.flat = nn.Linear(hidden, num_actions - K * S - K)  # the actions not factored
        self.play_context = nn.Linear(hidden, width)
        self.play_card = nn.Linear(CARD_FEATURES, width, bias=False)
        self.play_space = nn.Linear(SPACE_FEATURES, width, bias=False)
        self.play_pair = nn.Linear(PAIR_FEATURES, width, bias=False)
        self.play_out = nn.Linear(width, 1)
        self.play_preference = nn.Linear(hidden, 10)
        self.choice_context = nn.Linear(hidden, width)
        self.choice_card = nn.Linear(CARD_FEATURES + CHOICE_FEATURES, width, bias=False)
        self.choice_out = nn.Linear(width, 1)
        self.choice_preference = nn.Linear(hidden, 10)
        self.register_buffer("cards", _card_table(), persistent=False)
        self.register_buffer("printed", _printed_table(), persistent=False)
        self.register_buffer("has", torch.as_tensor(HAS, dtype=torch.float32), persistent=False)

    def space_features(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        """Per space, from a batch of observations: ``space`` ``[B, 5, SPACE_FEATURES]`` (in the
        order of the module docstring), ``tops`` ``[B, 5, 10]`` (the top's colour and type; 0 if
        empty), ``matchable`` ``[B, 5, 10]`` (what a card must share to fit: the top's, or the
        printed attributes of an empty space) and ``hand`` ``[B, 50]``."""
        batch = obs.shape[0]
        tops = obs[:, LAYOUT["pile_tops"]].reshape(batch, S, K) @ self.has
        under = (obs[:, LAYOUT["buried_cards"]].reshape(batch, S, K) == 1.0).to(obs.dtype)
        empty = 1.0 - tops[..., :5].sum(-1, keepdim=True)
        space = torch.cat(
            [
                tops,
                empty,
                empty * self.printed,
                under @ self.has,
                obs[:, LAYOUT["pile_sizes"], None],
                torch.eye(S, dtype=obs.dtype, device=obs.device).expand(batch, S, S),
            ],
            dim=-1,
        )
        return {
            "space": space,
            "tops": tops,
            "matchable": tops + empty * self.printed,
            "hand": obs[:, LAYOUT["hand"]],
        }

    def pair_features(
        self, spaces: dict[str, torch.Tensor], rows: torch.Tensor, card: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """For card ``card[i]`` of row ``rows[i]`` on every space: ``pair`` ``[N, 5,
        PAIR_FEATURES]`` and ``after`` ``[N, 5, 10]``, the tops' attribute counts if the card
        went onto that space."""
        tops = spaces["tops"][rows]  # [N, 5, 10]
        has = self.has[card][:, None, :]  # [N, 1, 10]
        fits = ((has * spaces["matchable"][rows]).sum(-1) > 0).to(tops.dtype)  # [N, 5]
        after = tops.sum(1, keepdim=True) - tops + has
        best = after.amax(-1)
        stun = (best == S).to(tops.dtype)
        pair = torch.cat([fits[..., None], after / S, best[..., None] / S, stun[..., None]], -1)
        return pair, after

    def forward(self, obs: torch.Tensor, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The logits; factored actions that ``mask`` forbids are left at 0 (the caller masks
        them), so only legal plays and choices are scored."""
        batch = obs.shape[0]
        spaces = self.space_features(obs)
        play = hidden.new_zeros(batch, K * S)
        rows, index = mask[:, A.PLAY : A.CHOOSE].nonzero(as_tuple=True)
        if len(rows):
            card, space = index // S, index % S
            pair, after = self.pair_features(spaces, rows, card)
            picked = torch.arange(len(rows), device=obs.device), space
            play_hidden = torch.tanh(
                self.play_context(hidden)[rows]
                + self.play_card(self.cards)[card]
                + self.play_space(spaces["space"][rows, space])
                + self.play_pair(pair[picked])
            )
            preference = (self.play_preference(hidden)[rows] * after[picked] / S).sum(-1)
            score = self.play_out(play_hidden).squeeze(-1) + preference
            play = play.index_put((rows, index), score.to(play.dtype))
        choice = hidden.new_zeros(batch, K)
        rows, card = mask[:, A.CHOOSE : A.FINISH].nonzero(as_tuple=True)
        if len(rows):
            pair, _ = self.pair_features(spaces, rows, card)
            fits, best = pair[..., 0], pair[..., 11]
            tops = spaces["tops"][rows].sum(1) * self.has[card]  # tops sharing its attributes
            extra = torch.stack(
                [
                    spaces["hand"][rows, card],
                    tops[:, :5].sum(-1) / S,
                    tops[:, 5:].sum(-1) / S,
                    fits.sum(-1) / S,
                    (best * fits).amax(-1),
                ],
                dim=-1,
            )
            choice_hidden = torch.tanh(
                self.choice_context(hidden)[rows]
                + self.choice_card(torch.cat([self.cards[card], extra], -1))
            )
            preference = (self.choice_preference(hidden)[rows] * self.has[card]).sum(-1)
            score = self.choice_out(choice_hidden).squeeze(-1) + preference
            choice = choice.index_put((rows, card), score.to(choice.dtype))
        flat = self.flat(hidden)
        return torch.cat([flat[:, : A.PLAY], play, choice, flat[:, A.PLAY :]], dim=1)
