"""Hocus Pocus ``planner``: a player that reads the questions and answers to locate key cards.

A stun needs all five tops to share one attribute (a colour or a type). For a target attribute
``q`` a top that lacks ``q`` can be covered only by a *key card*: a card with ``q`` that also
matches the top (two copies in the whole game for a top card). The planner rates every attribute
by the expected number of spaces that show it or can be covered by a key card that the team
holds: its own cards count 1, a partner's card the chance that the partner holds it, estimated
from what the observation shows:

- cards it has seen (its hand, the Cauldron, the discard pile, cards out of the game, the Binx
  holder's face-up hand) are nobody's secret; the rest are spread over the hidden hands and the
  deck in proportion to their sizes;
- a partner's "no" to a colour or type makes its cards of that attribute unlikely (the answer may
  be old), a "yes" makes them as likely as one such card among the unseen ones;
- the Binx holder's hand is known, and so is the card it last handed to a partner.

It asks the question that would locate the most key cards of its best attribute among partners
who have not answered it yet, plays the card that leaves the best-rated Cauldron (a stun first),
uses Billy Butcherson or Burning Rain of Death instead of a failed play, gives up the card least
useful to the plan, uses Circle of Salt on Spells that strip a Cauldron the plan
relies on, puts Binx in front of itself (its face-up hand lets partners plan) and stuns Winifred.
"""

from __future__ import annotations

import numpy as np

from cauldron.agents.hocus_pocus.cards import (
    CAULDRON_SPELLS,
    COLOUR,
    HAS,
    IS_SPELL_BOOK,
    KEYS,
    KIND,
    LAYOUT,
    TOP_HAS,
    top_cards,
)
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.phases import Phase

GRID = 2.0**20  # chances are rounded to multiples of 1 / GRID, so their sums are exact
NO_WEIGHT = 0.3  # a partner's "no" may be old: its hand has changed since
PARTNER_WEIGHT = 0.8  # a partner's card is played later than one's own
COVER_WEIGHT = 0.7  # a space that a key card can cover counts this much of one that shows it


def holdings(observation: np.ndarray) -> np.ndarray:
    """``[6, 50]``: row 0 the own hand (0/1), row p the chance that the partner ``p`` seats to
    the left holds each card (rows past the table are 0), a multiple of ``1 / GRID``."""
    obs = observation
    n = int(np.argmax(obs[LAYOUT["num_players"]])) + 2
    hand = obs[LAYOUT["hand"]] > 0
    sizes = np.rint(obs[LAYOUT["hand_sizes"]].astype(np.float64) * C.NUM_CARDS)
    binx = int(np.argmax(obs[LAYOUT["binx_holder"]])) - 1
    binx_hand = obs[LAYOUT["binx_hand"]] > 0
    seen = (
        hand
        | (obs[LAYOUT["pile_tops"]].reshape(C.NUM_SPACES, -1) > 0).any(0)
        | (obs[LAYOUT["buried_cards"]].reshape(C.NUM_SPACES, -1) > 0).any(0)
        | (obs[LAYOUT["discard_pile"]] > 0)
        | (obs[LAYOUT["removed_cards"]] > 0)
        | binx_hand
    )
    unseen = ~seen
    base = sizes / max(int(unseen.sum()), 1)  # [6]
    hold = base[:, None] * unseen[None, :]
    yes = obs[LAYOUT["answers_yes"]].reshape(6, 10) > 0
    no = obs[LAYOUT["answers_no"]].reshape(6, 10) > 0
    count = (unseen[:, None] & HAS).sum(0)  # [10]: unseen cards of each attribute
    one_of = np.where(yes & (count > 0), 1.0 / np.maximum(count, 1), 0.0)  # [6, 10]
    floor = np.maximum(one_of[:, COLOUR], one_of[:, KIND]) * unseen  # [6, 50]
    hold = np.maximum(hold, floor)
    hold = np.where(no[:, COLOUR] | no[:, KIND], NO_WEIGHT * hold, hold)
    handed = obs[LAYOUT["handed_card"]] > 0
    if handed.any():
        to = int(np.argmax(obs[LAYOUT["handed_to"]]))
        hold[to] = np.where(handed & unseen, 1.0, hold[to])
    if binx > 0:
        hold[binx] = binx_hand
    hold = np.round(np.minimum(hold, 1.0) * GRID) / GRID
    hold[0] = hand
    hold[n:] = 0.0
    return hold


