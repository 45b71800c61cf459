"""Return of the Headless Horseman, as pure rules (no gymnasium, no pettingzoo).

Every play round all players choose a card at once (:meth:`apply_joint`); the AEC environment asks
them one after another (:meth:`apply` keeps each choice hidden until the last one is made). Section
names in the docstrings are those of the Return of the Headless Horseman rulebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cauldron.envs.core.deck import shuffled
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.simultaneous import SimultaneousRules
from cauldron.envs.headless_horseman import actions as A
from cauldron.envs.headless_horseman import components as C
from cauldron.envs.headless_horseman.options import HeadlessHorsemanOptions
from cauldron.envs.headless_horseman.phases import Phase

TOP = [C.top_of(c) for c in range(C.NUM_CARDS)]
BOTTOM = [C.bottom_of(c) for c in range(C.NUM_CARDS)]


@dataclass
class State:
    """Everything about one game. The draw pile's top is the end of its list; seats absolute."""

    hands: list[list[int]]
    draw_pile: list[int]
    tokens: list[int]  # Scare tokens in the order they will be flipped
    rng: np.random.Generator
    ichabod: int
    horseman: int
    discard: list[int] = field(default_factory=list)
    row: list[int] = field(default_factory=list)
    flipped: int = 0  # tokens face up: tokens[:flipped]
    pending: dict[int, int] = field(default_factory=dict)  # seat -> chosen action (AEC)
    actor: int = 0
    phase: Phase = Phase.PLAY
    outcome: int = 0  # +1 won, -1 lost
    turns: int = 1
    rounds: int = 1  # play rounds in this turn
    log: list[tuple] = field(default_factory=list)


