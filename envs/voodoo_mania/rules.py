"""Voodoo Mania, as pure rules (no gymnasium, no pettingzoo), with real time cut into ticks.

In every tick each player chooses wait, play or cycle (:meth:`apply_joint`; the AEC environment
asks the seats one after another and keeps each choice hidden until the tick resolves). All
cycles happen; among the plays one wins, by a priority drawn from the game's generator; the other
plays stay in hand. Section names are those of the Voodoo Mania rulebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.simultaneous import SimultaneousRules
from cauldron.envs.voodoo_mania import actions as A
from cauldron.envs.voodoo_mania import components as C
from cauldron.envs.voodoo_mania.options import VoodooManiaOptions
from cauldron.envs.voodoo_mania.phases import Phase

NORMAL, VOODOO = 0, 1


@dataclass
class State:
    """Everything about one game. Piles are lists whose top is the end and bottom index 0; the
    Voodoo pile holds (card, side up) pairs; hands are lists of up to three cards (slots)."""

    rng: np.random.Generator
    hands: list[list[int]]
    piles: list[list[int]]
    voodoo: list[tuple[int, int]]
    out: list[int]  # cards not dealt this round
    scores: list[int]
    round: int = 0
    tick: int = 0
    phase: Phase = Phase.TICK
    truncated: bool = False
    idle: int = 0  # ticks in a row in which a player could play and nobody did
    pending: dict[int, int] = field(default_factory=dict)  # seat -> action chosen (AEC)
    actor: int = 0
    last_player: int = -1  # whose play won the last tick
    last_voodoo: bool = False
    last_cyclers: list[int] = field(default_factory=list)
    log: list[tuple] = field(default_factory=list)


class VoodooManiaRules(SimultaneousRules):
    """Rules of Voodoo Mania for ``num_players`` players and ``options``."""

    num_actions = A.NUM_ACTIONS

    def __init__(self, num_players: int, options: VoodooManiaOptions) -> None:
        if options.max_ticks < 1:
            raise ConfigError(f"option 'max_ticks' must be at least 1, got {options.max_ticks}")
        if options.max_idle_ticks < 0:
            raise ConfigError(
                f"option 'max_idle_ticks' must be at least 0 (0: no limit), "
                f"got {options.max_idle_ticks}"
            )
        self.num_players = num_players
        self.options = options
        self.deck = C.load_deck()
        self.per_player = C.CARDS_PER_PLAYER[num_players]
        # playable_on[card]: the wanted pairs this card can answer (shown, or missing: Voodoo!)
        self.playable_on = [
            frozenset(a.shows | b.shows | {a.missing, b.missing}) for a, b in self.deck
        ]

    # ----------------------------------------------------------------- setup
    def new_game(self, rng: np.random.Generator, start_seat: int = 0) -> State:
        n = self.num_players
        state = State(rng=rng, hands=[], piles=[], voodoo=[], out=[], scores=[0] * n)
        self._deal(state)
        return state

    def _deal(self, state: State) -> None:
        """Setup: shuffle, one card starts the Voodoo pile (a random side up), deal each player's
        own pile, each player takes three cards from it; the rest stay out of the round. Nothing
        of the previous round's last tick is kept."""
        order = state.rng.permutation(C.NUM_CARDS).tolist()
        state.voodoo = [(order.pop(), int(state.rng.integers(2)))]
        state.piles = [
            [order.pop() for _ in range(self.per_player)] for _ in range(self.num_players)
        ]
        state.hands = [[pile.pop() for _ in range(C.HAND_SIZE)] for pile in state.piles]
        state.out = order
        state.pending = {}
        state.actor = 0
        state.last_player, state.last_voodoo, state.last_cyclers = -1, False, []

    # ----------------------------------------------------------------- queries
    def is_truncated(self, state: State) -> bool:
        return state.truncated

    def action_name(self, action: int, state: State | None = None) -> str:
        """A readable name of ``action``: by hand slot (``play slot 2 side 0``) or, given the
        ``state`` before it, by the faces of the acting seat's card in that slot (``play no
        purple top hat (other side no red mask)``, ``cycle no purple top hat / no red mask``)."""
        if state is None:
            return A.action_name(action)
        return A.face_action_name(self.deck, state.hands[state.actor], self.wanted(state), action)

    def wanted(self, state: State) -> int:
        """The pair missing on the visible side of the Voodoo pile's top card."""
        card, side = state.voodoo[-1]
        return self.deck[card][side].missing

    def plays(self, state: State, seat: int) -> list[tuple[int, int, int]]:
        """(slot, side, kind) of every legal play: a side showing the wanted pair (normal) or
        missing it too (Voodoo!)."""
        wanted = self.wanted(state)
        out = []
        for slot, card in enumerate(state.hands[seat]):
            for side in (0, 1):
                face = self.deck[card][side]
                if wanted in face.shows:
                    out.append((slot, side, NORMAL))
                elif face.missing == wanted:
                    out.append((slot, side, VOODOO))
        return out

    def totals(self, state: State) -> list[int]:
        """Cards each player holds now (hand and own pile)."""
        return [len(h) + len(p) for h, p in zip(state.hands, state.piles, strict=True)]

    def winners(self, state: State) -> list[int]:
        """End of the Game (a default: the rulebook leaves it open): the fewest points win; ties
        are shared."""
        best = min(state.scores)
        return [seat for seat, s in enumerate(state.scores) if s == best]

    def info(self, state: State, seat: int) -> dict[str, Any]:
        info = {
            "scores": list(state.scores),
            "round": state.round,
            "tick": state.tick,
            "cards": self.totals(state),
        }
        if state.phase == Phase.OVER and not state.truncated:
            info["winners"] = self.winners(state)
        return info

    def legal_mask_for(self, state: State, seat: int) -> np.ndarray:
        """Wait always; every legal play; cycling with cards in the own pile, only when no play
        is possible unless ``cycle_anytime``."""
        mask = np.zeros(A.NUM_ACTIONS, np.int8)
        if state.phase == Phase.OVER:
            return mask
        mask[A.WAIT] = 1
        plays = self.plays(state, seat)
        for slot, side, _ in plays:
            mask[A.PLAY + 2 * slot + side] = 1
        if state.piles[seat] and (self.options.cycle_anytime or not plays):
            mask[A.CYCLE : A.CYCLE + len(state.hands[seat])] = 1
        return mask

    # ----------------------------------------------------------------- transitions
    def apply_joint(self, state: State, actions: list[int]) -> tuple[float, ...]:
        """One tick: every cycle happens, then one play (by random priority) is made."""
        per_tick = self.options.reward == "per_tick"
        before = self.totals(state) if per_tick else []
        could = self.options.max_idle_ticks > 0 and any(
            self.plays(state, seat) for seat in range(self.num_players)
        )
        state.tick += 1
        state.last_cyclers = [s for s, a in enumerate(actions) if a >= A.CYCLE]
        for seat in state.last_cyclers:
            self._cycle(state, seat, actions[seat] - A.CYCLE)
        players = [s for s, a in enumerate(actions) if A.PLAY <= a < A.CYCLE]
        state.last_player, state.last_voodoo = -1, False
        state.idle = state.idle + 1 if could and not players else 0
        rewards = (0.0,) * self.num_players
        if players:
            winner = players[int(state.rng.integers(len(players)))]
            slot, side = divmod(actions[winner] - A.PLAY, 2)
            self._play(state, winner, slot, side)
            if per_tick:
                rewards = self._moved(before, self.totals(state))
            if not state.hands[winner] and not state.piles[winner]:
                rewards = self._add(rewards, self._end_round(state))
            elif self._stalled(state):
                state.log.append(("stalled", state.round))
                rewards = self._add(rewards, self._end_round(state))
        if state.phase != Phase.OVER and (
            state.tick >= self.options.max_ticks or 0 < self.options.max_idle_ticks <= state.idle
        ):
            rewards = self._add(rewards, self._truncate(state))
        if len(state.log) > 32:
            del state.log[:-16]
        return rewards

    def _relative(self, held: list[int]) -> tuple[float, ...]:
        """Per seat: the mean of the others' cards (or points) in ``held`` minus one's own, / cards
        per player: what ``per_round`` pays for a round ending with ``held``."""
        n = self.num_players
        return tuple(((sum(held) - own) / (n - 1) - own) / self.per_player for own in held)

    def _moved(self, before: list[int], after: list[int]) -> tuple[float, ...]:
        """``per_tick``'s payment for a tick that took the cards held from ``before`` to
        ``after``; a round's ticks sum to its ``per_round`` payment (a deal holds equal cards)."""
        return tuple(
            a - b for a, b in zip(self._relative(after), self._relative(before), strict=True)
        )

    @staticmethod
    def _add(first: tuple[float, ...], second: tuple[float, ...]) -> tuple[float, ...]:
        """Two payments of the same tick, seat by seat."""
        return tuple(a + b for a, b in zip(first, second, strict=True))

    def _stalled(self, state: State) -> bool:
        """A stalled table (a default: the rulebook leaves it open): no card in any hand or own
        pile can be played on the wanted pair, so nothing can ever change; the round then ends."""
        wanted = self.wanted(state)
        return not any(
            wanted in self.playable_on[c] for cards in state.hands + state.piles for c in cards
        )

    def _truncate(self, state: State) -> tuple[float, ...]:
        """At ``max_ticks`` (or ``max_idle_ticks``) the game is cut short. So that waiting out
        the clock never pays, the rewards rank the players by points so far plus cards held now
        (fewest win, ties shared); with per-round rewards the unfinished round is paid as if it
        had ended. Option ``truncation="loss"`` pays −1 to everyone instead, so that nobody
        gains by holding the only answers to the wanted pair until the clock runs out."""
        state.phase = Phase.OVER
        state.truncated = True
        state.log.append(("truncated", state.tick))
        n = self.num_players
        if self.options.truncation == "loss":
            return (-1.0,) * n
        held = self.totals(state)
        if self.options.reward == "per_round":
            return self._relative(held)
        if self.options.reward == "per_tick":
            return (0.0,) * n
        standing = [s + h for s, h in zip(state.scores, held, strict=True)]
        best = min(standing)
        return tuple(1.0 if total == best else -1.0 for total in standing)

    def _cycle(self, state: State, seat: int, slot: int) -> None:
        """Slide a hand card under the own pile and replace it with the pile's top card."""
        hand, pile = state.hands[seat], state.piles[seat]
        pile.insert(0, hand[slot])
        hand[slot] = pile.pop()
        state.log.append(("cycle", seat))

    def _play(self, state: State, seat: int, slot: int, side: int) -> None:
        """Lay the card with that side up. A normal play changes the wanted pair; Voodoo! keeps
        it, and every other player, from the caller's left, slides a card from the bottom of the
        Voodoo pile under their own pile while it has more than its top card, and a player whose
        hand is short (the own pile had run out) takes them up to three cards. The player then
        refills the hand from the own pile."""
        wanted = self.wanted(state)
        hand = state.hands[seat]
        card = hand.pop(slot)
        state.voodoo.append((card, side))
        state.last_player = seat
        state.last_voodoo = self.deck[card][side].missing == wanted
        state.log.append(("voodoo" if state.last_voodoo else "play", seat, card, side))
        if state.last_voodoo:
            n = self.num_players
            for k in range(1, n):
                if len(state.voodoo) <= 1:
                    break
                bottom, _ = state.voodoo.pop(0)
                other = (seat + k) % n
                state.piles[other].insert(0, bottom)
                self._top_up(state, other)
        if state.piles[seat]:
            hand.insert(slot, state.piles[seat].pop())

    def _top_up(self, state: State, seat: int) -> None:
        """Setup's hand of three: a short hand takes cards from the top of the own pile."""
        hand, pile = state.hands[seat], state.piles[seat]
        while len(hand) < C.HAND_SIZE and pile:
            hand.append(pile.pop())

    def _end_round(self, state: State) -> tuple[float, ...]:
        """End of the Round / Recording Points: every card in hand and pile is a point, carried
        over; after the third round the game ends; otherwise all cards are dealt anew."""
        points = self.totals(state)
        state.scores = [s + p for s, p in zip(state.scores, points, strict=True)]
        state.log.append(("round", state.round, tuple(points)))
        state.round += 1
        n = self.num_players
        rewards = [0.0] * n
        if self.options.reward == "per_round":
            rewards = list(self._relative(points))
        if state.round == C.ROUNDS:
            state.phase = Phase.OVER
            if self.options.reward == "win_loss":
                winners = self.winners(state)
                rewards = [1.0 if s in winners else -1.0 for s in range(n)]
        else:
            self._deal(state)
        return tuple(rewards)
