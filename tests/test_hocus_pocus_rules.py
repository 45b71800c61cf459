"""Scenario tests of Hocus Pocus: The Game. Each names the rulebook section it checks
(Hocus Pocus: The Game's rulebook) or the default it follows where the rulebook is silent
(RULES.md's assumptions)."""

from __future__ import annotations

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.encoding import Encoder
from cauldron.envs.hocus_pocus.phases import Phase
from tests.hocus_pocus_helpers import all_cards, card, choose, legal, play, table

TOE, POX, TONGUE, NEWT, OIL = C.TYPES

# Tops that no Oil of Boil card of yellow, green or blue can match: a "stuck" hand holds those.
STUCK_PILES = [
    [card("orange", TOE)],
    [card("orange", POX)],
    [card("orange", TONGUE)],
    [card("orange", NEWT)],
    [card("purple", TOE)],
]
STUCK_HAND = [card("yellow", OIL), card("blue", OIL)]
DECK = [card("purple", POX), card("purple", TONGUE), card("yellow", TOE), card("yellow", POX)]


def spells_of(rules, spells: list[int]) -> list[str]:
    return [rules.spell_names[s] for s in spells]


def stuck_table(spell: str, n: int = 3, salt_used: bool = True, **kwargs):
    """Seat 0 cannot play; the Spell deck's top is ``spell``; Circle of Salt already used."""
    kwargs.setdefault("hands", [STUCK_HAND] + [[]] * (n - 1))
    kwargs.setdefault("piles", STUCK_PILES)
    kwargs.setdefault("deck", DECK)
    rules, state = table(n=n, spells=[spell], **kwargs)
    state.tricks_used[C.SALT] = salt_used
    return rules, state


# ----------------------------------------------------------------------------- Setup
@pytest.mark.parametrize("n, size", [(2, 4), (3, 4), (4, 3), (5, 3), (6, 3)])
def test_setup_deals_by_player_count(n, size):
    """Setup: 4 Ingredient cards each with 2–3 players, 3 with 4–6; the rest is the deck."""
    env = envs.make("hocus_pocus_v1", num_players=n)
    env.reset(seed=0)
    state = env.unwrapped.game
    assert [len(h) for h in state.hands] == [size] * n
    assert len(state.deck) == C.NUM_CARDS - n * size
    assert len(state.spell_deck) == 13 and state.sun == 0 and state.stunned == -1
    assert state.turn == 0 and state.phase == Phase.ASK
    assert all_cards(state) == list(range(C.NUM_CARDS))


def test_setup_random_start_seat_option():
    """Setup (start player): seat 0 by default; `start_seat="random"` draws it from the seed."""
    starts = set()
    for seed in range(12):
        env = envs.make("hocus_pocus_v1", num_players=4, start_seat="random")
        env.reset(seed=seed)
        starts.add(env.agent_selection)
    assert len(starts) > 1


# ----------------------------------------------------------------------------- Ask One Question
def test_ask_question_answers_truthfully_from_every_other_player():
    """Ask One Question: each other player answers yes/no truthfully; the answers are public."""
    hands = [[card("green", TOE)], [card("green", POX)], [card("blue", POX)]]
    rules, state = table(hands=hands, phase=Phase.ASK, deck=DECK)
    assert legal(rules, state) == set(range(10))
    rules.apply(state, A.ASK + C.COLOURS.index("green"))
    green = C.COLOURS.index("green")
    assert state.questions[0, 0, green] == 1
    assert state.questions[1, 1, green] == 1 and state.questions[2, 2, green] == 1
    assert state.questions[1:, 0, green].sum() == 0  # the asker does not answer
    assert state.phase == Phase.ACT and not legal(rules, state) & set(range(10))
    obs = Encoder(rules).observe(state, 2)
    lay = Encoder(rules).observation_layout
    yes = obs[lay["answers_yes"]].reshape(6, 10)
    assert yes[(1 - 2) % 3, green] == 1  # seat 1 is two seats to seat 2's left in 3 players


def test_ask_type_question():
    """Ask One Question: a question may name an ingredient type."""
    hands = [[card("green", TOE)], [card("blue", OIL)], [card("blue", POX)]]
    rules, state = table(hands=hands, phase=Phase.ASK)
    rules.apply(state, A.ASK + 5 + C.TYPES.index(OIL))
    assert state.questions[1, 1, 5 + 4] == 1 and state.questions[2, 2, 5 + 4] == 1


