"""Records, replay, viewer and human play against hostile input:
sizes checked before anything is made, output paths checked before a game is played, one-line
errors for broken files, prompts that survive any answer, Ctrl-C without a traceback and a page
that no record text can break."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

import pytest

from cauldron import envs
from cauldron.envs.core.errors import ConfigError
from cauldron.eval import human, records, replay, viewer
from tests.test_human_play import Person
from tests.test_records import record_games

ENV = "hocus_pocus_v1"  # 2..6 players


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A written two-player game: (folder, path, lines)."""
    folder = tmp_path_factory.mktemp("records")
    games, _ = record_games(ENV, "random", [3], players=2)
    path = records.write_games(folder / "good.jsonl", games)
    return folder, path, path.read_text().splitlines()


def tampered(good, name: str, header: dict | None = None, text: str | bytes | None = None):
    """The good record with ``header`` fields changed, or ``text`` as the whole file."""
    folder, _, lines = good
    if text is None:
        first = {**json.loads(lines[0]), **(header or {})}
        text = "\n".join([json.dumps(first), *lines[1:]]) + "\n"
    path = folder / f"{name}.jsonl"
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return path


def cli(*args: str, stdin: str = "", limit: int | None = None) -> subprocess.CompletedProcess:
    """``python -m <args>``, optionally with its address space limited to ``limit`` bytes."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=cap if limit else None,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def one_line_error(out: subprocess.CompletedProcess, *parts: str) -> None:
    assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: "), out.stderr[-2000:]
    for part in parts:
        assert part in out.stderr


# sizes before allocation.


def test_a_huge_player_count_is_refused_before_anything_is_allocated(good):
    path = tampered(good, "players", {"players": 400_000_000})
    with pytest.raises(records.RecordError, match=r"line 1: header field 'players' must be 2..6"):
        records.read_games(path)
    # 3 GiB before the fix: with 1.5 GiB of address space the command still answers in one line
    out = cli("cauldron.eval.replay", str(path), "--all", limit=3 * 2**29)
    one_line_error(out, "players.jsonl, line 1", "'players' must be 2..6")


@pytest.mark.parametrize(
    ("name", "header", "problem"),
    [
        ("negative_seed", {"seed": -1}, "'seed' must be an int in 0..2147483647, got -1"),
        ("huge_seed", {"seed": 2**64}, "'seed' must be an int in 0..2147483647"),
        ("int_agents", {"agents": [1, 2]}, "'agents' must name the agent of each of the 2"),
        ("three_agents", {"agents": ["a", "b", "c"]}, "(a list of 2 strings)"),
        ("reserved_option", {"options": {"num_players": 3}}, "may not set ['num_players']"),
        ("surrogate", {"agents": ["\ud800", "x"]}, "not valid Unicode"),
    ],
)
def test_every_size_and_text_of_a_header_is_checked(good, name, header, problem):
    path = tampered(good, name, header)
    with pytest.raises(records.RecordError) as err:
        replay.main([str(path), "--all"])
    assert str(err.value).startswith(f"{path}, line 1: ") and problem in str(err.value)


def test_a_game_cannot_hold_more_steps_than_its_max_steps(good):
    folder, _, lines = good
    header = {**json.loads(lines[0]), "options": {"max_steps": 3}}
    path = tampered(good, "long", text="\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(records.RecordError, match=r"line 7, step 6: more than 5 steps"):
        records.read_games(path)
    for env_id in envs.ids():  # the bound holds for real games, simultaneous rounds included
        players = envs.spec(env_id).players[1]
        games, _ = record_games(env_id, "random", [1], players=players, max_steps=1)
        path = records.write_games(folder / f"{env_id}.jsonl", games)
        assert records.check(records.read_games(path)[0]) <= 1 + players


def test_an_action_outside_the_game_is_refused_in_penalty_games(good):
    _, _, lines = good
    header = {**json.loads(lines[0]), "options": {"illegal_action": "penalty"}}
    for action in (10**9, -5):
        step = {**json.loads(lines[1]), "a": action}
        text = "\n".join([json.dumps(header), json.dumps(step), *lines[2:]]) + "\n"
        game = records.read_games(tampered(good, "outside", text=text))[0]
        with pytest.raises(records.RecordError, match=rf"step 1: action {action} is outside"):
            records.check(game)


def test_a_recorder_refuses_a_seed_no_record_may_hold():
    env = records.Recorder(envs.make(ENV, num_players=2))
    with pytest.raises(ConfigError, match=r"seed must be an int in 0..2147483647, got -1"):
        env.reset(seed=-1)


# broken files are one-line errors naming the file.

BROKEN = {
    "not_utf8": (b'{"record": "cauldron-game", "env": "caf\xe9"}\n', "not UTF-8 text (byte 0xe9"),
    "deep": ("[" * 200_000 + "]" * 200_000 + "\n", "nested deeper than 32 levels"),
    "long_int": ('{"seed": ' + "9" * 5000 + "}\n", "an integer of more than"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_file_is_a_record_error_naming_it(good, name):
    text, problem = BROKEN[name]
    path = tampered(good, name, text=text)
    with pytest.raises(records.RecordError, match=re.escape(f"{path}, line 1: ")) as err:
        records.read_games(path)
    assert problem in str(err.value)


def test_the_replay_command_prints_one_line_for_a_broken_file(good):
    for name in ("not_utf8", "deep"):
        path = tampered(good, name, text=BROKEN[name][0])
        one_line_error(cli("cauldron.eval.replay", str(path)), f"{path}, line 1: ", BROKEN[name][1])


def test_the_viewer_refuses_each_bad_file_in_one_line_and_writes_no_page(good, tmp_path):
    _, path, _ = good
    bad = [(tampered(good, name, text=text), problem) for name, (text, problem) in BROKEN.items()]
    bad += [
        (tampered(good, "negative_seed", {"seed": -1}), "'seed' must be an int"),
        (tampered(good, "ints", {"agents": [1]}), "'agents' must name the agent"),
    ]
    out = tmp_path / "page.html"
    for broken, problem in bad:
        with pytest.raises(records.RecordError) as err:
            viewer.main([str(path), str(broken), "-o", str(out)])
        assert str(err.value).startswith(f"{broken}, line 1: ") and problem in str(err.value)
        assert not out.exists()


# answers that pass str.isdigit but not int().

ODD = ("²", "³", "--5", "g ²", "v ³")


def test_the_play_prompt_re_asks_for_digits_int_refuses():
    env = envs.make(ENV, num_players=2)
    env.reset(seed=1)
    legal = env.unwrapped.legal_actions()
    said: list[str] = []
    answers = iter([*ODD, str(legal[-1])])
    assert (
        human.choose(env.unwrapped.rules, legal, lambda _: next(answers), said.append) == legal[-1]
    )
    assert [s.split(" is not")[0] for s in said] == [repr(a) for a in ODD]


def test_a_whole_game_survives_such_answers():
    person = Person(bad=ODD)
    record = human.play_human(ENV, 2, 1, ["random"], 4, person.ask, person.say)
    assert record is not None and person.decisions > 0
    assert "'²' is not a legal action now" in person.text
    assert records.check(record) == len(record.steps)


def test_the_replay_prompt_re_asks_for_digits_int_refuses(good):
    _, path, _ = good
    shown = replay.frames(records.read_games(path)[0])
    keys = iter(["g ²", "v ³", "g --5", "g -1", "g 2", "q"])
    said: list[str] = []
    replay.browse(shown, None, 0, lambda _: next(keys), said.append)
    assert said[1:4] == ["unknown key 'g ²'", "unknown key 'v ³'", "unknown key 'g --5'"]
    assert said[4].startswith("out of range") and said[5].startswith("--- step 2/")


# Ctrl-C.


def interrupt(_: str) -> str:
    raise KeyboardInterrupt


def exit_code(main, argv: list[str]) -> int:
    """The status ``main(argv)`` exits with; a KeyboardInterrupt that escapes it fails the test
    (instead of stopping pytest)."""
    try:
        main(argv)
    except SystemExit as exit_:
        return exit_.code
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped as a KeyboardInterrupt (a traceback)")
    pytest.fail("no exit")


def test_ctrl_c_at_the_first_play_prompt_is_one_line_and_saves_nothing(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr("builtins.input", interrupt)
    save = tmp_path / "game.jsonl"
    args = ["--env", ENV, "--players", "2", "--seed", "1", "--save", str(save)]
    assert exit_code(human.main, [*args, "--partners", "random"]) == 130 and not save.exists()
    assert capsys.readouterr().err == "\nstopped: nothing to save\n"


def test_ctrl_c_at_the_replay_prompt_is_one_line(good, monkeypatch, capsys):
    _, path, _ = good
    monkeypatch.setattr(replay, "browse", lambda *_: interrupt(""))  # Ctrl-C at its prompt
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    assert exit_code(replay.main, [str(path)]) == 130
    assert capsys.readouterr().err == "\ninterrupted\n"


def test_sigint_at_the_play_prompt_leaves_no_traceback(tmp_path):
    save = tmp_path / "game.jsonl"
    args = ["--env", ENV, "--players", "2", "--seed", "1", "--save", str(save)]
    process = subprocess.Popen(
        [sys.executable, "-m", "cauldron.eval.play", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    shown, deadline = b"", time.monotonic() + 60
    while b"your action" not in shown and time.monotonic() < deadline:
        shown += os.read(process.stdout.fileno(), 65536)  # input() flushes its prompt
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert b"your action" in shown
    assert process.returncode == 130 and b"Traceback" not in err, err.decode()
    assert err.decode().strip() == "stopped: nothing to save"
    assert not save.exists()


# Bad seeds and output paths are refused before the game is played or the page built.


def never(_: str) -> str:
    raise AssertionError("the game started")


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (["--seed", "-1"], "--seed must be an int in 0..2147483647, got -1"),
        (["--players", "400000000"], "--players must be 2..6 for hocus_pocus_v1"),
        (["--save", "{folder}"], "--save '{folder}' is a folder; give a file path"),
        (["--save", "{folder}/new/"], "is a folder; give a file path"),
        (["--save", "{file}/x.jsonl"], "is a file, not a folder; give a file path"),
    ],
)
def test_play_refuses_before_the_game(tmp_path, monkeypatch, extra, problem):
    monkeypatch.setattr("builtins.input", never)
    (tmp_path / "file").write_text("")
    names = {"folder": str(tmp_path), "file": str(tmp_path / "file")}
    extra = [e.format(**names) for e in extra]
    base = {"--env": ENV, "--players": "2", "--seed": "1"}
    base.update(dict(zip(extra[::2], extra[1::2], strict=True)))
    with pytest.raises(ConfigError, match=re.escape(problem.format(**names))):
        human.main([x for pair in base.items() for x in pair])


def test_the_play_command_refuses_a_negative_seed_in_one_line():
    one_line_error(
        cli(
            "cauldron.eval.play", "--env", ENV, "--players", "2", "--seed", "-1", stdin="0\n" * 500
        ),
        "--seed must be an int in 0..2147483647",
    )


def test_the_viewer_refuses_a_folder_before_building_the_page(good, tmp_path, monkeypatch):
    _, path, _ = good
    monkeypatch.setattr(viewer, "page_data", never)
    (tmp_path / "file").write_text("")
    for out, problem in [
        (tmp_path, "is a folder; give a file path"),
        (tmp_path / "file" / "page.html", "is a file, not a folder"),
    ]:
        with pytest.raises(ConfigError, match=f"-o/--out '{re.escape(str(out))}'.*{problem}"):
            viewer.main([str(path), "-o", str(out)])
    monkeypatch.undo()
    made = viewer.main([str(path), "-o", str(tmp_path / "new" / "deeper" / "page.html")])
    assert made.is_file()


# record text cannot break the page.


def test_record_text_cannot_close_or_hide_the_data_script(good, tmp_path):
    hostile = "<!--<script> </script> & \u2028 \u2029 é"
    path = tampered(good, "hostile", {"meta": {"note": hostile}, "agents": [hostile, "random"]})
    data = viewer.page_data([path])
    assert data["games"][0]["error"] is None and hostile in data["games"][0]["title"]
    html = viewer.render_page(data)
    embedded = html.split('<script type="application/json" id="data">')[1].split("</script>")[0]
    assert json.loads(embedded) == data
    assert not set(embedded) & {"<", ">", "&", "\u2028", "\u2029"}
    assert html.count("<script") == 2 and html.count("</script>") == 2


# Saving to a record file that holds games.


def test_play_adds_its_game_after_the_games_its_save_file_holds(good, tmp_path, monkeypatch):
    _, path, lines = good
    save = tmp_path / "mine.jsonl"
    save.write_text(path.read_text())
    person = Person(bad=())
    monkeypatch.setattr("builtins.input", person.ask)
    monkeypatch.setattr("builtins.print", person.say)
    args = ["--env", ENV, "--players", "2", "--seed", "9", "--save", str(save)]
    record = human.main([*args, "--partners", "random"])
    assert save.read_text().splitlines()[: len(lines)] == lines
    kept, added = records.read_games(save)
    assert added.to_lines() == record.to_lines() and kept.to_lines() == lines
