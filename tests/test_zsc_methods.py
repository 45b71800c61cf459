"""The training-methods table (``cauldron methods``): a row per protocol run
with its own figures, the README block rewritten, and runs that do not compare refused."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import pytest

from cauldron import envs
from cauldron.eval.zsc import methods
from cauldron.eval.zsc.config import load_zsc_config

SHIPPED = Path("docs/results/hocus_pocus_zsc/results.json")


def protocol_run(folder: Path, overrides: dict, selfplay: float, **changes) -> Path:
    """A copy of the shipped protocol's summary with other overrides and a self-play mean."""
    summary = copy.deepcopy(json.loads(SHIPPED.read_text()))
    summary["config"]["train_overrides"] = overrides
    summary["selfplay"] = {"mean": selfplay, "low": selfplay - 0.1, "high": selfplay + 0.1}
    summary.update(changes)
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(summary))
    return folder


def test_each_method_is_a_row_with_its_own_figures(tmp_path):
    plain = protocol_run(tmp_path / "ppo", {"total_steps": 4096, "max_minutes": 0}, 0.5)
    memory = protocol_run(
        tmp_path / "gru", {"total_steps": 4096, "recurrent": 64, "other_play": True}, 0.75
    )
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- BEGIN methods -->\nold\n<!-- END methods -->\nend\n")
    text = methods.main([f"PPO={plain}", f"recurrent={memory}", "--out", str(tmp_path / "out")])
    rows = text.splitlines()
    assert rows[0].startswith("| method | training | steps per seed | mean stuns: self-play")
    assert rows[0].endswith("| beside heuristic:consensus ×3 |")
    assert rows[2].startswith("| PPO | as configured | 1,048,576 |")
    assert rows[3].startswith("| recurrent | {recurrent: 64, other_play: true} | 1,048,576 |")
    assert "| 0.50 [0.40, 0.60] |" in rows[2] and "| 0.75 [0.65, 0.85] |" in rows[3]
    assert len(rows) == 4
    report = (tmp_path / "out" / "report.md").read_text()
    assert text in report and "[recurrent](../gru/report.md)" in report
    assert "trains `configs/train/hocus_pocus_torch.yaml` with {total_steps: 4096};" in report
    methods.main([f"PPO={plain}", "--out", str(tmp_path / "out"), "--readme", str(readme)])
    assert readme.read_text().startswith("intro\n<!-- BEGIN methods -->\n| method |")
    assert "old" not in readme.read_text() and readme.read_text().endswith("end\n")


def test_rows_of_different_train_configs_name_their_own(tmp_path):
    plain = protocol_run(tmp_path / "ppo", {"total_steps": 4096}, 0.5)
    other = protocol_run(tmp_path / "other", {"total_steps": 4096}, 0.5)
    summary = json.loads((other / "results.json").read_text())
    summary["config"]["train"] = "configs/train/hocus_pocus_2p_torch.yaml"
    (other / "results.json").write_text(json.dumps(summary))
    rows = methods.main([f"A={plain}", f"B={other}", "--out", str(tmp_path / "out")]).splitlines()
    assert rows[2].startswith("| A | `configs/train/hocus_pocus_torch.yaml` as configured |")
    assert rows[3].startswith("| B | `configs/train/hocus_pocus_2p_torch.yaml` as configured |")
    report = (tmp_path / "out" / "report.md").read_text()
    own = "trains its own train config (in the column *training*) with {total_steps: 4096}"
    assert own in report


def test_a_row_without_overrides_is_the_train_config_as_configured(tmp_path):
    plain = protocol_run(tmp_path / "ppo", {"name": "x", "max_minutes": 0}, 0.5)
    rows = methods.main([f"PPO={plain}", "--out", str(tmp_path / "out")]).splitlines()
    assert rows[2].startswith("| PPO | as configured | 1,048,576 |")
    report = (tmp_path / "out" / "report.md").read_text()
    assert "trains `configs/train/hocus_pocus_torch.yaml` with no overrides;" in report


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"players": 3}, "recurrent: players is 3, PPO's is 4"),
        ({"games": 100}, "recurrent: games is 100, PPO's is 500"),
        ({"adhoc": {}}, r"recurrent: partners \[\], PPO's \['random', "),
    ],
)
def test_runs_that_do_not_compare_are_refused(tmp_path, changes, match):
    plain = protocol_run(tmp_path / "ppo", {}, 0.5)
    other = protocol_run(tmp_path / "gru", {}, 0.5, **changes)
    with pytest.raises(envs.ConfigError, match=match):
        methods.main([f"PPO={plain}", f"recurrent={other}", "--out", str(tmp_path / "out")])


def test_bad_arguments_say_what_is_expected(tmp_path):
    with pytest.raises(envs.ConfigError, match="no results.json"):
        methods.main([f"PPO={tmp_path}", "--out", str(tmp_path / "out")])
    with pytest.raises(envs.ConfigError, match="give each method as NAME=FOLDER"):
        methods.main([str(tmp_path), "--out", str(tmp_path / "out")])
    plain = protocol_run(tmp_path / "ppo", {}, 0.5)
    with pytest.raises(envs.ConfigError, match="method 'PPO' given twice"):
        methods.main([f"PPO={plain}", f"PPO={plain}", "--out", str(tmp_path / "out")])


ROWS = ["batched", "recurrent", "belief", "other_play"]  # configs/eval/hocus_pocus_zsc_<row>.yaml


def test_hocus_pocus_method_configs_differ_only_in_the_method():
    """The table's four rows play on one engine, the same deals and partners, and give every
    seed the same budget; each row adds its method to the previous one's training."""
    configs = [load_zsc_config(f"configs/eval/hocus_pocus_zsc_{row}.yaml") for row in ROWS]
    shared = ("env", "num_players", "train", "seeds", "partners", "measure", "games", "seed")
    for config in configs:
        assert config.engine == "batched"
        assert {k: getattr(config, k) for k in shared} == {
            k: getattr(configs[0], k) for k in shared
        }
    overrides = [dict(config.train_overrides) for config in configs]
    budget = ("total_steps", "max_minutes", "lr_decay_steps", "final_eval_games")
    assert {tuple(o[k] for k in budget) for o in overrides} == {(1048576, 0, 0, 20)}
    added = [
        set(after.items()) - set(before.items()) - {("name", after["name"])}
        for before, after in itertools.pairwise(overrides)
    ]
    assert added == [
        {("recurrent", 128), ("seq_len", 4)},
        {("belief_coef", 1.0)},
        {("other_play", True)},
    ]
