"""Scenario tests of Return of the Headless Horseman. Each names the rulebook section it checks
(Return of the Headless Horseman's rulebook) or the default it follows where the rulebook is silent
(RULES.md's assumptions).

Rule scenarios run on a first-guess board (bridge 36; secret paths 4→9, 12→17, 29→33; trees 7,
15, 31; scares 3, 6, 10, 14, 18, 24, 30, 34; Spinning Tree 20 → 23/25/27), so
that the rules are tested apart from the calibrated default board."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cauldron.envs.headless_horseman
from cauldron import envs
from cauldron.envs.headless_horseman import actions as A
from cauldron.envs.headless_horseman import components as C
from cauldron.envs.headless_horseman.encoding import Encoder
from cauldron.envs.headless_horseman.options import HeadlessHorsemanOptions
from cauldron.envs.headless_horseman.phases import Phase
from cauldron.envs.headless_horseman.render import render_table, track_text
from cauldron.envs.headless_horseman.rules import HeadlessHorsemanRules

BLANK, ONE, TWO, THREE, SPEED = range(5)
PUMPKIN_1, PUMPKIN_2, PUMPKIN_3, PUMPKIN_4, OWL, TOAD, CROW, BAT = range(8)


def K(top: int, bottom: int = BLANK) -> int:
    """The card with ``top`` number and ``bottom`` symbol."""
    return (top - 1) * 5 + bottom


class Spinner:
    """A stand-in generator whose spins come from a list (1, 2 or 3 each), then 1s."""

    def __init__(self, *spins: int) -> None:
        self.spins = list(spins)

    def integers(self, n: int) -> int:
        return self.spins.pop(0) - 1 if self.spins else 0

    def permutation(self, n: int):
        return np.arange(n)


def table(n=2, hands=None, pile=(), ichabod=0, horseman=-10, tokens=None, spins=(), **options):
    """Rules and a state with these hands and draw pile (top last); other cards are discarded.
    Scare tokens flip in the order given (default: the four creatures first)."""
    rules = HeadlessHorsemanRules(n, HeadlessHorsemanOptions(**options), C.FIRST_GUESS_BOARD)
    state = rules.new_game(np.random.default_rng(0))
    state.hands = [list(h) for h in (hands or [[] for _ in range(n)])]
    state.draw_pile = list(pile)
    used = {c for h in state.hands for c in h} | set(state.draw_pile)
    state.discard = [c for c in range(C.NUM_CARDS) if c not in used]
    state.tokens = list(
        tokens or [OWL, TOAD, CROW, BAT, PUMPKIN_1, PUMPKIN_2, PUMPKIN_3, PUMPKIN_4]
    )
    state.ichabod, state.horseman = ichabod, horseman
    state.rng = Spinner(*spins)
    state.log.clear()
    return rules, state


# ----------------------------------------------------------------------------- Set Up
@pytest.mark.parametrize("n", [2, 3, 4])
def test_setup(n):
    """Set Up: Ichabod at the farm, the Horseman at his start, eight face-down Scare tokens,
    Speed tile 2, four cards each."""
    env = envs.make("headless_horseman_v1", num_players=n)
    env.reset(seed=0)
    state = env.unwrapped.game
    assert state.ichabod == 0 and state.horseman == C.BOARD.horseman_start and state.flipped == 0
    assert sorted(state.tokens) == list(range(8))
    assert [len(h) for h in state.hands] == [4] * n
    assert len(state.draw_pile) == 30 - 4 * n and env.unwrapped.options.speed_tile == 2


# ----------------------------------------------------------------------------- Play and match
def test_secret_choices_stay_hidden_until_everyone_has_chosen():
    """1. Each Player Plays a Card: secretly. In the AEC env the later player sees only that the
    earlier one has chosen, never which card."""
    env = envs.make("headless_horseman_v1", num_players=2)
    env.reset(seed=3)
    layout = env.unwrapped.encoder.observation_layout
    before = env.observe("player_1")["observation"]
    card = int(np.flatnonzero(env.observe("player_0")["action_mask"])[0])
    env.step(card)
    after = env.observe("player_1")["observation"]
    changed = set(np.flatnonzero(before != after))
    assert changed == {layout.offsets["chosen"] + 1}  # seat 0 is one seat left of seat 1
    own = env.observe("player_0")["observation"][layout["own_choice"]]
    assert np.flatnonzero(own).tolist() == [card]


def test_no_match_keeps_the_row_and_plays_again():
    """2. Flip and Match: with no match the cards stay in the row and everyone plays again; a
    match among ALL the row's cards then counts."""
    rules, state = table(hands=[[K(1), K(5)], [K(2), K(6)]])
    rules.apply_joint(state, [K(1), K(2)])
    assert state.row == [K(1), K(2)] and state.ichabod == 0 and state.rounds == 2
    rules.apply_joint(state, [K(5), K(6)])
    assert state.row == [K(1), K(2), K(5), K(6)] and state.ichabod == 0