# ----------------------------------------------------------------------------- Play One Ingredient
def test_play_matches_colour_or_type_and_empty_spaces_match_the_board():
    """Play One Ingredient Card: match the top's colour or type; an empty space matches its
    printed colour/type (space 0 blue/Oil of Boil, 1 orange/Dead Man's Toe, ...)."""
    c = card("blue", TOE)
    rules, state = table(hands=[[c], [], []])
    assert legal(rules, state) == {play(c, 0), play(c, 1), A.BILLY}
    state.piles[2] = [card("blue", NEWT)]
    assert play(c, 2) in legal(rules, state)


def test_play_is_mandatory_when_possible():
    """Play One Ingredient Card: if you can play a card, you must (no Spell reveal)."""
    playable = card("blue", TOE)
    rules, state = table(hands=[[playable, STUCK_HAND[0]], [], []], piles=STUCK_PILES)
    moves = legal(rules, state)
    assert A.REVEAL_SPELL not in moves
    assert {m for m in moves if A.PLAY <= m < A.CHOOSE} == {play(playable, 0), play(playable, 4)}


def test_plain_play_then_end_of_turn_draw_and_next_player():
    """Draw One Ingredient Card: after playing, draw the deck's top; the left player goes next."""
    c = card("blue", TOE)
    rules, state = table(hands=[[c], [], []], deck=DECK)
    rewards = rules.apply(state, play(c, 1))
    assert state.piles[1] == [c] and state.hands[0] == [DECK[-1]]
    assert state.turn == 1 and state.actor == 1 and state.phase == Phase.ASK
    assert rewards == (0.0, 0.0, 0.0)


def test_end_of_turn_draw_from_empty_deck_does_not_lose():
    """End of the Game: drawing the last card does not lose; later turns just skip the draw."""
    c = card("blue", TOE)
    rules, state = table(hands=[[c], [card("blue", POX)], []], deck=[])
    rules.apply(state, play(c, 1))
    assert state.phase == Phase.ASK and state.outcome == 0 and state.hands[0] == []


# ----------------------------------------------------------------------------- Failed play
def test_failed_play_reveals_spell_then_discards_and_draws():
    """Play One Ingredient Card: no legal play -> reveal a Spell, then discard at least one card
    and make a forced draw for each, then the end-of-turn draw."""
    rules, state = stuck_table("Hello, Binx")
    assert legal(rules, state) == {A.REVEAL_SPELL, A.BILLY}
    rules.apply(state, A.REVEAL_SPELL)
    assert state.phase == Phase.DISCARD and spells_of(rules, state.spell_discard) == ["Hello, Binx"]
    assert legal(rules, state) == {choose(c) for c in STUCK_HAND}  # finish needs one discard
    rules.apply(state, choose(STUCK_HAND[0]))
    assert A.FINISH in legal(rules, state)
    rules.apply(state, A.FINISH)
    assert state.discard == [STUCK_HAND[0]]
    assert sorted(state.hands[0]) == sorted([STUCK_HAND[1], DECK[-1], DECK[-2]])
    assert state.turn == 1


def test_failed_play_discarding_every_card_finishes_by_itself():
    """Play One Ingredient Card: discard as many as you want; each is replaced by a forced draw."""
    rules, state = stuck_table("Hello, Binx")
    rules.apply(state, A.REVEAL_SPELL)
    for c in STUCK_HAND:
        rules.apply(state, choose(c))
    assert state.turn == 1 and len(state.hands[0]) == 3 and len(state.deck) == 1


def test_failed_play_with_empty_hand_makes_one_forced_draw():
    """Assumption (RULES.md, stalled table): an empty hand reveals a Spell, no discard, one forced
    draw."""
    rules, state = stuck_table("Hello, Binx", hands=[[], [], []])
    assert A.REVEAL_SPELL in legal(rules, state)
    rules.apply(state, A.REVEAL_SPELL)
    assert state.hands[0] == [DECK[-1], DECK[-2]] and state.turn == 1


