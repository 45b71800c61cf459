"""Play in the browser: ``cauldron serve``'s page in a real headless Chromium.

For every game, a whole game is played by the person's last legal action each time (the page's own
``act``) against the game's heuristic, and checked against an independent replay of its record
through the reference env: the saved record replays; mid-game (saved by the page's "save" button)
the page's drawing is the seat's view (``render_for(seat, "svg")``), at the end the whole table
(every hand revealed), and its debug log is what the seat saw of each decision
(:func:`cauldron.envs.core.views.seen_action`, a simultaneous step's choices once it has resolved),
so no other seat's hidden hand or secret choice shows before the end. Screenshots (mid-game and at
the end) go to ``runs/test_serve/``, the time each game took to ``runs/test_serve/timing.json``.
Then bad input in the page: an illegal action, a second tab acting on a stale turn or after the end,
and an agent that raises (the game then resumes with ``--resume``). The tests skip as
tests/test_viewer_browser.py's do when Playwright or a Chromium binary is missing.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from cauldron import envs
from cauldron.envs.core.views import seen_action
from cauldron.eval import records, serve
from tests import test_viewer_browser as viewer_tests
from tests.test_serve import Failing, Running

browser, page = viewer_tests.browser, viewer_tests.page  # the fixtures, shared

ARTEFACTS = Path("runs/test_serve")
MIDDLE = 5  # the person's decision at which the game is saved and checked mid-way
SETTLE = """async ([n, limit]) => {
    const end = performance.now() + limit;
    while (performance.now() < end) {
        if (!busy && state && (state.over || state.error)) return null;
        if (!busy && state && state.your_turn && state.turn + 1 > n) return state.turn + 1;
        await new Promise((done) => setTimeout(done, 2));
    }
    return "still " + document.getElementById("status").textContent;
}"""  # one round trip: a wait for the page to show a later decision, and which
DRAWN = """want => {
    const plain = (root) => {
        for (const el of root.querySelectorAll(".can")) {
            el.classList.remove("can");
            if (!el.classList.length) el.removeAttribute("class");
        }
        return root.innerHTML;
    };
    const expected = document.createElement("div");
    expected.innerHTML = want;
    return [plain(document.getElementById("table").cloneNode(true)), plain(expected)];
}"""


def settle(tab, after: int) -> int | None:
    """Wait until the page shows the person's decision after ``after``, or the game's end or
    stop; that decision (from 1), or ``None``."""
    shown = tab.evaluate(SETTLE, [after, 30_000])
    assert not isinstance(shown, str), shown
    return shown


def seat_view(game: records.GameRecord, seat: int) -> tuple[str, list[str]]:
    """The seat's drawing after the record's steps and its log (what it saw of each decision,
    a simultaneous step's once resolved), from a replay through the reference env."""
    log: list[str] = []
    pending: list[str] = []

    def see(env, line) -> None:
        pending.append(seen_action(env, line["a"], seat))

    env = None
    for done, env in records.replay(game, before=see):
        base = env.unwrapped
        if done and not base.rules.mid_step(base.game):
            log.extend(pending)
            pending.clear()
        if done == len(game.steps) and game.end is None:
            break
    return env.unwrapped.render_for(f"player_{seat}", "svg"), log


def check_view(tab, game: records.GameRecord, seat: int) -> None:
    """The page draws the seat's view of ``game`` so far (the whole table once it is over)
    and logs what the seat saw."""
    svg, log = seat_view(game, seat)
    if game.end is not None:
        svg = env_at_end(game).unwrapped.draw(None, "svg")
    drawn, expected = tab.evaluate(DRAWN, svg)
    assert drawn == expected
    lines = "lines => lines.map(l => l.textContent)"
    assert tab.eval_on_selector_all("#debug-log div", lines) == log
    assert len(tab.eval_on_selector_all("#log div", lines)) == len(log)


def env_at_end(game: records.GameRecord):
    """The reference env after all of the record's steps."""
    *_, (_, env) = records.replay(game)
    return env


def play_last(tab) -> None:
    """The person's last legal action, through the page's own request."""
    tab.evaluate("act(state.legal[state.legal.length - 1][0])")


def unfinished(path: str) -> records.GameRecord:
    """The game of a ``.unfinished`` file (no end line), read as a record."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    game = records.parse_games([*lines, json.dumps({"end": {}})], path)[-1]
    game.end = None
    return game


@pytest.mark.parametrize(
    "env_id",  # Voodoo Mania's whole game is the longest: it is CI's, after the default run
    [pytest.param(i, marks=pytest.mark.heavy) if i == "voodoo_mania_v1" else i for i in envs.ids()],
)
def test_a_whole_game_is_played_by_clicking_and_shows_only_the_seats_view(env_id, page, serving):
    seat = 1
    server = serving(env_id, 3, seat)
    started = time.perf_counter()
    page.goto(server.url)
    page.uncheck("#animate")
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    decision, clicks = 0, 0
    while (decision := settle(page, decision)) is not None:
        if clicks == MIDDLE:
            page.click("#save")
            page.wait_for_selector("#message:has-text('(unfinished game)')")
            saved = re.search(r"saved: (.*) \(unfinished game\)", page.inner_text("#message"))[1]
            check_view(page, unfinished(saved), seat)
            page.screenshot(path=str(ARTEFACTS / f"{env_id}_mid.png"), full_page=True)
        play_last(page)
        clicks += 1
    seconds = time.perf_counter() - started
    assert page.inner_text("#status") == "game over" and page.is_visible("#result")
    outcome = server.session.state()["outcome"]["words"]
    assert outcome in page.inner_text("#result") and page.errors == []
    assert page.locator("#actions button").count() == 0
    outside = [url for url in page.requests if not url.startswith(server.url.rstrip("/"))]
    assert page.requests and outside == [], "the page fetched from beyond its server"
    [game] = records.read_games(server.session.saved)
    assert game.header["agents"][seat] == "human" and len(game.steps) == server.session.table.turn
    check_view(page, game, seat)  # replays the record, checked to its end
    page.screenshot(path=str(ARTEFACTS / f"{env_id}.png"), full_page=True)
    timing = ARTEFACTS / "timing.json"
    times = json.loads(timing.read_text()) if timing.exists() else {}
    times[env_id] = {"clicks": clicks, "decisions": len(game.steps), "seconds": round(seconds, 1)}
    timing.write_text(json.dumps(times, indent=1))
    assert clicks > MIDDLE and seconds < 120, times[env_id]  # twice the slowest seen, loaded


def test_an_illegal_action_and_stale_tabs_are_refused_in_the_page(browser, serving):
    server = serving("headless_horseman_v1", 2, 0)
    first, second = browser.new_page(), browser.new_page()
    try:
        for tab in (first, second):
            tab.goto(server.url)
            decision = settle(tab, 0)
        turn = server.session.table.turn
        first.evaluate("act(10000)")  # no button names it: the page's own request
        first.wait_for_selector("#message:has-text('action 10000 is not legal now')")
        assert server.session.table.turn == turn
        play_last(first)
        later = settle(first, decision)
        play_last(second)  # the second tab, a turn behind
        second.wait_for_selector("#message:has-text('stale page')")
        assert settle(second, decision) == later  # refreshed: it shows the game as it is
        assert server.session.table.turn == later - 1
        decision = later
        while decision is not None:
            play_last(first)
            decision = settle(first, decision)
        assert first.inner_text("#status") == "game over"
        play_last(second)  # a stale page after the end
        second.wait_for_selector("#message:has-text('the game is over; start a new game')")
        second.wait_for_function("document.getElementById('status').textContent === 'game over'")
        [game] = records.read_games(server.session.saved)
        assert records.check(game) == server.session.table.turn
    finally:
        first.close()
        second.close()


def test_an_agent_that_raises_is_shown_in_the_page_and_the_game_resumes(page, serving, capsys):
    server = serving("headless_horseman_v1", 2, 0)
    server.session.table.agents["player_1"] = Failing()
    page.goto(server.url)
    decision = 0
    while (decision := settle(page, decision)) is not None:
        play_last(page)
    assert page.inner_text("#status") == "game stopped"
    message = page.inner_text("#message")
    assert "RuntimeError: out of ideas" in message and "out of ideas" in capsys.readouterr().err
    assert page.locator("#actions button").count() == 0
    saved = message.rsplit("saved to ", 1)[1]
    resumed = Running(serve.resume(saved))
    try:
        page.goto(resumed.url)
        decision = settle(page, 0)
        assert decision == resumed.session.table.turn + 1
        page.click("#save")
        page.wait_for_selector("#message:has-text('(unfinished game)')")
        check_view(page, unfinished(saved), 0)  # saved again: the game so far, resumed
        while decision is not None:
            play_last(page)
            decision = settle(page, decision)
        assert page.inner_text("#status") == "game over" and page.errors == []
    finally:
        resumed.close()
    [game] = records.read_games(resumed.session.saved)
    assert records.check(game) == resumed.session.table.turn
    assert not Path(saved).exists()  # the record holds the game now