def test_match_with_an_earlier_row_card_moves_ichabod():
    hands = [[K(3), K(5), K(6), K(6, ONE)], [K(2), K(5, ONE), K(4), K(4, ONE)]]
    rules, state = table(hands=hands)
    rules.apply_joint(state, [K(3), K(2)])
    rules.apply_joint(state, [K(5), K(5, ONE)])
    assert state.ichabod == 5 and state.row == []
    assert state.discard[-4:] == [K(3), K(2), K(5), K(5, ONE)]


def test_lowest_match_moves_ichabod():
    """3. Move Ichabod: with several matches he moves only the lowest."""
    hands = [[K(2), K(6)], [K(2, ONE), K(6, ONE)], [K(5), K(6, TWO)], [K(5, ONE), K(6, THREE)]]
    rules, state = table(n=4, hands=hands)
    rules.apply_joint(state, [K(2), K(2, ONE), K(5), K(5, ONE)])
    assert state.ichabod == 2


def test_ichabod_shout_draws_the_spun_number_and_flips_the_discard_pile():
    """1. "Ichabod!": a player with one card left spins and draws that many; "If the draw pile
    runs out, flip the discard pile over to start a new draw pile": turned face down, the first
    card discarded comes up first, and nothing is shuffled."""
    rules, state = table(hands=[[K(1), K(2)], [K(3), K(4)]], pile=[K(6)], spins=(3,))
    discard = list(state.discard)
    rules.apply_joint(state, [K(1), K(3)])  # no match: a new play round begins
    assert state.hands[0] == [K(2), K(6), discard[0], discard[1]]  # spun 3
    assert state.hands[1] == [K(4), discard[2]]  # spun 1
    assert state.draw_pile == discard[3:][::-1] and state.discard == []
    assert ("ichabod", 0, 3) in state.log and ("flip_discard",) in state.log


def test_reshuffle_option_shuffles_the_discard_pile_instead():
    """Option ``reshuffle``: the discard pile is shuffled into the new draw pile."""
    rules, state = table(hands=[[K(1), K(2)], [K(3), K(4)]], pile=[K(6)], reshuffle=True)
    state.rng = np.random.default_rng(5)
    discard = list(state.discard)
    rules.apply_joint(state, [K(1), K(3)])
    drawn = state.hands[0][2:] + state.hands[1][1:]
    assert ("reshuffle",) in state.log and ("flip_discard",) not in state.log
    assert sorted(drawn + state.draw_pile) == sorted(discard)
    assert drawn + state.draw_pile[::-1] != discard


# ----------------------------------------------------------------------------- Special spaces
def test_secret_path():
    """4. Secret Path: move to the end of the secret path."""
    rules, state = table(hands=[[K(4), K(6)], [K(4, ONE), K(6)]])
    rules.apply_joint(state, [K(4), K(4, ONE)])
    assert state.ichabod == 9


def test_tree_space_spins_and_chains_into_a_scare():
    """4. Tree: spin, move that many, then do what the new space shows (here a Scare space)."""
    rules, state = table(hands=[[K(1), K(6)], [K(1, ONE), K(6)]], ichabod=14, spins=(3,))
    rules.apply_joint(state, [K(1), K(1, ONE)])
    assert state.ichabod == 18 and state.flipped == 1 and ("tree", 15, 3) in state.log


