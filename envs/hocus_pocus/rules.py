"""Hocus Pocus: The Game, as pure rules (no gymnasium, no pettingzoo).

A :class:`State` is plain data; :class:`HocusPocusRules` deals it and applies legal actions to it.
Section names in the docstrings are those of the Hocus Pocus: The Game rulebook.

Example (from a REPL)::

    rules = HocusPocusRules(3, HocusPocusOptions())
    state = rules.new_game(np.random.default_rng(0), start_seat=0)
    rules.apply(state, int(np.flatnonzero(rules.legal_mask(state))[0]))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cauldron.envs.core.deck import draw, shuffled
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.rules import PhasedRules
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.options import HocusPocusOptions
from cauldron.envs.hocus_pocus.phases import Phase

# Why a Spell was revealed: a Spell Book card, a failed play, or a failed play with an empty hand.
AFTER_SPELL_BOOK, AFTER_FAILED_PLAY, AFTER_EMPTY_HAND = 0, 1, 2
DECK_DISCARD_SPELLS = {"Another Glorious Morning": 1, "Sistahs!": 2, "Amok Amok Amok": 3}


@dataclass
class State:
    """Everything about one game. Decks are lists whose top is the end; seats are absolute."""

    hands: list[list[int]]
    deck: list[int]
    spell_deck: list[int]  # indices into options.spell_deck
    rng: np.random.Generator
    turn: int
    piles: list[list[int]] = field(default_factory=lambda: [[] for _ in range(C.NUM_SPACES)])
    discard: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    spell_discard: list[int] = field(default_factory=list)
    actor: int = 0
    phase: Phase = Phase.ASK
    binx: int = -1  # seat in front of whom Binx stands, -1 if beside the Witch board
    stunned: int = -1  # witch under the Stun token, -1 before the first stun
    sun: int = 0
    tricks_used: list[bool] = field(default_factory=lambda: [False] * 4)
    trick_this_turn: bool = False
    no_questions: bool = False  # I Smell Children is in force this round
    # (3, players, 10) float32, this round: [0] questions each seat asked, [1] latest answer yes,
    # [2] latest answer no; questions are the 5 colours then the 5 types.
    questions: np.ndarray = None
    spell: int = -1  # Spell card being resolved
    spell_context: int = AFTER_SPELL_BOOK
    queue: list[int] = field(default_factory=list)  # seats still to choose for a Spell
    set_aside: dict[int, int] = field(default_factory=dict)  # seat -> card chosen to pass/swap
    # per seat, (card, to seat) of the latest card it passed or swapped away, and (card, from
    # seat) of the latest it received that way; (-1, -1) before any
    handed: list[tuple[int, int]] = field(default_factory=list)
    received: list[tuple[int, int]] = field(default_factory=list)
    count: int = 0  # cards discarded (DISCARD) or still to burn (BURN)
    partner: int = -1
    outcome: int = 0  # +1 won, -1 lost
    stuns: int = 0
    turns: int = 0
    reward: float = 0.0  # shared reward earned since the last action
    log: list[tuple] = field(default_factory=list)  # recent events, for rendering


class HocusPocusRules(PhasedRules):
    """Rules of Hocus Pocus for ``num_players`` players and ``options``."""

    num_actions = A.NUM_ACTIONS

    def __init__(self, num_players: int, options: HocusPocusOptions) -> None:
        self.num_players = num_players
        self.options = options
        _check_options(options)
        self.spell_names = tuple(options.spell_deck)
        self.spell_casters = np.array([C.SPELL_CASTERS[s] for s in self.spell_names])
        cards = np.arange(C.NUM_CARDS)
        self.colour = cards // 10
        self.type = (cards // 2) % 5
        first_copy = cards % 2 == 0
        pairs = list(zip(self.colour.tolist(), self.type.tolist(), strict=True))
        binx = {tuple(p) for p in options.binx_cards}
        book = {tuple(p) for p in options.spell_book_cards}
        self.is_binx = first_copy & np.array([p in binx for p in pairs])
        self.is_book = first_copy & np.array([p in book for p in pairs])
        self.has_icon = self.is_binx | self.is_book
        # compatible[top, card]: rows 0..49 are cards on top, rows 50..54 the empty spaces.
        top_colour = np.concatenate([self.colour, [c for c, _ in options.board]])
        top_type = np.concatenate([self.type, [t for _, t in options.board]])
        self.compatible = (top_colour[:, None] == self.colour[None, :]) | (
            top_type[:, None] == self.type[None, :]
        )
        self.plays_onto = [frozenset(np.flatnonzero(row).tolist()) for row in self.compatible]

    # ----------------------------------------------------------------- setup
    def new_game(self, rng: np.random.Generator, start_seat: int = 0) -> State:
        """Setup: shuffle both decks, deal 4 cards each (2–3 players) or 3 (4–6 players)."""
        n = self.num_players
        deck = shuffled(list(range(C.NUM_CARDS)), rng)
        size = C.hand_size(n)
        hands = [draw(deck, size) for _ in range(n)]
        spells = shuffled(list(range(len(self.spell_names))), rng)
        state = State(hands=hands, deck=deck, spell_deck=spells, rng=rng, turn=start_seat)
        state.questions = np.zeros((3, n, 10), np.float32)
        state.handed = [(-1, -1)] * n
        state.received = [(-1, -1)] * n
        self._start_turn(state, start_seat)
        return state

    # ----------------------------------------------------------------- queries
    def action_name(self, action: int) -> str:
        return A.action_name(action)

    def info(self, state: State, seat: int) -> dict[str, Any]:
        """The score (witches stunned), the outcome and the phase."""
        return {"stuns": state.stuns, "outcome": state.outcome, "phase": state.phase.name.lower()}

    def legal_plays(self, state: State, seat: int) -> list[tuple[int, int]]:
        """(card, space) pairs of ``seat``'s hand that match a top or an empty space."""
        mask = np.zeros(A.NUM_ACTIONS, np.int8)
        self._mark_plays(state, state.hands[seat], mask)
        return [divmod(a - A.PLAY, 5) for a in np.flatnonzero(mask)]

    def tops(self, state: State) -> list[int]:
        """Top card of each pile, or ``50 + space`` for an empty space."""
        return [p[-1] if p else C.NUM_CARDS + s for s, p in enumerate(state.piles)]

    def matched(self, state: State) -> int:
        """The most Cauldron tops sharing one colour or one type (0 to 5; ``match_reward``)."""
        tops = [p[-1] for p in state.piles if p]
        if not tops:
            return 0
        colours = np.bincount(self.colour[tops], minlength=5)
        types = np.bincount(self.type[tops], minlength=5)
        return int(max(colours.max(), types.max()))

    def _mark_plays(self, state: State, hand: list[int], mask: np.ndarray) -> bool:
        """Set the play actions of ``hand`` in ``mask``; return whether there is any."""
        index = [
            A.PLAY + 5 * card + space
            for space, top in enumerate(self.tops(state))
            for card in hand
            if card in self.plays_onto[top]
        ]
        mask[index] = 1
        return bool(index)

    def legal_mask(self, state: State) -> np.ndarray:
        """Legal actions of the acting seat (``int8``)."""
        mask = np.zeros(A.NUM_ACTIONS, np.int8)
        phase = state.phase
        hand = state.hands[state.actor]
        if phase == Phase.ASK:
            mask[A.ASK : A.ASK + 10] = 1
        elif phase == Phase.ACT:
            if not self._mark_plays(state, hand, mask):
                mask[A.REVEAL_SPELL] = 1
            if not state.trick_this_turn:
                used = state.tricks_used
                if not used[C.BILLY]:
                    mask[A.BILLY] = 1
                if not used[C.BURNING_RAIN] and len(hand) >= 3:
                    mask[A.BURN] = 1
                if not used[C.DAYLIGHT] and hand:
                    n = self.num_players
                    for offset in range(1, n):
                        if state.hands[(state.turn + offset) % n]:
                            mask[A.SWAP + offset - 1] = 1
        elif phase == Phase.BINX:
            mask[A.BINX : A.BINX + self.num_players] = 1
        elif phase == Phase.STUN_CHOICE:
            mask[A.STUN_MARY] = mask[A.STUN_WINIFRED] = 1
        elif phase == Phase.SALT:
            mask[A.SALT_USE] = mask[A.SALT_DECLINE] = 1
        elif phase != Phase.OVER:
            mask[A.CHOOSE + np.asarray(hand, dtype=np.int64)] = 1
            if phase == Phase.DISCARD and state.count > 0:
                mask[A.FINISH] = 1
        return mask

    # ----------------------------------------------------------------- transitions
    def apply(self, state: State, action: int) -> tuple[float, ...]:
        """Apply a legal ``action`` of the acting seat; return every seat's (shared) reward."""
        state.reward = 0.0
        shaping = self.options.match_reward
        if shaping:
            matched, stuns = self.matched(state), state.stuns
        phase = state.phase
        if phase == Phase.ASK:
            self._ask(state, action - A.ASK)
        elif phase == Phase.ACT:
            self._act(state, action)
        elif phase == Phase.BINX:
            state.binx = (state.turn + action - A.BINX) % self.num_players
            state.log.append(("binx", state.turn, state.binx))
            self._end_turn(state, draw_card=True)
        elif phase == Phase.STUN_CHOICE:
            self._end_round(state, C.MARY if action == A.STUN_MARY else C.WINIFRED)
        elif phase == Phase.SALT:
            if action == A.SALT_USE:
                self._use_trick(state, C.SALT)
                self._finish_spell(state, cauldron_changed=False)
            else:
                self._resolve_spell(state)
        else:
            self._choose(state, phase, action)
        if len(state.log) > 32:
            del state.log[:-16]
        if shaping:
            now = C.NUM_SPACES if state.stuns > stuns else self.matched(state)
            state.reward += shaping * (now - matched) / C.NUM_SPACES
        return (state.reward,) * self.num_players

    def _ask(self, state: State, question: int) -> None:
        """Ask One Question: every other player, from the left, answers truthfully yes or no."""
        n, asker = self.num_players, state.turn
        attribute = self.colour if question < 5 else self.type
        value = question % 5
        state.questions[0, asker, question] = 1
        for offset in range(1, n):
            seat = (asker + offset) % n
            holds = any(attribute[c] == value for c in state.hands[seat])
            state.questions[1, seat, question] = holds
            state.questions[2, seat, question] = not holds
        state.log.append(("ask", asker, question))
        state.phase = Phase.ACT

    def _act(self, state: State, action: int) -> None:
        if action < A.CHOOSE:
            card, space = divmod(action - A.PLAY, 5)
            self._play(state, card, space)
        elif action == A.REVEAL_SPELL:
            state.log.append(("stuck", state.turn))
            empty = not state.hands[state.turn]
            self._reveal_spell(state, AFTER_EMPTY_HAND if empty else AFTER_FAILED_PLAY)
        elif action == A.BILLY:
            self._use_trick(state, C.BILLY)
            self._end_turn(state, draw_card=False)
        elif action == A.BURN:
            self._use_trick(state, C.BURNING_RAIN)
            state.count = 3
            state.phase = Phase.BURN
        else:
            self._use_trick(state, C.DAYLIGHT)
            state.partner = (state.turn + action - A.SWAP + 1) % self.num_players
            state.phase = Phase.SWAP_OWN

    def _use_trick(self, state: State, trick: int) -> None:
        """Trick Tokens: each once per game, at most one per turn."""
        state.tricks_used[trick] = True
        state.trick_this_turn = True
        state.log.append(("trick", state.turn, trick))

    def _play(self, state: State, card: int, space: int) -> None:
        """Play One Ingredient Card, then check for a stun before any icon takes effect."""
        state.hands[state.turn].remove(card)
        state.piles[space].append(card)
        state.log.append(("play", state.turn, card, space))
        if self._check_stun(state):
            return
        if self.is_binx[card]:
            state.phase = Phase.BINX
        elif self.is_book[card]:
            self._reveal_spell(state, AFTER_SPELL_BOOK)
        else:
            self._end_turn(state, draw_card=True)

    def _check_stun(self, state: State) -> bool:
        """Stunning A Witch: five tops of one colour stun Sarah, of one type Mary; of one type and
        five colours Mary or Winifred (the turn player chooses). Returns whether the round ended or
        waits for that choice."""
        if not all(state.piles):
            return False
        tops = [p[-1] for p in state.piles]
        colours = {int(self.colour[c]) for c in tops}
        types = {int(self.type[c]) for c in tops}
        if len(colours) == 1:
            self._end_round(state, C.SARAH)
        elif len(types) == 1 and len(colours) == 5:
            state.phase = Phase.STUN_CHOICE
            state.actor = state.turn
        elif len(types) == 1:
            self._end_round(state, C.MARY)
        else:
            return False
        return True

    def _reveal_spell(self, state: State, context: int) -> None:
        """Spell Cards: draw the top Spell (reshuffling the discards when the deck is empty); a
        stunned caster misses, Take Flight never does; Circle of Salt may cancel it, if unused and
        (unless ``salt_after_trick``) no other trick was used this turn."""
        state.spell_context = context
        if not state.spell_deck:
            state.spell_deck = shuffled(state.spell_discard, state.rng)
            state.spell_discard = []
        state.spell = state.spell_deck.pop()
        caster = self.spell_casters[state.spell]
        state.log.append(("spell", state.turn, state.spell))
        if caster != C.ALL_THREE and caster == state.stunned:
            state.log.append(("miss", state.turn, state.spell))
            self._finish_spell(state, cauldron_changed=False)
            return
        immune = self.options.take_flight_ignores_salt and caster == C.ALL_THREE
        allowed = self.options.salt_after_trick or not state.trick_this_turn
        if not state.tricks_used[C.SALT] and allowed and not immune:
            state.phase = Phase.SALT
            state.actor = state.turn
            return
        self._resolve_spell(state)

    def _resolve_spell(self, state: State) -> None:
        """Apply the effect of the revealed Spell (the table of RULES.md, 'Spell Cards')."""
        name = self.spell_names[state.spell]
        n, turn = self.num_players, state.turn
        clockwise = [(turn + k) % n for k in range(n)]
        changed = False
        if name == "Dance Until You Die":
            changed = self._discard_tops(
                state, [s for s, p in enumerate(state.piles) if p and not self.is_binx[p[-1]]]
            )
        elif name == "Take Flight":
            changed = self._discard_tops(state, range(C.NUM_SPACES))
        elif name == "Book!":
            changed = self._discard_tops(state, self._tallest(state, 2))
        elif name == "Boys, Boys":
            changed = self._discard_tops(state, self._tallest(state, 1))
        elif name in DECK_DISCARD_SPELLS:
            state.discard.extend(draw(state.deck, DECK_DISCARD_SPELLS[name]))
        elif name == "I Smell Children":
            state.no_questions = True
        elif name == "Hello, Binx":
            state.binx = -1
        elif name == "I Put a Spell on You":
            chosen = {s: h[int(state.rng.integers(len(h)))] for s, h in enumerate(state.hands) if h}
            self._pass_left(state, chosen)
        elif name in ("Oh, Look!", "Fly, My Pretty"):
            state.queue = clockwise if name == "Oh, Look!" else [turn]
            self._next_spell_discard(state)
            return
        elif name == "Come Little Children":
            state.queue = [s for s in clockwise if state.hands[s]]
            state.set_aside = {}
            self._next_spell_pass(state)
            return
        else:
            raise AssertionError(f"unknown spell {name!r}")
        self._finish_spell(state, cauldron_changed=changed)

    def _tallest(self, state: State, count: int) -> list[int]:
        """The ``count`` tallest non-empty piles, ties broken by the lower space index."""
        order = sorted(range(C.NUM_SPACES), key=lambda s: (-len(state.piles[s]), s))
        return [s for s in order[:count] if state.piles[s]]

    def _discard_tops(self, state: State, spaces: Any) -> bool:
        changed = False
        for s in spaces:
            if state.piles[s]:
                state.discard.append(state.piles[s].pop())
                changed = True
        return changed

    def _pass_left(self, state: State, chosen: dict[int, int]) -> None:
        """All chosen cards change hands at once, each to the owner's left neighbour."""
        for seat, card in chosen.items():
            state.hands[seat].remove(card)
        for seat, card in chosen.items():
            self._hand_over(state, seat, (seat + 1) % self.num_players, card)

    def _hand_over(self, state: State, giver: int, taker: int, card: int) -> None:
        """``card`` (already out of the giver's hand) joins the taker's; both remember it."""
        state.hands[taker].append(card)
        state.handed[giver] = (card, taker)
        state.received[taker] = (card, giver)

    def _next_spell_discard(self, state: State) -> None:
        """Oh, Look! / Fly, My Pretty: each queued player discards a card of their choice (skipped
        with an empty hand) and makes a forced draw."""
        while state.queue:
            seat = state.queue.pop(0)
            if state.hands[seat]:
                state.actor = seat
                state.phase = Phase.SPELL_DISCARD
                return
            if not self._forced_draw(state, seat, 1):
                return
        self._finish_spell(state, cauldron_changed=False)

    def _next_spell_pass(self, state: State) -> None:
        """Come Little Children: every player with cards chooses one; then all pass left at once."""
        if state.queue:
            state.actor = state.queue.pop(0)
            state.phase = Phase.SPELL_PASS
            return
        chosen, state.set_aside = state.set_aside, {}
        self._pass_left(state, chosen)
        self._finish_spell(state, cauldron_changed=False)

    def _finish_spell(self, state: State, cauldron_changed: bool) -> None:
        """Discard the Spell; check for a stun if it changed the Cauldron; go on with the turn.
        After a failed play the player discards and draws; a hand that was empty when the play
        failed (or that the Spell emptied) makes one forced draw instead, with no discard, even
        if the Spell has put a card in it since (a default: the rulebook leaves it open)."""
        state.spell_discard.append(state.spell)
        state.spell = -1
        if cauldron_changed and self._check_stun(state):
            return
        turn = state.turn
        state.actor = turn
        if state.spell_context == AFTER_SPELL_BOOK:
            self._end_turn(state, draw_card=True)
        elif state.spell_context == AFTER_EMPTY_HAND or not state.hands[turn]:
            if self._forced_draw(state, turn, 1):
                self._end_turn(state, draw_card=True)
        else:
            state.phase = Phase.DISCARD
            state.count = 0

    def _choose(self, state: State, phase: Phase, action: int) -> None:
        seat = state.actor
        hand = state.hands[seat]
        if phase == Phase.DISCARD:
            if action == A.FINISH:
                if self._forced_draw(state, seat, state.count):
                    self._end_turn(state, draw_card=True)
                return
            self._discard_from_hand(state, seat, action - A.CHOOSE)
            state.count += 1
            if not hand and self._forced_draw(state, seat, state.count):
                self._end_turn(state, draw_card=True)
            return
        card = action - A.CHOOSE
        if phase == Phase.SPELL_DISCARD:
            self._discard_from_hand(state, seat, card)
            if self._forced_draw(state, seat, 1):
                self._next_spell_discard(state)
        elif phase == Phase.SPELL_PASS:
            state.set_aside[seat] = card
            self._next_spell_pass(state)
        elif phase == Phase.BURN:
            self._discard_from_hand(state, seat, card)
            state.count -= 1
            if state.count == 0:
                hand.extend(draw(state.deck, 3))
                state.phase = Phase.ACT
        elif phase == Phase.SWAP_OWN:
            state.set_aside[seat] = card
            state.actor = state.partner
            state.phase = Phase.SWAP_PARTNER
        elif phase == Phase.SWAP_PARTNER:
            own = state.set_aside.pop(state.turn)
            state.hands[state.turn].remove(own)
            hand.remove(card)
            self._hand_over(state, seat, state.turn, card)
            self._hand_over(state, state.turn, seat, own)
            state.log.append(("swap", state.turn, seat))
            state.actor = state.turn
            state.partner = -1
            state.phase = Phase.ACT

    def _discard_from_hand(self, state: State, seat: int, card: int) -> None:
        state.hands[seat].remove(card)
        state.discard.append(card)
        state.log.append(("discard", seat, card))

    def _forced_draw(self, state: State, seat: int, count: int) -> bool:
        """A draw the rules force (failed play, Spell): the team loses if the deck runs out."""
        got = draw(state.deck, count)
        state.hands[seat].extend(got)
        if len(got) < count:
            state.outcome = -1
            state.phase = Phase.OVER
            state.reward -= 1.0
            state.log.append(("lost", seat))
            return False
        return True

    def _end_turn(self, state: State, draw_card: bool) -> None:
        """Draw One Ingredient Card (an empty deck just means no draw), then the left player."""
        if draw_card and state.deck:
            state.hands[state.turn].append(state.deck.pop())
        self._start_turn(state, (state.turn + 1) % self.num_players)

    def _start_turn(self, state: State, seat: int) -> None:
        state.turn = state.actor = seat
        state.trick_this_turn = False
        state.turns += 1
        state.phase = Phase.ACT if state.no_questions else Phase.ASK

    def _end_round(self, state: State, witch: int) -> None:
        """End of Round: the turn player draws and ends the turn; the Stun token goes on the
        witch; the Sun rises; ongoing spells end; the Cauldron and discards are purged, keeping
        only Binx and Spell Book cards, which are shuffled into the deck; Binx returns; the
        player on the left starts the next round. The Sun at the top wins the game."""
        turn = state.turn
        if state.deck:
            state.hands[turn].append(state.deck.pop())
        state.stunned = witch
        state.sun += 1
        state.stuns += 1
        state.reward += self.options.stun_reward
        state.no_questions = False
        state.log.append(("stun", turn, witch))
        if state.sun >= self.options.sunrise_steps:
            state.outcome = 1
            state.phase = Phase.OVER
            state.reward += 1.0
            state.log.append(("won", turn))
            return
        collected = [c for p in state.piles for c in p] + state.discard
        state.piles = [[] for _ in range(C.NUM_SPACES)]
        state.discard = []
        kept = [c for c in collected if self.has_icon[c]]
        state.removed.extend(c for c in collected if not self.has_icon[c])
        state.deck = shuffled(state.deck + kept, state.rng)
        state.binx = -1
        state.questions[:] = 0
        self._start_turn(state, (turn + 1) % self.num_players)


