"""The rollout diagnostics' arithmetic and a run's per-phase summary
(``cauldron.train.diagnostics``)."""

from __future__ import annotations

import math

import pytest
import torch

from cauldron.envs.core.errors import ConfigError
from cauldron.train.diagnostics import entropy, main, phase_table, rollout_stats


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


def test_phase_figures_include_the_advantages_of_each_phase():
    """``phase/<name>/advantage_*``: the mean and mean absolute advantage over the learner's
    decisions in that phase only (the other seats' decisions and the other phase left out)."""
    phases = (slice(0, 2), ["ask", "act"])
    obs = torch.tensor([[[1.0, 0.0]], [[0.0, 1.0]], [[1.0, 0.0]], [[0.0, 1.0]]])
    advantages = torch.tensor([[2.0], [-1.0], [-4.0], [5.0]])
    learners = torch.tensor([[1], [1], [1], [0]])
    zeros = torch.zeros(4, 1)
    stats = rollout_stats(
        entropies=zeros,
        obs=obs,
        masks=torch.ones(4, 1, 3),
        learners=learners,
        advantages=advantages,
        values=zeros,
        returns=zeros,
        phases=phases,
    )
    assert stats["phase/ask/advantage_mean"] == -1.0
    assert stats["phase/ask/advantage_abs_mean"] == 3.0
    assert (stats["phase/act/advantage_mean"], stats["phase/act/advantage_abs_mean"]) == (-1, 1)
    assert stats["phase/ask/share"] == pytest.approx(2 / 3)


def test_phase_table_compares_the_first_and_last_tenth_of_a_run(tmp_path):
    """``cauldron diagnostics <run>``: each phase's figures averaged over the rows logged
    in the first and in the last tenth of the steps; rows in between count in neither."""
    rows = [
        (step, f"phase/ask/{figure}", value)
        for step, value in ((0, 1.0), (10, 3.0), (50, 100.0), (100, 0.5))
        for figure in ("entropy", "share")
    ]
    rows.append((100, "phase/act/entropy", 0.25))
    rows.append((100, "diag/entropy", 9.0))
    text = phase_table(rows)
    lines = text.splitlines()
    assert lines[0] == "phase figures, first → last 10% of steps 0–100"
    ask, act = lines[-2:]
    assert ask.startswith("| ask | 2.000 → 0.500 | 2.000 → 0.500 | - → - |")
    assert act.startswith("| act | - → - | - → 0.250 |")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "metrics.csv").write_text(
        "step,key,value\n" + "".join(f"{s},{k},{v}\n" for s, k, v in rows)
    )
    assert main([str(folder)]) == text
    with pytest.raises(ConfigError, match="no metrics.csv"):
        main([str(tmp_path)])
    with pytest.raises(ConfigError, match="--tail must lie in"):
        main([str(folder), "--tail", "0.9"])
    with pytest.raises(ConfigError, match="no phase/ figures"):
        phase_table([(0, "diag/entropy", 1.0)])
