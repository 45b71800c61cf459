"""The cooperative-AI protocol (python -m eval.zsc, issue 12 item 4): config checks, the seat
compositions it plays, the self-play / cross-play ratio on a constructed case, and a whole run
on the Headless Horseman at 2 players with seeds trained for a few hundred steps."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
import yaml

import envs
from eval import harness, zsc
from eval.play import GameResult
from eval.stats import bootstrap_ratio_interval
from eval.zsc_config import load_zsc_config, parse_zsc_config
from train import fit, runfolder
from train.config import load_config
from train.runlog import RunLog

ENV = "headless_horseman_v1"
TINY_TRAINING = {
    "env": ENV,
    "num_players": 2,
    "trainer": "torch",
    "total_steps": 128,
    "num_envs": 2,
    "rollout_steps": 64,
    "minibatches": 2,
    "epochs": 1,
    "hidden": [16],
    "eval_every": 100,
    "eval_games": 1,
    "final_eval_games": 1,
}


@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("zsc")
    path = folder / "tiny.yaml"
    path.write_text(yaml.safe_dump({**TINY_TRAINING, "out": str(folder / "train")}))
    return path


def protocol(train_file, **extra) -> dict:
    return {
        "env": ENV,
        "num_players": 2,
        "train": str(train_file),
        "seeds": [0, 1, 2],
        "partners": ["random"],
        "games": 4,
        "workers": 1,
        "out": str(train_file.parent / "out"),
        **extra,
    }


@pytest.mark.parametrize(
    "extra, match",
    [
        ({"seeds": [0, 1]}, "seeds: Value error, cross-play needs at least 3 training seeds"),
        ({"seeds": [0, 1, 1]}, "seeds: Value error, seeds must be distinct"),
        ({"partners": ["heuristic:nobody"]}, "partner 'heuristic:nobody': unknown heuristic"),
        ({"partners": ["random", "random"]}, "partners must be distinct"),
        ({"colour": "red"}, "unknown key 'colour' (allowed: env, num_players, train, seeds"),
        ({"measure": "stuns"}, "measure: Input should be 'win' or 'score'"),
        ({"num_players": 3}, "num_players 3 is not the train config's 2"),
        ({"env": "hexenflug_v1"}, "hexenflug_v1 is not cooperative"),
        ({"train_overrides": {"seed": 4}}, "seed is set by seeds, not train_overrides"),
        ({"train_overrides": {"hidden": "big"}}, "train (with train_overrides)"),
    ],
)
def test_bad_protocol_configs_are_refused_naming_the_field(train_file, extra, match):
    with pytest.raises(envs.ConfigError) as caught:
        parse_zsc_config(protocol(train_file, **extra), "zsc.yaml")
    assert match in str(caught.value)


def test_shipped_protocol_configs_are_valid():
    for game, n in (("hocus_pocus", 4), ("headless_horseman", 3)):
        config = load_zsc_config(f"configs/eval/{game}_zsc.yaml")
        assert config.num_players == n and len(config.seeds) >= 3 and "random" in config.partners
        assert config.name == f"{game}_zsc" and config.games >= 500


def test_cross_play_seats_two_seeds_half_and_half():
    """Even N: each unordered pair once, N/2 seats each; odd N: both ordered pairs, the first
    seed in the larger half; ad-hoc: one seed with N−1 partners."""
    four = zsc.plan(["a", "b", "c"], ["p"], 4)
    three = zsc.plan(["a", "b", "c"], ["p"], 3)
    cross4 = [lu for role, lu in four if role == zsc.CROSS]
    cross3 = [lu for role, lu in three if role == zsc.CROSS]
    assert [(lu.agents, lu.seats) for lu in cross4] == [
        (("a", "b"), (2, 2)),
        (("a", "c"), (2, 2)),
        (("b", "c"), (2, 2)),
    ]
    assert len(cross3) == 6 and {lu.seats for lu in cross3} == {(2, 1)}
    assert {lu.composition() for lu in cross3} == {
        tuple(sorted(((x, 2), (y, 1)))) for x in "abc" for y in "abc" if x != y
    }
    adhoc = [lu for role, lu in four if role == zsc.ADHOC]
    assert [(lu.agents, lu.seats) for lu in adhoc] == [((s, "p"), (1, 3)) for s in "abc"]
    assert [lu.agents for role, lu in four if role == zsc.SELF] == [("a",), ("b",), ("c",)]


def test_ratio_bootstrap_on_known_means():
    """Cross-play rows at half the self-play rows' score: ratio 0.5 exactly, and a ratio of
    noisy rows near the ratio of their true means."""
    out = bootstrap_ratio_interval(np.full((3, 50), 1.0), np.full((3, 50), 2.0))
    assert out["ratio"] == (0.5, 0.5, 0.5) and out["difference"] == (-1.0, -1.0, -1.0)
    rng = np.random.default_rng(0)
    noisy = bootstrap_ratio_interval(rng.random((6, 2000)) < 0.3, rng.random((3, 2000)) < 0.6)
    estimate, low, high = noisy["ratio"]
    assert low < estimate < high and low < 0.5 < high and high - low < 0.15
    zero = bootstrap_ratio_interval(np.ones((2, 5)), np.zeros((3, 5)))
    assert np.isnan(zero["ratio"][0]) and zero["numerator"] == (1.0, 1.0, 1.0)


def test_summary_ratio_of_a_constructed_pairing(train_file):
    """Seeds that always win together and win cross-play on every other deal: self-play 1,
    cross-play 0.5, ratio 0.5; the matrix says which cell is which."""
    config = parse_zsc_config(protocol(train_file))
    seeds = ["s0", "s1", "s2"]
    runs = [zsc.SeedRun(k, train_file.parent, s, False, 0) for k, s in enumerate(seeds)]
    deals = range(4)

    def won(role: str, seed: int) -> int:
        return 1 if role == zsc.SELF else seed % 2 if role == zsc.CROSS else 0

    results = {
        lineup: [
            GameResult(
                d, {}, 10, {"outcome": won(role, d), "scares": 3}, harness.seating(lineup, d)
            )
            for d in deals
        ]
        for role, lineup in zsc.plan(seeds, ["random"], 2)
    }
    eval_config = zsc.evaluation_config(config, [], 4)
    summary = zsc.summarize(config, runs, results, eval_config)
    assert summary["selfplay"]["mean"] == 1.0 and summary["crossplay"]["mean"] == 0.5
    assert summary["ratio"]["mean"] == 0.5 and summary["difference"]["mean"] == -0.5
    assert summary["matrix"] == [[1.0, 0.5, 0.5], [0.5, 1.0, 0.5], [0.5, 0.5, 1.0]]
    assert summary["adhoc"]["random"]["ratio"]["mean"] == 0.0
    assert summary["per_seed"]["s1"]["ratio"]["mean"] == 0.5


def train_seed_here(train_file, seed: int) -> Path:
    """Train one seed of the tiny config as ``python -m train`` would, without its final
    evaluation; the run folder."""
    config = load_config(train_file, [], seed)
    with runfolder.claim(config):
        config_text = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
        (config.folder / "config.yaml").write_text(config_text)
        fit(config, RunLog(config.folder, quiet=True))
    return config.folder


def copy_run(folder: Path, seed: int) -> None:
    """Another seed's run folder holding the same weights."""
    twin = folder.with_name(folder.name.replace("seed0", f"seed{seed}"))
    shutil.copytree(folder, twin)
    saved = yaml.safe_load((twin / "config.yaml").read_text())
    (twin / "config.yaml").write_text(yaml.safe_dump({**saved, "seed": seed, "name": twin.name}))


