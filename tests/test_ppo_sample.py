"""The trainer's action sampler (Gumbel-max over masked logits) only ever draws legal actions,
even on the one uniform draw in 2^24 that is exactly 0."""

from __future__ import annotations

import torch

from cauldron.train.ppo import sample

ILLEGAL = -1e9
FORCED = 328


def forced_row(num_actions: int = 400) -> torch.Tensor:
    """One row of masked logits, as the policy gives them, whose only legal action is ``FORCED``."""
    logits = torch.randn(1, num_actions, generator=torch.Generator().manual_seed(0)) + ILLEGAL
    logits[0, FORCED] = 0.5
    return logits


def test_a_draw_of_exactly_zero_on_the_only_legal_action_still_picks_it(monkeypatch):
    def zero_on_legal(logits: torch.Tensor) -> torch.Tensor:
        uniform = torch.full_like(logits, 0.5)
        uniform[0, FORCED] = 0.0
        return uniform

    monkeypatch.setattr(torch, "rand_like", zero_on_legal)
    action, logprob = sample(forced_row())
    assert action.tolist() == [FORCED]
    assert torch.isfinite(logprob).all()


def test_every_sampled_action_is_legal_and_follows_the_softmax():
    torch.manual_seed(1)
    logits = torch.tensor([[0.0, ILLEGAL, 1.0, ILLEGAL]]).repeat(20_000, 1)
    action, logprob = sample(logits)
    assert set(action.tolist()) <= {0, 2}
    share_of_2 = (action == 2).float().mean().item()
    assert abs(share_of_2 - torch.sigmoid(torch.tensor(1.0)).item()) < 0.02
    expected = torch.log_softmax(logits, -1).gather(1, action[:, None]).squeeze(1)
    assert torch.allclose(logprob, expected)
