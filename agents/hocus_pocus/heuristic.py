"""Hocus Pocus heuristics, each reading only its observation and mask: ``greedy`` (below),
``planner`` (:mod:`cauldron.agents.hocus_pocus.planner`) and ``consensus``
(:mod:`cauldron.agents.hocus_pocus.consensus`), listed in ``HEURISTICS``.

``greedy`` picks a *target* attribute (one colour or one type) that the team can most likely bring
to all five tops: tops already showing it count double, own cards count once, and every "yes"
answer from a team-mate counts once. It asks about that target (or the best one not yet asked this
round), plays the card that makes the most tops share the target (a stun first of all), avoids
Spell Book cards (as the default components place them), uses Billy Butcherson or Burning Rain of
Death instead of a failed play, spends Circle of Salt on Spells that strip the Cauldron, discards
the single least useful card when it must, and stuns Winifred when it may.
"""

from __future__ import annotations

import numpy as np

from cauldron.agents.hocus_pocus.cards import ATTRIBUTES, CAULDRON_SPELLS, IS_SPELL_BOOK, LAYOUT
from cauldron.agents.hocus_pocus.consensus import ConsensusHeuristic
from cauldron.agents.hocus_pocus.planner import PlannerHeuristic
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.phases import Phase


class HocusPocusHeuristic:
    """The greedy, question-using player described in the module docstring."""

    name = "heuristic:greedy"

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions: everything it needs is in the observation."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = observation
        legal = np.flatnonzero(action_mask)
        phase = int(np.argmax(obs[LAYOUT["phase"]]))
        hand = np.flatnonzero(obs[LAYOUT["hand"]])
        tops = obs[LAYOUT["pile_tops"]].reshape(C.NUM_SPACES, C.NUM_CARDS)
        top_cards = [int(np.argmax(row)) if row.any() else -1 for row in tops]
        target, scores = self._target(obs, hand, top_cards)
        if phase == Phase.ASK:
            asked = obs[LAYOUT["questions_asked"]].reshape(6, 10)[0]
            order = sorted(range(10), key=lambda q: (asked[q], -scores[q]))
            return A.ASK + order[0]
        if phase == Phase.ACT:
            return self._act(legal, hand, top_cards, target)
        if phase == Phase.BINX:
            return A.BINX
        if phase == Phase.STUN_CHOICE:
            return A.STUN_WINIFRED
        if phase == Phase.SALT:
            spell = int(np.argmax(obs[LAYOUT["current_spell"]]))
            shared = sum(1 for c in top_cards if c >= 0 and target in ATTRIBUTES[c])
            return A.SALT_USE if spell in CAULDRON_SPELLS and shared >= 2 else A.SALT_DECLINE
        if phase == Phase.DISCARD and A.FINISH in legal:
            return A.FINISH
        choices = [a - A.CHOOSE for a in legal if A.CHOOSE <= a < A.FINISH]
        return A.CHOOSE + min(choices, key=lambda c: self._usefulness(c, target, top_cards))

    def _target(self, obs: np.ndarray, hand: np.ndarray, top_cards: list[int]):
        scores = np.zeros(10)
        for card in top_cards:
            if card >= 0:
                scores[ATTRIBUTES[card]] += 2.0
        for card in hand:
            scores[ATTRIBUTES[card]] += 1.0
        scores += obs[LAYOUT["answers_yes"]].reshape(6, 10)[1:].sum(axis=0)
        return int(np.argmax(scores)), scores

    def _act(self, legal: np.ndarray, hand: np.ndarray, top_cards: list[int], target: int) -> int:
        plays = [a for a in legal if A.PLAY <= a < A.CHOOSE]
        if not plays:
            for trick in (A.BILLY, A.BURN):
                if trick in legal:
                    return trick
            return A.REVEAL_SPELL
        return max(plays, key=lambda a: self._play_value(a, top_cards, target))

    @staticmethod
    def _play_value(action: int, top_cards: list[int], target: int) -> float:
        card, space = divmod(action - A.PLAY, 5)
        after = list(top_cards)
        after[space] = card
        counts = np.zeros(10)
        for c in after:
            if c >= 0:
                counts[ATTRIBUTES[c]] += 1
        stun = 100.0 if counts.max() == C.NUM_SPACES else 0.0
        return stun + counts[target] + 0.3 * counts.max() - 0.5 * IS_SPELL_BOOK[card]

    @staticmethod
    def _usefulness(card: int, target: int, top_cards: list[int]) -> float:
        shared = sum(1 for c in top_cards if c >= 0 and set(ATTRIBUTES[c]) & set(ATTRIBUTES[card]))
        return 2.0 * (target in ATTRIBUTES[card]) + shared


HEURISTICS = {
    "greedy": HocusPocusHeuristic,
    "planner": PlannerHeuristic,
    "consensus": ConsensusHeuristic,
}
