"""Play in the browser: the ``cauldron.eval.serve`` server through its JSON endpoints."""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.agents.base import Thought
from cauldron.envs.core.errors import ConfigError
from cauldron.eval import serve
from cauldron.eval.demo import default_agent
from cauldron.eval.records import read_games
from cauldron.eval.replay import frames


class Running:
    """A server of ``session`` on 127.0.0.1, a free port, in a thread."""

    def __init__(self, session: serve.Session) -> None:
        self.session = session
        self.server = serve.make_server(session)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        host, port = self.server.server_address[:2]
        self.url = f"http://{host}:{port}"

    def get(self, path: str) -> tuple[int, dict | str]:
        return self._open(urllib.request.Request(self.url + path))

    def post(self, path: str, body) -> tuple[int, dict]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", serve.TOKEN_HEADER: self.session.token}
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method="POST")
        return self._open(request)

    def _open(self, request) -> tuple[int, dict | str]:
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status, text, kind = answer.status, answer.read(), answer.headers["Content-Type"]
        except urllib.error.HTTPError as err:
            status, text, kind = err.code, err.read(), err.headers["Content-Type"]
        return status, json.loads(text) if kind == "application/json" else text.decode()

    def close(self) -> None:
        self.session.close()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=20)


@pytest.fixture
def running(tmp_path):
    servers: list[Running] = []

    def start(env_id: str, players: int = 3, seat: int = 1, partners=None, seed: int = 4):
        partners = partners or [default_agent(env_id)]
        path = str(tmp_path / f"{env_id}.jsonl")
        servers.append(Running(serve.Session(env_id, players, seat, partners, seed, path)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def play_through(server: Running) -> dict:
    """Play the person's seat as the game's heuristic would, by the endpoints; the final
    state."""
    table = server.session.table
    person = make_agent(default_agent(table.env_id), table.env_id, seed=1)
    status, state = server.get("/state")
    for _ in range(5000):
        assert status == 200
        if state["over"]:
            return state
        assert state["your_turn"] and state["legal"], state["error"]
        obs = table.env.last()[0]
        action = int(person.act(obs["observation"], obs["action_mask"]))
        assert action in [a for a, _ in state["legal"]]
        status, state = server.post("/act", {"action": action, "turn": state["turn"]})
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("env_id", envs.ids())
def test_a_whole_game_through_the_endpoints_is_saved_and_replays(env_id, running):
    server = running(env_id)
    assert server.server.server_address[0] == "127.0.0.1"
    state = play_through(server)
    assert state["result"] is not None and state["legal"] == [] and not state["error"]
    assert state["svg"].startswith("<svg") and state["logged"] == state["turn"]
    [game] = read_games(state["saved"])
    assert game.header["agents"][1] == "human" and game.header["seed"] == 4
    assert len(frames(game)) == len(game.steps) + 1  # replays, checked to the end
    assert game.end == state["result"]
    status, answer = server.post("/act", {"action": 0, "turn": state["turn"]})
    assert status == 409 and "over" in answer["error"]


@pytest.mark.parametrize("env_id", envs.ids())
def test_illegal_and_stale_actions_are_refused_and_change_nothing(env_id, running):
    server = running(env_id, players=2, seat=0)
    _, state = server.get("/state")
    legal = [a for a, _ in state["legal"]]
    size = server.session.table.base.action_space("player_0").n
    illegal = next(a for a in range(size) if a not in legal)
    refused = [
        ({"action": illegal, "turn": state["turn"]}, 400, "not legal"),
        ({"action": legal[0], "turn": state["turn"] + 1}, 409, "stale"),
        ({"action": legal[0], "turn": state["turn"], "game": 7}, 409, "earlier game"),
        ({"action": "1", "turn": state["turn"]}, 400, "integer"),
        ({"action": legal[0]}, 400, "integer"),
        (b"{not json", 400, "not JSON"),
    ]
    for body, code, words in refused:
        status, answer = server.post("/act", body)
        assert status == code and words in answer["error"], (body, answer)
        assert server.get("/state")[1] == state  # nothing changed
    status, after = server.post("/act", {"action": legal[0], "turn": state["turn"]})
    assert status == 200 and after["turn"] > state["turn"]
    status, answer = server.post("/act", {"action": legal[0], "turn": state["turn"]})
    assert status == 409 and "stale" in answer["error"]  # the second tab's click
    assert server.get("/state")[1]["turn"] == after["turn"]


def test_the_page_fetches_nothing_from_the_network(running):
    server = running(envs.ids()[0])
    status, page = server.get("/")
    assert status == 200 and "<script>" in page
    assert not re.search(r"https?://", page)
    assert "/state" in page and "/act" in page


def test_a_port_in_use_is_a_config_error(running):
    server = running(envs.ids()[0])
    port = server.server.server_address[1]
    with pytest.raises(ConfigError, match=f"--port {port} on 127.0.0.1 is in use"):
        serve.make_server(server.session, "127.0.0.1", port)


class Failing:
    """An agent that plays legally twice, then raises."""

    def __init__(self) -> None:
        self.calls = 0

    def act(self, observation, mask):
        self.calls += 1
        if self.calls > 2:
            raise RuntimeError("out of ideas")
        return int(mask.nonzero()[0][0])


def test_an_agent_that_raises_stops_the_game_with_its_message_kept_so_far(running, capsys):
    env_id = "headless_horseman_v1"
    server = running(env_id, players=2, seat=0)
    server.session.table.agents["player_1"] = Failing()
    for _ in range(20):
        _, state = server.get("/state")
        if state["error"]:
            break
        server.post("/act", {"action": state["legal"][0][0], "turn": state["turn"]})
    assert "out of ideas" in state["error"] and "heuristic:" in state["error"]
    assert "out of ideas" in capsys.readouterr().err
    saved = state["error"].rsplit("saved to ", 1)[1]
    lines = [json.loads(line) for line in Path(saved).read_text(encoding="utf-8").splitlines()]
    assert lines[0]["env"] == env_id and len(lines) - 1 == state["turn"]
    status, answer = server.post("/act", {"action": 0, "turn": state["turn"]})
    assert status == 409 and "stopped" in answer["error"]
    status, fresh = server.post("/new", {"seed": 5})
    assert status == 200 and fresh["game"] == 2 and fresh["error"] is None


def test_the_command_refuses_a_bad_save_path_before_the_game(tmp_path):
    folder = tmp_path / "a_folder"
    folder.mkdir()
    with pytest.raises(ConfigError, match="--save .* is a folder"):
        serve.main(["--env", envs.ids()[0], "--players", "2", "--save", str(folder)])


def test_an_answer_to_a_decision_holds_only_what_the_page_has_not_shown(running):
    """The page sends ``since`` (the log entries it has shown): the answer holds only the later
    entries and frames (the server keeps those since the person's last decision), so an
    answer's size does not grow with the game."""
    server = running("hexenflug_v1", players=3, seat=1)
    _, state = server.get("/state")
    decisions = 0
    for _ in range(30):
        if state["over"]:
            break
        since = state["logged"]
        status, state = server.post(
            "/act", {"action": state["legal"][0][0], "turn": state["turn"], "since": since}
        )
        assert status == 200 and len(state["log"]) == state["logged"] - since
        assert all(n > since for n, _ in state["frames"])
        assert len(state["frames"]) <= len(state["log"])
        assert all(n > since for n, _ in server.session.frames)  # older frames are dropped
        decisions += 1
    assert decisions == 30
    status, answer = server.post("/act", {"action": 0, "turn": state["turn"], "since": "x"})
    assert status == 400 and "'since' must be an integer" in answer["error"]


def play_last_legal(server: Running, stop_at: int | None = None) -> dict:
    """Play the person's seat by its last legal action (a stateless choice, so a resumed game
    goes on as the uninterrupted one; the first would wait in Voodoo Mania) until the game
    ends (or the person's decision ``stop_at``, counted from 1); the last state."""
    _, state = server.get("/state")
    decisions = 0
    while not state["over"] and not state["error"] and decisions != stop_at:
        status, state = server.post(
            "/act", {"action": state["legal"][-1][0], "turn": state["turn"]}
        )
        assert status == 200, state
        decisions += 1
    return state


@pytest.mark.parametrize("env_id", envs.ids())
def test_a_game_saved_unfinished_resumes_and_ends_as_the_uninterrupted_game(env_id, running):
    """``--resume``: the decisions saved are taken again (the agents shown their observations
    again, so seeded agents go on as they would have), the game continues at the person's
    decision with the same view and log, and the finished game is the same game, saved beside
    the ``.unfinished`` file as a record that replays."""
    whole = play_last_legal(running(env_id, players=2, seat=1))
    stopped = running(env_id, players=2, seat=1)
    stopped.session.save_option = str(Path(whole["saved"]).with_name("cut.jsonl"))
    stopped.session.start(4)
    mid = play_last_legal(stopped, stop_at=6)
    status, saved = stopped.post("/save", {})
    assert status == 200 and saved["unfinished"]
    assert re.search(r"/cut\.jsonl\.game2-[0-9a-f]+\.unfinished$", saved["saved"])
    resumed = Running(serve.resume(saved["saved"]))
    try:
        _, state = resumed.get("/state")
        for key in ("turn", "svg", "log", "legal", "seats", "you", "seed", "your_turn"):
            assert state[key] == mid[key], key
        last = play_last_legal(resumed)
    finally:
        resumed.close()
    assert last["saved"] == str(Path(whole["saved"]).with_name("cut.jsonl"))
    assert not Path(saved["saved"]).exists()  # the record holds the game now
    [game] = read_games(last["saved"])
    [uninterrupted] = read_games(whole["saved"])
    assert game.steps == uninterrupted.steps and game.end == uninterrupted.end
    assert game.header == uninterrupted.header
    assert len(frames(game)) == len(game.steps) + 1


def test_a_game_stopped_by_a_failing_agent_resumes_and_is_saved_whole(running, capsys):
    server = running("headless_horseman_v1", players=2, seat=0)
    server.session.table.agents["player_1"] = Failing()
    state = play_last_legal(server)
    assert state["error"] and "out of ideas" in capsys.readouterr().err
    saved = state["error"].rsplit("saved to ", 1)[1]
    session = serve.resume(saved)
    partner = default_agent("headless_horseman_v1")
    assert session.resumed_at == state["turn"] and session.table.seats[1] == partner
    resumed = Running(session)
    try:
        last = play_last_legal(resumed)
    finally:
        resumed.close()
    assert last["over"] and not last["error"]
    [game] = read_games(last["saved"])
    assert game.header["agents"] == ["human", partner]
    assert len(frames(game)) == len(game.steps) + 1


def unfinished_file(tmp_path, running, edit=None) -> Path:
    """A Horseman game cut after the person's third decision, saved unfinished; ``edit``
    changes its lines (JSON objects) first."""
    server = running("headless_horseman_v1", players=2, seat=0)
    play_last_legal(server, stop_at=3)
    path = Path(server.post("/save", {})[1]["saved"])
    if edit is not None:
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        edit(lines)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def wrong_agent(lines):
    lines[0]["agents"][1] = "heuristic:nobody"


def no_person(lines):
    lines[0]["agents"][0] = "random"


def illegal_step(lines):
    lines[2]["a"] = 10_000


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (wrong_agent, r"cannot build the game's agents \['heuristic:nobody'\]: ConfigError: "),
        (no_person, r"seats no one person \(agents \['random', 'heuristic:\w+'\]\)"),
        (illegal_step, r"\.unfinished, line 3, step 2: action 10000 is outside the game's"),
    ],
)
def test_resume_refuses_a_file_it_cannot_continue(edit, words, tmp_path, running):
    path = unfinished_file(tmp_path, running, edit)
    with pytest.raises(ConfigError, match=words):
        serve.resume(str(path))


