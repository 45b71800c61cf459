"""The web table in a real headless Chromium, driven by Playwright.

Each game's page is checked against an independent replay of its record through the reference
env: the whole table and each seat's private view as drawn (the SVG elements in the page), the
action shown, the move list, the seats' labels and every seat's figures (return, score); a
seat's view never shows another seat's thoughts or secret choices. Screenshots go to
``runs/test_viewer/``. The tests skip, saying why, when Playwright or a Chromium binary is
missing (``.ci/run`` installs both).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cauldron import envs
from cauldron.agents import HEURISTICS
from cauldron.envs.core.views import figures, seen_action
from cauldron.eval import records, viewer
from tests.test_records import record_games

ARTEFACTS = Path("runs/test_viewer")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    """``$CHROMIUM``, else Debian's ``chromium`` (or ``chromium-browser``) on the PATH."""
    given = os.environ.get("CHROMIUM")
    return given or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install -e '.[browser]')"
    )
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium binary (apt-get install chromium, or set $CHROMIUM)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.errors, page.requests = [], []
    page.on("pageerror", lambda err: page.errors.append(str(err)))
    page.on("request", lambda request: page.requests.append(request.url))
    yield page
    page.close()


def env_after(game: records.GameRecord, steps: int):
    """The reference env after the record's first ``steps`` actions (not the viewer's code)."""
    env = envs.make(game.header["env"], num_players=game.header["players"], render_mode="svg")
    env.reset(seed=game.header["seed"])
    for line in game.steps[:steps]:
        env.step(line["a"])
    return env


def drawn_figures(page) -> dict[int, dict[str, object]]:
    """The figures table as drawn: seat -> {column: JSON value}."""
    rows = page.eval_on_selector_all(
        "#info tr[data-seat]",
        "rows => rows.map(r => [...r.cells].map(c => [c.dataset.key, c.textContent]))",
    )
    return {
        seat: {key: json.loads(text) for key, text in cells if key != "seat"}
        for seat, cells in enumerate(rows)
    }


def svg_elements(svg: str) -> list[list[object]]:
    """Every element of an SVG document in order: tag, attributes, its own text."""
    out = []
    for element in ET.fromstring(svg).iter():
        text = (element.text or "") + "".join(child.tail or "" for child in element)
        out.append([element.tag.split("}")[-1], dict(element.attrib), text.strip()])
    return out


def drawn_elements(page) -> list[list[object]]:
    """Every element of the SVG the page draws, as :func:`svg_elements` lists them."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#table svg, #table svg *')].map((e) => [
          e.tagName,
          Object.fromEntries([...e.attributes].filter((a) => a.name !== 'xmlns')
            .map((a) => [a.name, a.value])),
          [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.data).join('').trim(),
        ])"""
    )


def check_drawn(page, game: records.GameRecord, steps: int, seat: int | None) -> None:
    """The page draws the table (or ``seat``'s view) as the env draws it in SVG, and shows the
    action as that view saw it and every seat's figures (from the game state) after ``steps``."""
    env = env_after(game, steps)
    base = env.unwrapped
    expected = env.render() if seat is None else base.render_for(base.possible_agents[seat], "svg")
    assert drawn_elements(page) == svg_elements(expected)
    assert page.get_attribute("body", "data-step") == str(steps)
    current = page.eval_on_selector_all(
        "#moves li.current", "items => items.map(i => i.dataset.step)"
    )
    assert current == [str(steps)]
    if steps:
        line = game.steps[steps - 1]
        seen = seen_action(env_after(game, steps - 1), line["a"], seat)
        assert seen in page.inner_text("#action")
        if seen != f"player_{line['s']}: {line['n']} (action {line['a']})":
            assert line["n"] not in page.inner_text("#action")
    returns = [0.0] * game.header["players"]
    for line in game.steps[:steps]:
        returns = [x + y for x, y in zip(returns, line.get("r", [0.0] * len(returns)), strict=True)]
    for s, row in drawn_figures(page).items():
        assert row.pop("return") == pytest.approx(returns[s], abs=1e-4)
        assert row == records.jsonable(figures(env)[s])


def go(page, step: int) -> None:
    page.eval_on_selector(
        "#scrub", "(el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }", step
    )


