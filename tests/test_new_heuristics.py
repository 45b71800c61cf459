"""The newer heuristics play their own ideas: one built table per idea, on
which the new heuristic chooses what its idea says and the game's other heuristics choose
otherwise. Rulebook sections are those of each game's rulebook."""

from __future__ import annotations

import numpy as np
import pytest

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.envs.hexenflug import actions as XA
from cauldron.envs.hexenflug.phases import Phase as XPhase
from cauldron.envs.voodoo_mania import actions as VA
from cauldron.envs.voodoo_mania import components as VC


def choices(env_id: str, names: list[str], observation, mask) -> dict[str, int]:
    """Each named heuristic's action on one observation and mask."""
    return {name: make_agent(f"heuristic:{name}", env_id).act(observation, mask) for name in names}


# ----------------------------------------------------------------------------- Headless Horseman
HORSEMAN = "headless_horseman_v1"


def horseman_table(hand: list[int], ichabod: int, row: list[int]):
    """Seat 0's observation and mask with ``hand``, Ichabod on ``ichabod`` and ``row`` face up
    (cards ``(top - 1) * 5 + bottom``; the Horseman at his start)."""
    env = envs.make(HORSEMAN, num_players=2).unwrapped
    state = env.rules.new_game(np.random.default_rng(0))
    used = set(hand) | set(row)
    state.hands = [list(hand), [c for c in state.hands[1] if c not in used]]
    state.draw_pile = [c for c in state.draw_pile if c not in used]
    state.ichabod, state.row, state.actor = ichabod, list(row), 0
    return env.encoder.observe(state, 0), env.rules.legal_mask(state)


def test_horseman_highest_plays_the_highest_number_focal_values_the_board_safe_the_ride():
    """Move Ichabod / Secret Path: from space 3 a 5 reaches the secret path at 8 (focal's
    choice), *highest* plays its 6 whatever the board, *safe* its blank card (1/blank)."""
    hand = [0, 22, 26]  # 1/blank, 5/2, 6/1
    got = choices(HORSEMAN, ["focal", "highest", "safe"], *horseman_table(hand, 3, []))
    assert got == {"focal": 22, "highest": 26, "safe": 0}


def test_horseman_highest_matches_the_row_first():
    """Flip and Match: with a 1 already in the row, *highest* plays its 1 (a certain match);
    *focal* still prefers the 5 to the secret path."""
    hand = [3, 22, 26]  # 1/3, 5/2, 6/1
    got = choices(HORSEMAN, ["focal", "highest"], *horseman_table(hand, 3, [1]))
    assert got == {"focal": 22, "highest": 3}


def test_horseman_safe_never_lands_on_a_scare_space_and_else_rides_least():
    """Scare spaces: from the farm a 6 lands on the Scare space 6, so *safe* plays its 2/3 even
    though the 6 is blank; a card that lands safely goes by the shortest ride (Move the
    Headless Horseman)."""
    observation, mask = horseman_table([25, 8], 0, [])  # 6/blank, 2/3
    assert make_agent("heuristic:safe", HORSEMAN).act(observation, mask) == 8
    observation, mask = horseman_table([25, 8, 13], 0, [])  # and 3/3 (ride 3, landing 3)
    assert make_agent("heuristic:safe", HORSEMAN).act(observation, mask) == 13  # tie: value


# ----------------------------------------------------------------------------- Hexenflug
HEXENFLUG = "hexenflug_v1"


def hexenflug_table(phase: XPhase, hand: list[int], row: list[int], supply: list[int]):
    """Seat 0's observation and mask in ``phase`` with ``hand``, colour 0's layout row ``row``
    and the Spellbook ``supply``; a card was drawn this turn, nothing displayed."""
    env = envs.make(HEXENFLUG, num_players=2).unwrapped
    state = env.rules.new_game(np.random.default_rng(0))
    state.draw_pile = [c for c in state.draw_pile if c not in set(hand) | set(row)]
    state.hands[0], state.layouts[0][0] = list(hand), list(row)
    state.supply, state.phase, state.drew = list(supply), phase, True
    return env.encoder.observe(state, 0), env.rules.legal_mask(state)


FULL = [7] * 5  # the 2-player supply


