"""Terminal replay of records: ``cauldron replay FILE``."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from cauldron import envs
from cauldron.envs.core.errors import ConfigError
from cauldron.eval import records, replay
from tests.test_records import record_games


@pytest.fixture
def record_file(tmp_path):
    games, _ = record_games(envs.ids()[-1], "random", [4, 8])
    return records.write_games(tmp_path / "games.jsonl", games), games


def test_frames_follow_the_reference_env(record_file):
    _, games = record_file
    game = games[1]
    shown = replay.frames(game)
    assert len(shown) == len(game.steps) + 1 and shown[0].action is None
    env = envs.make(game.header["env"], num_players=3, render_mode="ansi")
    env.reset(seed=game.header["seed"])
    for frame, line in zip(shown[1:], game.steps, strict=True):
        env.step(line["a"])
        assert frame.action == line and frame.table == env.render()
        assert frame.views == tuple(env.unwrapped.render_for(a) for a in env.possible_agents)
    assert shown[-1].to_act is None and list(shown[-1].returns) == game.end["returns"]


def test_all_prints_every_step_of_a_seat_view(record_file, capsys):
    path, games = record_file
    assert replay.main([str(path), "--game", "2", "--seat", "1", "--all"]) == len(games[1].steps)
    out = capsys.readouterr().out
    assert "replay check: OK" in out
    assert out.count("· player_1's view") == len(games[1].steps) + 1
    first = games[1].steps[0]  # player_0's choice of a Voodoo Mania tick: hidden from player_1
    assert f"--- step 1/{len(games[1].steps)} · player_0 chooses this tick's action" in out
    assert f"player_{first['s']}: {first['n']}" not in out


def test_browse_steps_back_and_forth_and_re_asks_bad_keys(record_file):
    _, games = record_file
    shown = replay.frames(games[0])
    keys = iter(["", "n", "b", "v 1", "t", "g 5", "g 99999", "x", "v 7", "q"])
    said: list[str] = []
    replay.browse(shown, None, 0, lambda _: next(keys), said.append)
    steps = [s.split("--- step ")[1].split("/")[0] for s in said if s.startswith("--- step")]
    assert steps == ["0", "1", "2", "1", "1", "1", "5"]
    assert "player_1's view" in said[4] and said[5].split("\n")[0].endswith("· table")
    assert said[5].split("\n", 1)[1] == shown[1].table
    assert said[7].startswith("out of range") and said[8] == "unknown key 'x'"
    assert said[9].startswith("out of range")


def test_end_of_input_leaves_browse(record_file):
    _, games = record_file

    def eof(_: str) -> str:
        raise EOFError

    said: list[str] = []
    replay.browse(replay.frames(games[0]), 0, 0, eof, said.append)
    assert len(said) == 1 and said[0].startswith("--- step 0/")


def test_bad_arguments_and_bad_records_are_one_line_errors(record_file):
    path, _ = record_file
    with pytest.raises(ConfigError, match=r"--game must be 1..2"):
        replay.main([str(path), "--game", "3"])
    with pytest.raises(ConfigError, match=r"--seat must be 0..2"):
        replay.main([str(path), "--seat", "3"])
    lines = path.read_text().splitlines()
    end = json.loads(lines[-1])
    end["end"]["returns"] = [7.0, 7.0, 7.0]
    path.write_text("\n".join([*lines[:-1], json.dumps(end)]) + "\n")
    with pytest.raises(records.RecordError, match=r"line \d+, step \d+: final returns"):
        replay.main([str(path), "--game", "2", "--all"])


HOSTILE = "\x1b]0;owned\x07\x1b[2J\r\x9b"
ESCAPED = r"\x1b]0;owned\x07\x1b[2J\x0d\x9b"


def test_record_text_reaches_the_terminal_with_its_control_characters_escaped(tmp_path, capsys):
    [game], _ = record_games(envs.ids()[-1], "random", [4])
    game.header["agents"][1] = HOSTILE
    game.header["meta"] = {"note": HOSTILE}
    path = records.write_games(tmp_path / "hostile.jsonl", [game])
    replay.main([str(path), "--all", "--seat", "1"])
    out = capsys.readouterr().out
    assert not set(out) & set("\x1b\x07\r\x9b")
    assert out.count(ESCAPED) == 2 and out.count("\n") > len(game.steps)  # newlines kept


def test_browsing_escapes_what_it_prints(capsys):
    [game], _ = record_games(envs.ids()[-1], "random", [4])
    [first, *_] = replay.frames(game)
    replay.browse([replace(first, table=HOSTILE)] * 2, None, 0, lambda _: "q")
    assert ESCAPED in capsys.readouterr().out


def test_printable_escapes_every_control_character_but_the_newline():
    controls = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA0)]))
    text = records.printable(controls + "é ·")
    assert text.isprintable() is False and text.count("\n") == 1
    assert text.replace("\n", "").isprintable() and text.endswith("é ·")
    assert records.printable("\t\x00") == r"\x09\x00"


def test_a_record_error_names_the_record_s_text_escaped():
    err = records.RecordError("f.jsonl", 2, 1, f"agent {HOSTILE}\nsecond line")
    assert str(err) == rf"f.jsonl, line 2, step 1: agent {ESCAPED}\nsecond line"
