"""Game records: format, replay check, size budget and bad input."""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path

import pytest

from cauldron import envs
from cauldron.agents import HEURISTICS, make_agent
from cauldron.eval import records
from cauldron.eval.play import play_game

BUDGET = 200  # bytes per step, on average


def record_games(env_id: str, spec: str, seeds, players: int = 3, **options):
    """Play ``seeds`` with ``spec`` in every seat through a Recorder; (records, results)."""
    env = records.Recorder(envs.make(env_id, num_players=players, **options))
    agents = {a: make_agent(spec, env_id) for a in env.possible_agents}
    games, results = [], []
    for seed in seeds:
        env.next_game([spec] * players, {"test": True})
        results.append(play_game(env, agents, seed))
        games.append(env.record)
    return games, results


def specs(env_id: str) -> list[str]:
    return ["random"] + [f"heuristic:{h}" for h in HEURISTICS.get(env_id, {})]


def written(tmp_path, games, name="games.jsonl") -> list[str]:
    path = records.write_games(tmp_path / name, games)
    return path.read_text().splitlines()


def replay_many(env_id: str, spec: str, games: int) -> None:
    recorded, results = record_games(env_id, spec, range(games))
    for game, result in zip(recorded, results, strict=True):
        assert game.end["returns"] == list(result.returns.values())
        assert game.end["steps"] == result.steps
        assert records.check(game) == result.steps


@pytest.mark.parametrize("env_id", envs.ids())
def test_records_replay_bit_exactly_and_fit_the_budget(env_id, tmp_path):
    games = []
    for spec in specs(env_id):
        recorded, _ = record_games(env_id, spec, range(3))
        games += recorded
    lines = written(tmp_path, games)
    assert all(isinstance(json.loads(line), dict) for line in lines)  # a plain JSON reader
    back = records.read_games(tmp_path / "games.jsonl")
    assert [g.header for g in back] == [g.header for g in games]
    assert back[0].header["env"] == env_id and back[0].header["version"] == records.VERSION
    for game in back:
        assert records.check(game) == len(game.steps) > 0
        assert len(game.end["state_sha256"]) == 64
    assert records.bytes_per_step(back) < BUDGET


@pytest.mark.parametrize("env_id", envs.ids())
def test_replay_of_small_batches(env_id):
    for spec in specs(env_id):
        replay_many(env_id, spec, 4)