def live_values(hold: np.ndarray) -> np.ndarray:
    """``[50]``: how much each card counts for the plan: 1 in the own hand, else
    ``PARTNER_WEIGHT`` times the chance that some partner holds it."""
    free = np.ones(C.NUM_CARDS)
    for row in hold[1:]:
        free = free * (1.0 - row)
    team = 1.0 - free
    return np.where(hold[0] > 0, 1.0, PARTNER_WEIGHT * team)


def plan_values(tops: np.ndarray, live: np.ndarray) -> np.ndarray:
    """``[10]``: per attribute, the spaces whose top shows it plus, for each other space, the
    value of its best key card times ``COVER_WEIGHT`` (summed in space order)."""
    shown = TOP_HAS[tops]  # [5, 10]
    cover = (KEYS[tops] * live[None, None, :]).max(2)  # [5, 10]
    terms = shown + COVER_WEIGHT * ~shown * cover
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


class PlannerHeuristic:
    """The question-reading planner described in the module docstring."""

    name = "heuristic:planner"

    def reset(self, seed: int | None = None) -> None:
        """No memory between decisions: the observation holds every question and answer."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs = observation
        legal = np.flatnonzero(action_mask)
        phase = int(np.argmax(obs[LAYOUT["phase"]]))
        tops = top_cards(obs)
        hold = holdings(obs)
        live = live_values(hold)
        values = plan_values(tops, live)
        target = int(np.argmax(values))
        if phase == Phase.ASK:
            return A.ASK + self._question(obs, tops, hold, target)
        if phase == Phase.ACT:
            return self._act(legal, tops, live)
        if phase == Phase.BINX:
            return A.BINX
        if phase == Phase.STUN_CHOICE:
            return A.STUN_WINIFRED
        if phase == Phase.SALT:
            spell = int(np.argmax(obs[LAYOUT["current_spell"]]))
            shown = TOP_HAS[tops][:, target].sum()
            return A.SALT_USE if spell in CAULDRON_SPELLS and shown >= 2 else A.SALT_DECLINE
        if phase == Phase.DISCARD and A.FINISH in legal:
            return A.FINISH
        choices = [a - A.CHOOSE for a in legal if A.CHOOSE <= a < A.FINISH]
        usefulness = self._usefulness(tops, values)
        return A.CHOOSE + min(choices, key=lambda c: usefulness[c])

    @staticmethod
    def _question(obs: np.ndarray, tops: np.ndarray, hold: np.ndarray, target: int) -> int:
        """The question whose answers would place the most key cards of ``target``: the
        partners' chances of holding them, over partners not yet asked this round."""
        answered = (obs[LAYOUT["answers_yes"]] + obs[LAYOUT["answers_no"]]).reshape(6, 10) > 0
        shown = TOP_HAS[tops][:, target]
        keys = (KEYS[tops[~shown], target].any(0)) & (hold[0] == 0)  # [50]
        found = (hold[1:] * keys) @ HAS  # [5, 10]: per partner and question
        gain = (found * ~answered[1:]).sum(0) + 1e-3 * HAS[keys].sum(0)  # ties: more keys
        return int(np.argmax(gain))

    @staticmethod
    def _act(legal: np.ndarray, tops: np.ndarray, live: np.ndarray) -> int:
        plays = [a for a in legal if A.PLAY <= a < A.CHOOSE]
        if not plays:
            for trick in (A.BILLY, A.BURN):
                if trick in legal:
                    return trick
            return A.REVEAL_SPELL
        scores = []
        for action in plays:
            card, space = divmod(action - A.PLAY, 5)
            after = tops.copy()
            after[space] = card
            left = live.copy()
            left[card] = 0.0
            stun = TOP_HAS[after].all(0).any()
            scores.append(100.0 * stun + plan_values(after, left).max() - 0.5 * IS_SPELL_BOOK[card])
        return plays[int(np.argmax(scores))]

    @staticmethod
    def _usefulness(tops: np.ndarray, values: np.ndarray) -> np.ndarray:
        """``[50]``: per card, the rating of its attributes plus its worth as a key card of the
        best attribute."""
        target = int(np.argmax(values))
        shown = TOP_HAS[tops][:, target]
        key = KEYS[tops[~shown], target].any(0)
        return values[COLOUR] + values[KIND] + 3.0 * key
