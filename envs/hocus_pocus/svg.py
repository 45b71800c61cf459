"""Hocus Pocus drawn as SVG (``render_mode="svg"`` / ``"rgb_array"``), kept apart from the rules.

The picture shows what :func:`cauldron.envs.hocus_pocus.render.render_table` shows, with the same
rule for hidden cards: a seat sees its own hand and the Binx holder's face up, every other hand face
down (as many backs as cards). From the top: the result banner once the game is over, the phase and
who acts, the Sun track with the stunned witch, the Spell (being resolved, or the last one), the
four Trick tokens, the five Cauldron spaces (top card and height; an empty space shows its printed
colour and type), the Ingredient deck and discard pile, one row per seat (the seat to act
highlighted, with its public answers), a legend and the latest public events.

Every face-up card carries ``data-card="<id>"`` and every Cauldron space ``data-space="<s>"``.
The things a player acts on are drawn as targets (:meth:`Drawing.target`): a face-up hand card
(play it on a space, or choose it to discard, pass or swap), a Cauldron space (play a card on
it), a seat's row (put Binx before that player, or swap with it), the witches Mary and Winifred
(stun her), the Trick tokens and the Spell deck (reveal a Spell when no card can be played).
Questions, letting a Spell resolve and finishing a discard have nothing drawn: a page names
them in words (:func:`action_words`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cauldron.envs.core.svg import (
    BACK,
    CARD_H,
    CARD_W,
    GAP,
    HIGHLIGHT,
    INK,
    MUTED,
    PAPER,
    Drawing,
    plain,
    plural,
    seat_label,
    seat_name,
)
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.phases import Phase
from cauldron.envs.hocus_pocus.render import event_text

if TYPE_CHECKING:
    from cauldron.envs.hocus_pocus.rules import HocusPocusRules, State

WIDTH = 1000  # the picture's width without its margin
COLOUR_FILLS = ("#e8862a", "#8e5cc4", "#e3c22b", "#4a9e4f", "#3f7fd0")  # C.COLOURS' order
TYPE_CODES = ("Toe", "Pox", "Tongue", "Newt", "Oil")  # C.TYPES' short names, on the cards
TRICK_ACTIONS = (  # the actions of each Trick token, in C.TRICKS' order
    (A.SALT_USE,),
    tuple(range(A.SWAP, A.SWAP + C.MAX_PLAYERS - 1)),
    (A.BILLY,),
    (A.BURN,),
)
WITCH_FILLS = ("#d67fa8", "#c0453a", "#3f8f6a", "#6b6b6b")  # Sarah, Mary, Winifred, all three
USED = "#b5b0a6"  # a used Trick token
TO_ACT = "#fbe9b7"  # the row of the seat to act
EVENTS = 8  # public events listed under the table
PHASE_VERB = {  # what choosing a card means in a phase
    Phase.SPELL_DISCARD: "discard",
    Phase.DISCARD: "discard",
    Phase.BURN: "discard",
    Phase.SPELL_PASS: "pass on",
    Phase.SWAP_OWN: "swap",
    Phase.SWAP_PARTNER: "swap",
}
PHASE_TEXT = {
    Phase.ASK: "ask one question",
    Phase.ACT: "play a card or use a trick",
    Phase.BINX: "place Binx before a player",
    Phase.STUN_CHOICE: "stun Mary or Winifred",
    Phase.SALT: "use Circle of Salt on the Spell?",
    Phase.SPELL_DISCARD: "discard a card for the Spell",
    Phase.SPELL_PASS: "choose a card to pass left",
    Phase.DISCARD: "discard after a failed play",
    Phase.SWAP_OWN: "choose a card to swap",
    Phase.SWAP_PARTNER: "choose a card to swap",
    Phase.BURN: "discard for Burning Rain of Death",
}


def svg_table(rules: HocusPocusRules, state: State, seat: int | None) -> str:
    """The table as ``seat`` sees it (``None``: all of it, every hand face up) as an SVG
    document."""
    d = Drawing()
    y = 10
    if state.outcome:
        d.banner(10, y, WIDTH, _result(rules, state))
        y += 40
    y = _status(d, rules, state, y)
    y = _witch_board(d, rules, state, y)
    y = _cauldron(d, rules, state, y)
    y = _hands(d, rules, state, seat, y)
    y = _legend(d, y)
    _events(d, rules, state, y)
    return d.svg()


def outcome_words(rules: HocusPocusRules, state: State) -> str:
    """The result in words, once the game is over: won or lost, why, and the stuns."""
    return _result(rules, state)


def card_words(rules: HocusPocusRules, card: int) -> str:
    """An Ingredient card as the rulebook names it: ``orange Dead Man's Toe (Binx)``."""
    icon = " (Binx)" if rules.is_binx[card] else " (Spell Book)" if rules.is_book[card] else ""
    return f"{C.COLOURS[card // 10]} {C.TYPES[(card // 2) % 5]}{icon}"