def test_whole_protocol_trains_missing_seeds_then_reuses_them(train_file, capsys):
    """End to end (python -m eval.zsc): seeds 0 and 1 hold the same weights (made here), so
    they cross-play exactly as they self-play; seed 2 is trained by the protocol. Every
    composition plays the same deals; the report, results and two valid PNGs are written; a
    second run reuses every checkpoint; a run folder trained otherwise is refused, naming the
    field."""
    copy_run(train_seed_here(train_file, 0), 1)
    path = train_file.parent / "zsc.yaml"
    path.write_text(yaml.safe_dump(protocol(train_file, games=20)))
    summary = zsc.main([str(path), "--quick", "--games", "4", "--quiet"])
    out = train_file.parent / "out"
    assert [r["trained_now"] for r in summary["runs"]] == [False, False, True]
    assert [r["steps"] for r in summary["runs"]] == [128] * 3
    twins = summary["matrix"]
    assert twins[0][1] == twins[1][0] == twins[0][0] == twins[1][1]
    assert summary["per_seed"][summary["runs"][0]["agent"]]["numerator"]["mean"] == np.mean(
        [twins[0][1], twins[0][2]]
    )
    assert "Cut short: 4 games" in (out / "report.md").read_text()
    results = json.loads((out / "results.json").read_text())
    roles = [r["role"] for r in results["rows"]]
    assert roles == [zsc.SELF] * 3 + [zsc.CROSS] * 3 + [zsc.ADHOC] * 3 + [zsc.PARTNER]
    assert {tuple(r["games"]["seed"]) for r in results["rows"]} == {(0, 1, 2, 3)}
    assert results["provenance"]["checkpoints"].keys() == {r["agent"] for r in summary["runs"]}
    for name in ("crossplay.png", "adhoc.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert plt.imread(out / name).ndim == 3
    checkpoint = train_file.parent / "train" / "tiny-seed2" / "final.pt"
    before = checkpoint.stat().st_mtime_ns
    again = zsc.main([str(path), "--games", "4", "--quiet"])
    assert [r["trained_now"] for r in again["runs"]] == [False] * 3
    assert checkpoint.stat().st_mtime_ns == before
    assert again["rows"] == summary["rows"]  # same checkpoints, same deals: same games
    assert "seed 2: using" in capsys.readouterr().out
    path.write_text(yaml.safe_dump(protocol(train_file, train_overrides={"hidden": [8]})))
    with pytest.raises(envs.ConfigError, match=r"tiny-seed0 was trained with other .*hidden"):
        zsc.main([str(path), "--quiet"])
