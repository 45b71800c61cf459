"""Scenario tests of Hexenflug. Each names the rulebook section it checks
(Hexenflug's rulebook) or the default it follows where the rulebook is silent (RULES.md's
assumptions)."""

from __future__ import annotations

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.hexenflug import actions as A
from cauldron.envs.hexenflug import components as C
from cauldron.envs.hexenflug.options import HexenflugOptions
from cauldron.envs.hexenflug.phases import Phase
from cauldron.envs.hexenflug.rules import HexenflugRules

BLACK, GREEN, ORANGE, PINK, WHITE = range(5)


def W(colour: int, value: int) -> int:
    """The Witch card of ``colour`` and ``value``."""
    return colour * 15 + value - 1


def table(
    n=3,
    hands=None,
    layouts=None,
    display=(),
    pile=(),
    discard=(),
    books=None,
    turn=0,
    phase=Phase.FLY,
    drawn=-1,
    **options,
):
    """Rules and a state with exactly these cards; any card not placed lies in the discard pile
    unless ``discard`` is given (then the rest go to the bottom of the draw pile)."""
    rules = HexenflugRules(n, HexenflugOptions(**options))
    state = rules.new_game(np.random.default_rng(0), turn)
    state.hands = [list(h) for h in (hands or [[] for _ in range(n)])]
    state.layouts = [[[] for _ in range(5)] for _ in range(n)]
    for seat, rows in (layouts or {}).items():
        for card in rows:
            state.layouts[seat][C.colour_of(card)].append(card)
    state.display = list(display)
    state.draw_pile = list(pile)
    state.discard = list(discard)
    placed = {c for h in state.hands for c in h} | set(state.display) | set(state.draw_pile)
    placed |= {c for lay in state.layouts for row in lay for c in row} | set(state.discard)
    placed |= {drawn} if drawn >= 0 else set()
    rest = [c for c in range(C.NUM_CARDS) if c not in placed]
    if discard:
        state.draw_pile = rest + state.draw_pile
    else:
        state.discard = rest
    if books:
        for seat, owned in books.items():
            state.books[seat] = list(owned)
            for colour, b in enumerate(owned):
                state.supply[colour] -= b
    state.turn = state.actor = turn
    state.phase, state.drawn = phase, drawn
    return rules, state


def legal(rules, state) -> set[int]:
    return set(np.flatnonzero(rules.legal_mask(state)).tolist())


# ----------------------------------------------------------------------------- Setup
@pytest.mark.parametrize("n, per_colour", [(2, 7), (3, 8), (4, 9), (5, 9)])
def test_setup_removes_spellbooks_by_player_count(n, per_colour):
    """Setup: 2 players remove two Spellbooks of each colour, 3 players one, 4–5 none."""
    env = envs.make("hexenflug_v1", num_players=n)
    env.reset(seed=0)
    state = env.unwrapped.game
    assert state.supply == [per_colour] * 5
    assert sorted(state.draw_pile) == list(range(75)) and not state.display and not state.discard
    assert sum(state.supply) + state.removed_books == C.TOTAL_BOOKS
    assert state.turn == 0 and state.phase == Phase.FLY


def test_books_per_colour_option():
    rules, state = table(books_per_colour=5)
    assert state.supply == [5] * 5 and state.removed_books == 20


# ----------------------------------------------------------------------------- Flying
def test_draw_then_place_in_ascending_row():
    """Flying / Your Layout: draw one card; place it when it is higher than its row's top."""
    rules, state = table(layouts={0: [W(GREEN, 4)]}, pile=[W(GREEN, 2), W(GREEN, 9)])
    rules.apply(state, A.DRAW)
    assert state.phase == Phase.DRAWN and state.drawn == W(GREEN, 9)
    assert legal(rules, state) == {A.PLACE, A.DISPLAY}
    rules.apply(state, A.PLACE)
    assert state.layouts[0][GREEN] == [W(GREEN, 4), W(GREEN, 9)] and state.phase == Phase.FLY
    rules.apply(state, A.DRAW)
    assert A.PLACE not in legal(rules, state)  # 2 may not go on 9


def test_display_only_once_per_turn_then_crash_when_unplaceable():
    """After Drawing a Card: add to the display only once per turn; crash only when already
    displayed and the card cannot be placed. Crash: the card and that colour's row are discarded,
    the turn ends."""
    pile = [W(PINK, 1), W(GREEN, 3), W(GREEN, 12)]
    rules, state = table(layouts={0: [W(GREEN, 5), W(PINK, 7)]}, pile=pile, discard=[W(BLACK, 1)])
    rules.apply(state, A.DRAW)
    rules.apply(state, A.DISPLAY)
    assert state.display == [W(GREEN, 12)] and state.displayed
    rules.apply(state, A.DRAW)  # green 3 cannot go on green 5
    assert legal(rules, state) == {A.CRASH}
    rules.apply(state, A.CRASH)
    assert state.layouts[0][GREEN] == [] and state.layouts[0][PINK] == [W(PINK, 7)]
    assert state.discard[-2:] == [W(GREEN, 5), W(GREEN, 3)]
    assert state.turn == 1 and state.phase == Phase.FLY and not state.displayed


