"""A person at the table: cauldron.eval.human behind ``cauldron play``."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from cauldron import envs
from cauldron.envs.core.errors import ConfigError
from cauldron.eval import human, records, serve

LEGAL = re.compile(r"^\s+(\d+): (.*)$", re.MULTILINE)


class Person:
    """Answers the prompt from what was shown: ``bad`` answers first at every decision, then
    the first legal action (by name every other time)."""

    def __init__(self, bad=("", "xyz", "99999", "-1", "?"), stop_after: int | None = None):
        self.bad, self.stop_after = list(bad), stop_after
        self.shown: list[str] = []
        self.decisions = 0
        self.pending: list[str] = []

    def say(self, text: str) -> None:
        self.shown.append(text)
        if "your legal actions:" in text or LEGAL.search(text):
            legal = LEGAL.findall(text)
            if legal and "your legal actions" in self.shown[-2]:
                self.pending = [*self.bad, self.pick(legal)]

    def pick(self, legal: list[tuple[str, str]]) -> str:
        self.decisions += 1
        number, name = legal[0]
        return name.upper() if self.decisions % 2 else number

    def ask(self, prompt: str) -> str:
        if self.stop_after is not None and self.decisions > self.stop_after:
            raise EOFError
        return self.pending.pop(0)

    @property
    def text(self) -> str:
        return "\n".join(self.shown)


def play(env_id: str, players: int, seat: int, person: Person, seed: int = 2):
    return human.play_human(env_id, players, seat, ["random"], seed, person.ask, person.say)


@pytest.mark.parametrize("env_id", envs.ids())
def test_a_person_finishes_a_game_through_bad_input(env_id):
    person = Person()
    record = play(env_id, 2, 1, person)
    assert record is not None and person.decisions > 0
    assert record.header["agents"] == ["random", "human"]
    assert record.header["meta"] == {"human_seat": 1}
    assert "'xyz' is not a legal action now" in person.text
    assert "'99999' is not a legal action now" in person.text
    assert sum(s["s"] == 1 for s in record.steps) == person.decisions
    assert records.check(record) == len(record.steps)
    assert "=== game over ===" in person.text


def test_quitting_or_the_end_of_input_saves_nothing():
    env_id = envs.ids()[0]
    person = Person(stop_after=1)
    assert play(env_id, 2, 0, person) is None
    assert "game abandoned; nothing saved" in person.text
    quitter = Person(bad=("q",))
    assert play(env_id, 2, 0, quitter) is None


@pytest.mark.parametrize("env_id", [i for i in envs.ids() if envs.spec(i).parallel])
def test_simultaneous_choices_stay_hidden_until_everyone_chose(env_id):
    """The person in the last seat sees the table before the others' hidden choices are
    shown; those appear only after the step resolves, and only as their public text
    ("player_0 plays a card face down", not the card)."""
    person = Person(stop_after=1)
    play(env_id, 3, 2, person)
    before_first_decision = person.text.split("your legal actions:")[0]
    assert not re.search(r"^player_[01][: ]", before_first_decision, re.MULTILINE)
    assert re.search(r"^player_0 ", person.text, re.MULTILINE)
    assert not re.search(r"^player_[01]: ", person.text, re.MULTILINE)


@pytest.mark.parametrize("env_id", envs.ids())
def test_the_view_shown_is_the_seat_s_private_view(env_id):
    env = envs.make(env_id, num_players=3, render_mode="ansi")
    env.reset(seed=5)
    assert env.agent_selection == "player_0"  # start_seat "first": seat 0 decides first
    person = Person(stop_after=0)
    play(env_id, 3, 0, person, seed=5)
    shown = next(t for t in person.shown if t.endswith("your legal actions:"))
    assert shown == f"\n{env.unwrapped.render_for('player_0')}\n\nyour legal actions:"
    legal = [f"{a:>4}: {env.unwrapped.rules.action_name(a)}" for a in env.unwrapped.legal_actions()]
    assert person.shown[person.shown.index(shown) + 1] == "\n".join(f"  {x}" for x in legal)


def test_seats_and_partners_are_checked():
    assert human.seat_specs(3, 0, ["random"]) == ["human", "random", "random"]
    assert human.seat_specs(3, 2, ["a", "b"]) == ["a", "b", "human"]
    with pytest.raises(ConfigError, match="--seat must be 0..2"):
        human.seat_specs(3, 3, ["random"])
    with pytest.raises(ConfigError, match="--partners takes one spec .* or 2 specs"):
        human.seat_specs(3, 0, ["a", "b", "c"])


def test_the_command_saves_a_record(tmp_path, monkeypatch):
    env_id = envs.ids()[0]
    person = Person(bad=())
    monkeypatch.setattr("builtins.input", person.ask)
    monkeypatch.setattr("builtins.print", person.say)
    out = tmp_path / "mine.jsonl"
    args = ["--env", env_id, "--players", "2", "--seat", "0", "--seed", "9", "--save", str(out)]
    record = human.main([*args, "--partners", "random"])
    [saved] = records.read_games(out)
    assert saved.header == record.header and saved.header["seed"] == 9
    assert records.check(saved) == len(saved.steps)
    assert f"saved: {out}" in person.text


def test_python_m_eval_play_is_the_human_play_command():
    env_id = envs.ids()[0]
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cauldron.eval.play",
            "--env",
            env_id,
            "--players",
            "2",
            "--seed",
            "1",
        ],
        input="nonsense\nq\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "'nonsense' is not a legal action now" in out.stdout
    assert "game abandoned; nothing saved" in out.stdout
    assert "RuntimeWarning" not in out.stderr


def test_ctrl_c_saves_the_game_so_far_in_a_file_that_resumes(tmp_path, monkeypatch):
    env_id = "headless_horseman_v1"
    person = Person(bad=())
    answers = iter([None])

    def ask(prompt: str) -> str:
        if next(answers, "stop") == "stop":
            raise KeyboardInterrupt
        return person.ask(prompt)

    monkeypatch.setattr("builtins.input", ask)
    monkeypatch.setattr("builtins.print", lambda text, **_: person.say(text))
    out = tmp_path / "mine.jsonl"
    args = ["--env", env_id, "--players", "2", "--seed", "9", "--save", str(out)]
    with pytest.raises(SystemExit) as stop:
        human.main([*args, "--partners", "random"])
    assert stop.value.code == 130 and not out.exists()
    [kept] = tmp_path.glob("mine.jsonl.game1-*.unfinished")
    assert f"saved to {kept}" in person.text
    session = serve.resume(str(kept))
    assert session.resumed_at >= 1 and session.table.seats == ["human", "random"]
    session.leave()
