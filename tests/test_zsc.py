"""The cooperative-AI protocol (cauldron zsc): config checks, the seat
compositions it plays, the self-play / cross-play ratio on a constructed case, and a whole run
on the Headless Horseman at 2 players with seeds trained for a few hundred steps; then
budgets in steps (max_minutes refused), --quick shortening training, the time estimate, and
finished checkpoints played instead of training."""

from __future__ import annotations

import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
import yaml

from cauldron import envs
from cauldron.eval import harness, zsc
from cauldron.eval.play import GameResult
from cauldron.eval.stats import bootstrap_ratio_interval
from cauldron.eval.zsc import report as zsc_report
from cauldron.eval.zsc import runs as zsc_runs
from cauldron.eval.zsc.config import load_zsc_config, parse_zsc_config, quick_config
from cauldron.train import fit, runfolder
from cauldron.train.config import load_config
from cauldron.train.runlog import RunLog, read_metrics

ENV = "headless_horseman_v1"
HH_TORCH = "checkpoints/headless_horseman_torch.pt"  # trained at 3 players
HH_SB3 = "checkpoints/headless_horseman_sb3.zip"
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
        ({"train_overrides": {"max_minutes": 10}}, "max_minutes 10 (train config with train"),
        ({"checkpoints": ["random"] * 3}, "'random' is not a torch:<file> or sb3:<file>"),
        ({"checkpoints": [HH_TORCH]}, "checkpoints: 1 given for the 3 seeds [0, 1, 2]"),
        ({"checkpoints": [HH_TORCH, HH_SB3, HH_TORCH]}, "checkpoints must be distinct"),
        ({"checkpoints": ["nowhere.pt", HH_SB3, "b.zip"]}, "torch checkpoint 'nowhere.pt' not"),
        (
            {"checkpoints": ["checkpoints/hocus_pocus_torch.pt", HH_SB3, HH_TORCH]},
            "was trained for 'hocus_pocus_v1', not 'headless_horseman_v1'",
        ),
        (
            {"checkpoints": ["sb3:checkpoints/hexenflug_sb3.zip", HH_SB3, HH_TORCH]},
            "was trained for 'hexenflug_v1'",
        ),
        (
            {"checkpoints": [HH_SB3, HH_TORCH, "c.pt"]},
            f"checkpoints: sb3:{HH_SB3} was trained at 3 players, the protocol plays 2",
        ),
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


GIVEN_CHECKPOINT_PROTOCOLS = sorted(
    path
    for path in Path("configs/eval").glob("*_zsc_*.yaml")
    if "checkpoints" in yaml.safe_load(path.read_text())
)