@pytest.mark.parametrize(
    "spell, hand_after",
    [
        ("I Put a Spell on You", [card("blue", NEWT), DECK[-1], DECK[-2]]),
        ("Come Little Children", [card("blue", NEWT), DECK[-1], DECK[-2]]),
        ("Oh, Look!", [DECK[-1], DECK[-4]]),  # the Spell's own draw, then the failed play's
    ],
)
def test_failed_play_with_empty_hand_stays_one_forced_draw_when_the_spell_gives_a_card(
    spell, hand_after
):
    """Assumption (RULES.md, stalled table): a play that fails with an empty hand reveals a Spell
    and makes one forced draw with no discard, even when the Spell puts a card in that hand; the
    end-of-turn draw follows."""
    rules, state = stuck_table(spell, hands=[[], [card("green", POX)], [card("blue", NEWT)]])
    rules.apply(state, A.REVEAL_SPELL)
    while state.phase in (Phase.SPELL_DISCARD, Phase.SPELL_PASS):
        rules.apply(state, choose(state.hands[state.actor][0]))
    assert state.turn == 1 and state.phase == Phase.ASK
    assert state.hands[0] == hand_after


def test_forced_draw_from_empty_deck_loses():
    """End of the Game: a forced draw (failed play or Spell) from an empty deck loses the game."""
    rules, state = stuck_table("Hello, Binx", deck=[])
    rules.apply(state, A.REVEAL_SPELL)
    rules.apply(state, choose(STUCK_HAND[0]))
    rewards = rules.apply(state, A.FINISH)
    assert state.phase == Phase.OVER and state.outcome == -1 and rewards == (-1.0, -1.0, -1.0)
    assert legal(rules, state) == set()


# ----------------------------------------------------------------------------- Binx
def test_binx_card_places_binx_and_shows_that_hand():
    """Special Ingredients, Binx: place Binx before any player (self included); that hand is shown
    to every player while Binx stays."""
    binx = card("orange", POX, 0)
    hands = [[binx], [card("blue", NEWT)], [card("green", TONGUE), card("yellow", OIL)]]
    rules, state = table(hands=hands, deck=DECK)
    rules.apply(state, play(binx, 2))
    assert state.phase == Phase.BINX and legal(rules, state) == {A.BINX, A.BINX + 1, A.BINX + 2}
    rules.apply(state, A.BINX + 2)
    assert state.binx == 2 and state.turn == 1
    lay = Encoder(rules).observation_layout
    seen = Encoder(rules).observe(state, 1)[lay["binx_hand"]]
    assert set(np.flatnonzero(seen)) == set(hands[2])
    assert (
        Encoder(rules).observe(state, 1)[lay["binx_holder"]][1 + 1] == 1
    )  # seat 2 is seat 1's left


def test_binx_moves_when_another_binx_card_is_played():
    """Binx stays until another Binx card is played."""
    second = card("purple", TONGUE, 0)
    rules, state = table(hands=[[second], [], []], deck=DECK)
    state.binx = 2
    rules.apply(state, play(second, 3))
    rules.apply(state, A.BINX)
    assert state.binx == 0


def test_hello_binx_removes_binx():
    """Binx leaves when a Spell removes it (Mary's Hello, Binx)."""
    rules, state = stuck_table("Hello, Binx")
    state.binx = 1
    rules.apply(state, A.REVEAL_SPELL)
    assert state.binx == -1


# ----------------------------------------------------------------------------- Spell Book & Spells
def test_spell_book_card_casts_a_spell_then_turn_ends():
    """Special Ingredients, Spell Book: playing it reveals the top Spell; then the turn ends."""
    book = card("orange", TONGUE, 0)
    rules, state = table(hands=[[book], [], []], deck=DECK, spells=["Another Glorious Morning"])
    state.tricks_used[C.SALT] = True
    rules.apply(state, play(book, 1))
    assert state.discard == [DECK[-1]]
    assert spells_of(rules, state.spell_discard) == ["Another Glorious Morning"]
    assert state.hands[0] == [DECK[-2]] and state.turn == 1


def test_stunned_caster_misses():
    """Spell Cards: a Spell cast by the stunned witch misses; no other Spell replaces it."""
    rules, state = stuck_table("Another Glorious Morning")
    state.stunned = C.SARAH
    rules.apply(state, A.REVEAL_SPELL)
    assert state.discard == [] and len(state.spell_deck) == 0
    assert spells_of(rules, state.spell_discard) == ["Another Glorious Morning"]


