"""The table across seeds (cauldron results --across-seeds): each seed's
steps, warnings for unequal budgets and too few seeds, no interval over one seed, and one-line
errors for mixed configs and missing or unfinished run folders. Run folders are made here with
only what the table reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cauldron import envs
from cauldron.envs.core.errors import run_command
from cauldron.train import results


def run_folder(folder: Path, seed: int, rate: float, steps: int = 4096, **config_fields) -> Path:
    """A finished cooperative run: config, metrics.csv up to ``steps``, a final checkpoint and
    its final evaluation with the trained team at win rate ``rate``."""
    folder.mkdir(parents=True)
    config = {
        "env": "headless_horseman_v1",
        "num_players": 3,
        "trainer": "torch",
        "seed": seed,
        "name": folder.name,
        "total_steps": steps,
        **config_fields,
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    (folder / "metrics.csv").write_text(
        f"step,key,value\n{steps // 2},train/mean_return,0.1\n{steps},train/mean_return,0.2\n"
    )
    (folder / "final.pt").write_bytes(b"")
    (folder / "evaluation").mkdir()
    win = {"rate": rate, "low": max(0.0, rate - 0.05), "high": min(1.0, rate + 0.05)}
    rows = [{"lineup": ["torch:x"], "win": win}, {"lineup": ["random"], "win": win}]
    data = {"config": {"agents": ["torch:x", "random"]}, "cooperative": True, "rows": rows}
    (folder / "evaluation" / "results.json").write_text(json.dumps(data))
    return folder


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_equal_budgets_give_each_seeds_steps_and_no_warning(tmp_path):
    folders = [run_folder(tmp_path / f"r-seed{s}", s, 0.5 + 0.1 * s) for s in range(3)]
    lines = results.seed_table(folders).splitlines()
    assert len(lines) == 3  # header, rule, one measure: no warning
    assert cells(lines[0])[-1] == "steps"
    row = cells(lines[2])
    assert row[4] == "50.0%, 60.0%, 70.0%" and row[-1] == "4,096, 4,096, 4,096"
    assert row[5].startswith("60.0% [")


def test_seeds_with_different_steps_are_flagged(tmp_path):
    """Three seeds trained by the clock (the issue's 24,576 / 94,208 / 106,496 steps)."""
    steps = [24_576, 94_208, 106_496]
    folders = [
        run_folder(tmp_path / f"r-seed{s}", s, 0.4, steps=n, max_minutes=10)
        for s, n in enumerate(steps)
    ]
    text = results.seed_table(folders)
    table, _, warning = text.partition("\n\n")
    assert cells(table.splitlines()[2])[-1] == "24,576, 94,208, 106,496"
    assert warning.startswith("warning: the seeds trained different numbers of steps")
    assert "seed 0 24,576, seed 1 94,208, seed 2 106,496" in warning
    assert warning.count("\n") == 0


def test_one_seed_has_no_interval_and_few_seeds_are_warned_about(tmp_path):
    one = [run_folder(tmp_path / "r-seed0", 0, 0.24)]
    text = results.seed_table(one)
    row = cells(text.splitlines()[2])
    assert row[5] == "n/a (1 seed)" and "[24.0, 24.0]" not in text
    assert text.splitlines()[-1].startswith("warning: 1 seed; the protocol asks for at least 3")
    two = [*one, run_folder(tmp_path / "r-seed1", 1, 0.5)]
    text = results.seed_table(two)
    assert cells(text.splitlines()[2])[5].startswith("37.0% [")
    assert text.splitlines()[-1].startswith("warning: 2 seeds; the protocol asks for at least 3")
    assert "different numbers of steps" not in text


@pytest.mark.parametrize(
    "damage, match",
    [
        (lambda f: (f / "final.pt").unlink(), r"not a finished training run: no a final checkp"),
        (lambda f: (f / "metrics.csv").unlink(), r"not a finished training run: no metrics\.csv"),
        (
            lambda f: (f / "evaluation" / "results.json").unlink(),
            r"not a finished training run: no evaluation/results\.json",
        ),
    ],
)
def test_an_unfinished_run_is_a_one_line_error(tmp_path, damage, match):
    folders = [run_folder(tmp_path / f"r-seed{s}", s, 0.5) for s in range(3)]
    damage(folders[1])
    with pytest.raises(envs.ConfigError, match=match) as caught:
        results.seed_table(folders)
    assert str(folders[1]) in str(caught.value) and "\n" not in str(caught.value)


def test_mixed_configs_and_repeated_or_missing_folders_are_refused(tmp_path):
    folders = [run_folder(tmp_path / f"r-seed{s}", s, 0.5) for s in range(2)]
    other = run_folder(tmp_path / "other", 2, 0.5, hidden=[8])
    with pytest.raises(envs.ConfigError, match="differs .* in hidden: not seeds of one config"):
        results.seed_table([*folders, other])
    with pytest.raises(envs.ConfigError, match="given twice"):
        results.seed_table([*folders, folders[0]])
    with pytest.raises(envs.ConfigError, match="'.*missing' is not a folder"):
        results.seed_table([*folders, tmp_path / "missing"])


def test_the_budget_alone_may_differ_between_seeds(tmp_path):
    """total_steps and max_minutes are how long a run trained, not what it is: the table
    takes such seeds and flags their steps instead of calling them another config."""
    a = run_folder(tmp_path / "r-seed0", 0, 0.5, steps=4096)
    b = run_folder(tmp_path / "r-seed1", 1, 0.5, steps=8192, max_minutes=5)
    c = run_folder(tmp_path / "r-seed2", 2, 0.5, steps=4096)
    assert "different numbers of steps" in results.seed_table([a, b, c])


def test_final_evaluations_that_measured_different_things_are_refused(tmp_path):
    folders = [run_folder(tmp_path / f"r-seed{s}", s, 0.5) for s in range(3)]
    path = folders[2] / "evaluation" / "results.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "cooperative": False, "rows": []}))
    with pytest.raises(envs.ConfigError, match="r-seed2's final evaluation measured"):
        results.seed_table(folders)


def test_the_command_exits_with_one_line_errors(tmp_path):
    """cauldron results --across-seeds: mixed games or a missing folder end the command
    with one line naming the folder (run_command turns the ConfigError into the exit message)."""
    folders = [run_folder(tmp_path / f"r-seed{s}", s, 0.5) for s in range(2)]
    other = run_folder(tmp_path / "other", 2, 0.5, env="hocus_pocus_v1", num_players=4)
    for extra in (other, tmp_path / "missing"):
        argv = ["--across-seeds", *map(str, folders), str(extra)]
        with pytest.raises(SystemExit) as caught:
            run_command(lambda argv=argv: results.main(argv))
        message = str(caught.value.code)
        assert message.startswith("error: ") and "\n" not in message and str(extra) in message