def action_words(rules: HocusPocusRules, state: State, action: int) -> str:
    """``action`` as a player says it: cards and Tricks by name, seats as players."""
    n, me = len(state.hands), state.actor
    if action < A.ASK + 5:
        return f"ask: does anyone hold {C.COLOURS[action - A.ASK]}?"
    if action < A.PLAY:
        return f"ask: does anyone hold {C.TYPES[action - A.ASK - 5]}?"
    if action < A.CHOOSE:
        card, space = divmod(action - A.PLAY, 5)
        colour, kind = rules.options.board[space]
        top = state.piles[space][-1] if state.piles[space] else -1
        where = card_words(rules, top) if top >= 0 else f"{C.COLOURS[colour]} {C.TYPES[kind]}"
        return f"play {card_words(rules, card)} on the Cauldron space of {where}"
    if action < A.FINISH:
        return f"{PHASE_VERB.get(state.phase, 'choose')} {card_words(rules, action - A.CHOOSE)}"
    if A.BINX <= action < A.SWAP:
        return f"put Binx before {seat_name((me + action - A.BINX) % n, me)}"
    if A.SWAP <= action < A.BILLY:
        return f"Daylight Savings Time: swap with {seat_name((me + action - A.SWAP + 1) % n)}"
    return {
        A.FINISH: "stop discarding",
        A.BILLY: "Billy Butcherson: skip the play and the draw",
        A.BURN: "Burning Rain of Death: discard three cards, draw three",
        A.SALT_USE: "Circle of Salt: cancel the Spell",
        A.SALT_DECLINE: "let the Spell resolve",
        A.STUN_MARY: "stun Mary",
        A.STUN_WINIFRED: "stun Winifred",
        A.REVEAL_SPELL: "I cannot play: reveal a Spell",
    }[action]


def mind_shown(rules: HocusPocusRules, state: State, actor: int, seat: int) -> bool:
    """Whether ``seat`` sees all that ``actor`` sees, so that what ``actor`` thinks may be shown
    to it: only its own mind (another seat's hand, passes and swaps are secret)."""
    return actor == seat


def _result(rules: HocusPocusRules, state: State) -> str:
    steps = rules.options.sunrise_steps
    if state.outcome > 0:
        return f"The team wins: the Sun is up ({state.stuns}/{steps} witches stunned)"
    return f"The team loses: the deck ran out ({state.stuns}/{steps} witches stunned)"


def _status(d: Drawing, rules: HocusPocusRules, state: State, y: float) -> float:
    """One line: the phase and who acts (or the result), the team's score and the decks."""
    if state.outcome:
        status = "game over: " + ("the team won" if state.outcome > 0 else "the team lost")
    else:
        status = f"{seat_name(state.actor)} to {PHASE_TEXT[state.phase]}"
        if state.phase == Phase.DISCARD:
            status += f" ({state.count} so far)"
        elif state.phase == Phase.BURN:
            status += f" ({state.count} more)"
        elif state.phase in (Phase.SWAP_OWN, Phase.SWAP_PARTNER):
            other = state.partner if state.phase == Phase.SWAP_OWN else state.turn
            status += f" with {seat_name(other)}"
        if state.actor != state.turn:
            status += f" ({seat_name(state.turn)}'s turn)"
    d.rect(10, y, WIDTH, 30, PAPER)
    d.text(20, y + 20, f"Hocus Pocus · {status}", 14, bold=True)
    score = f"stuns {state.stuns}/{rules.options.sunrise_steps}"
    d.text(WIDTH, y + 20, score, 14, anchor="end", bold=True)
    return y + 40


