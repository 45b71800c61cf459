"""Hexenflug drawn as SVG (envs/hexenflug/svg.py): every frame of random games at every player
count is valid SVG, the render modes give it, no view shows the draw pile, and a finished game
shows its result."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.hexenflug import components as C
from cauldron.envs.hexenflug.svg import svg_table

SVG = "{http://www.w3.org/2000/svg}"
NAMES = {C.card_name(card): card for card in range(C.NUM_CARDS)}


def _frames(num_players: int, seed: int, render_mode: str = "svg", limit: int = 10**6):
    """Random play of one game (whole, or its first ``limit`` steps), yielding the environment
    before every step and at the end."""
    env = envs.make("hexenflug_v1", num_players=num_players, render_mode=render_mode)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(limit):
        if any(env.terminations.values()) or any(env.truncations.values()):
            break
        yield env
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    yield env


def _cards_drawn(svg: str) -> set[int]:
    """The cards the picture draws face up (each card's tooltip names it)."""
    root = ET.fromstring(svg)
    return {NAMES[t.text] for t in root.iter(f"{SVG}title") if t.text in NAMES}


def _texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_every_frame_draws_the_public_cards_and_never_the_draw_pile(num_players):
    for step, env in enumerate(_frames(num_players, seed=num_players, limit=300)):
        raw = env.unwrapped
        game = raw.game
        whole = env.render()
        if step % 20 == 0:
            assert whole == svg_table(raw.rules, game, None)
        shown = _cards_drawn(whole)
        public = set(game.display) | set(game.discard[-1:]) | {game.drawn} - {-1}
        for seat in range(num_players):
            public |= set(game.hands[seat]) | {c for row in game.layouts[seat] for c in row}
        assert shown == public
        assert not shown & set(game.draw_pile)
        if step % 50 == 0:
            for seat in range(num_players):
                view = raw.render_for(f"player_{seat}", "svg")
                assert _cards_drawn(view) == shown
                assert f"you (player {seat + 1})" in _texts(view)


@pytest.mark.parametrize("num_players", [2, 5])
def test_the_draw_pile_order_changes_no_view(num_players):
    """Twin tables that differ only in the draw pile's order look the same to every seat."""
    for step, env in enumerate(_frames(num_players, seed=7)):
        if step % 40 or len(env.unwrapped.game.draw_pile) < 2:
            continue
        raw = env.unwrapped
        twin = copy.copy(raw.game)
        twin.draw_pile = raw.game.draw_pile[::-1]
        for seat in [None, *range(num_players)]:
            assert svg_table(raw.rules, twin, seat) == svg_table(raw.rules, raw.game, seat)


@pytest.mark.parametrize("num_players", [2, 3, 4, 5])
def test_a_finished_game_shows_the_result_the_legend_and_a_picture(num_players):
    for step, env in enumerate(_frames(num_players, 10 + num_players, render_mode="rgb_array")):
        if step % 10 == 0:
            ET.fromstring(env.unwrapped.draw(None, "svg"))
    raw = env.unwrapped
    assert any(env.terminations.values())
    winners = raw.rules.winners(raw.game)
    svg = raw.render_for("player_0", "svg")
    texts = _texts(svg)
    banner = [t for t in texts if t.startswith("Game over")]
    assert len(banner) == 1 and all(f"player {w + 1}" in banner[0] for w in winners)
    assert texts.count("winner") == len(winners)
    assert {*C.COLOURS, "draw pile", "black cat (15)"} <= set(texts)
    picture = env.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    root = ET.fromstring(svg)
    assert picture.shape[:2] == (int(root.get("height")), int(root.get("width")))
    assert picture.shape[1] <= 1200


def test_a_game_in_play_shows_no_banner_and_marks_the_seat_to_act():
    env = next(_frames(3, seed=0))
    texts = _texts(env.render())
    assert not [t for t in texts if t.startswith("Game over")]
    assert texts.count("to act") == 1 and "player 1 to act" in " ".join(texts)
