"""The training-methods table (``cauldron methods``): a row per protocol run
with its own figures, every pair of methods compared on the same deals, the README block
rewritten, and runs that do not compare refused."""

from __future__ import annotations

import copy
import itertools
import json
import lzma
from pathlib import Path

import pytest

from cauldron import envs
from cauldron.eval.zsc import methods
from cauldron.eval.zsc import report as zsc_report
from cauldron.eval.zsc.config import load_zsc_config

SHIPPED = Path("docs/results/hocus_pocus_zsc")


def save(folder: Path, summary: dict) -> None:
    """Write ``summary`` where ``cauldron zsc`` leaves its results."""
    (folder / zsc_report.RESULTS).write_bytes(lzma.compress(json.dumps(summary).encode()))


def protocol_run(folder: Path, overrides: dict, selfplay: float, **changes) -> Path:
    """A copy of the shipped protocol's summary with other overrides and a self-play mean."""
    summary = copy.deepcopy(zsc_report.load(SHIPPED))
    summary["config"]["train_overrides"] = overrides
    summary["selfplay"] = {"mean": selfplay, "low": selfplay - 0.1, "high": selfplay + 0.1}
    summary.update(changes)
    folder.mkdir(parents=True)
    save(folder, summary)
    return folder


def test_each_method_is_a_row_with_its_own_figures(tmp_path):
    plain = protocol_run(tmp_path / "ppo", {"total_steps": 4096, "max_minutes": 0}, 0.5)
    memory = protocol_run(
        tmp_path / "gru", {"total_steps": 4096, "recurrent": 64, "other_play": True}, 0.75
    )
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- BEGIN methods -->\nold\n<!-- END methods -->\nend\n")
    text = methods.main([f"PPO={plain}", f"recurrent={memory}", "--out", str(tmp_path / "out")])
    rows = text.split("\n\n")[0].splitlines()
    assert rows[0].startswith("| method | training | steps per seed | mean stuns: self-play")
    assert rows[0].endswith("| beside heuristic:consensus ×3 |")
    assert rows[2].startswith("| PPO | as configured | 1,048,576 |")
    assert rows[3].startswith("| recurrent | {recurrent: 64, other_play: true} | 1,048,576 |")
    assert "| 0.50 [0.40, 0.60] |" in rows[2] and "| 0.75 [0.65, 0.85] |" in rows[3]
    assert len(rows) == 4
    report = (tmp_path / "out" / "report.md").read_text()
    assert all(table in report for table in text.split("\n\n"))
    assert "[recurrent](../gru/report.md)" in report
    assert "trains `configs/train/hocus_pocus_torch.yaml` with {total_steps: 4096};" in report
    methods.main([f"PPO={plain}", "--out", str(tmp_path / "out"), "--readme", str(readme)])
    assert readme.read_text().startswith("intro\n<!-- BEGIN methods -->\n| method |")
    assert "old" not in readme.read_text() and readme.read_text().endswith("end\n")


def test_block_names_the_readme_block_to_rewrite_and_leaves_the_others(tmp_path):
    plain = protocol_run(tmp_path / "ppo", {}, 0.5)
    readme = tmp_path / "README.md"
    blocks = "<!-- BEGIN methods -->\nkept\n<!-- END methods -->\n"
    readme.write_text(blocks + "<!-- BEGIN methods_4p -->\nold\n<!-- END methods_4p -->\n")
    out = ["--out", str(tmp_path / "out"), "--readme", str(readme)]
    methods.main([f"PPO={plain}", *out, "--block", "methods_4p"])
    text = readme.read_text()
    assert text.startswith(blocks) and "old" not in text
    assert "<!-- BEGIN methods_4p -->\n| method |" in text
    with pytest.raises(envs.ConfigError, match=r"--block missing: .* lacks generated blocks"):
        methods.main([f"PPO={plain}", *out, "--block", "missing"])
    assert readme.read_text() == text


def test_a_row_played_from_given_checkpoints_still_names_its_training(tmp_path):
    plain = protocol_run(tmp_path / "ppo", {"total_steps": 4096}, 0.5)
    shipped = protocol_run(tmp_path / "shipped", {"total_steps": 4096, "recurrent": 64}, 0.5)
    summary = zsc_report.load(shipped)
    summary["config"]["checkpoints"] = ["torch:a.pt", "torch:b.pt", "torch:c.pt"]
    save(shipped, summary)
    rows = methods.main([f"A={plain}", f"B={shipped}", "--out", str(tmp_path / "out")])
    assert rows.splitlines()[2].startswith("| A | as configured |")
    assert rows.splitlines()[3].startswith("| B | {recurrent: 64} (given checkpoints) |")