@pytest.mark.parametrize("env_id", envs.ids())
def test_every_game_is_drawn_step_by_step_in_chromium(page, env_id, tmp_path):
    spec = next((f"heuristic:{h}" for h in HEURISTICS.get(env_id, {})), "random")
    [game], _ = record_games(env_id, spec, [11])
    path = records.write_games(tmp_path / f"{env_id}.jsonl", [game])
    html = viewer.write_page([path], tmp_path / "games.html")
    page.goto(html.resolve().as_uri())
    assert page.is_hidden("#error")
    check_drawn(page, game, 0, None)
    for _ in range(3):
        page.click("#next")
    check_drawn(page, game, 3, None)
    middle = len(game.steps) // 2
    go(page, middle)
    check_drawn(page, game, middle, None)
    page.click("#prev")
    check_drawn(page, game, middle - 1, None)
    for seat in range(game.header["players"]):
        page.click(f"#views button[data-view='{seat + 1}']")
        check_drawn(page, game, middle - 1, seat)
    page.keyboard.press("0")  # back to the whole table
    page.keyboard.press("ArrowRight")
    check_drawn(page, game, middle, None)
    page.click("#last")
    check_drawn(page, game, len(game.steps), None)
    assert "game over" in page.inner_text("#action")
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.click("#views button[data-view='1']")
    page.screenshot(path=str(ARTEFACTS / f"{env_id}.png"), full_page=True)
    assert page.errors == []
    assert page.requests == [html.resolve().as_uri()], "the page fetched something besides itself"


def test_play_runs_the_game_forward(page, tmp_path):
    env_id = envs.ids()[0]
    [game], _ = record_games(env_id, "random", [3])
    html = viewer.write_page(
        [records.write_games(tmp_path / "g.jsonl", [game])], tmp_path / "p.html"
    )
    page.goto(html.resolve().as_uri())
    page.select_option("#speed", "20")
    page.click("#play")
    page.wait_for_function("Number(document.body.dataset.step) >= 5", timeout=10_000)
    page.click("#play")
    check_drawn(page, game, int(page.get_attribute("body", "data-step")), None)


def test_a_game_that_cannot_be_drawn_shows_a_readable_error(page, tmp_path):
    env_id = envs.ids()[0]
    games, _ = record_games(env_id, "random", [3, 4])
    path = records.write_games(tmp_path / "g.jsonl", games)
    lines = path.read_text().splitlines()
    step = json.loads(lines[2])
    step["a"] = 10_000
    path.write_text("\n".join([lines[0], lines[1], json.dumps(step), *lines[3:]]) + "\n")
    html = viewer.write_page([path], tmp_path / "p.html")
    page.goto(html.resolve().as_uri())
    assert page.is_visible("#error") and page.is_hidden("#board")
    error = page.inner_text("#error")
    assert "g.jsonl, line 3, step 2: action 10000 is outside the game's" in error
    page.select_option("#game", "1")
    assert page.is_hidden("#error")
    check_drawn(page, games[1], 0, None)
    assert page.errors == []