class HeadlessHorsemanRules(SimultaneousRules):
    """Rules of the Headless Horseman for ``num_players`` players and ``options``."""

    num_actions = A.NUM_ACTIONS

    def __init__(
        self, num_players: int, options: HeadlessHorsemanOptions, board: C.Board = C.BOARD
    ) -> None:
        bad = [
            s for s in options.handless_seats if not isinstance(s, int) or not 0 <= s < num_players
        ]
        if bad or len(set(options.handless_seats)) != len(options.handless_seats):
            raise ConfigError(
                f"option 'handless_seats' must list distinct seats 0..{num_players - 1}, "
                f"got {options.handless_seats!r}"
            )
        if options.speed_tile not in C.SPEED_TILE_SIDES:
            raise ConfigError(
                f"option 'speed_tile' must be one of the Speed tile's sides "
                f"{list(C.SPEED_TILE_SIDES)} (2 normal, 4 More Challenging), "
                f"got {options.speed_tile}"
            )
        self.num_players = num_players
        self.options = options
        if board.bridge > C.BOARD.bridge or board.horseman_start < C.LOWEST_HORSEMAN_START:
            raise ConfigError(
                f"a board must fit the observation layout: bridge at most {C.BOARD.bridge}, "
                f"Horseman start at least {C.LOWEST_HORSEMAN_START}"
            )
        self.board = board
        self.handless = frozenset(options.handless_seats)
        self.secret = dict(self.board.secret_paths)
        self.trees = frozenset(self.board.tree_spaces)
        self.scares = frozenset(self.board.scare_spaces)

    # ----------------------------------------------------------------- setup
    def new_game(self, rng: np.random.Generator, start_seat: int = 0) -> State:
        """Set Up: Ichabod at the farm, the Horseman at his start, Scare tokens face down and
        mixed, the cards shuffled, four cards for every player who holds a hand."""
        pile = shuffled(list(range(C.NUM_CARDS)), rng)
        hands = [[] for _ in range(self.num_players)]
        for seat in range(self.num_players):
            if seat not in self.handless:
                hands[seat] = [pile.pop() for _ in range(C.HAND_SIZE)]
        tokens = shuffled(list(range(len(C.TOKENS))), rng)
        state = State(
            hands=hands,
            draw_pile=pile,
            tokens=tokens,
            rng=rng,
            ichabod=self.board.farm,
            horseman=self.board.horseman_start,
        )
        self._begin_round(state)
        return state

    # ----------------------------------------------------------------- queries
    def action_name(self, action: int) -> str:
        return A.action_name(action)

    def pumpkins_up(self, state: State) -> int:
        return sum(1 for t in state.tokens[: state.flipped] if t in C.PUMPKINS)

    def info(self, state: State, seat: int) -> dict[str, Any]:
        """Ichabod's progress, scares so far, pumpkins face up, turns and the outcome."""
        return {
            "progress": state.ichabod,
            "scares": state.flipped,
            "pumpkins": self.pumpkins_up(state),
            "turns": state.turns,
            "outcome": state.outcome,
        }

    def legal_mask_for(self, state: State, seat: int) -> np.ndarray:
        """Cards in ``seat``'s hand; a seat without a hand plays the draw pile's top card."""
        mask = np.zeros(A.NUM_ACTIONS, np.int8)
        if state.phase == Phase.OVER:
            return mask
        hand = state.hands[seat]
        if hand:
            mask[hand] = 1
        else:
            mask[A.PLAY_TOP] = 1
        return mask

    # ----------------------------------------------------------------- transitions
    def apply_joint(self, state: State, actions: list[int]) -> tuple[float, ...]:
        """Flip and Match Numbers in the Row: every choice goes face up into the row; with a
        match among all row cards, Ichabod and then the Horseman move; otherwise play again."""
        for seat, action in enumerate(actions):
            if action == A.PLAY_TOP:
                card = self._draw(state)
                if card is None:
                    continue
            else:
                card = action
                state.hands[seat].remove(card)
            state.row.append(card)
        state.log.append(("row", tuple(state.row)))
        counts = np.bincount([TOP[c] for c in state.row], minlength=C.NUM_TOPS + 1)
        matches = np.flatnonzero(counts >= 2)
        if matches.size == 0:
            state.rounds += 1
            self._begin_round(state)
            return (0.0,) * self.num_players
        return self._resolve_turn(state, int(matches[0]))

    def _resolve_turn(self, state: State, steps: int) -> tuple[float, ...]:
        """Move Ichabod by the lowest match, resolve his space, move the Horseman, discard the
        row, then check the end of the game."""
        before = state.ichabod
        state.log.append(("move", steps))
        self._move_ichabod(state, steps)
        if state.phase != Phase.OVER:
            self._move_horseman(state)
        state.discard.extend(state.row)
        state.row = []
        reward = self.options.progress_reward * (state.ichabod - before) / self.board.bridge
        if state.phase == Phase.OVER:
            return (reward - 1.0,) * self.num_players
        if state.ichabod == self.board.bridge:
            state.outcome = 1
            state.phase = Phase.OVER
            state.log.append(("won",))
            return (reward + 1.0,) * self.num_players
        state.turns += 1
        state.rounds = 1
        self._begin_round(state)
        return (reward,) * self.num_players

    def _move_ichabod(self, state: State, steps: int) -> None:
        """Move Ichabod; stop and spin at the Spinning Tree (The Split Path); stop at the bridge
        (Ending the Game); then If Ichabod Lands on a Special Space, chained."""
        board = self.board
        target = state.ichabod + steps
        if state.ichabod < board.split_tree <= target:
            self._split(state)
            return
        state.ichabod = min(target, board.bridge)
        while state.phase != Phase.OVER:
            space = state.ichabod
            if space in self.secret:
                state.ichabod = self.secret[space]
                state.log.append(("secret", space, state.ichabod))
            elif space in self.trees:
                spin = self._spin(state)
                state.log.append(("tree", space, spin))
                self._move_ichabod(state, spin)
                return
            elif space in self.scares:
                state.log.append(("scare_space", space))
                self._flip(state)
                return
            else:
                return

    def _split(self, state: State) -> None:
        """The Split Path: spin at the tree, go to the end of that green path, stop there."""
        spin = self._spin(state)
        state.ichabod = self.board.green_path_end[spin - 1]
        state.log.append(("split", spin, state.ichabod))

    def _move_horseman(self, state: State) -> None:
        """Move the Headless Horseman by every row card's bottom number, plus the Speed tile per
        speed icon. Catching or passing Ichabod scares him instead: the Horseman stops right
        behind him, Ichabod moves on to the next blank space, a Scare token is flipped."""
        bottoms = [BOTTOM[c] for c in state.row]
        ride = sum(b for b in bottoms if b != C.SPEED_ICON)
        ride += self.options.speed_tile * bottoms.count(C.SPEED_ICON)
        target = state.horseman + ride
        if target < state.ichabod:
            state.horseman = target
            return
        state.horseman = state.ichabod - 1
        state.log.append(("horseman_scare", state.ichabod))
        if state.ichabod < self.board.bridge:
            self._to_next_blank(state)
        self._flip(state)

    def _to_next_blank(self, state: State) -> None:
        space = state.ichabod + 1
        while not self.board.is_blank(space):
            space += 1
        if space == self.board.split_tree:
            state.ichabod = space
            self._split(state)
        else:
            state.ichabod = space

    def _flip(self, state: State) -> None:
        """Flip a Scare token; all four pumpkins face up lose the game at once."""
        if state.flipped < len(state.tokens):
            state.flipped += 1
            state.log.append(("flip", state.tokens[state.flipped - 1]))
        if self.pumpkins_up(state) == len(C.PUMPKINS):
            state.outcome = -1
            state.phase = Phase.OVER
            state.log.append(("lost",))

    def _spin(self, state: State) -> int:
        return C.SPINNER[int(state.rng.integers(len(C.SPINNER)))]

    def _draw(self, state: State) -> int | None:
        """Top card of the draw pile. "If the draw pile runs out, flip the discard pile over to
        start a new draw pile": the pile turned face down, so the first card discarded is the new
        top (no chance); with the ``reshuffle`` option it is shuffled instead."""
        if not state.draw_pile and state.discard:
            if self.options.reshuffle:
                state.draw_pile = shuffled(state.discard, state.rng)
                state.log.append(("reshuffle",))
            else:
                state.draw_pile = state.discard[::-1]
                state.log.append(("flip_discard",))
            state.discard = []
        return state.draw_pile.pop() if state.draw_pile else None

    def _begin_round(self, state: State) -> None:
        """Each Player Plays a Card: first, every player with one card left shouts "Ichabod!",
        spins and draws that many cards."""
        for seat, hand in enumerate(state.hands):
            if seat not in self.handless and len(hand) == 1:
                spin = self._spin(state)
                drawn = [c for c in (self._draw(state) for _ in range(spin)) if c is not None]
                hand.extend(drawn)
                state.log.append(("ichabod", seat, spin))
        state.actor = 0