@pytest.mark.parametrize(
    "hand, supply, banker",
    [
        ([1, 4, 6, 8], FULL, XA.SKIP),  # four cards earn two books: keep them for a fifth
        ([1, 4, 6, 8, 10], FULL, XA.EXAMINE),  # five earn three: examine
        ([1, 4, 6, 8], [2, 7, 7, 7, 7], XA.EXAMINE),  # colour 0 has fewer than three books left
        ([1, 4, 6, 8], [7, 0, 7, 7, 7], XA.EXAMINE),  # one more exhausted colour ends the game
    ],
)
def test_hexenflug_banker_examines_only_at_the_best_rate(hand, supply, banker):
    """Examination: 3, 4, 5 cards of a colour earn 1, 2, 3 Spellbooks. *cautious* and *greedy*
    examine colour 0 whenever they can; *banker* waits for five cards unless the supply or the
    end of the game (End of the Game: two exhausted colours with 2 players) says otherwise."""
    got = choices(
        HEXENFLUG,
        ["cautious", "greedy", "banker"],
        *hexenflug_table(XPhase.EXAMINE, hand, [], supply),
    )
    assert got == {"cautious": XA.EXAMINE, "greedy": XA.EXAMINE, "banker": banker}


def test_hexenflug_banker_flies_on_until_a_colour_holds_five_cards():
    """Landing: with three cards of colour 0 (a soft landing pays for an examination)
    *cautious* lands; *banker* draws on, since nothing displayed means no crash yet."""
    observation, mask = hexenflug_table(XPhase.FLY, [1], [3, 5], FULL)
    got = choices(HEXENFLUG, ["cautious", "banker"], observation, mask)
    assert got == {"cautious": XA.LAND, "banker": XA.DRAW}
    observation, mask = hexenflug_table(XPhase.FLY, [1, 2], [3, 5, 9], FULL)
    assert make_agent("heuristic:banker", HEXENFLUG).act(observation, mask) == XA.LAND


# ----------------------------------------------------------------------------- Voodoo Mania
VOODOO = "voodoo_mania_v1"


def voodoo_table(players: int, hand: list[int], pile: list[tuple[int, int]]):
    """Seat 0's observation and mask with ``hand`` and the Voodoo ``pile`` (card, side up),
    its top last."""
    env = envs.make(VOODOO, num_players=players).unwrapped
    state = env.rules.new_game(np.random.default_rng(0))
    state.hands[0], state.voodoo, state.actor = list(hand), list(pile), 0
    return env.encoder.observe(state, 0), env.rules.legal_mask(state)


def test_voodoo_blocker_asks_for_a_pair_few_other_cards_answer():
    """Game Play (1): three normal plays; *fast* makes the first, *chain* the one its own hand
    can follow, *blocker* the one whose new wanted pair the fewest cards outside its hand can
    answer (the deck's count minus its own)."""
    observation, mask = voodoo_table(2, [19, 52, 80], [(89, 0)])
    got = choices(VOODOO, ["fast", "chain", "blocker"], observation, mask)
    assert got == {"fast": VA.PLAY + 1, "chain": VA.PLAY + 4, "blocker": VA.PLAY + 3}


def test_voodoo_blocker_shouts_as_soon_as_it_sends_a_card():
    """Game Play (2): with two cards in the Voodoo pile a Voodoo! sends one card to each of
    the others while the pile lasts; at four players *chain* keeps its Voodoo! card for a
    fuller pile and plays the normal card, *blocker* shouts at once."""
    deck = VC.load_deck()
    wanted = deck[0][0].missing
    voodoo = next(  # side 0 misses the wanted pair too (Voodoo!), side 1 cannot answer it
        c for c in range(1, 91) if deck[c][0].missing == wanted and wanted not in deck[c][1].shows
    )
    normal = next(  # side 0 shows the wanted pair (normal play), side 1 cannot answer it
        c
        for c in range(1, 91)
        if wanted in deck[c][0].shows and wanted not in deck[c][1].shows | {deck[c][1].missing}
    )
    observation, mask = voodoo_table(4, [normal, voodoo], [(90, 0), (0, 0)])
    got = choices(VOODOO, ["chain", "blocker"], observation, mask)
    assert got == {"chain": VA.PLAY + 0, "blocker": VA.PLAY + 2}