def test_take_flight_cannot_be_stopped_by_a_stun():
    """Spell Cards: Take Flight features all three witches; a stun never stops it; it discards
    every top, Binx included."""
    piles = [p[:] for p in STUCK_PILES]
    piles[1] = [card("orange", POX, 0)]  # a Binx card on top
    for witch in (C.SARAH, C.MARY, C.WINIFRED):
        rules, state = stuck_table("Take Flight", piles=piles)
        state.stunned = witch
        rules.apply(state, A.REVEAL_SPELL)
        assert all(not p for p in state.piles) and len(state.discard) == 5


def test_spell_deck_reshuffles_when_empty():
    """Spell Cards: when the Spell deck runs out, the discards form a new Spell deck."""
    rules, state = stuck_table("Hello, Binx")
    state.spell_discard, state.spell_deck = state.spell_deck, []
    rules.apply(state, A.REVEAL_SPELL)
    assert spells_of(rules, state.spell_discard) == ["Hello, Binx"] and state.spell_deck == []


def test_dance_until_you_die_spares_binx_tops():
    """Spell Dance Until You Die (Winifred): discard each top unless it shows Binx."""
    piles = [[card("green", TOE)] + p for p in STUCK_PILES]
    binx = card("orange", POX, 0)
    piles[1] = [binx]
    rules, state = stuck_table("Dance Until You Die", piles=piles)
    rules.apply(state, A.REVEAL_SPELL)
    assert state.piles[1] == [binx]
    assert [p[-1] for i, p in enumerate(state.piles) if i != 1] == [card("green", TOE)] * 4


@pytest.mark.parametrize(
    "spell, heights, emptied",
    [("Book!", [1, 3, 2, 3, 1], {1, 3}), ("Boys, Boys", [2, 2, 1, 1, 1], {0})],
)
def test_tallest_pile_spells(spell, heights, emptied):
    """Spells Book! / Boys, Boys: discard the top of the two / one tallest piles (ties: lower
    space first)."""
    filler = [card("green", t) for t in C.TYPES] + [card("green", t, 0) for t in C.TYPES]
    piles = [filler[i * 2 : i * 2 + h - 1] + STUCK_PILES[i] for i, h in enumerate(heights)]
    rules, state = stuck_table(spell, piles=piles)
    rules.apply(state, A.REVEAL_SPELL)
    after = [len(p) for p in state.piles]
    assert after == [h - (i in emptied) for i, h in enumerate(heights)]


@pytest.mark.parametrize(
    "spell, count", [("Another Glorious Morning", 1), ("Sistahs!", 2), ("Amok Amok Amok", 3)]
)
def test_deck_discard_spells(spell, count):
    """Spells Another Glorious Morning / Sistahs! / Amok Amok Amok: discard the deck's top 1/2/3."""
    rules, state = stuck_table(spell)
    rules.apply(state, A.REVEAL_SPELL)
    assert state.discard == DECK[::-1][:count]


def test_amok_with_a_short_deck_is_not_a_loss():
    """Amok Amok Amok discards as many as there are; it is not a forced draw."""
    rules, state = stuck_table("Amok Amok Amok", deck=DECK[:1])
    rules.apply(state, A.REVEAL_SPELL)
    assert state.outcome == 0 and state.phase == Phase.DISCARD and state.deck == []


def test_i_smell_children_stops_questions_until_round_end():
    """Spell I Smell Children (Mary, ongoing): no questions for the rest of the round."""
    rules, state = stuck_table("I Smell Children")
    rules.apply(state, A.REVEAL_SPELL)
    rules.apply(state, choose(STUCK_HAND[0]))
    rules.apply(state, A.FINISH)
    assert state.turn == 1 and state.phase == Phase.ACT and state.no_questions
    assert not legal(rules, state) & set(range(10))


def test_i_put_a_spell_on_you_passes_a_random_card_left():
    """Spell I Put a Spell on You (Winifred): each player passes one random card to the left."""
    a, b, c = STUCK_HAND[0], card("green", POX), card("blue", NEWT)
    rules, state = stuck_table("I Put a Spell on You", hands=[[a], [b], [c]])
    rules.apply(state, A.REVEAL_SPELL)
    assert state.hands == [[c], [a], [b]]