def _witch_board(d: Drawing, rules: HocusPocusRules, state: State, y: float) -> float:
    """The Sun track, the three witches (the stunned one under the Stun token), the Spell and
    the Trick tokens."""
    h = 92
    d.rect(10, y, 170, h, PAPER)
    d.text(20, y + 18, "Sun", 12, bold=True)
    steps = rules.options.sunrise_steps
    r = min(12.0, 140 / (3 * steps))
    for step in range(steps):
        d.circle(30 + step * 3 * r, y + 44, r, HIGHLIGHT if step < state.sun else "#d9d4c7")
    up = " · Sun up" if state.sun >= steps else ""
    d.text(20, y + 80, f"{state.sun}/{steps} witches stunned{up}", 11)

    d.rect(190, y, 290, h, PAPER)
    d.text(200, y + 18, "Witches", 12, bold=True)
    stun = {C.MARY: [A.STUN_MARY], C.WINIFRED: [A.STUN_WINIFRED]}
    for witch, name in enumerate(C.WITCHES):
        x = 200 + witch * 92
        stunned = witch == state.stunned
        with d.target(stun.get(witch, []), f"stun {name}"):
            fill = WITCH_FILLS[witch]
            d.rect(x, y + 26, 86, 56, fill, stroke=INK if stunned else fill)
            d.text(x + 43, y + 46, name, 13, "#ffffff", "middle", bold=True)
            if stunned:
                d.rect(x + 13, y + 56, 60, 18, HIGHLIGHT, rx=9)
                d.text(x + 43, y + 69, "STUNNED", 10, anchor="middle", bold=True)

    d.rect(490, y, 250, h, PAPER)
    d.text(500, y + 18, f"Spell deck {len(state.spell_deck)}", 12, bold=True)
    with d.target([A.REVEAL_SPELL], "the Spell deck: reveal a Spell when you cannot play"):
        _pile(d, 500, y + 24, len(state.spell_deck), "Spells to draw")
    if state.spell >= 0:
        note = "last Spell" if state.outcome else "being cast"
        _spell_card(d, rules, 552, y + 24, state.spell, note)
    elif state.spell_discard:
        _spell_card(d, rules, 552, y + 24, state.spell_discard[-1], "last Spell")
    else:
        d.text(560, y + 58, "no Spell revealed yet", 11, MUTED)
    if state.no_questions:
        d.text(620, y + 18, "no questions", 11, "#a02020", bold=True)

    d.rect(750, y, WIDTH - 740, h, PAPER)
    d.text(760, y + 18, "Trick tokens (once per game)", 12, bold=True)
    for trick, name in enumerate(C.TRICKS):
        used = state.tricks_used[trick]
        ty = y + 25 + trick * 16
        with d.target(TRICK_ACTIONS[trick], f"play the Trick {name}"):
            d.rect(760, ty, 240, 15, USED if used else "#cfe3f5", rx=7)
            d.text(768, ty + 11.5, name + (" ✗ used" if used else ""), 11)
    return y + h + 10


def _spell_card(
    d: Drawing, rules: HocusPocusRules, x: float, y: float, spell: int, note: str
) -> None:
    """A Spell card, wider than an Ingredient: its name, its caster and ``note``."""
    name = rules.spell_names[spell]
    caster = C.SPELL_CASTERS[name]
    fill = WITCH_FILLS[caster]
    d.rect(x, y, 178, CARD_H, fill, title=f"Spell: {name}")
    d.rect(x + 3, y + 3, 172, CARD_H - 6, PAPER, stroke=fill, rx=4)
    d.text(x + 89, y + 19, name, 12 if len(name) < 22 else 11, anchor="middle", bold=True)
    who = "all three witches" if caster == C.ALL_THREE else C.WITCHES[caster]
    d.text(x + 89, y + 36, who, 11, anchor="middle")
    d.text(x + 89, y + 52, note, 10, MUTED, "middle")


def _pile(d: Drawing, x: float, y: float, size: int, what: str) -> None:
    """A face-down deck of ``size`` cards, or its empty place."""
    if size:
        d.card(x, y, BACK, face_down=True, title=f"{size} {what}")
    else:
        d.rect(x, y, CARD_W, CARD_H, "#f4efe2", stroke=MUTED, title="empty", stroke_dasharray="4 3")


