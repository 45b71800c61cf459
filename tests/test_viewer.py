"""The web table's page (issue 13), without a browser: data, encoding, errors, self-containment."""

from __future__ import annotations

import json
import re

import pytest

import envs
from eval import records, viewer
from eval.replay import frames
from tests.test_records import record_games


def decode(encoded: list) -> list[list[int]]:
    """Python twin of viewer.js ``decode``: frames of line ids from :func:`viewer.delta`."""
    out: list[list[int]] = []
    last: list[int] = []
    for ids in encoded:
        if ids == 0:
            current = last
        elif ids[0] == -1:
            current = list(last)
            for k in range(1, len(ids), 2):
                current[ids[k]] = ids[k + 1]
        else:
            current = ids
        out.append(current)
        last = current
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two random games of every env in one file."""
    path = tmp_path_factory.mktemp("viewer") / "games.jsonl"
    games = [g for env_id in envs.ids() for g in record_games(env_id, "random", [1, 2])[0]]
    records.write_games(path, games)
    return path, games


def test_every_view_of_every_frame_decodes_to_the_replayed_text(recorded):
    path, games = recorded
    data = viewer.page_data([path])
    assert [g["error"] for g in data["games"]] == [None] * len(games)
    for game, page in zip(games, data["games"], strict=True):
        shown = frames(game)
        assert page["env"] == game.header["env"] and len(page["act"]) == len(shown)
        for v, encoded in enumerate(page["text"]):
            for frame, ids in zip(shown, decode(encoded), strict=True):
                expected = frame.table if v == 0 else frame.views[v - 1]
                assert "\n".join(data["strings"][i] for i in ids) == expected
        last = page["panel"][-1]
        assert last[0] is None  # nobody to act once the game is over
        assert json.loads(data["strings"][last[1]]) == game.end["returns"]
        assert [json.loads(data["strings"][i]) for i in last[2:]] == game.end["info"]


def test_delta_keeps_only_changed_lines():
    assert viewer.delta([1, 2, 3], [1, 2, 3]) == 0
    assert viewer.delta([1, 2, 3], [1, 9, 3]) == [-1, 1, 9]
    assert viewer.delta([1, 2], [1, 2, 3]) == [1, 2, 3]
    assert viewer.delta([1, 2, 3], [4, 5, 6]) == [4, 5, 6]


def test_the_page_is_self_contained(recorded, tmp_path):
    path, _ = recorded
    out = viewer.main([str(path), "-o", str(tmp_path / "games.html")])
    html = out.read_text()
    assert not re.search(r"(src|href)\s*=|https?://|@import|fetch\(", html.split('id="data"')[0])
    assert "/*DATA*/" not in html and "/*SCRIPT*/" not in html and "/*STYLE*/" not in html
    data = html.split('<script type="application/json" id="data">')[1].split("</script>")[0]
    assert len(json.loads(data)["games"]) == 2 * len(envs.ids())


def test_a_game_that_does_not_replay_is_listed_with_its_error(recorded, tmp_path):
    path, _ = recorded
    lines = path.read_text().splitlines()
    step = json.loads(lines[3])
    step["r"] = [9.0] * len(step.get("r", [0, 0, 0]))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[:3], json.dumps(step), *lines[4:]]) + "\n")
    unreadable = tmp_path / "cut.jsonl"
    unreadable.write_text("\n".join(lines[:5]) + "\n")
    data = viewer.page_data([bad, unreadable])
    first = data["games"][0]
    assert "bad.jsonl, line 4, step 3: rewards" in first["error"] and first["text"] == []
    assert [g["error"] for g in data["games"][1:-1]] == [None] * (len(data["games"]) - 2)
    assert "cut.jsonl, line 5" in data["games"][-1]["error"]
    assert "truncated" in data["games"][-1]["error"]
