"""The relabelings of the cooperative games (``cauldron.envs.core.symmetry``, for Other-Play): each
is a permutation, they form a group, and a game relabelled by one plays exactly like the real game
(RULES.md, *Symmetries (Other-Play)*; sections from each game's rulebook).

The twin-game tests relabel a real rules state with σ (every card, space, question and token of
the ``State`` dataclass), play both with the same actions (σ of the real one for the twin) and
the same generator state, and compare what every seat sees. σ is read back from the gather
arrays themselves (σ = the inverse of a gather array), so the arrays are what is tested.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

import numpy as np
import pytest

from cauldron import envs
from cauldron.agents.hocus_pocus.heuristic import HocusPocusHeuristic
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.symmetry import Symmetry, inverse, symmetries
from cauldron.envs.headless_horseman import components as HC
from cauldron.envs.headless_horseman.encoding import Encoder as HorsemanEncoder
from cauldron.envs.headless_horseman.rules import HeadlessHorsemanRules
from cauldron.envs.headless_horseman.rules import State as HorsemanState
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus import symmetries as hocus_pocus_symmetries
from cauldron.envs.hocus_pocus.encoding import Encoder
from cauldron.envs.hocus_pocus.phases import Phase
from cauldron.envs.hocus_pocus.rules import HocusPocusRules
from cauldron.envs.hocus_pocus.rules import State as HocusPocusState
from tests.hocus_pocus_helpers import card, table

HP, HH = "hocus_pocus_v1", "headless_horseman_v1"
TOE, POX, TONGUE, NEWT, OIL = C.TYPES
GROUP_CASES = [
    (HP, 2, {}),
    (HP, 6, {}),
    (HP, 4, {"binx_cards": ()}),
    (HP, 3, {"binx_cards": (), "spell_book_cards": ()}),
    (HH, 2, {}),
    (HH, 4, {"handless_seats": (1,)}),
]


def field(env_id: str, name: str, kind: str = "observation") -> slice:
    return envs.layout(env_id, kind, envs.spec(env_id).players[0])[name]


def key(s: Symmetry) -> bytes:
    return s.observation.tobytes() + s.action.tobytes() + s.hand.tobytes()


# ----------------------------------------------------------------------------- the group
@pytest.mark.parametrize("env_id, n, options", GROUP_CASES)
def test_every_relabeling_is_a_permutation_of_the_right_sizes(env_id, n, options):
    env = envs.make(env_id, num_players=n, **options)
    hands = field(env_id, "hands", "state")
    seats = C.MAX_PLAYERS if env_id == HP else HC.MAX_PLAYERS
    sizes = [
        env.observation_space("player_0")["observation"].shape[0],
        env.action_space("player_0").n,
        (hands.stop - hands.start) // seats,
    ]
    for s in symmetries(env_id, n, options):
        arrays = (s.observation, s.action, s.hand)
        assert [len(a) for a in arrays] == sizes
        for array in arrays:
            assert array.dtype == np.int64 and not array.flags.writeable
            assert sorted(array.tolist()) == list(range(len(array)))


@pytest.mark.parametrize("env_id, n, options", GROUP_CASES)
def test_the_identity_comes_first_and_the_relabelings_form_a_group(env_id, n, options):
    group = symmetries(env_id, n, options)
    first = group[0]
    assert first.name == "identity"
    for array in (first.observation, first.action, first.hand):
        assert array.tolist() == list(range(len(array)))
    keys = {key(s) for s in group}
    assert len(keys) == len({s.name for s in group}) == len(group) > 1
    # Relabelling by a, then by b, gathers by a[b]. A finite set closed under it that holds the
    # identity is a group (every element's inverse is one of its powers).
    for a in group:
        for b in group:
            composed = (a.observation[b.observation], a.action[b.action], a.hand[b.hand])
            assert b"".join(x.tobytes() for x in composed) in keys


def test_hocus_pocus_default_group_is_the_five_shifts():
    """Assumption (RULES.md): board (c, c), Binx (c, c+1), Spell Book (c, c+2) and (c, c+3). Only
    the shifts of colours and types together keep all three; every player count alike."""
    for n in range(2, 7):
        names = [s.name for s in symmetries(HP, n)]
        assert names == ["identity", "shift 1", "shift 2", "shift 3", "shift 4"]


def test_hocus_pocus_shift_known_answers():
    """The card numbering of RULES.md: shift 1 takes card (c, t, copy) to (c+1, t+1, copy) and the
    space printed (c, c) to the one printed (c+1, c+1): space 0 (blue, Oil of Boil) to space 1
    (orange, Dead Man's Toe), space 1 to space 2."""
    shift = symmetries(HP, 4)[1]
    orange_toe, purple_pox, blue_oil = 0, (1 * 5 + 1) * 2, (4 * 5 + 4) * 2
    assert shift.hand[purple_pox] == orange_toe and shift.hand[orange_toe + 1] == blue_oil + 1
    # The real action behind the relabelled one:
    assert shift.action[A.PLAY + 5 * purple_pox + 2] == A.PLAY + 5 * orange_toe + 1
    assert shift.action[A.PLAY + 5 * orange_toe + 1] == A.PLAY + 5 * blue_oil + 0
    assert shift.action[A.ASK + 1] == A.ASK + 0  # "purple?" is "orange?"
    assert shift.action[A.ASK + 5 + 0] == A.ASK + 5 + 4  # "Dead Man's Toe?" is "Oil of Boil?"
    assert shift.action[A.CHOOSE + purple_pox] == A.CHOOSE + orange_toe
    rest = np.arange(A.FINISH, A.NUM_ACTIONS)
    assert shift.action[rest].tolist() == rest.tolist()
    sizes = field(HP, "pile_sizes")
    assert shift.observation[sizes].tolist() == [sizes.start + (s - 1) % 5 for s in range(5)]


def test_hocus_pocus_action_ranges_follow_the_action_table():
    """The relabeled action ranges are read from ``actions.TABLE``; its rows tile the space."""
    actions = hocus_pocus_symmetries.ACTIONS
    assert [actions.offsets[name] for _, _, name, _ in A.TABLE] == [row[0] for row in A.TABLE]
    assert actions.size == A.NUM_ACTIONS


def test_hocus_pocus_other_options_keep_the_group():
    """Spells, tricks, rewards and the Sun track name no colour, type or space."""
    options = {
        "spell_deck": ("Book!", "Take Flight", "Take Flight"),
        "sunrise_steps": 5,
        "take_flight_ignores_salt": True,
        "salt_after_trick": True,
        "stun_reward": 0.5,
        "match_reward": 0.1,
    }
    assert [key(s) for s in symmetries(HP, 3, options)] == [key(s) for s in symmetries(HP, 3)]


def test_hocus_pocus_without_binx_cards_the_reflections_join():
    """Without Binx cards the Spell Book pairs (c, c±2) also survive c -> −c (mod 5): the ten
    symmetries of a pentagon."""
    names = [s.name for s in symmetries(HP, 4, {"binx_cards": ()})]
    assert len(names) == 10 and "colours 04321 types 04321" in names


def test_headless_horseman_group_permutes_each_kind_of_scare_token():
    """Winning the Game: only "all four Pumpkin Scare tokens ... face up" matters, and no
    creature has an effect: the 4!·4! permutations keeping each kind, on ``tokens_up`` only."""
    group = symmetries(HH, 3)
    tokens = field(HH, "tokens_up")
    pumpkins = set(range(4))
    assert len(group) == 576
    images = set()
    for s in group:
        moved = (s.observation[tokens] - tokens.start).tolist()
        assert set(moved[:4]) == pumpkins and set(moved[4:]) == set(range(4, 8))
        outside = np.delete(np.arange(len(s.observation)), np.arange(tokens.start, tokens.stop))
        assert s.observation[outside].tolist() == outside.tolist()
        assert s.action.tolist() == list(range(31)) and s.hand.tolist() == list(range(30))
        images.add(tuple(moved))
    assert len(images) == 576


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("env_id", ["voodoo_mania_v1", "hexenflug_v1"])
def test_competitive_games_have_no_symmetries(env_id):
    with pytest.raises(ConfigError, match=rf"^other_play: {env_id} has no symmetries: Other-Play"):
        symmetries(env_id, 2)


@pytest.mark.parametrize(
    "options",
    [
        {"binx_cards": ((0, 1),)},
        {"board": ((4, 4), (0, 0), (1, 1), (2, 2), (3, 4))},
        {"spell_book_cards": ((0, 2),)},
    ],
)
def test_hocus_pocus_options_that_leave_only_the_identity(options):
    with pytest.raises(ConfigError, match=r"^other_play: hocus_pocus_v1 has no symmetries: "):
        symmetries(HP, 4, options)


def test_player_count_and_options_are_checked_as_by_make():
    with pytest.raises(ConfigError, match="takes 2 to 6 players"):
        symmetries(HP, 7)
    with pytest.raises(ConfigError, match="unknown option"):
        symmetries(HH, 3, {"voodoo": 1})


# ----------------------------------------------------------------------------- twin games
HOCUS_POCUS_RELABELLED = {
    "hands",
    "deck",
    "piles",
    "discard",
    "removed",
    "questions",
    "set_aside",
    "handed",
    "received",
    "log",
}
HOCUS_POCUS_KEPT = {
    "spell_deck",
    "spell_discard",
    "rng",
    "turn",
    "actor",
    "phase",
    "binx",
    "stunned",
    "sun",
    "tricks_used",
    "trick_this_turn",
    "no_questions",
    "spell",
    "spell_context",
    "queue",
    "count",
    "partner",
    "outcome",
    "stuns",
    "turns",
    "reward",
}
HORSEMAN_RELABELLED = {"tokens", "log"}
HORSEMAN_KEPT = {
    "hands",
    "draw_pile",
    "rng",
    "ichabod",
    "horseman",
    "discard",
    "row",
    "flipped",
    "pending",
    "actor",
    "phase",
    "outcome",
    "turns",
    "rounds",
}


def test_the_relabelling_helpers_place_every_state_field():
    """A field added to a ``State`` must be sorted into relabelled or kept below."""
    assert {f.name for f in dataclasses.fields(HocusPocusState)} == (
        HOCUS_POCUS_RELABELLED | HOCUS_POCUS_KEPT
    )
    assert {f.name for f in dataclasses.fields(HorsemanState)} == (
        HORSEMAN_RELABELLED | HORSEMAN_KEPT
    )


def hocus_pocus_names(s: Symmetry) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """σ on cards, spaces and questions, read back from the gather arrays (σ⁻¹)."""
    sizes = field(HP, "pile_sizes")
    return (
        inverse(s.hand),
        inverse(s.observation[sizes] - sizes.start),
        inverse(s.action[A.ASK : A.ASK + 10]),
    )


def relabel_hocus_pocus(state: HocusPocusState, s: Symmetry) -> HocusPocusState:
    """``state`` with every card, space and question renamed by σ (its generator copied)."""
    card_of, space_of, question_of = hocus_pocus_names(s)

    def cards(listed: list[int]) -> list[int]:
        return [int(card_of[c]) for c in listed]

    def event(e: tuple) -> tuple:
        if e[0] == "ask":
            return (*e[:2], int(question_of[e[2]]))
        if e[0] == "play":
            return (*e[:2], int(card_of[e[2]]), int(space_of[e[3]]))
        return (*e[:2], int(card_of[e[2]])) if e[0] == "discard" else e

    twin = copy.deepcopy(state)
    twin.hands = [cards(h) for h in state.hands]
    twin.deck, twin.discard, twin.removed = (
        cards(state.deck),
        cards(state.discard),
        cards(state.removed),
    )
    twin.piles = [[] for _ in state.piles]
    for space, pile in enumerate(state.piles):
        twin.piles[space_of[space]] = cards(pile)
    twin.questions[:, :, question_of] = state.questions
    twin.set_aside = {seat: int(card_of[c]) for seat, c in state.set_aside.items()}
    twin.handed, twin.received = (
        [(int(card_of[c]) if c >= 0 else c, seat) for c, seat in pairs]
        for pairs in (state.handed, state.received)
    )
    twin.log = [event(e) for e in state.log]
    return twin


def relabel_horseman(state: HorsemanState, s: Symmetry) -> HorsemanState:
    """``state`` with every Scare token renamed by σ (its generator copied)."""
    tokens = field(HH, "tokens_up")
    token_of = inverse(s.observation[tokens] - tokens.start)
    twin = copy.deepcopy(state)
    twin.tokens = [int(token_of[t]) for t in state.tokens]
    twin.log = [("flip", int(token_of[e[1]])) if e[0] == "flip" else e for e in state.log]
    return twin


class TallestWatchingRules(HocusPocusRules):
    """The rules, keeping the spaces Book! and Boys, Boys chose (``picks``) and counting the
    choices among tallest piles tied by height, which the lower space index breaks (``ties``)."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.picks: list[list[int]] = []
        self.ties = 0

    def _tallest(self, state: HocusPocusState, count: int) -> list[int]:
        heights = sorted((len(p) for p in state.piles), reverse=True)
        self.ties += heights[count - 1] > 0 and heights[count - 1] == heights[count]
        self.picks.append(super()._tallest(state, count))
        return self.picks[-1]


def play_twins(
    rules,
    twin_rules,
    encoder,
    real,
    twin,
    s: Symmetry,
    choose: Callable,
    go_on: Callable = lambda real, twin: True,
) -> bool:
    """Play ``real`` with ``choose``'s actions and ``twin`` with their relabelled ones; after
    every step every seat's observation, the mask, every seat's hand in ``state()``, the infos,
    the rewards and the end agree through ``s``. Returns whether they were compared to the end
    (``go_on`` may stop the comparison)."""
    relabelled_action = inverse(s.action)
    hands = encoder.state_layout["hands"]
    while True:
        for seat in range(rules.num_players):
            seen = encoder.observe(real, seat)[s.observation]
            np.testing.assert_array_equal(encoder.observe(twin, seat), seen)
            assert twin_rules.info(twin, seat) == rules.info(real, seat)
        real_hands = encoder.encode_state(real)[hands].reshape(-1, len(s.hand))
        twin_hands = encoder.encode_state(twin)[hands].reshape(-1, len(s.hand))
        np.testing.assert_array_equal(twin_hands, real_hands[:, s.hand])
        assert twin_rules.is_over(twin) == rules.is_over(real)
        if rules.is_over(real):
            return True
        assert twin_rules.acting_seat(twin) == rules.acting_seat(real)
        mask = rules.legal_mask(real)
        np.testing.assert_array_equal(twin_rules.legal_mask(twin), mask[s.action])
        action = choose(real, mask)
        reward = rules.apply(real, action)
        twin_reward = twin_rules.apply(twin, int(relabelled_action[action]))
        if not go_on(real, twin):
            return False
        assert twin_reward == reward


def hocus_pocus_twins(n: int, options: dict, s: Symmetry, seed: int, warmup: int):
    """A real game (random legal actions, a quarter of them; the greedy heuristic's otherwise,
    so witches get stunned and rounds end) relabelled after ``warmup`` steps and played beside
    its twin. Returns (compared to the end, stuns in the real game, ties broken by space index
    while compared)."""
    parsed = envs.make(HP, num_players=n, **options).unwrapped.options
    rules, twin_rules = TallestWatchingRules(n, parsed), TallestWatchingRules(n, parsed)
    encoder = Encoder(rules)
    rng = np.random.default_rng(seed)
    greedy = HocusPocusHeuristic()

    def choose(state: HocusPocusState, mask: np.ndarray) -> int:
        if rng.random() < 0.25:
            return int(rng.choice(np.flatnonzero(mask)))
        return greedy.act(encoder.observe(state, state.actor), mask)

    real = rules.new_game(np.random.default_rng(seed), seed % n)
    for _ in range(warmup):
        if rules.is_over(real):
            break
        rules.apply(real, choose(real, rules.legal_mask(real)))
    rules.picks, rules.ties = [], 0
    twin = relabel_hocus_pocus(real, s)
    card_of, space_of, _ = hocus_pocus_names(s)
    stuns = [real.stuns]

    def go_on(real: HocusPocusState, twin: HocusPocusState) -> bool:
        """Stop where a tie broken by space index made the twin strip other piles than the real
        game's, relabelled. At the End of Round the Binx and Spell Book cards are gathered pile
        by pile in space order and shuffled into the deck: the same shuffle of a list in another
        order, so couple it as the same relabelled outcome."""
        relabelled = [sorted(int(space_of[p]) for p in pick) for pick in rules.picks]
        if relabelled != [sorted(pick) for pick in twin_rules.picks]:
            return False
        if real.stuns > stuns[-1]:
            stuns.append(real.stuns)
            relabelled = [int(card_of[c]) for c in real.deck]
            assert sorted(twin.deck) == sorted(relabelled)
            twin.deck = relabelled
        return True

    ended = play_twins(rules, twin_rules, encoder, real, twin, s, choose, go_on)
    return ended, real.stuns, rules.ties


def test_hocus_pocus_twin_games_play_alike():
    """Every rule (Ask One Question, Play One Ingredient Card, Special Ingredients, Spell Cards,
    Trick Tokens, Stunning A Witch, End of Round) is blind to the shifts: 50 games, 2–6 players,
    shaped rewards on, relabelled after 0, 15 or 30 steps. A comparison stops only where Book! or
    Boys, Boys broke a tie among the tallest piles by space index and so stripped other piles in
    the twin (41 of the 50 games are compared to the end; 9 stop so)."""
    group = symmetries(HP, 2)
    results = [
        hocus_pocus_twins(
            2 + game % 5,
            {"stun_reward": 0.5, "match_reward": 0.1},
            group[1 + game % 4],
            seed=game,
            warmup=15 * (game % 3),
        )
        for game in range(50)
    ]
    compared = [stuns for ended, stuns, _ in results if ended]
    assert len(compared) >= 38
    assert sum(compared) >= 15  # witches were stunned and rounds began again under comparison
    assert all(ties for ended, _, ties in results if not ended)


def test_hocus_pocus_twin_games_under_a_reflection():
    """Without Binx cards, c -> −c on colours and types is a symmetry too (ten games)."""
    reflections = [s for s in symmetries(HP, 3, {"binx_cards": ()}) if s.name.startswith("col")]
    results = [
        hocus_pocus_twins(
            3 + game % 2, {"binx_cards": ()}, reflections[game % 5], seed=100 + game, warmup=0
        )
        for game in range(10)
    ]
    assert sum(ended for ended, _, _ in results) >= 8


def test_book_breaks_a_tie_by_the_lower_space_index_the_one_inexact_place():
    """Spell Cards (RULES.md's assumptions): Book! discards the tops of the two tallest piles, ties
    to the lower space index. With five piles of one card, the real game strips spaces 0 and 1; its
    twin strips its own spaces 0 and 1, which are the real spaces 4 and 0: the games part."""
    piles = [
        [card("orange", TOE)],
        [card("orange", POX)],
        [card("orange", TONGUE)],
        [card("orange", NEWT)],
        [card("purple", TOE)],
    ]
    hands = [[card("yellow", OIL), card("blue", OIL)], []]
    deck = [card("purple", POX), card("yellow", TOE)]
    rules, real = table(n=2, hands=hands, piles=piles, deck=deck, spells=["Book!"])
    real.tricks_used[C.SALT] = True
    shift = symmetries(HP, 2)[1]
    twin = relabel_hocus_pocus(real, shift)
    encoder = Encoder(rules)
    np.testing.assert_array_equal(
        encoder.observe(twin, 0), encoder.observe(real, 0)[shift.observation]
    )
    rules.apply(real, A.REVEAL_SPELL)
    rules.apply(twin, int(inverse(shift.action)[A.REVEAL_SPELL]))
    assert real.phase == twin.phase == Phase.DISCARD
    assert [len(p) for p in real.piles] == [len(p) for p in twin.piles] == [0, 0, 1, 1, 1]
    assert not np.array_equal(encoder.observe(twin, 0), encoder.observe(real, 0)[shift.observation])


@pytest.mark.parametrize(
    "n, options",
    [(2, {}), (3, {"handless_seats": (1,)}), (4, {"reshuffle": True, "progress_reward": 0.5})],
)
def test_headless_horseman_twin_games_play_alike(n, options):
    """Scare spaces and the Horseman flip tokens; a game is lost when the fourth pumpkin is up
    (Winning the Game): the same in the twin with its tokens renamed. Random legal play, 17
    games per case, relabelled after 0 to 12 steps, all compared to the end."""
    group = symmetries(HH, n, options)
    parsed = envs.make(HH, num_players=n, **options).unwrapped.options
    rules = HeadlessHorsemanRules(n, parsed)
    encoder = HorsemanEncoder(rules)
    flipped = 0
    rng = np.random.default_rng(n)

    def choose(state: HorsemanState, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    for game in range(17):
        real = rules.new_game(np.random.default_rng(1000 + game))
        for _ in range(game % 4 * 4):
            if not rules.is_over(real):
                rules.apply(real, choose(real, rules.legal_mask(real)))
        s = group[1 + game * 37 % (len(group) - 1)]
        assert play_twins(rules, rules, encoder, real, relabel_horseman(real, s), s, choose)
        flipped += real.flipped
    assert flipped >= 17