@pytest.mark.parametrize("path", GIVEN_CHECKPOINT_PROTOCOLS, ids=lambda p: p.stem)
def test_protocols_of_shipped_checkpoints_load_with_one_checkpoint_a_seed(path):
    """Loading checks that every given checkpoint exists, plays this game and player count."""
    config = load_zsc_config(path)
    assert len(config.checkpoints) == len(config.seeds) >= 3
    assert all(Path(spec.split(":", 1)[1]).is_file() for spec in config.checkpoints)


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
    """Train one seed of the tiny config as ``cauldron train`` would, without its final
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
    """End to end (cauldron zsc): seeds 0 and 1 hold the same weights (made here), so
    they cross-play exactly as they self-play; seed 2 is trained by the protocol. Every
    composition plays the same deals; the report, results and two valid PNGs are written; a
    second run reuses every checkpoint; a run folder trained otherwise is refused, naming the
    field."""
    copy_run(train_seed_here(train_file, 0), 1)
    path = train_file.parent / "zsc.yaml"
    path.write_text(yaml.safe_dump(protocol(train_file, games=20)))
    summary = zsc.main([str(path), "--games", "4", "--quiet"])
    out = train_file.parent / "out"
    assert [r["trained_now"] for r in summary["runs"]] == [False, False, True]
    assert [r["steps"] for r in summary["runs"]] == [128] * 3 and summary["warnings"] == []
    twins = summary["matrix"]
    assert twins[0][1] == twins[1][0] == twins[0][0] == twins[1][1]
    assert summary["per_seed"][summary["runs"][0]["agent"]]["numerator"]["mean"] == np.mean(
        [twins[0][1], twins[0][2]]
    )
    assert "Cut short: 4 games" in (out / "report.md").read_text()
    assert (out / "results.json.xz").read_bytes()[
        :6
    ] == b"\xfd7zXZ\x00"  # xz: small enough to commit
    results = zsc_report.load(out)
    assert results["matrix"] == summary["matrix"] and results["per_seed"] == summary["per_seed"]
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


def own_train_file(folder: Path, **fields) -> Path:
    """The tiny training config in a folder of its own (its run folders under ``train``)."""
    folder.mkdir(exist_ok=True)
    path = folder / "tiny.yaml"
    path.write_text(yaml.safe_dump({**TINY_TRAINING, "out": str(folder / "train"), **fields}))
    return path


def test_shipped_protocol_configs_budget_seeds_in_steps():
    """Every seed gets the same step budget, with no clock limit, sized to about 4-15 minutes
    a seed at the configured training speed."""
    for game in ("hocus_pocus", "headless_horseman"):
        config = load_zsc_config(f"configs/eval/{game}_zsc.yaml")
        budgets = {(c.total_steps, c.max_minutes) for c in map(config.train_config, config.seeds)}
        assert budgets == {(config.train_overrides["total_steps"], 0)}
        steps = config.train_overrides["total_steps"]
        assert 4 * 60 < steps / zsc_runs.SPEEDS[config.env].steps_per_second < 15 * 60


def test_a_clock_limit_is_refused_unless_checkpoints_are_given(tmp_path):
    train = own_train_file(tmp_path, max_minutes=5)
    with pytest.raises(envs.ConfigError, match=r"max_minutes 5 .* different step budgets"):
        parse_zsc_config(protocol(train))
    ok = parse_zsc_config(protocol(train, train_overrides={"max_minutes": 0}))
    assert ok.train_config(0).max_minutes == 0


def test_quick_divides_each_seeds_training_in_folders_of_its_own(train_file, monkeypatch, capsys):
    warm = {"agent": "heuristic:focal", "games": 30, "epochs": 1}
    config = parse_zsc_config(protocol(train_file, train_overrides={"warm_start": warm}))
    quick, changes = quick_config(config)
    full, short = config.train_config(1), quick.train_config(1)
    assert (full.total_steps, short.total_steps) == (128, 12)
    assert short.warm_start.games == 3 and short.warm_start.epochs == 1
    assert short.final_eval_games == full.final_eval_games == 1
    assert (full.folder.name, short.folder.name) == ("tiny-seed1", "tiny-quick-seed1")
    assert changes[:2] == ["total_steps 128 -> 12 (divided by 10)", "warm_start.games 30 -> 3"]
    assert quick.out == f"{config.out}-quick" and changes[-1].endswith(f"-> {quick.out}")

    def stop(config, games, quiet):
        raise RuntimeError(config.train_config(0).total_steps, games)

    monkeypatch.setattr(zsc, "run", stop)
    path = train_file.parent / "quick.yaml"
    path.write_text(yaml.safe_dump(protocol(train_file, games=500)))
    with pytest.raises(RuntimeError) as caught:
        zsc.main([str(path), "--quick"])
    assert caught.value.args == (12, 100)
    printed = capsys.readouterr().out
    assert printed.startswith("--quick: total_steps 128 -> 12 (divided by 10);")
    assert "run folders tiny-seed<k> -> tiny-quick-seed<k>" in printed
    assert printed.rstrip().endswith("games per composition 500 -> 100")


def test_the_estimate_uses_a_measured_rate_and_counts_only_seeds_to_train(tmp_path):
    """Configured speed with no run yet; a run folder's logged steps/s once there is one (a
    slower rate, a longer estimate by exactly the steps' time); a finished seed costs nothing."""
    train = own_train_file(tmp_path, total_steps=100_000)
    config = parse_zsc_config(protocol(train))
    configured, lines = zsc.estimate(config, 10, probe=False)
    assert lines[0].startswith("estimate: about ") and "3 of 3 seeds to train" in lines[1]
    speed = zsc_runs.SPEEDS["headless_horseman_v1"].steps_per_second
    assert f"{speed:,.0f} steps/s configured for headless_horseman_v1" in lines[1]
    _, lines = zsc.estimate(config, 10)
    assert "steps/s measured now by a probe of 2 updates" in lines[1]
    assert not (tmp_path / "train").exists()  # the probe trains in a temporary folder
    assert "games: 100 (10 compositions x 10)" in lines[2]
    seed0 = config.train_config(0).folder
    seed0.mkdir(parents=True)
    rows = "".join(f"{k * 128},perf/steps_per_second,{r}\n" for k, r in enumerate([90, 100, 400]))
    (seed0 / "metrics.csv").write_text("step,key,value\n" + rows)
    measured, lines = zsc.estimate(config, 10)
    assert f"100,000 steps at 100 steps/s measured in {seed0}" in lines[1]
    rate = zsc_runs.SPEEDS[ENV].steps_per_second
    assert measured - configured == pytest.approx(3 * (100_000 / 100 - 100_000 / rate))
    (seed0 / "final.pt").write_bytes(b"")
    fewer, lines = zsc.estimate(config, 10)
    assert "2 of 3 seeds to train" in lines[1]
    assert measured - fewer == pytest.approx(zsc.estimate(config, 0)[0] / 2)


