"""The table as players use it, in a real headless Chromium: ``cauldron serve``'s page.

For every game a whole game is played only by clicking what the table draws (a card, a pile, a
space, a seat) and, for an action with nothing drawn, the button that names it in words; before
each click every playable thing is checked to answer a click anywhere on it (at its centre and
inside its four corners ``document.elementFromPoint`` reaches that thing). The page fits
1280×800 and 1920×1080 without scrolling and still plays 800 px wide; the end reveals every hand
and says the result in words. Voodoo Mania runs on a clock: a whole round passes with no click,
and a paused game does not move. Screenshots at 1280×800 go to ``docs/images/``. The tests skip
as tests/test_viewer_browser.py's do when Playwright or a Chromium binary is missing.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from cauldron import envs
from cauldron.eval import serve
from tests import test_viewer_browser as viewer_tests

browser = viewer_tests.browser  # the fixture, shared

IMAGES = Path("docs/images")
SHOT_AT = 6  # the click after which a game's screenshot is taken
READY = """limit => new Promise((done) => {
    const end = performance.now() + limit;
    const look = () => {
        if (!busy && state && (state.over || state.error || state.your_turn)) done(true);
        else if (performance.now() > end) done(false);
        else setTimeout(look, 5);
    };
    look();
})"""  # wait until the page has the person's decision, the end or a stop
HITS = """() => {
    const wrong = [];
    for (const el of document.querySelectorAll("#table .can")) {
        const box = el.getBoundingClientRect(), inset = 4;
        const points = [
            [box.left + box.width / 2, box.top + box.height / 2],
            [box.left + inset, box.top + inset], [box.right - inset, box.top + inset],
            [box.left + inset, box.bottom - inset], [box.right - inset, box.bottom - inset],
        ];
        for (const [x, y] of points) {
            const hit = document.elementFromPoint(x, y);
            const owner = hit && hit.closest("[data-action]");
            if (owner !== el) wrong.push([el.getAttribute("data-action").slice(0, 40), x, y]);
        }
    }
    return wrong;
}"""
CHOICES = """() => {
    const centre = (el) => {
        const b = el.getBoundingClientRect();
        return [b.left + b.width / 2, b.top + b.height / 2];
    };
    return {
        drawn: [...document.querySelectorAll("#table .can")].map(centre),
        partners: [...document.querySelectorAll("#table .partner")].map(centre),
        buttons: document.querySelectorAll("#actions button").length,
    };
}"""
SETUP = {  # env: (players, seat, seed)
    "hocus_pocus_v1": (3, 1, 4),
    "hexenflug_v1": (3, 1, 4),
    "voodoo_mania_v1": (3, 1, 3),
    "headless_horseman_v1": (3, 1, 4),
}


def new_page(browser, width: int, height: int):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.errors = []
    page.on("pageerror", lambda err: page.errors.append(str(err)))
    return page


def ready(page) -> dict:
    """The page's state once it waits for the person (or the game is over)."""
    assert page.evaluate(READY, 30_000), page.inner_text("#status")
    return page.evaluate("state")


def scrolls(page) -> bool:
    """Whether the page is taller or wider than its window."""
    return page.evaluate(
        "document.documentElement.scrollHeight > innerHeight + 1"
        " || document.documentElement.scrollWidth > innerWidth + 1"
    )


def click_a_move(page, rng: random.Random) -> str:
    """Click one playable thing (a drawn one, then its partner when it was picked) or a button
    of an action with nothing drawn; what was clicked."""
    choices = page.evaluate(CHOICES)
    options = [("drawn", xy) for xy in choices["drawn"]]
    options += [("button", k) for k in range(choices["buttons"])]
    assert options, "no way to play: " + page.inner_text("#status")
    kind, where = rng.choice(options)
    if kind == "button":
        page.locator("#actions button").nth(where).click()
        return kind
    page.mouse.click(*where)
    partners = page.evaluate(CHOICES)["partners"]
    if page.evaluate("picked !== null") and partners:
        page.mouse.click(*rng.choice(partners))
    return kind


