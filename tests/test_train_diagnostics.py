"""The rollout diagnostics' arithmetic (``train.diagnostics``)."""

from __future__ import annotations

import math

import torch

from train.diagnostics import entropy


def test_entropy_of_masked_logits_counts_the_legal_actions_alone():
    """Masked actions (logits lowered by 1e9, as ``PolicyNet.masked_logits`` does) carry no
    probability: equal logits over k legal actions give log k, and any logits give the entropy
    of the categorical over the legal actions."""
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.float32)
    flat = torch.zeros(3, 5) + (mask - 1.0) * 1e9
    assert torch.allclose(entropy(flat), torch.tensor([math.log(3), 0.0, math.log(5)]))
    logits = torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
    legal = [torch.distributions.Categorical(logits=logits[i][mask[i].bool()]) for i in range(3)]
    expected = torch.stack([d.entropy() for d in legal])
    assert torch.allclose(entropy(logits + (mask - 1.0) * 1e9), expected, atol=1e-6)
