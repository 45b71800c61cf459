"""Scenario tests of Voodoo Mania. Each names the rulebook section it checks
(Voodoo Mania's rulebook) or the default it follows where the rulebook is silent (RULES.md's
assumptions)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C
from cauldron.envs.voodoo_mania.encoding import Encoder
from cauldron.envs.voodoo_mania.make_deck import dumps, generate
from cauldron.envs.voodoo_mania.options import VoodooManiaOptions
from cauldron.envs.voodoo_mania.phases import Phase
from cauldron.envs.voodoo_mania.rules import VoodooManiaRules

DECK = C.load_deck()


# ----------------------------------------------------------------------------- The deck
def test_shipped_deck_has_every_documented_property():
    """Assumption (RULES.md): 91 double-sided cards; each side shows four ingredient/colour pairs,
    every ingredient once and every colour once, and misses one pair; the two sides of a card miss
    different pairs; 18 pairs are missing on 7 sides and 7 pairs on 8 sides."""
    assert len(DECK) == C.NUM_CARDS
    for sides in DECK:
        assert sides[0].missing != sides[1].missing
        for face in sides:
            assert len(face.shows) == 4 and face.missing not in face.shows
            ingredients = {p // 5 for p in face.shows}
            colours = {p % 5 for p in face.shows}
            assert ingredients == set(range(5)) - {face.missing // 5}
            assert colours == set(range(5)) - {face.missing % 5}
    counts = Counter(face.missing for sides in DECK for face in sides)
    assert sorted(Counter(counts.values()).items()) == [(7, 18), (8, 7)]


def test_shipped_deck_is_what_the_generator_makes():
    """The shipped data is exactly the documented procedure's output for its fixed seed."""
    assert C.DECK_FILE.read_text() == dumps(generate())


# ----------------------------------------------------------------------------- Setup
@pytest.mark.parametrize("n, each", [(2, 45), (3, 30), (4, 22), (5, 18), (6, 15)])
def test_setup_deals_by_player_count(n, each):
    """Setup: one card starts the Voodoo pile, each player gets their own pile (2: 45, 3: 30,
    4: 22, 5: 18, 6: 15 cards) and takes three of it into the hand; the rest stays out."""
    env = envs.make("voodoo_mania_v1", num_players=n)
    env.reset(seed=0)
    state = env.unwrapped.game
    assert len(state.voodoo) == 1
    assert [len(h) for h in state.hands] == [3] * n
    assert [len(p) for p in state.piles] == [each - 3] * n
    assert len(state.out) == C.NUM_CARDS - 1 - n * each
    dealt = [c for h in state.hands for c in h] + [c for p in state.piles for c in p]
    assert sorted(dealt + state.out + [state.voodoo[0][0]]) == list(range(C.NUM_CARDS))


@pytest.mark.parametrize("n", range(2, 7))
def test_observation_and_state_show_the_number_of_players(n):
    """Setup: everyone sees how many players are at the table (a player whose hand and pile are
    empty looks like an absent seat)."""
    rules = VoodooManiaRules(n, VoodooManiaOptions())
    encoder = Encoder(rules)
    state = rules.new_game(np.random.default_rng(0))
    expected = [float(k == n - 2) for k in range(5)]
    assert (
        encoder.observe(state, n - 1)[encoder.observation_layout["num_players"]].tolist()
        == expected
    )
    assert encoder.encode_state(state)[encoder.state_layout["num_players"]].tolist() == expected


# ----------------------------------------------------------------------------- Helpers
def find_card(wanted: int, kind: str, exclude=()) -> tuple[int, int]:
    """A (card, side) whose side shows ``wanted`` (normal) or misses it (voodoo)."""
    for card, sides in enumerate(DECK):
        if card in exclude:
            continue
        for side, face in enumerate(sides):
            if (kind == "normal" and wanted in face.shows) or (
                kind == "voodoo" and face.missing == wanted
            ):
                return card, side
    raise AssertionError("no such card")