def test_oh_look_each_player_discards_and_draws_in_turn():
    """Spell Oh, Look! (Mary): from the current player clockwise, each discards a card of their
    choice and makes a forced draw (a player is asked in turn: agent_selection moves)."""
    hands = [STUCK_HAND, [card("green", POX)], [card("blue", NEWT)]]
    rules, state = stuck_table("Oh, Look!", hands=hands)
    rules.apply(state, A.REVEAL_SPELL)
    for seat in range(3):
        assert state.phase == Phase.SPELL_DISCARD and state.actor == seat
        assert legal(rules, state) == {choose(c) for c in state.hands[seat]}
        rules.apply(state, choose(hands[seat][0]))
    assert state.phase == Phase.DISCARD and state.actor == 0
    assert len(state.deck) == 1 and len(state.discard) == 3


def test_oh_look_skips_the_discard_of_an_empty_hand_but_draws():
    """Assumption (RULES.md): a player with an empty hand skips the discard part of a spell."""
    rules, state = stuck_table("Oh, Look!", hands=[STUCK_HAND, [], [card("blue", NEWT)]])
    rules.apply(state, A.REVEAL_SPELL)
    rules.apply(state, choose(STUCK_HAND[0]))
    assert state.actor == 2 and len(state.hands[1]) == 1


def test_fly_my_pretty_only_the_current_player_discards():
    """Spell Fly, My Pretty (Sarah): the current player discards a card and makes a forced draw."""
    rules, state = stuck_table("Fly, My Pretty", hands=[STUCK_HAND, [card("green", POX)], []])
    rules.apply(state, A.REVEAL_SPELL)
    assert state.actor == 0 and state.phase == Phase.SPELL_DISCARD
    rules.apply(state, choose(STUCK_HAND[1]))
    assert state.phase == Phase.DISCARD and state.hands[1] == [card("green", POX)]


def test_come_little_children_all_choose_then_all_pass():
    """Spell Come Little Children (Sarah): every player chooses a card (in turn, secretly), then
    all pass to the left at once."""
    hands = [STUCK_HAND, [card("green", POX), card("green", NEWT)], [card("blue", NEWT)]]
    rules, state = stuck_table("Come Little Children", hands=hands)
    rules.apply(state, A.REVEAL_SPELL)
    picks = [STUCK_HAND[1], card("green", NEWT), card("blue", NEWT)]
    for seat in range(3):
        assert state.phase == Phase.SPELL_PASS and state.actor == seat
        before = [list(h) for h in state.hands]
        rules.apply(state, choose(picks[seat]))
        if seat < 2:
            assert state.hands == before  # nothing moves before everyone has chosen
            later = Encoder(rules).observe(state, seat + 1)[
                Encoder(rules).observation_layout["set_aside"]
            ]
            assert not later.any()  # the next chooser does not see the earlier choice
    assert sorted(state.hands[0]) == sorted([STUCK_HAND[0], picks[2]])
    assert sorted(state.hands[1]) == sorted([card("green", POX), picks[0]])
    assert state.hands[2] == [picks[1]]


# ----------------------------------------------------------------------------- Trick tokens
def test_circle_of_salt_cancels_a_spell():
    """Trick Tokens, Circle of Salt: when a Spell is drawn, cancel it; no Spell replaces it."""
    rules, state = stuck_table("Another Glorious Morning", salt_used=False)
    rules.apply(state, A.REVEAL_SPELL)
    assert state.phase == Phase.SALT and legal(rules, state) == {A.SALT_USE, A.SALT_DECLINE}
    rules.apply(state, A.SALT_USE)
    assert state.discard == [] and state.tricks_used[C.SALT] and state.phase == Phase.DISCARD


def test_declining_circle_of_salt_lets_the_spell_resolve():
    rules, state = stuck_table("Another Glorious Morning", salt_used=False)
    rules.apply(state, A.REVEAL_SPELL)
    rules.apply(state, A.SALT_DECLINE)
    assert state.discard == [DECK[-1]] and not state.tricks_used[C.SALT]


def test_take_flight_salt_immunity_option():
    """Assumption (RULES.md): Circle of Salt cancels Take Flight by default; an option makes it
    immune."""
    rules, state = stuck_table("Take Flight", salt_used=False)
    rules.apply(state, A.REVEAL_SPELL)
    assert state.phase == Phase.SALT
    rules, state = stuck_table("Take Flight", salt_used=False, take_flight_ignores_salt=True)
    rules.apply(state, A.REVEAL_SPELL)
    assert state.phase == Phase.DISCARD and all(not p for p in state.piles)