def test_no_crash_option_when_the_card_can_be_placed():
    rules, state = table(pile=[W(GREEN, 3)], phase=Phase.FLY)
    state.displayed = True
    rules.apply(state, A.DRAW)
    assert legal(rules, state) == {A.PLACE}


def test_beginner_crash_rule_keeps_the_card_without_a_spellbook():
    """Crash, beginner rule (option): with no Spellbook of that colour keep the drawn card."""
    lay = {0: [W(GREEN, 5)]}
    rules, state = table(layouts=lay, pile=[W(GREEN, 3)], beginner_crash_rule=True)
    state.displayed = True
    rules.apply(state, A.DRAW)
    assert legal(rules, state) == {A.CRASH, A.CRASH_KEEP}
    rules.apply(state, A.CRASH_KEEP)
    assert state.hands[0] == [W(GREEN, 3)] and state.layouts[0][GREEN] == []
    rules, state = table(
        layouts=lay, pile=[W(GREEN, 3)], beginner_crash_rule=True, books={0: [0, 1, 0, 0, 0]}
    )
    state.displayed = True
    rules.apply(state, A.DRAW)
    assert legal(rules, state) == {A.CRASH}
    rules, state = table(layouts=lay, pile=[W(GREEN, 3)])
    state.displayed = True
    rules.apply(state, A.DRAW)
    assert legal(rules, state) == {A.CRASH}


def test_take_display_cards_but_not_own_added_this_turn():
    """Flying: take any number of display cards into the layout, except cards you added this
    turn; placement rules apply."""
    display = [W(WHITE, 6), W(BLACK, 2), W(PINK, 3)]
    rules, state = table(layouts={0: [W(PINK, 8)]}, display=display, pile=[W(ORANGE, 4)])
    assert legal(rules, state) == {A.TAKE + W(WHITE, 6), A.TAKE + W(BLACK, 2), A.DRAW}
    rules.apply(state, A.TAKE + W(WHITE, 6))
    rules.apply(state, A.TAKE + W(BLACK, 2))
    assert state.layouts[0][WHITE] == [W(WHITE, 6)] and state.display == [W(PINK, 3)]
    rules.apply(state, A.DRAW)
    rules.apply(state, A.DISPLAY)
    assert A.TAKE + W(ORANGE, 4) not in legal(rules, state)
    rules.apply(state, A.LAND + BLACK)  # hard landing: fewest cards (black 1, white 1, pink 1)
    rules.apply(state, A.SKIP)
    assert A.TAKE + W(ORANGE, 4) in legal(rules, state)  # the next player may take it


# ----------------------------------------------------------------------------- Landing
def test_soft_landing_any_colour_and_layout_persists():
    """Landing (soft): no display this turn, choose any layout colour; the rest of the layout
    stays for later turns."""
    lay = {0: [W(GREEN, 2), W(GREEN, 5), W(PINK, 1)]}
    rules, state = table(layouts=lay, pile=[W(WHITE, 1)])
    state.drew = True
    assert {A.LAND + GREEN, A.LAND + PINK} <= legal(rules, state)
    rules.apply(state, A.LAND + GREEN)
    assert state.hands[0] == [W(GREEN, 2), W(GREEN, 5)] and state.phase == Phase.EXAMINE
    rules.apply(state, A.SKIP)
    assert state.layouts[0][PINK] == [W(PINK, 1)] and state.turn == 1


def test_hard_landing_takes_a_smallest_colour():
    """Landing (hard): after displaying, take the colour with fewest cards; ties choose."""
    lay = {0: [W(GREEN, 2), W(GREEN, 5), W(PINK, 1), W(WHITE, 4)]}
    rules, state = table(layouts=lay)
    state.displayed = state.drew = True
    lands = {a for a in legal(rules, state) if A.LAND <= a < A.EXAMINE}
    assert lands == {A.LAND + PINK, A.LAND + WHITE}


def test_no_landing_with_an_empty_layout():
    rules, state = table(pile=[W(WHITE, 1)])
    state.drew = True
    assert legal(rules, state) == {A.DRAW}