def dead_card(wanted: int, exclude=()) -> int:
    """A card none of whose sides can be played on ``wanted``."""
    for card, sides in enumerate(DECK):
        if card not in exclude and all(
            wanted not in f.shows and f.missing != wanted for f in sides
        ):
            return card
    raise AssertionError("no dead card")


def table(n=2, hands=None, piles=None, top=(0, 0), voodoo_below=(), **options):
    rules = VoodooManiaRules(n, VoodooManiaOptions(**options))
    state = rules.new_game(np.random.default_rng(0))
    state.hands = [list(h) for h in hands]
    state.piles = [list(p) for p in piles]
    state.voodoo = [(c, 0) for c in voodoo_below] + [top]
    placed = [c for h in state.hands for c in h] + [c for p in state.piles for c in p]
    placed += [c for c, _ in state.voodoo]
    assert len(placed) == len(set(placed)), "a scenario card is used twice"
    used = set(placed)
    state.out = [c for c in range(C.NUM_CARDS) if c not in used]
    return rules, state


def play_action(rules, state, seat, card, side) -> int:
    return A.PLAY + 2 * state.hands[seat].index(card) + side


TOP = (0, 0)
WANTED = DECK[0][0].missing


# ----------------------------------------------------------------------------- Game Play
def test_normal_play_lays_the_side_showing_the_wanted_pair_and_refills():
    """Game Play 1: a card showing the missing pair (either side) is laid with that side up, so
    the wanted pair changes; the player takes the top card of the own pile."""
    card, side = find_card(WANTED, "normal", exclude={0})
    filler = dead_card(WANTED, exclude={0, card})
    rules, state = table(hands=[[filler, card], [filler + 1]], piles=[[50, 51], [52]], top=TOP)
    action = play_action(rules, state, 0, card, side)
    assert rules.legal_mask_for(state, 0)[action] == 1
    rules.apply_joint(state, [action, A.WAIT])
    assert state.voodoo[-1] == (card, side) and rules.wanted(state) == DECK[card][side].missing
    assert state.hands[0] == [filler, 51] and state.piles[0] == [50]
    assert state.last_player == 0 and not state.last_voodoo


def test_voodoo_play_keeps_the_pair_and_others_take_from_the_bottom():
    """Game Play 2: a card missing the same pair may be laid ("Voodoo!"): play stops and every
    other player, from the caller's left, slides a card from the bottom of the Voodoo pile under
    their own pile."""
    card, side = find_card(WANTED, "voodoo", exclude={0})
    hands = [[card], [70, 72, 74], [71, 73, 75]]
    rules, state = table(n=3, hands=hands, piles=[[60], [61], [62]], top=TOP, voodoo_below=[80, 81])
    rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT, A.WAIT])
    assert state.last_voodoo and rules.wanted(state) == WANTED
    assert state.piles[1] == [80, 61] and state.piles[2] == [81, 62]
    assert [c for c, _ in state.voodoo] == [0, card]


def test_voodoo_takes_cards_only_while_the_pile_has_more_than_its_top():
    card, side = find_card(WANTED, "voodoo", exclude={0})
    hands = [[card], [70, 72, 74], [71, 73, 75]]
    rules, state = table(n=3, hands=hands, piles=[[60], [61], [62]], top=TOP)
    rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT, A.WAIT])
    assert state.piles[1] == [0, 61] and state.piles[2] == [62]
    assert state.voodoo == [(card, side)]