def test_daylight_savings_time_swaps_secretly_chosen_cards():
    """Trick Tokens, Daylight Savings Time: after the question, swap one card with a chosen
    player (each chooses their own card, face down); then play as usual."""
    mine, theirs = card("blue", TOE), card("green", NEWT)
    hands = [[mine, card("blue", POX)], [theirs, card("yellow", TONGUE)], []]
    rules, state = table(hands=hands, deck=DECK)
    assert legal(rules, state) >= {A.SWAP, A.BILLY, play(mine, 0)}
    assert A.SWAP + 1 not in legal(rules, state)  # seat 2 has no card to swap
    rules.apply(state, A.SWAP)
    assert state.phase == Phase.SWAP_OWN and state.actor == 0
    rules.apply(state, choose(mine))
    assert state.phase == Phase.SWAP_PARTNER and state.actor == 1
    assert (
        not Encoder(rules).observe(state, 1)[Encoder(rules).observation_layout["set_aside"]].any()
    )
    assert legal(rules, state) == {choose(c) for c in hands[1]}
    rules.apply(state, choose(theirs))
    assert theirs in state.hands[0] and mine in state.hands[1]
    assert state.phase == Phase.ACT and state.actor == 0
    assert not legal(rules, state) & {A.BILLY, A.BURN, A.SWAP}  # one trick per turn


def test_billy_butcherson_skips_play_and_draw():
    """Trick Tokens, Billy Butcherson: no play this turn and no end-of-turn draw."""
    rules, state = table(hands=[[card("blue", TOE)], [], []], deck=DECK)
    rules.apply(state, A.BILLY)
    assert state.hands[0] == [card("blue", TOE)] and len(state.deck) == 4 and state.turn == 1


def test_burning_rain_discards_three_draws_three_then_plays():
    """Trick Tokens, Burning Rain of Death: discard three cards, draw three, then play."""
    hand = [card("blue", TOE), card("blue", POX), card("blue", NEWT)]
    rules, state = table(hands=[hand, [], []], deck=DECK)
    rules.apply(state, A.BURN)
    for c in hand:
        assert state.phase == Phase.BURN
        rules.apply(state, choose(c))
    assert state.phase == Phase.ACT and state.hands[0] == DECK[::-1][:3]
    assert state.discard == hand
    rules2, short = table(hands=[hand[:2], [], []], deck=DECK)
    assert A.BURN not in legal(rules2, short)  # needs three cards


def test_each_trick_once_per_game():
    """Trick Tokens: the team can use each trick once per game."""
    rules, state = table(hands=[[card("blue", TOE)], [card("blue", POX)], []], deck=DECK)
    rules.apply(state, A.BILLY)
    rules.apply(state, A.ASK)
    assert A.BILLY not in legal(rules, state)


def _burn_then_stuck(**options):
    """Seat 0 burns three cards (Burning Rain of Death), is still stuck and reveals a Spell."""
    rules, state = stuck_table(
        "Another Glorious Morning",
        salt_used=False,
        hands=[STUCK_HAND + [card("green", OIL)], [], []],
        **options,
    )
    rules.apply(state, A.BURN)
    for c in STUCK_HAND + [card("green", OIL)]:
        rules.apply(state, choose(c))
    state.hands[0] = [card("yellow", OIL, 0)]  # still stuck after the redraw
    rules.apply(state, A.REVEAL_SPELL)
    return rules, state


def test_no_salt_after_another_trick_this_turn_by_default():
    """Trick Tokens ("On your turn you can choose to use one of these tokens"): by default at
    most one trick per turn, so no Circle of Salt after Burning Rain led to a failed play."""
    rules, state = _burn_then_stuck()
    assert state.phase == Phase.DISCARD and state.discard[-1] == DECK[0]


