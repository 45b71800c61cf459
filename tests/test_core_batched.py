"""The shared tensor helpers of the batched engines (``envs/core/batched_ops.py``)."""

from __future__ import annotations

import torch

from cauldron.envs.core.batched_ops import inverse_permutation


def test_inverse_permutation_is_the_argsort_of_each_row() -> None:
    perm = torch.rand(64, 50, generator=torch.Generator().manual_seed(0)).argsort(dim=1)
    inverse = inverse_permutation(perm)
    assert torch.equal(inverse, perm.argsort(dim=1))
    assert torch.equal(perm.gather(1, inverse), torch.arange(50).expand(64, 50))


def test_inverse_permutation_of_ranks_with_ties_gives_ranks_in_sort_order() -> None:
    keys = torch.tensor([[2.0, 0.5, 2.0, 0.1], [2.0, 2.0, 2.0, 0.3]])
    ranks = inverse_permutation(keys.argsort(dim=1))
    assert ranks[0, 3] == 0 and ranks[0, 1] == 1 and ranks[1, 3] == 0
    assert sorted(ranks[0].tolist()) == [0, 1, 2, 3]