def test_cycling_only_without_a_playable_card_by_default():
    """Game Play: who cannot find a combination may slide a hand card under the own pile and take
    the pile's top card; `cycle_anytime` lifts the condition."""
    playable, side = find_card(WANTED, "normal", exclude={0})
    dead = dead_card(WANTED, exclude={0, playable})
    rules, state = table(hands=[[playable, dead], [dead + 1]], piles=[[40, 41], [42]], top=TOP)
    assert not rules.legal_mask_for(state, 0)[A.CYCLE :].any()
    rules2, state2 = table(
        hands=[[playable, dead], [dead + 1]], piles=[[40, 41], [42]], top=TOP, cycle_anytime=True
    )
    assert rules2.legal_mask_for(state2, 0)[A.CYCLE : A.CYCLE + 2].all()
    rules3, state3 = table(hands=[[dead], [playable]], piles=[[40, 41], [42]], top=TOP)
    assert rules3.legal_mask_for(state3, 0)[A.CYCLE] == 1
    rules3.apply_joint(state3, [A.CYCLE, A.WAIT])
    assert state3.hands[0] == [41] and state3.piles[0] == [dead, 40]


def test_tick_cycles_all_happen_and_one_play_wins_by_random_priority():
    """Assumption (RULES.md, ticks): every cycle happens; among the plays one wins by a random
    priority drawn from the env's generator; losing plays stay in hand."""
    a, sa = find_card(WANTED, "normal", exclude={0})
    b, sb = find_card(WANTED, "normal", exclude={0, a})
    dead = dead_card(WANTED, exclude={0, a, b})
    winners = set()
    for seed in range(20):
        rules, state = table(n=3, hands=[[a], [b], [dead]], piles=[[40], [41], [42]], top=TOP)
        state.rng = np.random.default_rng(seed)
        rules.apply_joint(
            state,
            [play_action(rules, state, 0, a, sa), play_action(rules, state, 1, b, sb), A.CYCLE],
        )
        winners.add(state.last_player)
        loser = 1 - state.last_player
        assert state.hands[loser] == [[a], [b]][loser]
        assert state.hands[2] == [42] and state.piles[2] == [dead]
    assert winners == {0, 1}


def test_round_ends_when_a_player_runs_out_and_points_carry_over():
    """End of the Round / Recording Points: the round ends when a player has no cards in hand or
    pile; every card in hand and pile is a point, carried over; all cards are dealt anew."""
    card, side = find_card(WANTED, "normal", exclude={0})
    rules, state = table(hands=[[card], [70, 71, 72]], piles=[[], [73, 74]], top=TOP)
    rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT])
    assert state.scores == [0, 5] and state.round == 1 and state.phase == Phase.TICK
    assert [len(h) for h in state.hands] == [3, 3] and len(state.voodoo) == 1


def test_game_lasts_three_rounds_and_fewest_points_win():
    """Assumption (RULES.md): three rounds; the fewest points win; ties are shared."""
    card, side = find_card(WANTED, "normal", exclude={0})
    rules, state = table(hands=[[card], [70]], piles=[[], [73]], top=TOP)
    state.round, state.scores = 2, [10, 9]
    rewards = rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT])
    assert state.phase == Phase.OVER and state.scores == [10, 11]
    assert rules.winners(state) == [0] and rewards == (1.0, -1.0)
    state.scores = [11, 11]
    assert rules.winners(state) == [0, 1]


def test_per_round_reward_option():
    card, side = find_card(WANTED, "normal", exclude={0})
    rules, state = table(hands=[[card], [70, 71]], piles=[[], [73]], top=TOP, reward="per_round")
    rewards = rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT])
    assert rewards == pytest.approx((3 / 45, -3 / 45))


def test_per_tick_reward_pays_each_play_as_it_moves_cards():
    """Option ``reward="per_tick"``: each tick pays the change of (the others' mean cards held
    minus one's own) / cards per player, so a play that empties the hand pays the last card."""
    card, side = find_card(WANTED, "normal", exclude={0})
    rules, state = table(hands=[[card], [70, 71]], piles=[[], [73]], top=TOP, reward="per_tick")
    rewards = rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT])
    assert rewards == pytest.approx((1 / 45, -1 / 45))


