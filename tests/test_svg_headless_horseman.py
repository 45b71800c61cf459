"""The Headless Horseman drawn as SVG: every frame parses, the render modes agree, a seat's view
hides what its text view hides (other hands, choices not yet flipped), the banner and legend."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.headless_horseman import actions as A
from cauldron.envs.headless_horseman import components as C
from cauldron.envs.headless_horseman.svg import svg_table

PLAYERS = [2, 3, 4]
GAMES = 1


def frames(env, seed: int):
    """Plays a random game, yielding before every step and once at the end."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        yield
        if terminated or truncated:
            return
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))


def shown(svg: str, card: int) -> bool:
    """Whether a card is drawn face up (its name as the card's data or tooltip)."""
    name = C.card_name(card)
    return f'data-card="{name}"' in svg or f"<title>{name}</title>" in svg


def hidden_from(game, seat: int) -> set[int]:
    """Cards in the other seats' hands, their chosen cards among them."""
    return {c for other, hand in enumerate(game.hands) if other != seat for c in hand}


def masked(game, seat: int):
    """The game with every card hidden from ``seat`` replaced by another (sizes kept)."""
    twin = copy.copy(game)
    twin.hands = [h if i == seat else [(c + 7) % 30 for c in h] for i, h in enumerate(game.hands)]
    twin.pending = {
        i: a if i == seat or a == A.PLAY_TOP else (a + 7) % 30 for i, a in game.pending.items()
    }
    return twin


@pytest.mark.parametrize("n", PLAYERS)
def test_every_frame_parses_and_each_seat_sees_only_its_own_cards(n):
    env = envs.make("headless_horseman_v1", num_players=n, render_mode="svg")
    raw = env.unwrapped
    for seed in range(GAMES):
        for _ in frames(env, seed):
            whole = env.render()
            assert whole == svg_table(raw.rules, raw.game, None)
            ET.fromstring(whole)
            assert "Covered Bridge" in whole and "Headless Horseman" in whole  # the legend
            assert all(shown(whole, c) for hand in raw.game.hands for c in hand)
            for seat, agent in enumerate(raw.possible_agents):
                view = raw.render_for(agent, "svg")
                ET.fromstring(view)
                assert all(shown(view, c) for c in raw.game.hands[seat])
                text = raw.render_for(agent)
                for card in hidden_from(raw.game, seat):
                    assert C.card_name(card) in text or not shown(view, card)
                assert view == svg_table(raw.rules, masked(raw.game, seat), seat)


@pytest.mark.parametrize("n", PLAYERS)
def test_a_finished_game_shows_its_result_on_a_banner(n):
    env = envs.make("headless_horseman_v1", num_players=n, render_mode="svg")
    outcomes = set()
    for seed in range(4):
        for _ in frames(env, seed):
            svg = env.render()
            over = env.unwrapped.game.outcome
            assert ("The team wins" in svg) == (over > 0)
            assert ("The team loses" in svg) == (over < 0)
        outcomes.add(over)
    assert outcomes - {0}


def test_a_chosen_card_is_face_down_to_the_others_until_the_row_flips():
    env = envs.make("headless_horseman_v1", num_players=3, render_mode="svg")
    env.reset(seed=3)
    raw = env.unwrapped
    card = raw.legal_actions()[0]
    env.step(card)
    assert raw.game.pending == {0: card}
    assert shown(raw.render_for("player_0", "svg"), card)
    assert shown(env.render(), card)
    assert "player 1&#x27;s choice, face down" in raw.render_for("player_1", "svg")
    assert not shown(raw.render_for("player_1", "svg"), card)
    env.step(raw.legal_actions()[0])
    env.step(raw.legal_actions()[0])
    assert not raw.game.pending
    assert shown(raw.render_for("player_1", "svg"), card)  # flipped into the row


@pytest.mark.parametrize("n", PLAYERS)
def test_rgb_array_is_a_picture_of_the_table_in_both_apis(n):
    env = envs.make("headless_horseman_v1", num_players=n, render_mode="rgb_array")
    env.reset(seed=n)
    for picture in (env.render(), env.unwrapped.render_for("player_0", "rgb_array")):
        assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
        assert picture.shape[1] <= 1200
    parallel = envs.make_parallel("headless_horseman_v1", num_players=n, render_mode="svg")
    parallel.reset(seed=n)
    parallel.step({a: parallel.game.hands[i][0] for i, a in enumerate(parallel.agents)})
    assert parallel.render() == svg_table(parallel.rules, parallel.game, None)
    picture = envs.make_parallel("headless_horseman_v1", num_players=n, render_mode="rgb_array")
    picture.reset(seed=n)
    assert picture.render().shape[2] == 3


def test_a_less_strategy_seat_plays_the_piles_top_card_face_down():
    env = envs.make("headless_horseman_v1", num_players=2, render_mode="svg", handless_seats=(1,))
    env.reset(seed=0)
    raw = env.unwrapped
    env.step(raw.legal_actions()[0])
    assert raw.legal_actions() == [A.PLAY_TOP]
    assert "plays from the pile" in env.render()
    env.step(A.PLAY_TOP)
    ET.fromstring(env.render())