def test_resume_refuses_a_finished_game_an_empty_file_and_a_missing_one(tmp_path, running):
    state = play_last_legal(running("headless_horseman_v1", players=2, seat=0))
    with pytest.raises(ConfigError, match="its last game is finished .* cauldron viewer"):
        serve.resume(state["saved"])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(ConfigError, match="empty.jsonl: the file is empty"):
        serve.resume(str(empty))
    with pytest.raises(ConfigError, match="nowhere.jsonl: no such file"):
        serve.resume(str(tmp_path / "nowhere.jsonl"))
    notes = tmp_path / "notes.txt"
    notes.write_text("my game\n")
    with pytest.raises(ConfigError, match=r"^--resume .*notes.txt, line 1: not valid JSON"):
        serve.resume(str(notes))


def test_a_record_whose_last_game_is_cut_short_resumes_after_its_games(tmp_path, running):
    """Any record file whose last game has no end line: the resumed game is saved (to
    ``--save``) after the games already there, and the file reads as whole records."""
    finished = play_last_legal(running("headless_horseman_v1", players=2, seat=0))["saved"]
    cut = unfinished_file(tmp_path, running)
    both = tmp_path / "both.jsonl"
    both.write_text(Path(finished).read_text() + cut.read_text())
    out = tmp_path / "out.jsonl"
    out.write_text(Path(finished).read_text())
    session = serve.resume(str(both), str(out))
    assert session.resumed_at == len(cut.read_text().splitlines()) - 1
    resumed = Running(session)
    try:
        assert play_last_legal(resumed)["saved"] == str(out)
    finally:
        resumed.close()
    first, second = read_games(out)
    assert first.to_lines() == read_games(finished)[0].to_lines()
    assert second.header["agents"][0] == "human" and len(frames(second)) == len(second.steps) + 1