@pytest.mark.parametrize(
    "env_id",  # Voodoo Mania's whole game is the longest: it is CI's, after the default run
    [pytest.param(i, marks=pytest.mark.heavy) if i == "voodoo_mania_v1" else i for i in envs.ids()],
)
def test_a_whole_game_is_played_by_clicking_the_table(env_id, browser, serving):
    players, seat, seed = SETUP[env_id]
    server = serving(env_id, players, seat, seed)
    page = new_page(browser, 1280, 800)
    try:
        page.goto(server.url)
        page.uncheck("#animate")
        rng, clicks, drawn = random.Random(seed), 0, 0
        while not (state := ready(page))["over"]:
            assert not state["error"], state["error"]
            assert page.evaluate(HITS) == []
            assert not scrolls(page)
            drawn += click_a_move(page, rng) == "drawn"
            clicks += 1
            if clicks == SHOT_AT:
                ready(page)
                IMAGES.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(IMAGES / f"play_{env_id.removesuffix('_v1')}.png"))
            assert clicks < 3000
        assert drawn > clicks / 2 and page.errors == []
        assert page.inner_text("#status") == "game over"
        result = page.inner_text("#result")
        outcome = server.session.state()["outcome"]
        assert outcome["words"] in result and all(line in result for line in outcome["scores"])
        whole = server.session.table.base.draw(None, "svg")
        assert page.evaluate("state.svg") == whole  # every hand revealed
        said = page.eval_on_selector_all("#log div", "lines => lines.map(l => l.textContent)")
        for words in said:
            assert "(action" not in words and "player_" not in words, words
        page.click("#again")
        page.wait_for_function("state.game === 2 && !state.over")
        assert server.session.table.seats == state["seats"]
    finally:
        page.close()


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_the_table_fits_the_window_without_scrolling(size, browser, serving):
    server = serving("hocus_pocus_v1", 4, 0, 2)
    page = new_page(browser, *size)
    try:
        page.goto(server.url)
        ready(page)
        assert not scrolls(page)
        table = page.locator("#table svg").bounding_box()
        assert table["width"] > size[0] / 2 and page.is_visible("#actions")
    finally:
        page.close()


def test_a_narrow_window_still_plays(browser, serving):
    server = serving("headless_horseman_v1", 2, 0, 4)
    page = new_page(browser, 800, 900)
    try:
        page.goto(server.url)
        state = ready(page)
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        card = page.locator("#table .can").first
        card.scroll_into_view_if_needed()
        card.click()
        page.wait_for_function(f"state.turn > {state['turn']}")
        assert page.errors == []
    finally:
        page.close()


def test_a_click_on_what_is_not_playable_says_why_and_changes_nothing(browser, serving):
    server = serving("hexenflug_v1", 2, 0, 4)
    page = new_page(browser, 1280, 800)
    try:
        page.goto(server.url)
        ready(page)
        turn = server.session.table.turn
        discard = page.locator("#table text", has_text="discard").first.bounding_box()
        page.mouse.click(discard["x"] + 5, discard["y"] + 5)  # a label, not a thing to act on
        assert page.inner_text("#message") == "nothing to play there"
        other = page.locator("#table .target:not(.can)").first
        other.click()
        assert "not playable now" in page.inner_text("#message")
        assert server.session.table.turn == turn
    finally:
        page.close()


def test_the_voodoo_clock_runs_a_round_alone_and_a_paused_game_stands_still(
    browser, serving, monkeypatch
):
    monkeypatch.setitem(serve.SPEEDS, "fast", 0.05)
    server = serving("voodoo_mania_v1", 3, 1, 0)  # a deal whose first round ends in 74 ticks
    page = new_page(browser, 1280, 800)
    try:
        page.goto(server.url)
        ready(page)
        page.click("#speed-fast")
        page.wait_for_function("state.clock.speed === 'fast'")
        page.click("#clock-toggle")  # start the clock
        page.wait_for_function("state.clock.mode === 'running'")
        game = server.session.table.base.game
        deadline = time.monotonic() + 60
        while game.round == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert game.round == 1, "the clock did not run a round"
        person = [s for s in server.session.table.env._game.steps if s["s"] == 1]
        assert person and all(s["a"] == 0 for s in person)  # the person only let ticks pass
        page.click("#clock-toggle")  # pause
        page.wait_for_function("state.clock.mode === 'paused'")
        turn = server.session.table.turn
        time.sleep(1.0)
        assert server.session.table.turn == turn
        page.locator("#table .target").first.click()
        page.wait_for_function("/paused/.test(document.getElementById('message').textContent)")
        assert server.session.table.turn == turn and page.errors == []
    finally:
        page.close()
