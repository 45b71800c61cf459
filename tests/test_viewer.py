"""The web table's page, without a browser: data, encoding, errors,
self-containment, drawn tables, the move list, seat labels and what the agents thought."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import random
import re
import sys

import pytest

from cauldron import envs
from cauldron.envs.core.errors import run_command
from cauldron.eval import records, viewer
from cauldron.eval.replay import frames, show
from tests.test_records import record_games


def apply(last: list[int], ids, table: list[int] | None) -> list[int]:
    """Python twin of viewer.js ``apply``: a frame from its stored form (:func:`viewer.delta`)."""
    if ids == 0:
        return last
    if ids[:1] == [-3]:
        return apply(table, ids[1:], None)
    if ids[:1] == [-1]:
        current = list(last)
        for k in range(1, len(ids), 2):
            current[ids[k]] = ids[k + 1]
        return current
    if ids[:1] == [-2]:
        current, at, k = [], 0, 1
        while k < len(ids):
            keep, drop, n = ids[k : k + 3]
            current += last[at : at + keep] + ids[k + 3 : k + 3 + n]
            at, k = at + keep + drop, k + 3 + n
        return current + last[at:]
    return ids


def decode(views: list[list]) -> list[list[list[int]]]:
    """Python twin of viewer.js ``decode``: per view, every frame's line ids."""
    out: list[list[list[int]]] = []
    for v, encoded in enumerate(views):
        last: list[int] = []
        out.append([])
        for step, ids in enumerate(encoded):
            last = apply(last, ids, out[0][step] if v else None)
            out[v].append(last)
    return out


def env_after(game: records.GameRecord, steps: int):
    """The reference env after the record's first ``steps`` actions (not the viewer's code)."""
    env = envs.make(game.header["env"], num_players=game.header["players"])
    env.reset(seed=game.header["seed"])
    for line in game.steps[:steps]:
        env.step(line["a"])
    return env