def test_salt_after_trick_option_offers_salt_on_a_spell_after_another_trick():
    """Trick Tokens, Circle of Salt ("When a Spell card is drawn, you can use this trick"):
    with `salt_after_trick` the reaction is offered even after another trick this turn."""
    rules, state = _burn_then_stuck(salt_after_trick=True)
    assert state.phase == Phase.SALT and legal(rules, state) == {A.SALT_USE, A.SALT_DECLINE}
    rules.apply(state, A.SALT_USE)
    assert state.tricks_used[C.SALT] and state.phase == Phase.DISCARD
    assert state.discard[-1] != DECK[0]  # the Spell was cancelled


# ----------------------------------------------------------------------------- Stunning a witch
def _stun_table(tops: list[int], **kwargs):
    piles = [[c] for c in tops[:4]] + [[]]
    return table(piles=piles, **kwargs)


def test_same_colour_stuns_sarah_and_ends_the_round():
    """Stunning A Witch: five tops of one colour stun Sarah. End of Round: the player draws, the
    Stun token and Sun move, ongoing spells end, the Cauldron and discards are purged keeping only
    Binx and Spell Book cards, Binx returns, the left player starts the next round."""
    greens = [card("green", t) for t in (OIL, TOE, POX, TONGUE)]
    last = card("green", NEWT)
    book, discarded_book = card("green", TOE, 0), card("blue", POX, 0)
    piles = [[greens[0]], [book, greens[1]], [greens[2]], [greens[3]], []]  # a Spell Book under
    rules, state = table(piles=piles, hands=[[last], [], []], deck=DECK)
    state.removed.remove(discarded_book)
    state.discard = [discarded_book]
    state.binx, state.no_questions = 2, True
    state.questions[0, 0, 0] = 1
    total = len(state.deck)
    rules.apply(state, play(last, 4))
    assert state.stunned == C.SARAH and state.sun == 1 and state.stuns == 1
    assert state.hands[0] == [DECK[-1]]
    assert sorted(state.deck) == sorted(DECK[:-1] + [book, discarded_book])
    assert len(state.deck) == total - 1 + 2
    assert all(not p for p in state.piles) and state.discard == []
    assert set(greens + [last]) <= set(state.removed)
    assert state.binx == -1 and not state.no_questions and not state.questions.any()
    assert state.turn == 1 and state.phase == Phase.ASK
    assert all_cards(state) == list(range(C.NUM_CARDS))


def test_same_type_stuns_mary_and_ignores_the_stunning_cards_icon():
    """Stunning A Witch: five tops of one type stun Mary; the icon of the stunning card (here a
    Spell Book) is ignored."""
    newts = [card(c, NEWT) for c in ("orange", "purple", "yellow", "green")]
    book = card("orange", NEWT, 0)
    rules, state = _stun_table(newts, hands=[[book], [], []], deck=DECK)
    spells = list(state.spell_deck)
    rules.apply(state, play(book, 4))
    assert state.stunned == C.MARY and state.spell_deck == spells and state.spell_discard == []


def test_one_type_five_colours_lets_the_player_choose_mary_or_winifred():
    """Stunning A Witch and RULES.md's assumptions: one type in five colours qualifies Mary and
    Winifred; the current player chooses."""
    newts = [card(c, NEWT) for c in ("orange", "purple", "yellow", "green")]
    last = card("blue", NEWT)
    for action, witch in ((A.STUN_WINIFRED, C.WINIFRED), (A.STUN_MARY, C.MARY)):
        rules, state = _stun_table(newts, hands=[[last], [], []], deck=DECK)
        rules.apply(state, play(last, 4))
        assert state.phase == Phase.STUN_CHOICE and state.actor == 0
        assert legal(rules, state) == {A.STUN_MARY, A.STUN_WINIFRED}
        rules.apply(state, action)
        assert state.stunned == witch and state.turn == 1


def test_spell_that_changes_the_cauldron_can_stun():
    """Stunning A Witch: also check after a Spell that changed the Cauldron."""
    unders = [card("green", t) for t in (OIL, TOE, POX, TONGUE, NEWT)]
    tops = [card("purple", t) for t in (OIL, TOE, POX)] + [card("orange", TONGUE)]
    piles = [[u, t] for u, t in zip(unders[:4], tops, strict=True)] + [[unders[4]]]
    book = card("purple", NEWT, 0)
    rules, state = table(
        piles=piles, hands=[[book], [], []], deck=DECK, spells=["Dance Until You Die"]
    )
    state.tricks_used[C.SALT] = True
    rules.apply(state, play(book, 4))
    assert state.stunned == C.SARAH and state.sun == 1 and state.turn == 1