@pytest.mark.parametrize("n", [2, 3])
def test_per_tick_rounds_sum_to_per_round(n):
    """Over whole games of the same seed and moves, ``per_tick`` pays each seat in sum what
    ``per_round`` pays (a deal gives every player the same number of cards)."""
    totals = {}
    for reward in ("per_round", "per_tick"):
        env = envs.make_parallel("voodoo_mania_v1", num_players=n, reward=reward)
        obs, _ = env.reset(seed=n)
        rng = np.random.default_rng(0)
        paid = dict.fromkeys(env.agents, 0.0)
        while env.agents:
            masks = {a: obs[a]["action_mask"] for a in env.agents}
            actions = {a: int(rng.choice(np.flatnonzero(m))) for a, m in masks.items()}
            obs, rewards, _, _, _ = env.step(actions)
            for agent, r in rewards.items():
                paid[agent] += r
        totals[reward] = paid
    assert totals["per_tick"] == pytest.approx(totals["per_round"], abs=1e-9)
    assert any(abs(v) > 0.01 for v in totals["per_round"].values())


def test_max_ticks_truncates_a_game_where_nobody_acts():
    env = envs.make_parallel("voodoo_mania_v1", num_players=2, max_ticks=5)
    env.reset(seed=0)
    for _ in range(5):
        _, rewards, terms, truncs, _ = env.step({a: A.WAIT for a in env.agents})
    assert all(truncs.values()) and not any(terms.values()) and env.agents == []
    assert rewards == {"player_0": 1.0, "player_1": 1.0}  # equal standing: a shared "win"


def test_waiting_out_the_clock_does_not_pay():
    """Truncation ranks the standing (points so far + cards held): the player holding more
    cards when time runs out loses, so stalling is never better than playing."""
    card, side = find_card(WANTED, "normal", exclude={0})
    rules, state = table(hands=[[card, 70], [71, 72]], piles=[[73], [74, 75]], top=TOP, max_ticks=1)
    rewards = rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT])
    assert rules.is_truncated(state) and rewards == (1.0, -1.0)


@pytest.mark.parametrize("reward", ["win_loss", "per_round"])
def test_truncation_loss_pays_every_player_minus_one(reward):
    """Defaults and assumptions, *Truncation*, option ``truncation="loss"``: a game cut short at
    ``max_ticks`` pays −1 to everyone (with ``per_round``, for the unfinished round), so the
    player ahead gains nothing by waiting out the clock."""
    card, side = find_card(WANTED, "normal", exclude={0})
    hands, piles = [[card, 70], [71, 72]], [[73], [74, 75]]
    rules, state = table(
        hands=hands, piles=piles, top=TOP, max_ticks=1, reward=reward, truncation="loss"
    )
    rewards = rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT])
    assert rules.is_truncated(state) and rewards == (-1.0, -1.0)


def dead_cards(count: int, exclude=()) -> list[int]:
    """``count`` different cards none of whose sides can be played on ``WANTED``."""
    cards: list[int] = []
    while len(cards) < count:
        cards.append(dead_card(WANTED, exclude={*exclude, *cards}))
    return cards


def test_max_idle_ticks_cuts_a_standoff_short():
    """Option ``max_idle_ticks``: a player holding the only answer waits while the other, stuck,
    cycles; after that many ticks without a play the game is cut short (paid as ``truncation``
    says)."""
    card, side = find_card(WANTED, "normal", exclude={0})
    held, *pile = dead_cards(3, exclude={0, card})
    rules, state = table(
        hands=[[card], [held]], piles=[[], pile], top=TOP, max_idle_ticks=3, truncation="loss"
    )
    for idle in (1, 2):
        assert not rules.plays(state, 1)
        assert rules.apply_joint(state, [A.WAIT, A.CYCLE]) == (0.0, 0.0)
        assert state.idle == idle and not rules.is_truncated(state)
    assert rules.apply_joint(state, [A.WAIT, A.CYCLE]) == (-1.0, -1.0)
    assert rules.is_truncated(state)