def without_steps(checkpoint: Path) -> None:
    data = torch.load(checkpoint, weights_only=True)
    del data["steps"]
    torch.save(data, checkpoint)


def test_a_given_checkpoint_without_metrics_gives_the_steps_it_records(tmp_path):
    """The trainer writes the learner steps into every checkpoint; cauldron.eval.zsc reads them
    where no metrics.csv lies beside it, and older checkpoints (and other agents) give none."""
    run = train_seed_here(own_train_file(tmp_path / "source"), 0)
    trained = max(row[0] for row in read_metrics(run / "metrics.csv"))
    alone = tmp_path / "alone.pt"
    shutil.copy(run / "final.pt", alone)
    assert zsc_runs.checkpoint_steps(f"torch:{alone}") == trained > 0
    without_steps(alone)
    assert zsc_runs.checkpoint_steps(f"torch:{alone}") is None
    assert zsc_runs.checkpoint_steps("heuristic:planner") is None


def test_given_checkpoints_are_played_instead_of_training(tmp_path, capsys):
    """--checkpoints: no seed is trained (not even under a clock-limited train config); each
    checkpoint's steps come from a metrics.csv beside it; unequal or unknown steps are warned
    about, in the output and the report."""
    train = own_train_file(tmp_path, max_minutes=5)
    final = train_seed_here(own_train_file(tmp_path / "source"), 0) / "final.pt"
    given = []
    for name, steps in (("a", 128), ("b", 256), ("c", None)):
        (tmp_path / name).mkdir()
        shutil.copy(final, tmp_path / name / "final.pt")
        if steps:
            metrics = f"step,key,value\n{steps},train/mean_return,0.1\n"
            (tmp_path / name / "metrics.csv").write_text(metrics)
        given.append(str(tmp_path / name / "final.pt"))
    without_steps(Path(given[-1]))  # a checkpoint saved before checkpoints recorded steps
    path = tmp_path / "zsc.yaml"
    path.write_text(yaml.safe_dump(protocol(train, out=str(tmp_path / "out"))))
    with pytest.raises(envs.ConfigError, match="max_minutes 5"):
        zsc.main([str(path), "--quiet"])
    summary = zsc.main([str(path), "--checkpoints", *given, "--games", "2", "--quiet"])
    assert not (tmp_path / "train").exists()
    assert [r["given"] for r in summary["runs"]] == [True] * 3
    assert [r["agent"] for r in summary["runs"]] == [f"torch:{g}" for g in given]
    assert [r["steps"] for r in summary["runs"]] == [128, 256, None]
    assert len(summary["warnings"]) == 2
    assert "Seeds [2]: steps unknown" in summary["warnings"][0]
    assert "seed 0 128, seed 1 256" in summary["warnings"][1]
    out = capsys.readouterr().out
    assert "training: none (checkpoints given)" in out
    assert "warning: The seeds trained different numbers of steps" in out
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| given | n/a |" in report and "**Warning: Seeds [2]: steps unknown" in report


def test_a_seed_stopped_before_its_end_goes_on_from_its_saved_state(tmp_path, capsys):
    """A seed's run folder with a saved state and no final checkpoint (a table trained over
    several sittings) is resumed, not refused or started over: the estimate counts only its
    steps left, and it ends at the protocol's budget, its first update's metrics kept."""
    train = own_train_file(tmp_path)
    folder = train_seed_here(train, 0)
    (folder / "final.pt").unlink()
    assert (folder / runfolder.STATE).is_file()
    config = parse_zsc_config(protocol(train, train_overrides={"total_steps": 256}))
    _, lines = zsc.estimate(config, 4, probe=False)
    assert "3 of 3 seeds to train (1 resuming: 2.5 seeds' work left)" in lines[1]
    runs = zsc_runs.seed_runs(config, quiet=True)
    assert "seed 0: resuming" in capsys.readouterr().out
    assert [r.steps for r in runs] == [256] * 3
    assert (folder / "final.pt").is_file()
    assert {step for step, _, _ in read_metrics(folder / "metrics.csv")} >= {128, 256}
