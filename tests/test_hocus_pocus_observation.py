"""What a Hocus Pocus observation shows: public information a player has, and nothing hidden.
Each test names the rulebook section (Hocus Pocus: The Game's rulebook) that makes it public."""

from __future__ import annotations

import numpy as np
import pytest

from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.encoding import Encoder
from tests.hocus_pocus_helpers import card, choose, table

TOE, POX, TONGUE, NEWT, OIL = C.TYPES
DECK = [card("purple", POX), card("purple", TONGUE), card("yellow", TOE), card("yellow", POX)]
# Tops no yellow or blue Oil of Boil can match: seat 0 holding those must reveal a Spell.
STUCK_PILES = [
    [card("orange", TOE)],
    [card("orange", POX)],
    [card("orange", TONGUE)],
    [card("orange", NEWT)],
    [card("purple", TOE)],
]


def field(rules, state, seat: int, name: str) -> np.ndarray:
    encoder = Encoder(rules)
    return encoder.observe(state, seat)[encoder.observation_layout[name]]


@pytest.mark.parametrize("n", range(2, 7))
def test_the_number_of_players_is_shown(n):
    """Setup: everyone sees how many players are at the table (hand sizes alone do not say it:
    a player may hold no card)."""
    rules, state = table(n=n, deck=DECK)
    assert field(rules, state, 0, "num_players").tolist() == [float(k == n - 2) for k in range(5)]


def test_the_order_of_every_cauldron_pile_is_shown():
    """Play One Ingredient Card / Spell Cards: every card is played face up onto a pile, so the
    order of each pile is public; it decides what Dance Until You Die, Book! and Take Flight
    uncover. Two piles with the same cards in another order are told apart."""
    a, b, c = card("blue", OIL), card("blue", TOE), card("orange", TOE)
    rules, state = table(piles=[[a, b, c], [], [], [], []], deck=DECK)
    buried = field(rules, state, 0, "buried_cards").reshape(C.NUM_SPACES, C.NUM_CARDS)
    assert buried[0, [b, a]].tolist() == pytest.approx([1.0, 1 / 2])
    assert np.count_nonzero(buried) == 2
    tops = field(rules, state, 0, "pile_tops").reshape(C.NUM_SPACES, C.NUM_CARDS)
    assert np.flatnonzero(tops[0]).tolist() == [c]
    _, other = table(piles=[[b, a, c], [], [], [], []], deck=DECK)
    assert not np.array_equal(Encoder(rules).observe(state, 1), Encoder(rules).observe(other, 1))


def test_a_swap_shows_both_partners_the_cards_and_nobody_else():
    """Trick Tokens, Daylight Savings Time: the two players swap chosen cards, so each knows the
    card given and the card received, and from whom; a third player learns neither."""
    mine, theirs = card("blue", TOE), card("green", NEWT)
    hands = [[mine, card("blue", POX)], [theirs, card("yellow", TONGUE)], [card("green", POX)]]
    rules, state = table(hands=hands, deck=DECK)
    third_before = Encoder(rules).observe(state, 2)
    rules.apply(state, A.SWAP)
    rules.apply(state, choose(mine))
    rules.apply(state, choose(theirs))
    for seat, gave, got, partner in ((0, mine, theirs, 1), (1, theirs, mine, 2)):
        assert np.flatnonzero(field(rules, state, seat, "handed_card")).tolist() == [gave]
        assert np.flatnonzero(field(rules, state, seat, "handed_to")).tolist() == [partner]
        assert np.flatnonzero(field(rules, state, seat, "received_card")).tolist() == [got]
        assert np.flatnonzero(field(rules, state, seat, "received_from")).tolist() == [partner]
    third = Encoder(rules).observe(state, 2)
    layout = Encoder(rules).observation_layout
    for name in ("handed_card", "handed_to", "received_card", "received_from"):
        assert not third[layout[name]].any()
    assert np.array_equal(third[layout["hand"]], third_before[layout["hand"]])


def test_a_pass_to_the_left_shows_the_giver_and_the_receiver_the_card():
    """Spell Come Little Children: each player passes a chosen card to the left; the giver knows
    where it went, the receiver where it came from."""
    hands = [[card("yellow", OIL)], [card("green", POX)], [card("blue", NEWT)]]
    rules, state = table(hands=hands, piles=STUCK_PILES, deck=DECK, spells=["Come Little Children"])
    state.tricks_used[C.SALT] = True
    rules.apply(state, A.REVEAL_SPELL)
    for seat in range(3):
        rules.apply(state, choose(hands[seat][0]))
    assert np.flatnonzero(field(rules, state, 0, "handed_card")).tolist() == hands[0]
    assert np.flatnonzero(field(rules, state, 0, "handed_to")).tolist() == [1]
    assert np.flatnonzero(field(rules, state, 1, "received_card")).tolist() == hands[0]
    assert np.flatnonzero(field(rules, state, 1, "received_from")).tolist() == [2]  # seat 0


def test_the_binx_holders_pick_is_public():
    """Special Ingredients, Binx: the holder plays with the hand face up, so the card it sets
    aside to pass (Come Little Children) or swap is seen by everyone; no other pick is."""
    hands = [[card("yellow", OIL)], [card("green", POX), card("green", NEWT)], [card("blue", NEWT)]]
    rules, state = table(hands=hands, piles=STUCK_PILES, deck=DECK, spells=["Come Little Children"])
    state.tricks_used[C.SALT] = True
    state.binx = 1
    rules.apply(state, A.REVEAL_SPELL)
    rules.apply(state, choose(hands[0][0]))
    assert not field(rules, state, 2, "binx_set_aside").any()  # seat 0 holds no Binx
    rules.apply(state, choose(card("green", NEWT)))
    seen = field(rules, state, 2, "binx_set_aside")
    assert np.flatnonzero(seen).tolist() == [card("green", NEWT)]


def test_state_holds_every_hand_over():
    """``state()`` encodes everything: the hand-overs of every seat, in absolute seats."""
    mine, theirs = card("blue", TOE), card("green", NEWT)
    rules, state = table(hands=[[mine], [theirs], []], deck=DECK)
    rules.apply(state, A.SWAP)
    rules.apply(state, choose(mine))
    rules.apply(state, choose(theirs))
    encoder = Encoder(rules)
    full = encoder.encode_state(state)
    handed = full[encoder.state_layout["handed_cards_all"]].reshape(6, C.NUM_CARDS)
    handed_to = full[encoder.state_layout["handed_to_all"]].reshape(6, 6)
    assert np.flatnonzero(handed[0]).tolist() == [mine] and handed_to[0, 1] == 1
    assert np.flatnonzero(handed[1]).tolist() == [theirs] and handed_to[1, 0] == 1