def test_max_idle_ticks_counts_only_while_a_player_could_play():
    """The count starts again after a play, and a tick in which nobody could play is not
    idle."""
    card, side = find_card(WANTED, "normal", exclude={0})
    dead = dead_cards(4, exclude={0, card})
    rules, state = table(
        hands=[[card, dead[0]], [dead[1]]],
        piles=[[dead[2]], [dead[3]]],
        top=TOP,
        max_idle_ticks=2,
    )
    rules.apply_joint(state, [A.WAIT, A.WAIT])
    assert state.idle == 1
    rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT])
    assert state.idle == 0 and not rules.is_truncated(state)
    rules, state = table(
        hands=[[dead[0]], [dead[1]]], piles=[[dead[2]], [card]], top=TOP, max_idle_ticks=1
    )
    assert not rules.plays(state, 0) and not rules.plays(state, 1)
    rules.apply_joint(state, [A.WAIT, A.WAIT])
    assert state.idle == 0 and not rules.is_truncated(state)


def test_aec_hides_choices_made_earlier_in_the_tick():
    """Both APIs: in the AEC env a later seat never sees an earlier seat's choice of the tick."""
    env = envs.make("voodoo_mania_v1", num_players=3)
    env.reset(seed=2)
    layout = env.unwrapped.encoder.observation_layout
    before = env.observe("player_1")["observation"]
    env.step(int(np.flatnonzero(env.observe("player_0")["action_mask"])[-1]))
    changed = set(np.flatnonzero(before != env.observe("player_1")["observation"]))
    assert changed == {layout.offsets["chosen"] + 2}  # seat 0 is two seats left of seat 1


def test_a_stalled_table_ends_the_round():
    """The rulebook leaves a stalled table open; default: when no card in any hand or pile can
    ever answer the wanted pair, the round ends and the cards held are counted."""
    card, side = find_card(WANTED, "normal", exclude={0})
    new_wanted = DECK[card][side].missing
    dead = [
        c
        for c in range(1, C.NUM_CARDS)
        if c != card and all(new_wanted not in f.shows and f.missing != new_wanted for f in DECK[c])
    ]
    rules, state = table(hands=[[card, dead[0]], [dead[1]]], piles=[[dead[2]], [dead[3]]], top=TOP)
    rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT])
    assert state.round == 1 and state.scores == [2, 2] and ("stalled", 0) in state.log


def test_a_short_hand_is_topped_up_to_three_when_voodoo_cards_arrive():
    """Setup ("forms his hand by picking up 3 ingredient cards from his pile") and Game Play 2:
    a player whose own pile ran out holds fewer than three cards; when a Voodoo! slides cards
    under that pile, the player takes them back up to three cards in hand."""
    card, side = find_card(WANTED, "voodoo", exclude={0})
    hands = [[card, 60], [70], [71, 72]]
    rules, state = table(n=3, hands=hands, piles=[[61], [], []], top=TOP, voodoo_below=[80, 81])
    rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT, A.WAIT])
    assert state.hands[1] == [70, 80] and state.piles[1] == []
    assert state.hands[2] == [71, 72, 81] and state.piles[2] == []


def test_the_last_play_of_a_round_is_not_shown_after_the_new_deal():
    """End of the Round: all cards are dealt anew, so nothing of the last round's final tick
    (who played, Voodoo!, who cycled) stays in the observation of the new round."""
    card, side = find_card(WANTED, "voodoo", exclude={0})
    rules, state = table(hands=[[card], [70, 71, 72]], piles=[[], [73, 74]], top=TOP)
    rules.apply_joint(state, [play_action(rules, state, 0, card, side), A.WAIT])
    assert state.round == 1
    layout = Encoder(rules).observation_layout
    obs = Encoder(rules).observe(state, 1)
    assert obs[layout["last_player"]].tolist() == [1, 0, 0, 0, 0, 0, 0]
    assert not obs[layout["last_voodoo"]].any() and not obs[layout["last_cyclers"]].any()