def test_scare_space_flips_a_token_and_four_pumpkins_lose():
    """4. Scare: flip one Scare token; all four pumpkins face up lose at once."""
    tokens = [PUMPKIN_1, PUMPKIN_2, PUMPKIN_3, PUMPKIN_4, OWL, TOAD, CROW, BAT]
    rules, state = table(hands=[[K(3), K(6)], [K(3, ONE), K(6)]], tokens=tokens)
    state.flipped = 3
    rewards = rules.apply_joint(state, [K(3), K(3, ONE)])
    assert state.ichabod == 3 and state.phase == Phase.OVER and state.outcome == -1
    assert rewards == (-1.0, -1.0) and state.horseman == -10  # he no longer moves


# ----------------------------------------------------------------------------- The Horseman
@pytest.mark.parametrize("speed_tile, expected", [(2, -10 + 1 + 3 + 2), (4, -10 + 1 + 3 + 4)])
def test_horseman_moves_by_every_bottom_and_the_speed_tile(speed_tile, expected):
    """5. Move the Headless Horseman: every row card's bottom number, plus the Speed tile for each
    speed icon (More Challenging: the tile shows 4)."""
    hands = [[K(2, BLANK), K(1, ONE), K(6)], [K(2, THREE), K(3, SPEED), K(6)]]
    rules, state = table(hands=hands, speed_tile=speed_tile)
    rules.apply_joint(state, [K(1, ONE), K(3, SPEED)])
    rules.apply_joint(state, [K(2, BLANK), K(2, THREE)])
    assert state.ichabod == 2 and state.horseman == expected


def test_horseman_catching_ichabod_scares_him_to_the_next_blank_space():
    """5. If the Horseman would catch or pass Ichabod he scares him: the Horseman stops right
    behind him, Ichabod goes to the next blank space, a token is flipped."""
    rules, state = table(hands=[[K(1, THREE), K(6)], [K(1, TWO), K(6)]], ichabod=1, horseman=0)
    rules.apply_joint(state, [K(1, THREE), K(1, TWO)])  # Ichabod 1 -> 2; Horseman 0 + 5 = 5
    assert state.horseman == 1 and state.ichabod == 5 and state.flipped == 1


def test_scare_skips_special_spaces_but_the_split_tree_counts_as_blank():
    """When moving Ichabod to the next blank space, the tree and the covered bridge count."""
    hands = [[K(2, THREE), K(6), K(6, ONE)], [K(2, THREE), K(5), K(5, ONE)]]
    rules, state = table(hands=hands, ichabod=17, horseman=14, spins=(2,))
    rules.apply_joint(state, [K(2, THREE), K(2, THREE)])  # Ichabod 19; Horseman 14 + 6 = 20
    assert state.horseman == 18 and state.ichabod == 25 and state.flipped == 1


# ----------------------------------------------------------------------------- Split and bridge
def test_split_path_stops_at_the_tree_and_spins():
    """The Split Path: Ichabod stops at the Spinning Tree, spins and goes to the end of that green
    path (21 + 2k); he does not continue moving."""
    rules, state = table(hands=[[K(6), K(1)], [K(6, ONE), K(2)]], ichabod=17, spins=(1,))
    rules.apply_joint(state, [K(6), K(6, ONE)])
    assert state.ichabod == 23 and ("split", 1, 23) in state.log


def test_bridge_need_not_be_exact_and_the_horseman_still_rides():
    """Ending the Game: Ichabod need not land exactly on the bridge; the Horseman still moves
    and can scare him there (a token flips, Ichabod stays); then the team wins."""
    rules, state = table(hands=[[K(5, THREE), K(1)], [K(5, THREE), K(2)]], ichabod=33, horseman=31)
    rewards = rules.apply_joint(state, [K(5, THREE), K(5, THREE)])
    assert state.ichabod == 36 and state.horseman == 35 and state.flipped == 1
    assert state.outcome == 1 and rewards == (1.0, 1.0)


def test_a_last_scare_at_the_bridge_can_still_lose():
    rules, state = table(
        hands=[[K(5, THREE), K(1)], [K(5, THREE), K(2)]],
        ichabod=33,
        horseman=31,
        tokens=[PUMPKIN_1, PUMPKIN_2, PUMPKIN_3, PUMPKIN_4],
    )
    state.flipped = 3
    rules.apply_joint(state, [K(5, THREE), K(5, THREE)])
    assert state.ichabod == 36 and state.outcome == -1