def test_the_move_list_jumps_to_a_step_and_follows_the_current_one(page, tmp_path):
    """The whole move and event list beside the table, one entry per decision after
    the deal, each as the table saw it; a click on entry k shows step k; the current entry is
    marked and scrolled into view."""
    [game], _ = record_games("hexenflug_v1", "random", [1], players=2)  # 541 decisions
    html = viewer.write_page(
        [records.write_games(tmp_path / "g.jsonl", [game])], tmp_path / "p.html"
    )
    page.goto(html.resolve().as_uri())
    items = page.eval_on_selector_all(
        "#moves li",
        "items => items.map(i => [i.dataset.step, i.querySelector('.move').textContent])",
    )
    assert [int(step) for step, _ in items] == list(range(len(game.steps) + 1))
    env = env_after(game, 0)
    for (_, text), line in zip(items[1:], game.steps, strict=True):
        assert text.startswith(seen_action(env, line["a"], None))
        env.step(line["a"])
    for step in (len(game.steps) - 3, 7, len(game.steps) // 2):
        page.click(f"#moves li[data-step='{step}'] .move")
        check_drawn(page, game, step, None)
    page.click("#last")
    visible = page.evaluate(
        """() => {
          const list = document.getElementById('moves').getBoundingClientRect();
          const item = document.querySelector('#moves li.current').getBoundingClientRect();
          return item.top >= list.top && item.bottom <= list.bottom;
        }"""
    )
    assert visible and page.get_attribute("#moves li.current", "aria-current") == "step"
    assert page.errors == []


def test_a_seat_s_view_shows_no_other_seat_s_thoughts_or_secret_choices(page, tmp_path):
    """What an agent thought (its top actions, its value) is shown beside its move in
    the whole table and in its own view only, and another seat's secret pass or swap reads as
    its public text; every seat is labelled with its agent, in the view tabs and the figures."""
    [game], _ = record_games("hocus_pocus_v1", "random", [8], players=3)
    game.header["agents"] = ["random", "heuristic:greedy", "torch:runs/x/model.pt"]
    for k, line in enumerate(game.steps, 1):
        line["p"], line["v"] = [[line["a"], 0.625]], float(k)  # a thought unique to the step
    path = records.write_games(tmp_path / "thoughts.jsonl", [game])
    page.goto(viewer.write_page([path], tmp_path / "p.html").resolve().as_uri())
    labels = [f"player_{i} · {a}" for i, a in enumerate(game.header["agents"])]
    assert page.eval_on_selector_all("#views button", "b => b.map(x => x.textContent)") == [
        "whole table",
        *labels,
    ]
    seats = page.eval_on_selector_all("#info td[data-key='seat']", "c => c.map(x => x.textContent)")
    assert seats == labels
    thoughts = [f"policy: {line['n']} 62% · value {k:.2f}" for k, line in enumerate(game.steps, 1)]
    moves = [f"player_{line['s']}: {line['n']} (action {line['a']})" for line in game.steps]
    env, secret = env_after(game, 0), []
    for k, line in enumerate(game.steps, 1):
        hidden = [s for s in range(3) if seen_action(env, line["a"], s) != moves[k - 1]]
        secret += [(k, s) for s in hidden]
        env.step(line["a"])
    assert len({k for k, _ in secret}) >= 3
    listed = page.inner_text("#moves")
    assert all(t in listed for t in thoughts) and all(m in listed for m in moves)
    for seat in range(3):
        page.click(f"#views button[data-view='{seat + 1}']")
        listed = page.inner_text("#moves")
        for k, line in enumerate(game.steps, 1):
            assert (thoughts[k - 1] in listed) == (line["s"] == seat), (seat, k)
            assert (moves[k - 1] in listed) == ((k, seat) not in secret), (seat, k)
    for k, seat in secret[:4]:
        page.click(f"#views button[data-view='{seat + 1}']")
        go(page, k)
        assert moves[k - 1] not in page.inner_text("#action") and page.is_hidden("#thought")
        actor = game.steps[k - 1]["s"]
        page.click(f"#views button[data-view='{actor + 1}']")
        assert moves[k - 1] in page.inner_text("#action")
        assert page.inner_text("#thought") == thoughts[k - 1]
    assert page.errors == []


@pytest.mark.heavy
def test_a_hundred_game_page_steps_without_delay(page, tmp_path):
    """Opens a 100-game page of drawn tables (SVG) and times each step in the page: drawing
    with layout, and from a click on "next" to the next painted frame; both medians must stay
    under 100 ms. The figures, maxima too, are printed and go to
    runs/test_viewer/timing.json."""
    env_id = next(i for i in envs.ids() if i.startswith("hocus_pocus"))  # the widest table
    games, _ = record_games(env_id, "random", range(100), players=4)
    path = records.write_games(tmp_path / "hundred.jsonl", games)
    html = viewer.write_page([path], tmp_path / "hundred.html")
    page.goto(html.resolve().as_uri())
    load_ms = page.evaluate("performance.getEntriesByType('navigation')[0].duration")
    page.select_option("#game", "99")
    in_page = page.evaluate(
        """() => {
          const times = [];
          for (let k = 1; k <= 60; k++) {
            const t = performance.now();
            window.cauldronViewer.go(k);
            document.getElementById('table').offsetHeight;  // force layout
            times.push(performance.now() - t);
          }
          return times;
        }"""
    )
    clicks = page.evaluate(
        """async () => {
          const times = [];
          const painted = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r)));
          for (let k = 0; k < 20; k++) {
            await painted();
            const t = performance.now();
            document.getElementById('next').click();
            await painted();
            times.push(performance.now() - t);
          }
          return times;
        }"""
    )
    timing = {
        "games": 100,
        "steps": sum(len(g.steps) for g in games),
        "page_mb": html.stat().st_size / 1e6,
        "load_ms": load_ms,
        "step_ms_in_page_median": statistics.median(in_page),
        "step_ms_in_page_max": max(in_page),
        "step_ms_click_median": statistics.median(clicks),
        "step_ms_click_max": max(clicks),
    }
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    (ARTEFACTS / "timing.json").write_text(json.dumps(timing, indent=1))
    print("viewer timing:", json.dumps(timing))
    assert statistics.median(in_page) < 100 and statistics.median(clicks) < 100, timing
    assert page.errors == []
