"""Rule-based Voodoo Mania players that read only their observation and mask.

*fast*: plays the first valid card at once (normal or Voodoo!), cycles when stuck, never waits
while it can act. *chain*: prefers normal plays whose new wanted pair it can answer again from its
own hand (so it keeps the pile to itself), keeps its Voodoo! cards until the Voodoo pile holds a
card for every other player (so the shout hurts everyone), and cycles when stuck. *blocker*: calls
Voodoo! as soon as the shout sends anyone a card (the Voodoo pile holds more than its top card),
and otherwise makes the normal play whose new wanted pair the fewest cards outside its hand can
answer (the deck's cards for that pair, known from the components, minus its own); it cycles when
stuck.
"""

from __future__ import annotations

import numpy as np

from cauldron.envs.core.layout import Layout
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C
from cauldron.envs.voodoo_mania.encoding import OBSERVATION_FIELDS, SIDE

LAYOUT = Layout(OBSERVATION_FIELDS)
Q = C.NUM_PAIRS


class FastVoodoo:
    """Plays any valid card at once; cycles when stuck."""

    name = "heuristic:fast"

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        acting = legal[legal != A.WAIT]
        return int(acting[0]) if acting.size else A.WAIT


class ChainVoodoo:
    """Chains its own plays and saves Voodoo! for a full pile (see the module docstring)."""

    name = "heuristic:chain"

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = observation
        plays = obs[LAYOUT["hand_plays"]].reshape(C.HAND_SIZE, 2, 2)
        hand = obs[LAYOUT["hand"]].reshape(C.HAND_SIZE, 2, SIDE)
        normal = [
            (slot, side)
            for slot in range(C.HAND_SIZE)
            for side in (0, 1)
            if plays[slot, side, 0] and action_mask[A.PLAY + 2 * slot + side]
        ]
        voodoo = [
            (slot, side)
            for slot in range(C.HAND_SIZE)
            for side in (0, 1)
            if plays[slot, side, 1] and action_mask[A.PLAY + 2 * slot + side]
        ]
        players = int(np.count_nonzero(obs[LAYOUT["hand_sizes"]] + obs[LAYOUT["pile_sizes"]]))
        pile = round(obs[LAYOUT["voodoo_pile_size"]][0] * C.NUM_CARDS)
        if voodoo and pile >= players:
            slot, side = voodoo[0]
            return A.PLAY + 2 * slot + side
        if normal:
            slot, side = max(normal, key=lambda p: self._follow_ups(hand, *p))
            return A.PLAY + 2 * slot + side
        if voodoo:
            slot, side = voodoo[0]
            return A.PLAY + 2 * slot + side
        cycles = np.flatnonzero(action_mask[A.CYCLE :])
        return A.CYCLE + int(cycles[0]) if cycles.size else A.WAIT

    @staticmethod
    def _follow_ups(hand: np.ndarray, slot: int, side: int) -> int:
        """How many of the other hand cards could answer the pair this play would ask for."""
        wanted = int(np.argmax(hand[slot, side, Q:]))
        return sum(
            1
            for other in range(C.HAND_SIZE)
            if other != slot
            and hand[other].any()
            and any(hand[other, s, wanted] or hand[other, s, Q + wanted] for s in (0, 1))
        )


def deck_answers() -> np.ndarray:
    """``[25]``: per pair, how many cards of the deck (public component data) can be laid on it,
    with a side that shows it (normal play) or misses it (Voodoo!)."""
    counts = np.zeros(Q, int)
    for card in C.load_deck():
        pairs = set().union(*(side.shows | {side.missing} for side in card))
        counts[sorted(pairs)] += 1
    return counts


class BlockerVoodoo:
    """Calls Voodoo! as soon as it sends cards, and otherwise asks for pairs few others can
    answer (see the module docstring)."""

    name = "heuristic:blocker"

    def __init__(self) -> None:
        self.answers = deck_answers()

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = observation
        plays = obs[LAYOUT["hand_plays"]].reshape(C.HAND_SIZE, 2, 2)
        hand = obs[LAYOUT["hand"]].reshape(C.HAND_SIZE, 2, SIDE)
        legal = [
            (slot, side)
            for slot in range(C.HAND_SIZE)
            for side in (0, 1)
            if action_mask[A.PLAY + 2 * slot + side]
        ]
        normal = [p for p in legal if plays[p[0], p[1], 0]]
        voodoo = [p for p in legal if plays[p[0], p[1], 1]]
        pile = round(obs[LAYOUT["voodoo_pile_size"]][0] * C.NUM_CARDS)
        if voodoo and (pile > 1 or not normal):
            slot, side = voodoo[0]
            return A.PLAY + 2 * slot + side
        if normal:
            slot, side = min(normal, key=lambda p: self._others_answers(hand, *p))
            return A.PLAY + 2 * slot + side
        cycles = np.flatnonzero(action_mask[A.CYCLE :])
        return A.CYCLE + int(cycles[0]) if cycles.size else A.WAIT

    def _others_answers(self, hand: np.ndarray, slot: int, side: int) -> int:
        """How many cards outside this hand could answer the pair this play would ask for."""
        wanted = int(np.argmax(hand[slot, side, Q:]))
        return int(self.answers[wanted]) - ChainVoodoo._follow_ups(hand, slot, side)


HEURISTICS = {"fast": FastVoodoo, "chain": ChainVoodoo, "blocker": BlockerVoodoo}