def test_landing_only_instead_of_drawing_again():
    """Landing: "Instead of continuing to draw, you may choose to land" (Turn Overview: "land
    instead of drawing again"): no landing before the turn's first draw, not even after taking a
    display card; after one draw (and placing it) every soft landing is offered; the next player
    starts again without it."""
    lay = {0: [W(GREEN, 2), W(PINK, 1)], 1: [W(WHITE, 3)]}
    pile = [W(ORANGE, 9), W(GREEN, 7)]
    rules, state = table(layouts=lay, display=[W(BLACK, 4)], pile=pile)
    assert legal(rules, state) == {A.TAKE + W(BLACK, 4), A.DRAW}
    rules.apply(state, A.TAKE + W(BLACK, 4))
    assert legal(rules, state) == {A.DRAW}
    rules.apply(state, A.DRAW)
    rules.apply(state, A.PLACE)
    lands = {A.LAND + c for c in (BLACK, GREEN, PINK)}
    assert legal(rules, state) == {A.DRAW} | lands
    rules.apply(state, A.LAND + GREEN)
    rules.apply(state, A.SKIP)
    assert state.turn == 1 and legal(rules, state) == {A.DRAW}


# ----------------------------------------------------------------------------- Examination
@pytest.mark.parametrize("count, earned", [(3, 1), (4, 2), (5, 3)])
def test_examination_cards_to_spellbooks(count, earned):
    """Examination: discard 3/4/5 cards of one colour, take 1/2/3 Spellbooks of it."""
    hand = [W(ORANGE, v) for v in range(1, count + 1)]
    rules, state = table(hands=[hand, [], []], phase=Phase.EXAMINE)
    rules.apply(state, A.EXAMINE + ORANGE)
    for card in hand:
        assert A.FINISH not in legal(rules, state) or len(state.exam_cards) >= 3
        rules.apply(state, A.CHOOSE + card)
    rules.apply(state, A.FINISH)
    assert state.books[0][ORANGE] == earned and state.supply[ORANGE] == 8 - earned
    assert state.hands[0] == [] and state.discard[-count:] == hand and state.turn == 1


def test_examination_takes_only_the_spellbooks_left():
    """Assumption (RULES.md): when fewer books are left than earned, take those left."""
    hand = [W(ORANGE, v) for v in range(1, 6)]
    rules, state = table(hands=[hand, [], []], phase=Phase.EXAMINE, books={1: [0, 0, 7, 0, 0]})
    rules.apply(state, A.EXAMINE + ORANGE)
    for card in hand:
        rules.apply(state, A.CHOOSE + card)
    rules.apply(state, A.FINISH)
    assert state.books[0][ORANGE] == 1 and state.supply[ORANGE] == 0


def test_jokers_need_a_spellbook_a_higher_value_and_distinct_colours():
    """Using Jokers: only colours with a Spellbook owned, each higher than every examined card,
    each colour once; at least one examined-colour card; jokers count towards 3–5."""
    hand = [W(ORANGE, 3), W(ORANGE, 6), W(PINK, 9), W(PINK, 10), W(WHITE, 4), W(GREEN, 12)]
    rules, state = table(hands=[hand, [], []], phase=Phase.EXAMINE, books={0: [0, 1, 0, 1, 1]})
    assert A.EXAMINE + ORANGE in legal(rules, state)
    assert A.EXAMINE + BLACK not in legal(rules, state)
    rules.apply(state, A.EXAMINE + ORANGE)
    rules.apply(state, A.CHOOSE + W(ORANGE, 6))
    options = {a - A.CHOOSE for a in legal(rules, state) if A.CHOOSE <= a < A.FINISH}
    assert W(WHITE, 4) not in options  # 4 is not above 6
    assert {W(ORANGE, 3), W(PINK, 9), W(PINK, 10), W(GREEN, 12)} == options
    rules.apply(state, A.CHOOSE + W(PINK, 9))
    options = {a - A.CHOOSE for a in legal(rules, state) if A.CHOOSE <= a < A.FINISH}
    assert W(PINK, 10) not in options  # pink is already a joker
    assert A.FINISH not in legal(rules, state)  # two cards are not enough
    rules.apply(state, A.CHOOSE + W(GREEN, 12))
    rules.apply(state, A.FINISH)
    assert state.books[0][ORANGE] == 1 and sorted(state.hands[0]) == sorted(
        [W(ORANGE, 3), W(PINK, 10), W(WHITE, 4)]
    )


def test_examined_card_may_not_exceed_a_chosen_joker():
    hand = [W(ORANGE, 3), W(ORANGE, 11), W(PINK, 9), W(WHITE, 10)]
    rules, state = table(hands=[hand, [], []], phase=Phase.EXAMINE, books={0: [0, 0, 0, 1, 1]})
    rules.apply(state, A.EXAMINE + ORANGE)
    rules.apply(state, A.CHOOSE + W(PINK, 9))
    assert A.CHOOSE + W(ORANGE, 11) not in legal(rules, state)
    assert A.CHOOSE + W(ORANGE, 3) in legal(rules, state)