def split(env_id: str, games: int) -> dict[str, int]:
    """``games`` shared by random play (half) and the game's heuristics (the other half)."""
    heuristics = specs(env_id)[1:] or ["random"]
    share = {"random": games - games // 2}
    for i, spec in enumerate(heuristics):
        share[spec] = share.get(spec, 0) + (games // 2) // len(heuristics)
        share[spec] += int(i < (games // 2) % len(heuristics))
    return share


@pytest.mark.slow
@pytest.mark.parametrize("env_id", envs.ids())
def test_replay_of_a_thousand_games(env_id):
    """1,000 games per game, half random, half heuristic, replay bit-exactly."""
    for spec, games in split(env_id, 1000).items():
        replay_many(env_id, spec, games)


def test_truncated_games_and_options_replay():
    env_id = envs.ids()[0]
    games, _ = record_games(env_id, "random", [1], max_steps=7)
    assert games[0].end["truncated"] and len(games[0].steps) < 7 + 3  # whole simultaneous steps
    assert games[0].header["options"] == {"max_steps": 7}
    assert records.check(games[0]) == len(games[0].steps)


def test_penalty_game_replays():
    env_id = envs.ids()[0]
    env = records.Recorder(envs.make(env_id, num_players=2, illegal_action="penalty"))
    env.reset(seed=3)
    mask = env.last()[0]["action_mask"]
    env.step(int(mask.argmin()))  # an illegal action ends the game with the penalty
    assert env.record is not None and env.record.end["terminated"]
    assert records.check(env.record) == 1


def test_a_recorded_game_needs_a_seed():
    env = records.Recorder(envs.make(envs.ids()[0], num_players=2))
    with pytest.raises(ValueError, match="seed"):
        env.reset()


@pytest.fixture
def record_file(tmp_path):
    """A written two-game record of the first game id, as (path, lines)."""
    games, _ = record_games(envs.ids()[0], "random", [5, 6])
    return tmp_path / "games.jsonl", written(tmp_path, games)


def rewrite(path, lines) -> None:
    path.write_text("\n".join(lines) + "\n")


def test_another_format_version_is_refused_with_file_and_line(record_file):
    path, lines = record_file
    header = json.loads(lines[0])
    header["version"] = records.VERSION + 1
    rewrite(path, [json.dumps(header), *lines[1:]])
    with pytest.raises(records.RecordError, match=r"games.jsonl, line 1: .*version 2"):
        records.read_games(path)


def test_an_unknown_env_id_is_refused(record_file):
    path, lines = record_file
    header = json.loads(lines[0])
    header["env"] = "hocus_pocus_v99"
    rewrite(path, [json.dumps(header), *lines[1:]])
    with pytest.raises(records.RecordError, match="line 1: env id 'hocus_pocus_v99' is not"):
        records.read_games(path)


def test_a_truncated_record_names_the_last_line_and_step(record_file):
    path, lines = record_file
    second = records.read_games(path)[1]
    rewrite(path, lines[:-3])  # the end line and the last two steps are gone
    with pytest.raises(records.RecordError, match="the record is truncated") as err:
        records.read_games(path)
    assert (err.value.line, err.value.step) == (len(lines) - 3, len(second.steps) - 2)


def test_an_illegal_action_is_reported_with_line_and_step(record_file):
    path, lines = record_file
    env = envs.make(envs.ids()[0], num_players=3)
    env.reset(seed=5)
    illegal = int(env.last()[0]["action_mask"].argmin())
    step = json.loads(lines[1])
    step["a"] = illegal
    rewrite(path, [lines[0], json.dumps(step), *lines[2:]])
    game = records.read_games(path)[0]
    with pytest.raises(records.RecordError, match=r"line 2, step 1: action \d+ is illegal"):
        records.check(game)


def test_an_edited_action_is_caught(record_file):
    """Another legal action at the first step changes its name, rewards, events or later steps."""
    path, lines = record_file
    env = envs.make(envs.ids()[0], num_players=3)
    env.reset(seed=5)
    step = json.loads(lines[1])
    other = [a for a in env.unwrapped.legal_actions() if a != step["a"]][0]
    step["a"] = other
    rewrite(path, [lines[0], json.dumps(step), *lines[2:]])
    with pytest.raises(records.RecordError, match=r"games.jsonl, line \d+, step \d+: "):
        records.check(records.read_games(path)[0])


def test_an_edited_reward_is_caught_at_its_step(record_file):
    path, lines = record_file
    step = json.loads(lines[3])
    step["r"] = [5.0, 0.0, 0.0]
    rewrite(path, [*lines[:3], json.dumps(step), *lines[4:]])
    with pytest.raises(records.RecordError, match=r"line 4, step 3: rewards .* differ"):
        records.check(records.read_games(path)[0])


def test_an_edited_final_hash_is_caught(record_file):
    path, lines = record_file
    games = records.read_games(path)
    games[1].end["state_sha256"] = "0" * 64
    edited = records.write_games(path.with_name("edited.jsonl"), games)
    records.check(records.read_games(edited)[0])
    with pytest.raises(records.RecordError, match=r"final state_sha256"):
        records.check(records.read_games(edited)[1])


def test_bad_json_and_bad_fields_name_the_line(record_file):
    path, lines = record_file
    rewrite(path, [lines[0], "{not json", *lines[2:]])
    with pytest.raises(records.RecordError, match="line 2, step 1: not valid JSON"):
        records.read_games(path)
    rewrite(path, [lines[0], '{"s": 0, "a": "x", "n": "?"}', *lines[2:]])
    with pytest.raises(records.RecordError, match="line 2, step 1: step field 'a' must be"):
        records.read_games(path)
    rewrite(path, ['{"hello": 1}'])
    with pytest.raises(records.RecordError, match="line 1: expected a game header"):
        records.read_games(path)


def test_a_missing_file_is_a_record_error(tmp_path):
    with pytest.raises(records.RecordError, match="no such record file"):
        records.read_games(tmp_path / "none.jsonl")


def test_an_action_log_rebuilds_the_full_record():
    env_id = envs.ids()[-1]
    env = records.ActionLog(envs.make(env_id, num_players=3))
    agents = {a: make_agent("random", env_id) for a in env.possible_agents}
    result = play_game(env, agents, 21)
    rebuilt = records.rebuild(env_id, 3, {}, 21, env.actions, ["random"] * 3, {"kept": "best"})
    [direct], _ = record_games(env_id, "random", [21])
    assert rebuilt.end["returns"] == list(result.returns.values())
    assert [s["a"] for s in rebuilt.steps] == env.actions == [s["a"] for s in direct.steps]
    assert rebuilt.header["meta"] == {"kept": "best"}
    with pytest.raises(ValueError, match="do not end the game"):
        records.rebuild(env_id, 3, {}, 21, env.actions[:-1], ["random"] * 3)


def kept(score: float, seed: int) -> records.Kept:
    return records.Kept(score, seed, ("a", "b"), (), ())


def test_selection_keeps_best_worst_then_first_seeds_whatever_the_chunks():
    games = [kept(s, seed) for seed, s in enumerate([3, 9, 1, 9, 5, 1, 4])]
    chosen = records.select(games, 4, lower_is_better=False)
    assert [(k.seed, why) for k, why in chosen] == [
        (1, "best"),
        (2, "worst"),
        (0, "first seeds"),
        (3, "first seeds"),
    ]
    for n in (1, 2, 4):
        for lower in (False, True):
            parts = records.select(games[:3], n) + records.select(games[3:], n)
            whole = records.select(games, n, lower)
            assert records.select([k for k, _ in parts], n, lower) == whole
    assert records.select(games, 1, False) == [(games[1], "best")]
    assert records.select([kept(2, 7)], 3, False) == [(kept(2, 7), "best")]
    assert records.select(games, 0) == []


def test_where_less_is_better_the_best_game_is_the_lowest_score():
    """The Horseman's scares, Voodoo Mania's points: best is the least."""
    games = [kept(s, seed) for seed, s in enumerate([3, 9, 1, 9, 5, 1, 4])]
    chosen = records.select(games, 3, lower_is_better=True)
    assert [(k.seed, why) for k, why in chosen] == [(2, "best"), (1, "worst"), (0, "first seeds")]
    assert records.select(games, 1, lower_is_better=True) == [(games[2], "best")]
    # Without a direction (an evaluation's chunks), both ends survive even for one game.
    assert [why for _, why in records.select(games, 1)] == ["highest", "lowest"]
    assert envs.spec("headless_horseman_v1").lower_is_better
    assert envs.spec("voodoo_mania_v1").lower_is_better
    assert not envs.spec("hocus_pocus_v1").lower_is_better
    assert not envs.spec("hexenflug_v1").lower_is_better


# ---------------------------------------------------------------- saving to a record file


class FullDisk:
    """A file on a disk that fills up: its first write keeps half the data, then fails."""

    def __init__(self, file) -> None:
        self.file = file

    def write(self, data) -> int:
        self.file.write(data[: len(data) // 2])
        self.file.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name: str):
        return getattr(self.file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.file.close()


def fill_the_disk(monkeypatch) -> None:
    """Every file opened for writing from now on is on a full disk."""
    real = Path.open

    def opened(self, mode="r", *args, **kwargs):
        file = real(self, mode, *args, **kwargs)
        return FullDisk(file) if set(mode) & set("aw") else file

    monkeypatch.setattr(Path, "open", opened)


def test_saving_to_a_record_file_adds_the_games_after_those_it_holds(record_file):
    path, lines = record_file
    games = records.read_games(path)
    [third], _ = record_games(envs.ids()[0], "random", [7])
    records.write_games(path, [third])
    records.write_games(path, [games[0]], append=False)  # an older caller's first save
    assert path.read_text().splitlines()[: len(lines)] == lines
    back = records.read_games(path)
    assert [g.header["seed"] for g in back] == [5, 6, 7, 5]
    assert back[2].to_lines() == third.to_lines()


def test_a_record_file_without_its_last_newline_still_takes_games(record_file):
    path, lines = record_file
    path.write_text("\n".join(lines))
    records.write_games(path, records.read_games(path)[:1])
    assert len(records.read_games(path)) == 3


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("notes I keep\n", "line 1: not valid JSON"),
        ('{"hello": 1}\n', "line 1: expected a game header line"),
        ('{"record": "cauldron-game", "version": 9}\n', "version 9 is not supported"),
    ],
)
def test_saving_to_a_file_that_is_not_a_record_leaves_it_as_it_was(tmp_path, text, problem):
    path = tmp_path / "notes.jsonl"
    path.write_text(text)
    games, _ = record_games(envs.ids()[0], "random", [5])
    with pytest.raises(records.RecordError, match=re.escape(problem)) as err:
        records.write_games(path, games)
    assert "games are added only to a file of cauldron-game version 1" in str(err.value)
    assert path.read_text() == text


def test_a_disk_full_in_the_middle_of_a_game_leaves_the_earlier_games(record_file, monkeypatch):
    path, _ = record_file
    before = path.read_bytes()
    [third], _ = record_games(envs.ids()[0], "random", [7])
    fill_the_disk(monkeypatch)
    with pytest.raises(records.RecordError, match="cannot save the games .No space left"):
        records.write_games(path, [third])
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [g.header["seed"] for g in records.read_games(path)] == [5, 6]


def test_a_disk_full_on_a_new_record_file_leaves_no_file(tmp_path, monkeypatch):
    games, _ = record_games(envs.ids()[0], "random", [5])
    fill_the_disk(monkeypatch)
    with pytest.raises(records.RecordError, match="No space left on device"):
        records.write_games(tmp_path / "new.jsonl", games)
    assert list(tmp_path.iterdir()) == []
