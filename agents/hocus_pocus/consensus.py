"""Hocus Pocus ``consensus``: every seat chases the attribute the table shows, not its own hand.

Its convention differs from ``greedy`` (whose target leans on its own hand, so partners chase
different attributes) and ``planner``: the *target* is read from public information only, so
every ``consensus`` seat at the table picks the same one: each top showing an attribute counts 2,
each partner's "yes" this round 1, each question anyone asked this round 1 (by this convention a
question names what the asker holds); only a tie goes to the own hand, then to the lowest id.

- Ask: the attribute held most in the own hand (a signal to the others), unless the target has
  not been asked this round; first asked wins ties.
- Play: the card that makes the most tops show the target (a stun first), then the card whose
  other attribute shows on the most tops; a Spell Book card only if nothing else is as good.
- Binx goes in front of the left partner, who plays next, so the table sees the hand that moves.
- Circle of Salt on any Spell once three tops show the target.
- Give up the card with the fewest attributes among the tops, off target; stun Winifred; with
  no play, Billy Butcherson, then Burning Rain of Death, then reveal a Spell.
"""

from __future__ import annotations

import numpy as np

from cauldron.agents.hocus_pocus.cards import HAS, IS_SPELL_BOOK, LAYOUT, TOP_HAS, top_cards
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus.phases import Phase


def public_scores(observation: np.ndarray) -> np.ndarray:
    """``[10]``: 2 per top showing the attribute, 1 per partner's "yes", 1 per asker."""
    obs = observation
    shown = TOP_HAS[top_cards(obs)].sum(0)
    yes = obs[LAYOUT["answers_yes"]].reshape(6, 10)[1:].sum(0)
    asked = obs[LAYOUT["questions_asked"]].reshape(6, 10).sum(0)
    return 2.0 * shown + yes + asked


class ConsensusHeuristic:
    """The public-target convention described in the module docstring."""

    name = "heuristic:consensus"

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = observation
        legal = np.flatnonzero(action_mask)
        phase = int(np.argmax(obs[LAYOUT["phase"]]))
        hand = obs[LAYOUT["hand"]] > 0
        tops = top_cards(obs)
        own = HAS[hand].sum(0)
        scores = public_scores(obs) + 0.01 * own
        target = int(np.argmax(scores))
        if phase == Phase.ASK:
            asked = obs[LAYOUT["questions_asked"]].reshape(6, 10).any(0)
            return A.ASK + (int(np.argmax(own)) if asked[target] else target)
        if phase == Phase.ACT:
            return self._act(legal, tops, target)
        if phase == Phase.BINX:
            return A.BINX + 1
        if phase == Phase.STUN_CHOICE:
            return A.STUN_WINIFRED
        if phase == Phase.SALT:
            return A.SALT_USE if TOP_HAS[tops][:, target].sum() >= 3 else A.SALT_DECLINE
        if phase == Phase.DISCARD and A.FINISH in legal:
            return A.FINISH
        choices = [a - A.CHOOSE for a in legal if A.CHOOSE <= a < A.FINISH]
        worth = HAS.astype(float) @ TOP_HAS[tops].sum(0) + 5.0 * HAS[:, target]
        return A.CHOOSE + min(choices, key=lambda c: worth[c])

    @staticmethod
    def _act(legal: np.ndarray, tops: np.ndarray, target: int) -> int:
        plays = [a for a in legal if A.PLAY <= a < A.CHOOSE]
        if not plays:
            for trick in (A.BILLY, A.BURN):
                if trick in legal:
                    return trick
            return A.REVEAL_SPELL

        def value(action: int) -> float:
            card, space = divmod(action - A.PLAY, 5)
            after = tops.copy()
            after[space] = card
            shown = TOP_HAS[after].sum(0)
            other = shown[HAS[card]].sum() - shown[target] * HAS[card, target]
            stun = 100.0 * (shown.max() == len(tops))
            return stun + shown[target] + 0.1 * other - 0.5 * IS_SPELL_BOOK[card]

        return max(plays, key=value)