def test_rows_of_different_train_configs_name_their_own(tmp_path):
    plain = protocol_run(tmp_path / "ppo", {"total_steps": 4096}, 0.5)
    other = protocol_run(tmp_path / "other", {"total_steps": 4096}, 0.5)
    summary = zsc_report.load(other)
    summary["config"]["train"] = "configs/train/hocus_pocus_2p_torch.yaml"
    save(other, summary)
    text = methods.main([f"A={plain}", f"B={other}", "--out", str(tmp_path / "out")])
    rows = text.splitlines()
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


def pair_rows(tmp_path, change) -> list[str]:
    """The pairs table of the shipped summary (as a win-rate protocol) against a copy of it
    whose rows ``change`` edits in place."""
    plain = protocol_run(tmp_path / "a", {}, 0.5, measure="win")
    other = protocol_run(tmp_path / "b", {}, 0.5, measure="win")
    summary = zsc_report.load(other)
    for row in summary["rows"]:
        change(row)
    save(other, summary)
    text = methods.main([f"A={plain}", f"B={other}", "--out", str(tmp_path / "out")])
    return text.split("\n\n")[1].splitlines()


def test_the_same_games_dealt_in_another_order_are_not_told_apart(tmp_path):
    """Pairs are matched by deal, not by position: the same games listed backwards differ by
    0 in every column, deal by deal (nothing left to detect); the intervals are the seeds'."""

    def backwards(row):
        row["games"] = {k: v[::-1] for k, v in row["games"].items()}

    rows = pair_rows(tmp_path, backwards)
    assert rows[0].startswith("| first − second (points of win rate) | self-play | cross-play |")
    assert [cell.split(" [")[0] for cell in rows[2].split(" | ")[1:-1]] == ["+0.0"] * 6
    assert rows[2].endswith("| not told apart |")
    assert rows[3] == "| detectable (80% power, at most) | " + "±0.0 | " * 6 + "|"


def test_a_method_that_wins_every_self_play_game_is_told_apart_there_alone(tmp_path):
    """B wins every self-play game and is otherwise A: A − B in self-play is minus A's losses,
    in bold, and the verdict names that column only."""
    shipped = zsc_report.load(SHIPPED)
    selfplay = [r["games"]["outcome"] for r in shipped["rows"] if r["role"] == "self-play"]
    losses = 1 - sum(o == 1 for games in selfplay for o in games) / sum(map(len, selfplay))

    def wins_self_play(row):
        if row["role"] == "self-play":
            row["games"]["outcome"] = [1] * len(row["games"]["outcome"])

    rows = pair_rows(tmp_path, wins_self_play)
    assert rows[2].startswith(f"| A − B | **{-losses * 100:+.1f} [")
    assert rows[2].endswith("| worse self-play |")


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
    with pytest.raises(envs.ConfigError, match="no results.json.xz"):
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


TWO_PLAYER_ROWS = ["ppo", "scratch", "recurrent", "belief", "other_play", "partners"]


def test_two_player_method_configs_differ_only_in_the_method():
    """The 2-player table's six rows: the test split's deals on the batched engine, the same
    partners and games, one step budget for every seed with no clock; each row changes only its
    method (recurrent, belief and Other-Play add up; scratch drops the warm start; the
    population row trains the partners recipe, which is the PPO recipe plus partners)."""
    folder = "configs/eval/hocus_pocus_2p_methods"
    configs = {row: load_zsc_config(f"{folder}/{row}.yaml") for row in TWO_PLAYER_ROWS}
    shared = ("env", "num_players", "seeds", "partners", "measure", "games", "seed", "split")
    base = configs["ppo"]
    assert (base.split, base.engine, base.measure) == ("test", "batched", "win")
    assert base.num_players == 2 and base.games >= 5000
    trained = {row: c.train_config(0) for row, c in configs.items()}
    for row, config in configs.items():
        assert {k: getattr(config, k) for k in shared} == {k: getattr(base, k) for k in shared}
        assert (trained[row].total_steps, trained[row].max_minutes) == (
            base.train_overrides["total_steps"],
            0,
        )
    assert len({t.folder for t in trained.values()}) == len({c.out for c in configs.values()}) == 6
    method = ("warm_start", "recurrent", "seq_len", "belief_coef", "other_play", "partners")
    fields = {row: {k: getattr(t, k) for k in method} for row, t in trained.items()}
    ppo = fields["ppo"]
    assert ppo["warm_start"] is not None and not ppo["partners"] and ppo["recurrent"] == 0
    assert fields["scratch"] == {**ppo, "warm_start": None}
    assert fields["recurrent"] == {**ppo, "recurrent": 128, "seq_len": 4}
    assert fields["belief"] == {**fields["recurrent"], "belief_coef": 1.0}
    assert fields["other_play"] == {**fields["belief"], "other_play": True}
    assert fields["partners"]["partners"] and fields["partners"] == {
        **ppo,
        "partners": trained["partners"].partners,
    }
    other = {
        k
        for k in type(trained["ppo"]).model_fields
        if getattr(trained["ppo"], k) != getattr(trained["partners"], k)
    }
    assert other == {"name", "partners", "self_play_every"}