def test_stun_reward_option_and_win_at_sunrise():
    """End of the Game: the Sun at the top of the track wins; `stun_reward` shapes each stun."""
    greens = [card("green", t) for t in (OIL, TOE, POX, TONGUE)]
    last = card("green", NEWT)
    rules, state = _stun_table(greens, hands=[[last], [], []], deck=DECK, stun_reward=0.25)
    state.sun = 2
    rewards = rules.apply(state, play(last, 4))
    assert state.phase == Phase.OVER and state.outcome == 1
    assert rewards == (1.25, 1.25, 1.25)


def test_match_reward_option_pays_the_change_in_matched_tops():
    """`match_reward` (a shaping option, not a rule): the change of the most tops sharing a colour
    or a type, / 5; the stunning play counts as all five matched before the Cauldron is purged."""
    greens = [card("green", t) for t in (OIL, TOE, POX)]
    other = card("purple", TONGUE)
    last = card("green", NEWT)
    rules, state = _stun_table([*greens, other], hands=[[last], [], []], deck=DECK)
    assert rules.apply(state, play(last, 4)) == (0.0, 0.0, 0.0)  # the option is off by default
    rules, state = _stun_table(
        [*greens, other], hands=[[last], [], []], deck=DECK, match_reward=1.0
    )
    assert rules.matched(state) == 3
    assert rules.apply(state, play(last, 4)) == pytest.approx((0.2, 0.2, 0.2))
    assert rules.matched(state) == 4 and state.stuns == 0
    rules, state = _stun_table(
        [*greens, card("green", TONGUE)], hands=[[last], [], []], deck=DECK, match_reward=1.0
    )
    rewards = rules.apply(state, play(last, 4))
    assert state.stuns == 1 and rules.matched(state) == 0
    assert rewards == pytest.approx((0.2, 0.2, 0.2))


def test_sunrise_steps_option():
    greens = [card("green", t) for t in (OIL, TOE, POX, TONGUE)]
    last = card("green", NEWT)
    rules, state = _stun_table(greens, hands=[[last], [], []], deck=DECK, sunrise_steps=1)
    rules.apply(state, play(last, 4))
    assert state.outcome == 1


# ----------------------------------------------------------------------------- Hidden information
def test_observation_hides_other_hands():
    """Setup: players keep their cards secret. Moving cards between two other hidden hands does not
    change a player's observation; Binx's hand is the only other hand shown."""
    hands = [
        [card("blue", TOE)],
        [card("green", POX), card("green", NEWT)],
        [card("blue", NEWT), card("yellow", OIL)],
    ]
    rules, state = table(hands=hands, deck=DECK)
    before = Encoder(rules).observe(state, 0)
    state.hands[1], state.hands[2] = [hands[2][0], hands[1][1]], [hands[1][0], hands[2][1]]
    assert np.array_equal(before, Encoder(rules).observe(state, 0))
    assert not np.array_equal(before, Encoder(rules).observe(state, 1))


# ----------------------------------------------------------------------------- Env layer
def test_partner_decision_moves_agent_selection():
    """Daylight Savings Time through the AEC env: the partner's choice is the partner's step."""
    env = envs.make("hocus_pocus_v1", num_players=3)
    env.reset(seed=0)
    env.step(A.ASK)
    assert env.agent_selection == "player_0" and A.SWAP in env.unwrapped.legal_actions()
    env.step(A.SWAP)  # partner: offset 1 = player_1
    env.step(env.unwrapped.legal_actions()[0])
    assert env.agent_selection == "player_1"
    assert (
        env.observe("player_1")["observation"][env.unwrapped.encoder.observation_layout["phase"]][
            Phase.SWAP_PARTNER
        ]
        == 1
    )


def test_render_hides_other_hands_from_a_player_but_not_from_a_spectator():
    """Rendering: a player sees only their own cards (and Binx's); a spectator sees all."""
    env = envs.make("hocus_pocus_v1", num_players=3, render_mode="ansi")
    env.reset(seed=0)
    game = env.unwrapped.game
    mine = env.unwrapped.render_for("player_0")
    spectator = env.render()
    hidden = "player_1: " + "?" * len(game.hands[1])
    assert hidden in mine and hidden not in spectator and "Cauldron:" in spectator