# ----------------------------------------------------------------------------- Variants, rewards
def test_less_strategy_seats_play_the_top_card():
    """Less Strategy: chosen players hold no hand and play the draw pile's top card."""
    rules, state = table(hands=[[K(2), K(6)], []], pile=[K(1), K(2, ONE)], handless_seats=(1,))
    mask = rules.legal_mask_for(state, 1)
    assert np.flatnonzero(mask).tolist() == [A.PLAY_TOP]
    rules.apply_joint(state, [K(2), A.PLAY_TOP])
    assert state.ichabod == 2 and K(2, ONE) in state.discard


def test_less_strategy_setup_deals_no_hand():
    env = envs.make("headless_horseman_v1", num_players=3, handless_seats=(0, 2))
    env.reset(seed=0)
    assert [len(h) for h in env.unwrapped.game.hands] == [0, 4, 0]


def test_progress_reward_option():
    rules, state = table(hands=[[K(2), K(6)], [K(2, ONE), K(6)]], progress_reward=1.0)
    rewards = rules.apply_joint(state, [K(2), K(2, ONE)])
    assert rewards == pytest.approx((2 / 36, 2 / 36))


def test_default_board_data_is_consistent():
    """Assumption (RULES.md): the board is data; green paths end on blank spaces, secret paths lead
    forward to blank spaces, and every special space lies on the track."""
    board = C.BOARD
    assert all(board.is_blank(end) for end in board.green_path_end)
    assert all(a < e and board.is_blank(e) for a, e in board.secret_paths)
    special = (
        [a for a, _ in board.secret_paths] + list(board.tree_spaces) + list(board.scare_spaces)
    )
    assert len(special) == len(set(special))
    assert all(board.farm < s < board.bridge and s != board.split_tree for s in special)
    assert board.split_tree < min(board.green_path_end) and board.horseman_start < board.farm


@pytest.mark.parametrize("speed_tile", [0, 1, 3, 5, 8, -2])
def test_speed_tile_has_only_its_two_sides(speed_tile):
    """Set Up / More Challenging: the Speed tile shows "2" or "4"; other values are refused
    (they would also push the observation's speed field out of [0, 1])."""
    with pytest.raises(envs.ConfigError, match=r"'speed_tile' must be one of .*\[2, 4\]"):
        envs.make("headless_horseman_v1", speed_tile=speed_tile)


def test_horseman_encoded_from_the_lowest_start_a_board_may_have():
    """Set Up: the Horseman starts at the start of his purple path. On a board that starts him
    lower than the default (the first guess: -10) the observation's one-hot still lies in the
    Horseman field (index -10 - (-16) = 6), and Ichabod's field shows one figure only."""
    rules, state = table(n=2)
    layout = Encoder(rules).observation_layout
    for vector in (Encoder(rules).observe(state, 0), Encoder(rules).encode_state(state)):
        assert np.flatnonzero(vector[layout["horseman"]]).tolist() == [-10 - (-16)]
        assert np.flatnonzero(vector[layout["ichabod"]]).tolist() == [0]


def test_boards_must_fit_the_observation():
    with pytest.raises(envs.ConfigError, match="Horseman start at least -16"):
        HeadlessHorsemanRules(2, HeadlessHorsemanOptions(), C.Board(horseman_start=-17))


def test_render_puts_the_horseman_on_his_purple_path():
    """Set Up: the Horseman stands on his purple path before the farm; the text picture shows
    him there (once) and Ichabod once on the track."""
    rules, state = table(n=2)
    track = render_table(rules, state, None).splitlines()[0].removeprefix("track: ")
    purple, main = track.split("|")
    assert purple == "H" + "-" * 9 and main.count("I") == 1 and "H" not in main
    state.horseman, state.ichabod = 5, 8
    purple, main = track_text(rules.board, state.ichabod, state.horseman).split("|")
    assert "H" not in purple and main.index("H") == 5 and main.index("I") == 8


def test_rules_md_describes_the_default_board():
    """RULES.md names the default board's green path ends (they are not doubled)."""
    text = (Path(cauldron.envs.headless_horseman.__file__).parent / "RULES.md").read_text()
    ends = "/".join(str(e) for e in C.BOARD.green_path_end)
    assert ends in text and "every space doubled" not in text