def test_the_command_takes_a_resumed_game_from_its_file_alone(tmp_path, running):
    path = unfinished_file(tmp_path, running)
    with pytest.raises(ConfigError, match="from .*; drop --env --seat"):
        serve.main(["--resume", str(path), "--env", "hexenflug_v1", "--seat", "0"])
    with pytest.raises(ConfigError, match="give --env and --players for a new game, or --resume"):
        serve.main(["--env", "hexenflug_v1"])


def test_the_command_names_a_port_in_use_in_one_line(tmp_path, running):
    port = running("headless_horseman_v1").server.server_address[1]
    argv = ["--env", "hexenflug_v1", "--players", "2", "--save", str(tmp_path / "g.jsonl")]
    with pytest.raises(ConfigError, match=f"^--port {port} on 127.0.0.1 is in use; give another"):
        serve.main([*argv, "--port", str(port)])


def test_a_click_after_its_tick_is_refused_and_a_double_click_plays_once(running):
    server = running("voodoo_mania_v1", players=3, seat=1, seed=0)
    session = server.session
    status, state = server.post("/clock", {"mode": "running", "speed": "slow"})
    assert status == 200 and state["clock"]["mode"] == "running"
    action = state["legal"][-1][0]
    with session.lock:
        session.clock.since -= serve.SPEEDS["slow"]  # the tick's time is up
        assert session.tick()  # the person let it pass
    after = server.get("/state")[1]
    status, answer = server.post("/act", {"action": action, "turn": state["turn"]})
    assert status == 409 and "too late" in answer["error"]
    assert server.get("/state")[1]["turn"] == after["turn"]  # nothing played
    body = {"action": after["legal"][-1][0], "turn": after["turn"]}
    first, second = server.post("/act", body), server.post("/act", body)  # a double click
    assert first[0] == 200 and second[0] == 409 and "too late" in second[1]["error"]
    mine = [s for s in session.table.env._game.steps if s["s"] == 1]
    assert [s["a"] for s in mine] == [0, body["action"]]


