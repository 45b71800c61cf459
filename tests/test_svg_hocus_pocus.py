"""Hocus Pocus drawn as SVG: every frame of random play parses, the render modes give that
drawing, a seat's view hides exactly the hands its text view hides, and the legend and the
end-of-game banner are drawn."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.hocus_pocus.svg import svg_table

SVG = "{http://www.w3.org/2000/svg}"
PLAYERS = range(2, 7)


def _games(num_players: int, seeds: range, render_mode: str = "svg"):
    """Every frame (the env before each step, then the finished game) of random games."""
    for seed in seeds:
        env = envs.make("hocus_pocus_v1", num_players=num_players, render_mode=render_mode)
        env.reset(seed=seed)
        base = env.unwrapped
        rng = np.random.default_rng(seed)
        while True:
            yield base
            if all(base.terminations.values()) or all(base.truncations.values()):
                break
            env.step(int(rng.choice(base.legal_actions())))


def _hidden_seats(base, seat: int) -> list[int]:
    """The seats whose hand ``seat``'s text view hides (a row of '?')."""
    text = base.render_for(f"player_{seat}")
    return [
        other
        for other, hand in enumerate(base.game.hands)
        if hand and f"player_{other}: {'?' * len(hand)}" in text.replace(" <turn>", "")
    ]


def _twin(base, seat: int, hidden: list[int]):
    """The game with every card of the ``hidden`` hands swapped for a card of the deck (and
    a card set aside by those seats with it), or None when the deck is too small."""
    game = copy.deepcopy(base.game)
    wanted = sum(len(game.hands[o]) for o in hidden)
    if wanted == 0 or len(game.deck) < wanted:
        return None
    for other in hidden:
        swap = {card: game.deck.pop(0) for card in game.hands[other]}
        game.deck.extend(swap)
        game.hands[other] = [swap[c] for c in game.hands[other]]
        if other in game.set_aside:
            game.set_aside[other] = swap[game.set_aside[other]]
    return game


@pytest.mark.parametrize("num_players", PLAYERS)
def test_every_frame_parses_and_each_seat_sees_only_what_its_text_view_shows(num_players):
    twins = 0
    for frame, base in enumerate(_games(num_players, range(1))):
        whole = base.render()
        assert whole == svg_table(base.rules, base.game, None)
        ET.fromstring(whole)
        for cards in base.game.hands:
            assert all(f'data-card="{c}"' in whole for c in cards)
        for seat in range(num_players) if frame % 3 == 0 else ():
            view = base.render_for(f"player_{seat}", "svg")
            ET.fromstring(view)
            hidden = _hidden_seats(base, seat)
            assert seat not in hidden and base.game.binx not in hidden
            for other in hidden:
                assert not any(f'data-card="{c}"' in view for c in base.game.hands[other])
            for other, cards in enumerate(base.game.hands):
                if other not in hidden:
                    assert all(f'data-card="{c}"' in view for c in cards)
            twin = _twin(base, seat, hidden)
            if twin is not None:
                twins += 1
                assert svg_table(base.rules, twin, seat) == view
    assert twins > 5
    assert base._repr_svg_() == base.render()


@pytest.mark.parametrize("num_players", PLAYERS)
def test_rgb_array_is_a_picture_of_the_table_and_of_a_seat(num_players):
    env = envs.make("hocus_pocus_v1", num_players=num_players, render_mode="rgb_array")
    env.reset(seed=num_players)
    pictures = [env.render()]
    if num_players == 6:
        pictures.append(env.unwrapped.render_for("player_1", "rgb_array"))
    for picture in pictures:
        assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
        assert picture.shape[1] <= 1200 and picture.shape[0] > 300


def test_the_legend_is_drawn_and_a_finished_game_shows_its_result():
    drawings = []
    for base in _games(4, range(1)):
        drawings.append(base.render())
    texts = {t.text for t in ET.fromstring(drawings[0]).iter(f"{SVG}text")}
    assert {"orange", "blue", "hidden card", "seat to act"} <= texts
    assert not any(t.startswith("The team") for t in texts)
    assert base.game.outcome == -1
    assert "The team loses: the deck ran out" in drawings[-1]
    won = copy.deepcopy(base.game)
    won.outcome, won.stuns = 1, 3
    banner = "The team wins: the Sun is up (3/3 witches stunned)"
    assert banner in svg_table(base.rules, won, None)