def _check_options(options: HocusPocusOptions) -> None:
    """Reject card, board and spell data that cannot form a game."""

    def pairs(name: str, value: Any) -> None:
        ok = all(
            isinstance(p, (tuple, list))
            and len(p) == 2
            and all(isinstance(x, int) and 0 <= x < 5 for x in p)
            for p in value
        )
        if not ok:
            raise ConfigError(f"option {name!r} must hold (colour, type) pairs of ints 0..4")

    pairs("board", options.board)
    pairs("binx_cards", options.binx_cards)
    pairs("spell_book_cards", options.spell_book_cards)
    if len(options.board) != C.NUM_SPACES:
        raise ConfigError(f"option 'board' must list 5 spaces, got {len(options.board)}")
    both = {tuple(p) for p in options.binx_cards} & {tuple(p) for p in options.spell_book_cards}
    if both:
        raise ConfigError(f"a card cannot show both Binx and the Spell Book: {sorted(both)}")
    unknown = [s for s in options.spell_deck if s not in C.SPELL_CASTERS]
    if unknown or not options.spell_deck:
        raise ConfigError(
            f"option 'spell_deck' must be a non-empty list of spell names from "
            f"{list(C.SPELL_NAMES)}; unknown: {unknown}"
        )
    if options.sunrise_steps < 1:
        raise ConfigError(f"option 'sunrise_steps' must be at least 1, got {options.sunrise_steps}")
