"""Figures a paper can cite: deal splits that cannot overlap, verdicts by the game's own measure
paired on the same deals, games cut short counted, a dirty tree named, and torch agents whose
games do not depend on how many are stepped at once (docs/benchmark_protocol.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from cauldron import envs
from cauldron.agents.torch_policy import TIE_TOLERANCE, greedy
from cauldron.envs.core.errors import ConfigError
from cauldron.eval import batched, harness, provenance, report, splits
from cauldron.eval.config import MAX_GAMES, SEED_LIMIT, parse_config
from cauldron.eval.stats import verdict
from cauldron.train.config import MAX_TRAINING_SEED, load_config
from cauldron.train.readme_figures import deals

CHECKPOINT = "checkpoints/hocus_pocus_2p_torch.pt"


def test_the_splits_are_disjoint_and_far_apart():
    ranges = sorted((s.start, s.stop) for s in splits.SPLITS.values())
    for (_, stop), (start, _) in zip(ranges, ranges[1:], strict=False):
        assert start - stop >= 10**9
    assert max(stop for _, stop in ranges) <= SEED_LIMIT  # agents seed generators from it


@given(
    name=st.sampled_from(sorted(splits.SPLITS)),
    seed=st.one_of(st.none(), st.integers(0, SEED_LIMIT)),
    games=st.integers(1, MAX_GAMES),
)
def test_any_accepted_range_of_games_lies_in_its_split_alone(name, seed, games):
    """For every game count the commands accept, the seeds a split gives out (from its first
    seed or a given one) never reach another split: the range is accepted only inside."""
    try:
        first = splits.first_seed(name, seed, games)
    except ConfigError as err:
        assert "not all in split" in str(err)
        return
    holders = [s.name for s in splits.SPLITS.values() if s.holds(first, games)]
    assert holders == [name]


def test_a_seed_range_reaching_into_another_split_names_both_ranges():
    with pytest.raises(ConfigError) as err:
        splits.first_seed("test", 5, 10)
    text = str(err.value)
    assert "test (seeds 2,000,000,000–2,099,999,999)" in text
    assert "dev (seeds 0–999,999,999)" in text
    with pytest.raises(ConfigError, match="unknown split 'val'; the splits are dev .*test"):
        splits.get("val")


def test_every_command_takes_a_split_and_refuses_a_range_outside_it():
    base = {"env": "hocus_pocus_v1", "players": [2], "agents": ["random"], "games": 5}
    assert parse_config({**base, "split": "test"}).seed == splits.SPLITS["test"].start
    with pytest.raises(ConfigError, match="not all in split test"):
        parse_config({**base, "split": "test", "seed": 0})
    with pytest.raises(ConfigError, match="not all in split dev"):
        batched.main(["hocus_pocus_v1", "random", "--games", "3", "--seed", "2000000000"])
    with pytest.raises(ConfigError, match="unknown split"):
        batched.main(["hocus_pocus_v1", "random", "--games", "3", "--split", "train"])


def test_training_and_checkpoint_selection_never_read_the_test_split():
    """A run's own seeds and its evaluation and demonstration seeds (seed + 10,000 + update,
    seed + 20,000 + game) stay far inside dev; pointing its evaluation at test is refused."""
    assert splits.SPLITS["dev"].stop > MAX_TRAINING_SEED + 10**8
    with pytest.raises(ConfigError, match="reads the dev split only, got 'test'"):
        load_config("configs/train/quickstart.yaml", ["eval_split=test"])
    with pytest.raises(ConfigError, match="seed"):
        load_config("configs/train/quickstart.yaml", [f"seed={splits.SPLITS['test'].start}"])


def outcomes(won: list[int]) -> batched.Outcomes:
    n = len(won)
    return batched.Outcomes(
        np.arange(n, dtype=np.uint64),
        np.array(won, dtype=bool),
        np.zeros(n),
        np.ones(n, dtype=np.int64),
        np.zeros(n, dtype=bool),
    )


def test_a_verdict_flips_when_the_two_teams_games_are_swapped():
    rng = np.random.default_rng(0)
    strong = outcomes((rng.random(400) < 0.6).astype(int).tolist())
    weak = outcomes((rng.random(400) < 0.3).astype(int).tolist())
    ahead = batched.summarize(strong, weak)["paired"]["win"]
    behind = batched.summarize(weak, strong)["paired"]["win"]
    assert (ahead["verdict"], behind["verdict"]) == ("yes", "no")
    assert ahead["mean"] == pytest.approx(-behind["mean"])
    level = batched.summarize(strong, strong)["paired"]["win"]
    assert level["verdict"] == "not sure" and level["detectable"] == 0.0
    assert ahead["detectable"] > 0
    assert [verdict(0.1, 0.2), verdict(-0.2, -0.1), verdict(-0.1, 0.1)] == [
        "yes",
        "no",
        "not sure",
    ]


def test_every_game_declares_its_measure_once():
    for env_id in envs.ids():
        game = envs.spec(env_id)
        assert game.measure == ("win_rate" if game.cooperative else "won_minus_lost")


def test_games_cut_short_by_the_clock_are_counted_and_every_game_ends_one_way():
    """Voodoo Mania with a 40-tick clock: both engines count the games the clock cut short,
    apart from those won, lost or drawn, and the four counts add up to the games played."""
    played = batched.evaluate(
        "voodoo_mania_v1", 2, "random", "random", games=24, progress=False, max_ticks=40
    )
    counts = played.counts()
    assert counts["truncated"] == int(played.truncated.sum()) > 0
    assert sum(counts.values()) == 24
    assert not (played.won & played.truncated).any()
    config = parse_config(
        {
            "env": "voodoo_mania_v1",
            "players": [2],
            "agents": ["random", "heuristic:chain"],
            "games": 6,
            "workers": 1,
            "options": {"max_ticks": 40},
        }
    )
    summary = harness.summarize(config, harness.play_all(config, progress=False))
    (row,) = summary["rows"]
    assert row["ends"]["truncated"] > 0 and sum(row["ends"].values()) == 6
    assert " / " in report.head_to_head_table(summary)


def test_a_report_from_a_tree_with_uncommitted_changes_says_so(monkeypatch, tmp_path):
    def git(*args: str) -> str:
        return " M eval/batched.py" if args[0] == "status" else "0123456789abcdef"

    monkeypatch.setattr(provenance, "git", git)
    folder = tmp_path / "run"
    batched.main(["headless_horseman_v1", "random", "--games", "2", "--out", str(folder)])
    header = (folder / "report.md").read_text().splitlines()[4]
    assert "commit `0123456789` with uncommitted changes" in header
    results = json.loads((folder / "results.json").read_text())
    assert deals(results).endswith("commit `0123456789`, uncommitted changes")
    monkeypatch.setattr(provenance, "git", lambda *args: "" if args[0] == "status" else "abc")
    clean = tmp_path / "clean"
    batched.main(["headless_horseman_v1", "random", "--games", "2", "--out", str(clean)])
    assert "uncommitted" not in (clean / "report.md").read_text()


def test_equal_logits_go_to_the_lowest_action_id_whatever_the_rounding():
    logits = torch.tensor(
        [
            [0.5, 2.0, 2.0, -torch.inf],
            [3.0, -torch.inf, 3.0 + TIE_TOLERANCE / 4, 1.0],
            [1.0, 2.0, 2.0 - 10 * TIE_TOLERANCE, 0.0],
        ]
    )
    assert greedy(logits).tolist() == [1, 0, 1]


def test_a_torch_agents_games_do_not_depend_on_the_chunk_size():
    """The shipped 2-player Hocus Pocus seed (a factored head that scores the two copies of a
    plain card alike) plays the same games, game for game, one at a time and 16 at once."""
    play = {
        chunk: batched.evaluate(
            "hocus_pocus_v1", 2, f"torch:{CHECKPOINT}", games=16, chunk=chunk, progress=False
        )
        for chunk in (1, 7, 16)
    }
    for chunk in (7, 16):
        for field in ("won", "score", "steps"):
            assert np.array_equal(getattr(play[1], field), getattr(play[chunk], field)), field
