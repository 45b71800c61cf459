"""The batched Hexenflug engine is the reference rules.

States come from reference games of random and heuristic play at every player count and option
set that changes a rule; each is converted to a tensor row, every legal action is applied by both
engines, and the next states, rewards, observations, masks and ``state()`` are compared.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from cauldron.agents.hexenflug.heuristic import cautious, greedy
from cauldron.envs.hexenflug import actions as A
from cauldron.envs.hexenflug.batched import BatchedHexenflug, from_reference, to_reference
from cauldron.envs.hexenflug.encoding import Encoder
from cauldron.envs.hexenflug.options import HexenflugOptions
from cauldron.envs.hexenflug.phases import Phase
from cauldron.envs.hexenflug.rules import HexenflugRules, State

CPU = torch.device("cpu")


# option sets that change a rule or an encoding (reward changes only the final rewards)
OPTION_SETS = [
    {},
    {"beginner_crash_rule": True, "reward": "score_margin"},
    {"books_per_colour": 2},
]
CASES = [(n, options) for n in (2, 3, 4, 5) for options in OPTION_SETS]


def canonical(state: State) -> dict:
    """Everything the rules read: unordered collections sorted, the log and generator left out."""
    out = {k: v for k, v in vars(state).items() if k not in ("rng", "log")}
    for name in ("display", "discard", "added", "exam_cards"):
        out[name] = sorted(out[name])
    out["hands"] = [sorted(h) for h in state.hands]
    return out


def engines(n: int, options: dict) -> tuple[HexenflugRules, Encoder, BatchedHexenflug]:
    rules = HexenflugRules(n, HexenflugOptions(**options))
    return rules, Encoder(rules), BatchedHexenflug(rules, CPU)


def reference_states(
    rules: HexenflugRules, encoder: Encoder, policy: str, count: int, seed: int
) -> list[State]:
    """``count`` states (deep copies) met in reference games of random or heuristic play: half
    the rare ones (black-cat discards, examinations, a last card in the draw pile) and a tenth of
    the others, so that the few thousand states of the default run reach every rule."""
    rng = np.random.default_rng(seed)
    players = [cautious(), greedy()]
    states: list[State] = []
    while len(states) < count:
        state = rules.new_game(np.random.default_rng(int(rng.integers(2**31))), 0)
        while not rules.is_over(state) and len(states) < count and state.turns < 400:
            rare = state.phase in (Phase.CAT_DISCARD, Phase.EXAM_BUILD) or len(state.draw_pile) < 3
            if rng.random() < (0.5 if rare else 0.1):
                states.append(copy.deepcopy(state))
            mask = rules.legal_mask(state)
            if policy == "random":
                action = int(rng.choice(np.flatnonzero(mask)))
            else:
                seat = state.actor
                action = players[seat % 2].act(encoder.observe(state, seat), mask)
            rules.apply(state, action)
    return states


def check_transitions(
    n: int, options: dict, policy: str, count: int, seed: int, per_state: int = 167
) -> int:
    """Apply up to ``per_state`` legal actions (drawn at random) of each of ``count`` reference
    states with both engines and compare; return the number of transitions checked."""
    rules, encoder, game = engines(n, options)
    states = reference_states(rules, encoder, policy, count, seed)
    rng = np.random.default_rng(seed)
    pairs = []
    for s in states:
        legal = np.flatnonzero(rules.legal_mask(s))
        picked = rng.choice(legal, min(per_state, len(legal)), replace=False)
        pairs += [(s, int(a)) for a in sorted(picked)]
    batch = from_reference([s for s, _ in pairs], CPU)
    mask_before = game.legal_mask(batch)
    actions = torch.tensor([a for _, a in pairs])
    generator = torch.Generator().manual_seed(seed)
    rewards = game.apply(batch, actions, generator)
    seat = game.acting_seat(batch)
    obs, mask, full = game.observe(batch, seat), game.legal_mask(batch), game.encode_state(batch)
    for row, (before, action) in enumerate(pairs):
        state = copy.deepcopy(before)
        assert mask_before[row].numpy().astype(np.int8).tolist() == rules.legal_mask(state).tolist()
        expected = rules.apply(state, action)
        got = to_reference(batch, row, state.rng)
        chance = before.phase == 0 and action == A.DRAW and len(before.draw_pile) == 1
        context = (n, options, policy, row, A.action_name(action), before.phase.name)
        if chance and state.draw_pile:  # a reshuffle: same cards, any order
            assert sorted(got.draw_pile) == sorted(state.draw_pile), context
            got.draw_pile = state.draw_pile
        assert canonical(got) == canonical(state), context
        assert rewards[row].tolist() == list(expected), context
        if chance:
            continue  # the observation reads the same state; compared for chance-free rows
        assert int(seat[row]) == state.actor, context
        assert np.array_equal(obs[row].numpy(), encoder.observe(state, state.actor)), context
        assert mask[row].numpy().astype(np.int8).tolist() == rules.legal_mask(state).tolist()
        assert np.array_equal(full[row].numpy(), encoder.encode_state(state)), context
    return len(pairs)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_conversion_round_trip_is_lossless(n):
    rules, encoder, game = engines(n, OPTION_SETS[n % len(OPTION_SETS)])
    states = reference_states(rules, encoder, "random", 100, seed=n)
    states += reference_states(rules, encoder, "heuristic", 100, seed=n)
    batch = from_reference(states, CPU)
    for row, state in enumerate(states):
        back = to_reference(batch, row, state.rng)
        assert canonical(back) == canonical(state)
        again = from_reference([back], CPU)
        assert all(torch.equal(getattr(again, f)[0], getattr(batch, f)[row]) for f in vars(again))


@pytest.mark.parametrize("policy", ["random", "heuristic"])
@pytest.mark.parametrize("n, options", CASES)
def test_every_transition_equals_the_reference(n, options, policy):
    """Up to 4 legal actions of 80 states per case: next state, rewards, observation, mask and
    ``state()`` equal the reference's (the draw pile's order only where a reshuffle drew)."""
    assert check_transitions(n, options, policy, 80, seed=7 * n, per_state=4) > 80


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["random", "heuristic"])
@pytest.mark.parametrize("n, options", CASES)
def test_every_transition_equals_the_reference_at_scale(n, options, policy):
    """At least 10^5 states in all (24 cases of 4,500 states, two legal actions of each)."""
    assert check_transitions(n, options, policy, 4_500, seed=1_000 + n, per_state=2) >= 4_500
