"""Voodoo Mania drawn as SVG: every frame of random play at every player count
is well-formed SVG, ``render()`` in ``svg`` mode is the whole table's drawing and ``rgb_array``
its picture, a seat's drawing shows no card its text view hides, a finished game has its banner
and every drawing its legend; actions and the text view name cards by their faces, not ids."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html import unescape

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.core.views import seen_action
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania.render import side_text
from cauldron.envs.voodoo_mania.svg import svg_table

LEGEND = "dashed row: the missing pair"
TITLE = re.compile(r"<title>(.*?)</title>")


def faces_drawn(svg: str) -> set[str]:
    """The sides drawn face up (each face's tooltip is its text: ``no <pair>: <pairs>``)."""
    return {unescape(t) for t in TITLE.findall(svg) if t.startswith("no ")}


def check_frame(env) -> None:
    base = env.unwrapped
    rules, game = base.rules, base.game
    whole = env.render()
    assert whole == svg_table(rules, game, None)
    ET.fromstring(whole)
    assert LEGEND in whole
    for seat, agent in enumerate(base.possible_agents):
        svg = base.render_for(agent, "svg")
        assert f"you (player {int(agent[7:]) + 1})" in svg
        ET.fromstring(svg)
        text = base.render_for(agent)
        drawn = faces_drawn(svg)
        assert all(face in text for face in drawn), (seat, drawn)
        top = side_text(rules, *game.voodoo[-1])
        own = {side_text(rules, card, side) for card in game.hands[seat] for side in (0, 1)}
        hidden = (
            {
                side_text(rules, card, side)
                for other, hand in enumerate(game.hands)
                if other != seat
                for card in hand
                for side in (0, 1)
            }
            - own
            - {top}
        )  # a few cards share a side with another card
        assert not any(face in text for face in hidden)  # the text view hides them ...
        assert not hidden & drawn  # ... and so does the drawing


def play(env, rng: np.random.Generator, every: int = 1, pictures: int = 1) -> None:
    """Random play to the end, checking every ``every``-th frame; ``pictures`` rgb frames."""
    step = 0
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        if step % every == 0:
            check_frame(env)
            if pictures:
                pictures -= 1
                image = env.unwrapped.render_for(agent, "rgb_array")
                assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
                assert image.shape[1] <= 1200
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        step += 1


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_every_frame_draws_and_hides_what_the_text_hides(players):
    rng = np.random.default_rng(players)
    for seed in range(2):
        env = envs.make("voodoo_mania_v1", num_players=players, render_mode="svg", max_ticks=20)
        env.reset(seed=seed)
        play(env, rng, every=3)
        final = env.render()
        assert "cut short after 20 ticks" in final and LEGEND in final


def test_a_finished_game_shows_the_winner_banner_and_rgb_array_is_its_picture():
    env = envs.make("voodoo_mania_v1", num_players=2, render_mode="rgb_array")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    base = env.unwrapped
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    assert not base.game.truncated
    svg = base.draw(None, "svg")
    assert re.search(r"player \d.* (wins|share the win) with \d+ points", svg)
    image = env.render()
    assert image.dtype == np.uint8 and image.shape[2] == 3
    assert base._repr_svg_() == svg


def test_parallel_env_renders_svg():
    env = envs.make_parallel("voodoo_mania_v1", num_players=3, render_mode="svg")
    env.reset(seed=0)
    assert "svg" in env.metadata["render_modes"] and "rgb_array" in env.metadata["render_modes"]
    ET.fromstring(env.render())


def test_actions_and_text_name_cards_by_their_faces():
    env = envs.make("voodoo_mania_v1", num_players=3, render_mode="ansi")
    env.reset(seed=5)
    base = env.unwrapped
    rules, game = base.rules, base.game
    rng = np.random.default_rng(5)
    seen_play = seen_voodoo = False
    for _ in range(300):
        agent = env.agent_selection
        if not env.agents:
            break
        hand = game.hands[game.actor]
        for action in np.flatnonzero(env.observe(agent)["action_mask"]):
            name = rules.action_name(int(action), game)
            assert "#" not in name and "slot" not in name
            if A.PLAY <= action < A.CYCLE:
                slot, side = divmod(int(action) - A.PLAY, 2)
                up = side_text(rules, hand[slot], side).split(":")[0]
                down = side_text(rules, hand[slot], 1 - side).split(":")[0]
                voodoo = rules.deck[hand[slot]][side].missing == rules.wanted(game)
                assert name == f"play {up} (other side {down})" + (": Voodoo!" if voodoo else "")
                seen_play, seen_voodoo = True, seen_voodoo or voodoo
            elif action >= A.CYCLE:
                card = hand[int(action) - A.CYCLE]
                assert name == "cycle " + " / ".join(
                    side_text(rules, card, s).split(":")[0] for s in (0, 1)
                )
            assert name in seen_action(env, int(action), None)
        text = env.render()
        assert not re.search(r"#\d", text)
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    assert seen_play and seen_voodoo
    assert rules.action_name(3) == "play slot 1 side 0"  # without a state: by slot (records)