def test_a_paused_clock_refuses_clicks_and_names_its_speeds(running):
    server = running("voodoo_mania_v1", players=2, seat=0)
    status, state = server.post("/clock", {"mode": "paused"})
    assert status == 200 and state["clock"]["mode"] == "paused"
    status, answer = server.post("/act", {"action": 0, "turn": state["turn"]})
    assert status == 409 and "paused" in answer["error"]
    assert not server.session.tick() and server.get("/state")[1]["turn"] == state["turn"]
    status, answer = server.post("/clock", {"speed": "warp"})
    assert status == 400 and "slow, normal, fast" in answer["error"]
    status, answer = running("hexenflug_v1").post("/clock", {"mode": "running"})
    assert status == 409 and "no clock" in answer["error"]


class Explaining:
    """The game's heuristic that says what it thought: all on the action it chose."""

    def __init__(self, env_id: str) -> None:
        self.agent = make_agent(default_agent(env_id), env_id, seed=0)
        self.chosen = -1

    def reset(self, seed=None) -> None:
        self.agent.reset(seed)

    def act(self, observation, action_mask) -> int:
        self.chosen = int(self.agent.act(observation, action_mask))
        return self.chosen

    def explain(self):
        return Thought(((self.chosen, 1.0),))


def test_an_agent_s_thoughts_are_shown_only_where_the_seat_sees_all_it_saw(running):
    open_hands = running("hexenflug_v1", players=2, seat=0)
    open_hands.session.table.agents["player_1"] = Explaining("hexenflug_v1")
    state = open_hands.get("/state")[1]
    while state["thought"] is None and not state["over"]:
        status, state = open_hands.post(
            "/act", {"action": state["legal"][0][0], "turn": state["turn"]}
        )
    [[_, p, words]] = state["thought"]["top"]
    assert p == 1.0 and state["thought"]["who"] == "player 2"
    assert words and "action" not in words
    secret = running("headless_horseman_v1", players=2, seat=0)
    secret.session.table.agents["player_1"] = Explaining("headless_horseman_v1")
    state = secret.get("/state")[1]
    status, state = secret.post("/act", {"action": state["legal"][0][0], "turn": 0})
    assert status == 200 and state["thought"] is None  # its hand is hidden from the person


def test_the_end_reveals_every_hand_and_says_the_result_in_words(running):
    server = running("headless_horseman_v1", players=2, seat=0)
    state = play_last_legal(server)
    base = server.session.table.base
    assert state["svg"] == base.draw(None, "svg") and state["status"] == "game over"
    assert state["outcome"]["words"].startswith("The team")
    assert all("player_" not in line and "(action" not in line for line in state["said"])
