"""Play in the browser (issue 31, item 3): the ``eval.serve`` server through its JSON endpoints."""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import envs
from agents import make_agent
from envs.core.errors import ConfigError
from eval import serve
from eval.demo import default_agent
from eval.records import read_games
from eval.replay import frames


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
        return self._open(urllib.request.Request(self.url + path, data=data, method="POST"))

    def _open(self, request) -> tuple[int, dict | str]:
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status, text, kind = answer.status, answer.read(), answer.headers["Content-Type"]
        except urllib.error.HTTPError as err:
            status, text, kind = err.code, err.read(), err.headers["Content-Type"]
        return status, json.loads(text) if kind == "application/json" else text.decode()

    def close(self) -> None:
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