def _ingredient(
    d: Drawing, rules: HocusPocusRules, x: float, y: float, card: int, **attrs: str
) -> None:
    """An Ingredient card face up: its colour as the frame and the middle word, its type's
    short name on top, its icon (Binx, Spell Book) below."""
    colour = card // 10
    icon = "Binx" if rules.is_binx[card] else "Book" if rules.is_book[card] else ""
    d.card(
        x,
        y,
        COLOUR_FILLS[colour],
        TYPE_CODES[(card // 2) % 5],
        C.COLOURS[colour],
        icon,
        title=card_words(rules, card),
        data_card=str(card),
        **attrs,
    )


def _held(d: Drawing, rules: HocusPocusRules, x: float, y: float, card: int) -> None:
    """A face-up hand card as a target: play it on any space, or choose it."""
    plays = [A.PLAY + 5 * card + space for space in range(C.NUM_SPACES)]
    with d.target([*plays, A.CHOOSE + card], card_words(rules, card)):
        _ingredient(d, rules, x, y, card)


def _cauldron(d: Drawing, rules: HocusPocusRules, state: State, y: float) -> float:
    """The five Cauldron spaces (top card over the pile's height), then the Ingredient deck,
    the discard pile and the cards out of the game."""
    h = 118
    d.rect(10, y, 400, h, PAPER)
    d.text(20, y + 18, "Cauldron", 12, bold=True)
    for space, pile in enumerate(state.piles):
        x = 26 + space * 78
        top = y + 30
        colour, kind = rules.options.board[space]
        plays = [A.PLAY + 5 * card + space for card in range(C.NUM_CARDS)]
        with d.target(plays, f"the Cauldron space of {C.COLOURS[colour]} {C.TYPES[kind]}"):
            _space(d, rules, pile, space, x, top)
        d.text(x + CARD_W / 2, top + CARD_H + 18, plural(len(pile), "card"), 11, anchor="middle")

    d.rect(420, y, WIDTH - 410, h, PAPER)
    x = 430
    d.text(x, y + 18, f"Ingredient deck {len(state.deck)}", 12, bold=True)
    _pile(d, x + 20, y + 30, len(state.deck), "cards to draw")
    x += 170
    d.text(x, y + 18, f"Discard pile {len(state.discard)}", 12, bold=True)
    if state.discard:
        _ingredient(d, rules, x + 20, y + 30, state.discard[-1])
    else:
        d.rect(x + 20, y + 30, CARD_W, CARD_H, "#f4efe2", stroke=MUTED, stroke_dasharray="4 3")
    x += 160
    d.text(x, y + 18, "Out of the game", 12, bold=True)
    d.text(x, y + 50, plural(len(state.removed), "card"), 12)
    d.text(x, y + 70, plural(len(state.spell_discard), "Spell") + " discarded", 12)
    return y + h + 10


def _space(
    d: Drawing, rules: HocusPocusRules, pile: list[int], space: int, x: float, top: float
) -> None:
    """A Cauldron space: its top card over the pile's height, or its printed colour and type."""
    colour, kind = rules.options.board[space]
    d.pad(x, top - 6, CARD_W + 6, CARD_H + 6)  # the whole stack answers a click
    if pile:
        for depth in range(min(len(pile) - 1, 3), 0, -1):
            d.rect(x + 2 * depth, top - 2 * depth, CARD_W, CARD_H, "#e0d8c4", rx=6)
        _ingredient(d, rules, x, top, pile[-1], data_space=str(space))
        return
    d.rect(
        x,
        top,
        CARD_W,
        CARD_H,
        "#f4efe2",
        stroke=COLOUR_FILLS[colour],
        title=f"empty space: {C.COLOURS[colour]} / {C.TYPES[kind]}",
        stroke_dasharray="4 3",
        stroke_width="2",
        data_space=str(space),
    )
    d.text(x + CARD_W / 2, top + 27, TYPE_CODES[kind], 11, MUTED, "middle", bold=True)
    d.text(x + CARD_W / 2, top + 42, C.COLOURS[colour], 9, MUTED, "middle")


def _hands(d: Drawing, rules: HocusPocusRules, state: State, seat: int | None, y: float) -> float:
    """One row per seat: its name, hand size, turn and Binx marks and public answers, then its
    hand, face up where ``seat`` may see it (a card set aside to pass or swap is underlined)."""
    row = CARD_H + 22
    acting = -1 if state.outcome else state.actor
    me = state.actor if seat is None else seat
    for other, hand in enumerate(state.hands):
        offset = (other - me) % len(state.hands)
        seat_actions = [A.BINX + offset] + ([A.SWAP + offset - 1] if offset else [])
        with d.target(seat_actions, seat_name(other, seat)):
            _seat_row(d, state, other, seat, other == acting, y)
        shown = seat is None or other == seat or other == state.binx
        set_aside = state.set_aside.get(other, -1) if shown else -1
        step = CARD_W + GAP if len(hand) < 16 else (WIDTH - 230 - CARD_W) / (len(hand) - 1)
        for i, card in enumerate(sorted(hand) if shown else hand):
            x = 220 + i * step
            if shown:
                _held(d, rules, x, y + 9, card)
                if card == set_aside:
                    d.rect(x, y + CARD_H + 12, CARD_W, 5, HIGHLIGHT, rx=2, title="set aside")
            else:
                d.card(x, y + 9, BACK, face_down=True, title=f"{seat_name(other)}'s card")
        y += row + 6
    return y + 4


def _seat_row(
    d: Drawing, state: State, other: int, seat: int | None, to_act: bool, y: float
) -> None:
    """A seat's row behind its hand: its name, hand size, marks and public answers."""
    d.rect(10, y, WIDTH, CARD_H + 22, TO_ACT if to_act else PAPER, HIGHLIGHT if to_act else INK)
    name = seat_label(other, seat)
    d.text(20, y + 18, name, 14, bold=True)
    marks = [plural(len(state.hands[other]), "card")]
    if other == state.turn and not state.outcome:
        marks.append("turn")
    if other == state.binx:
        marks.append("Binx: face up")
    d.text(20, y + 34, " · ".join(marks), 11)
    if to_act:
        d.text(30 + len(name) * 8.5, y + 18, "▶ to act", 12, "#8a5a00", bold=True)
    _answers(d, state, other, y)


def _answers(d: Drawing, state: State, other: int, y: float) -> None:
    """``other``'s latest answers this round: colour questions as swatches, type questions by
    short name, each with a tick (yes) or a cross (no)."""
    yes, no = state.questions[1, other].tolist(), state.questions[2, other].tolist()
    x = 20
    for q in range(5):
        if yes[q] or no[q]:
            d.rect(x, y + 43, 11, 11, COLOUR_FILLS[q], rx=2, title=f"{C.COLOURS[q]}?")
            d.text(x + 14, y + 53, "✓" if yes[q] else "✗", 11, bold=True)
            x += 30
    x = 20
    for q in range(5, 10):
        if yes[q] or no[q]:
            d.text(x, y + 69, TYPE_CODES[q - 5] + ("✓" if yes[q] else "✗"), 11, bold=True)
            x += 36


def _legend(d: Drawing, y: float) -> float:
    """The colours, the marks and the short names of the types."""
    d.rect(10, y, WIDTH, 66, PAPER)
    items = [(fill, name) for fill, name in zip(COLOUR_FILLS, C.COLOURS, strict=True)]
    items += [(BACK, "hidden card"), (TO_ACT, "seat to act"), (HIGHLIGHT, "Sun / set aside")]
    items += [(USED, "trick used")]
    d.legend(20, y + 8, items)
    types = " · ".join(f"{c} {t}" for c, t in zip(TYPE_CODES, C.TYPES, strict=True))
    d.text(20, y + 38, f"Types: {types}", 11)
    d.text(
        20,
        y + 56,
        "Binx: its holder's hand is face up · Book: reveals a Spell · ✓/✗ answers this round "
        "· space: ×height (empty: printed colour and type)",
        11,
    )
    return y + 76


def _events(d: Drawing, rules: HocusPocusRules, state: State, y: float) -> None:
    """The latest public events, oldest first."""
    events = state.log[-EVENTS:]
    d.rect(10, y, WIDTH, 26 + 15 * max(len(events), 1), PAPER)
    d.text(20, y + 17, "Latest events", 12, bold=True)
    if not events:
        d.text(20, y + 34, "none yet", 11, MUTED)
    for i, event in enumerate(events):
        d.text(20, y + 34 + 15 * i, plain(event_text(rules, event)), 11)