def test_no_examination_after_a_crash():
    """Examination: you cannot examine after a crash (the turn simply ends)."""
    rules, state = table(
        hands=[[W(ORANGE, v) for v in (1, 2, 3)], [], []],
        layouts={0: [W(GREEN, 5)]},
        pile=[W(GREEN, 3)],
    )
    state.displayed = True
    rules.apply(state, A.DRAW)
    rules.apply(state, A.CRASH)
    assert state.turn == 1 and state.phase == Phase.FLY and state.books[0] == [0] * 5


# ----------------------------------------------------------------------------- Black cats
def test_black_cat_makes_big_hands_discard_to_five_then_resolves():
    """Black Cat Cards: every player with six or more cards discards down to five, each choosing
    their own cards, from the current player clockwise; then the cat is resolved normally."""
    big = [W(ORANGE, v) for v in range(1, 7)]
    bigger = [W(PINK, v) for v in range(1, 8)]
    rules, state = table(hands=[big, [W(BLACK, 1)], bigger], turn=1, pile=[W(WHITE, 15)])
    rules.apply(state, A.DRAW)
    assert state.phase == Phase.CAT_DISCARD and state.actor == 2
    assert legal(rules, state) == {A.CHOOSE + c for c in bigger}
    rules.apply(state, A.CHOOSE + bigger[0])
    rules.apply(state, A.CHOOSE + bigger[1])
    assert state.actor == 0
    rules.apply(state, A.CHOOSE + big[3])
    assert [len(h) for h in state.hands] == [5, 1, 5]
    assert state.phase == Phase.DRAWN and state.actor == 1 and state.drawn == W(WHITE, 15)
    assert legal(rules, state) == {A.PLACE, A.DISPLAY}


# ----------------------------------------------------------------------------- Depletion and end
def test_draw_pile_depletion_reshuffles_the_discards():
    """Draw Pile Depletion: when the draw pile runs out, the discard pile becomes the new one."""
    rules, state = table(pile=[W(GREEN, 2)])
    discards = sorted(state.discard)
    rules.apply(state, A.DRAW)
    assert sorted(state.draw_pile) == discards and state.discard == []
    assert state.phase == Phase.DRAWN


def test_game_ends_when_draw_and_discard_piles_are_both_empty():
    """End of the Game: if both piles run out, the game ends immediately."""
    everything = [c for c in range(75) if c != W(GREEN, 2)]
    rules, state = table(hands=[everything, [], []], pile=[W(GREEN, 2)])
    rewards = rules.apply(state, A.DRAW)
    assert state.phase == Phase.OVER and rewards == (1.0, -1.0, -1.0)  # tie: most cards wins


@pytest.mark.parametrize(
    "n, exhausted_before, ends", [(3, 1, True), (2, 0, False), (4, 1, False), (5, 2, True)]
)
def test_game_ends_when_enough_colours_are_exhausted(n, exhausted_before, ends):
    """End of the Game: 2–3 players end with two colours exhausted, 4–5 players with three."""
    hand = [W(ORANGE, v) for v in range(1, 6)]
    rules, state = table(n=n, hands=[hand] + [[]] * (n - 1), phase=Phase.EXAMINE)
    for colour in range(exhausted_before):
        state.books[1][colour] = state.supply[colour]
        state.supply[colour] = 0
    state.supply[ORANGE] = 3
    rules.apply(state, A.EXAMINE + ORANGE)
    for card in hand:
        rules.apply(state, A.CHOOSE + card)
    rules.apply(state, A.FINISH)
    assert (state.phase == Phase.OVER) == ends


def test_scoring_with_set_bonus_and_tie_break_by_hand_size():
    """Scoring: one point per Spellbook, +1 per complete set; ties go to most cards in hand."""
    rules, state = table(
        hands=[[W(BLACK, 1)], [W(BLACK, 2), W(BLACK, 3)], []],
        books={0: [2, 1, 1, 1, 1], 1: [3, 3, 0, 0, 0], 2: [1, 1, 1, 1, 0]},
    )
    assert rules.scores(state) == [7, 6, 4]
    state.books[1] = [3, 3, 1, 0, 0]
    assert rules.scores(state) == [7, 7, 4] and rules.winners(state) == [1]
    state.hands[0].append(W(BLACK, 4))
    assert rules.winners(state) == [0, 1]


def test_score_margin_reward_option():
    everything = [c for c in range(75) if c != W(GREEN, 2)]
    rules, state = table(
        hands=[everything, [], []],
        pile=[W(GREEN, 2)],
        books={0: [1, 0, 0, 0, 0], 1: [3, 0, 0, 0, 0]},
        reward="score_margin",
    )
    rewards = rules.apply(state, A.DRAW)
    assert rewards == (-2.0, 2.0, -3.0)


def test_env_reports_scores_and_winners_at_the_end():
    env = envs.make("hexenflug_v1", num_players=2)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert "winners" in info and len(info["scores"]) == 2