def checked_steps(game: records.GameRecord) -> list[int]:
    """Every step of a short game; about 40 spread over a long one, and its last."""
    total = len(game.steps)
    return sorted({*range(0, total + 1, max(1, total // 40)), total})


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A random 2-player game of every env in one file."""
    path = tmp_path_factory.mktemp("viewer") / "games.jsonl"
    games = [g for env_id in envs.ids() for g in record_games(env_id, "random", [1], players=2)[0]]
    records.write_games(path, games)
    return path, games


@pytest.fixture(scope="module")
def data(recorded):
    return viewer.page_data([recorded[0]])


def with_thoughts(game: records.GameRecord) -> records.GameRecord:
    """``game`` with a thought on every step: its own action at 62.5% and a value that names
    the step, so that each step's thought text is unique."""
    for k, line in enumerate(game.steps, 1):
        line["p"], line["v"] = [[line["a"], 0.625]], float(k)
    return game


@pytest.fixture(scope="module")
def thinking(tmp_path_factory):
    """A 3-player Hocus Pocus game with secret passes and swaps, a thought on every step."""
    [game], _ = record_games("hocus_pocus_v1", "random", [8], players=3)
    path = tmp_path_factory.mktemp("thinking") / "thoughts.jsonl"
    records.write_games(path, [with_thoughts(game)])
    return path, records.read_games(path)[0]


def test_every_view_of_every_frame_decodes_to_an_independent_replay_s_svg(recorded, data):
    _, games = recorded
    assert [g["error"] for g in data["games"]] == [None] * len(games)
    for game, page in zip(games, data["games"], strict=True):
        assert page["env"] == game.header["env"] and len(page["act"]) == len(game.steps) + 1
        assert page["views"] == ["table", "player_0", "player_1"]
        drawn = decode(page["svg"])
        for step in checked_steps(game):
            base = env_after(game, step).unwrapped
            expected = [base.draw(None, "svg")]
            expected += [base.render_for(a, "svg") for a in base.possible_agents]
            for v, pictures in enumerate(drawn):
                assert "\n".join(data["strings"][i] for i in pictures[step]) == expected[v]
        last = page["panel"][-1]
        assert last[0] is None  # nobody to act once the game is over
        assert json.loads(data["strings"][last[1]]) == pytest.approx(game.end["returns"], abs=1e-4)
        assert [json.loads(data["strings"][i]) for i in last[2:]] == game.end["info"]


def test_the_move_list_has_the_deal_and_one_entry_per_decision_with_its_events(recorded, data):
    """Each decision's entry holds the record's events (``e``) as the game's renderer words
    them."""
    _, games = recorded
    for game, page in zip(games, data["games"], strict=True):
        base = env_after(game, 0).unwrapped
        word = sys.modules[type(base).render_table.__module__].event_text
        if len(inspect.signature(word).parameters) == 2:
            word = functools.partial(word, base.rules)
        assert len(page["events"]) == len(page["seen"]) == len(game.steps) + 1
        assert page["seen"][0] is None and page["act"][0] is None
        for k, line in enumerate(game.steps, 1):
            texts = [word(event) for event in line.get("e", [])]
            assert [data["strings"][i] for i in page["events"][k]] == texts
            assert len(page["seen"][k]) == 3  # the table and each seat's view
        assert sum(len(e) for e in page["events"]) > 0


def test_seats_are_labelled_with_their_agents(recorded, data):
    _, games = recorded
    for game, page in zip(games, data["games"], strict=True):
        assert page["labels"] == [f"player_{i} · {a}" for i, a in enumerate(game.header["agents"])]
        assert page["labels"] == ["player_0 · random", "player_1 · random"]


def test_returns_are_rounded_for_people(recorded):
    _, games = recorded
    shown = frames(games[0])
    shown[-1] = dataclasses.replace(shown[-1], returns=(0.1 + 0.2, -1 / 3))
    strings = viewer.Strings()
    page = viewer.encode_game(games[0], shown, strings)
    assert strings.items[page["panel"][-1][1]] == "[0.3,-0.3333]"


def test_thoughts_are_named_before_the_action_and_kept_per_step(thinking):
    path, game = thinking
    data = viewer.page_data([path])
    [page] = data["games"]
    assert page["think"][0] is None
    for k, line in enumerate(game.steps, 1):
        text = data["strings"][page["think"][k]]
        assert text == f"policy: {line['n']} 62% · value {k:.2f}"
    secret = [
        k
        for k, seen in enumerate(page["seen"][1:], 1)
        if len({data["strings"][i] for i in seen}) > 1
    ]
    assert len(secret) >= 3  # passes and swaps that other seats may not see
    for k in secret:
        line = game.steps[k - 1]
        hidden = [v for v, i in enumerate(page["seen"][k]) if line["n"] not in data["strings"][i]]
        assert hidden and 0 not in hidden and line["s"] + 1 not in hidden


def test_replay_frames_carry_thoughts_named_before_the_action():
    """Voodoo Mania names a hand slot by the card in it, which the action moves: a thought's
    names are those of the table before the action, as the move's own name."""
    [game], _ = record_games("voodoo_mania_v1", "random", [2], players=2)
    shown = frames(with_thoughts(game))
    assert shown[0].policy is None and shown[0].value is None
    named = 0
    for k, frame in enumerate(shown[1:], 1):
        line = game.steps[k - 1]
        [(action, name, probability)] = frame.policy
        assert (action, probability, frame.value) == (line["a"], 0.625, float(k))
        assert frame.move == f"player_{line['s']}: {name} (action {action})"
        named += name != line["n"]  # named by the card, not the slot
    assert named > 0


def test_replay_shows_a_thought_to_the_table_and_the_actor_only(thinking):
    _, game = thinking
    shown = frames(game)
    total = len(shown) - 1
    for frame in shown[1:4]:
        said = f"policy: {frame.action['n']} 62% · value {frame.step:.2f}"
        assert said in show(frame, total, None).split("\n")[0]
        for seat in range(3):
            heading = show(frame, total, seat).split("\n")[0]
            assert (said in heading) == (seat == frame.action["s"])
    for frame in frames(record_games("hocus_pocus_v1", "random", [8], players=3)[0][0])[1:4]:
        assert "policy" not in show(frame, total, None) and frame.policy is None


def test_a_game_without_thoughts_has_none(data):
    assert all(page["think"] is None for page in data["games"])


def test_delta_keeps_only_changed_lines():
    assert viewer.delta([1, 2, 3], [1, 2, 3]) == 0
    assert viewer.delta([1, 2, 3, 4, 5], [1, 9, 3, 4, 5]) == [-1, 1, 9]
    assert viewer.delta([1, 2, 3], [1, 9, 3]) == [1, 9, 3]  # no shorter than the frame
    assert viewer.delta([1, 2], [1, 2, 3]) == [1, 2, 3]
    assert viewer.delta([1, 2, 3], [4, 5, 6]) == [4, 5, 6]
    before = list(range(10, 40))
    after = before[:5] + [99] + before[5:20] + before[22:]  # one line inserted, two dropped
    assert viewer.delta(before, after) == [-2, 5, 0, 1, 99, 15, 2, 0]
    table = [7, 8, 9, 10, 11, 12]  # a seat's view: the table's frame with one card hidden
    assert viewer.delta([1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 0], table) == [-3, -1, 5, 0]


def edited(rng: random.Random, lines: list[int]) -> list[int]:
    """``lines`` with up to 3 random insertions, deletions and changes."""
    current = list(lines)
    for _ in range(rng.randrange(4)):
        where = rng.randrange(len(current) + 1)
        kind = rng.choice(["insert", "delete", "change"])
        if kind == "insert" or not current:
            current[where:where] = [rng.randrange(30) for _ in range(rng.randrange(1, 4))]
        elif kind == "delete":
            del current[where : where + rng.randrange(1, 4)]
        else:
            current[min(where, len(current) - 1)] = rng.randrange(30)
    return current


def test_delta_round_trips_any_edit_of_the_table_and_of_a_seat_s_view():
    rng = random.Random(5)
    shown: list[list[list[int]]] = [[], []]
    encoded: list[list] = [[], []]
    for step in range(400):
        table = edited(rng, shown[0][-1] if step else [])
        seat = (
            edited(rng, table) if rng.random() < 0.5 else edited(rng, shown[1][-1] if step else [])
        )
        encoded[0].append(viewer.delta(shown[0][-1] if step else [], table))
        encoded[1].append(viewer.delta(shown[1][-1] if step else [], seat, table))
        shown[0].append(table)
        shown[1].append(seat)
    assert decode(encoded) == shown
    forms = {e[0] for view in encoded for e in view if isinstance(e, list) and e}
    assert {-1, -2, -3} <= forms


def test_the_page_is_self_contained(recorded, tmp_path):
    path, _ = recorded
    out = viewer.main([str(path), "-o", str(tmp_path / "games.html")])
    html = out.read_text()
    before_data = html.split('id="data"')[0]
    assert not re.search(r"(src|href)\s*=|https?://|@import|fetch\(", before_data)
    assert "/*DATA*/" not in html and "/*SCRIPT*/" not in html and "/*STYLE*/" not in html
    data = html.split('<script type="application/json" id="data">')[1].split("</script>")[0]
    page = json.loads(data)
    assert len(page["games"]) == len(envs.ids())
    svg_lines = [s for s in page["strings"] if s.startswith("<")]
    assert svg_lines and not any(
        re.search(r"(href|src)\s*=|https?://(?!www\.w3\.org)", s) for s in svg_lines
    )


def test_a_game_that_does_not_replay_is_listed_with_its_error(recorded, tmp_path):
    path, _ = recorded
    lines = path.read_text().splitlines()
    step = json.loads(lines[3])
    step["r"] = [9.0] * len(step.get("r", [0, 0]))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[:3], json.dumps(step), *lines[4:]]) + "\n")
    data = viewer.page_data([bad])
    first = data["games"][0]
    assert "bad.jsonl, line 4, step 3: rewards" in first["error"] and first["svg"] == []
    assert [g["error"] for g in data["games"][1:]] == [None] * (len(data["games"]) - 1)


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("missing", None, ": no such record file"),
        ("empty", b"", ": no game in the file"),
        ("binary", b"\x89PNG\r\n", ", line 1: not UTF-8 text (byte 0x89"),
        ("cut", 5, ", line 5, step 4: the file ends inside game 1 (no end line)"),
    ],
)
def test_a_file_that_is_not_a_record_is_one_line_and_no_page(
    recorded, tmp_path, capsys, name, text, problem
):
    path, _ = recorded
    source = tmp_path / f"{name}.jsonl"
    if isinstance(text, int):
        text = "\n".join(path.read_text().splitlines()[:text]).encode() + b"\n"
    if text is not None:
        source.write_bytes(text)
    out = tmp_path / "page.html"
    with pytest.raises(SystemExit) as exit_:
        run_command(lambda: viewer.main([str(path), str(source), "-o", str(out)]))
    message = str(exit_.value.code)
    assert message.startswith(f"error: {source}{problem}") and "\n" not in message
    assert capsys.readouterr().out == "" and list(tmp_path.glob("page.html*")) == []
