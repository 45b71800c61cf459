"""Text picture of a Hocus Pocus table (``render_mode="ansi"``), kept apart from the rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cauldron.envs.core.views import Secret
from cauldron.envs.hocus_pocus import actions as A
from cauldron.envs.hocus_pocus import components as C
from cauldron.envs.hocus_pocus.phases import Phase

if TYPE_CHECKING:
    from cauldron.envs.hocus_pocus.rules import HocusPocusRules, State

QUESTIONS = [f"{c}?" for c in C.COLOURS] + [f"{t}?" for t in C.TYPES]


def card_text(rules: HocusPocusRules, card: int) -> str:
    icon = " [Binx]" if rules.is_binx[card] else " [Book]" if rules.is_book[card] else ""
    return f"{C.COLOURS[card // 10]} {C.TYPES[(card // 2) % 5]}{icon}"


def secret_action(rules: HocusPocusRules, state: State, actor: int, action: int) -> Secret | None:
    """A card chosen to pass (Come Little Children) or to swap (Daylight Savings Time) is seen by
    its owner only; its taker sees it once the cards change hands (the last pass of the Spell,
    the partner's choice of the swap). The Binx holder's hand is face up, so its choices are
    public, as are discards (the discard pile is face up) and every other action."""
    if not A.CHOOSE <= action < A.FINISH or actor == state.binx:
        return None
    if state.phase == Phase.SPELL_PASS:
        taker = (actor + 1) % rules.num_players
        return Secret(
            f"passes a card to player_{taker}", frozenset() if state.queue else frozenset({taker})
        )
    if state.phase == Phase.SWAP_OWN:
        return Secret(f"chooses a card to swap with player_{state.partner}")
    if state.phase == Phase.SWAP_PARTNER:
        return Secret(f"swaps a card with player_{state.turn}", frozenset({state.turn}))
    return None


def event_text(rules: HocusPocusRules, event: tuple) -> str:
    kind, seat, *rest = event
    who = f"player_{seat}"
    if kind == "ask":
        return f"{who} asks: {QUESTIONS[rest[0]]}"
    if kind == "play":
        return f"{who} plays {card_text(rules, rest[0])} on space {rest[1]}"
    if kind == "stuck":
        return f"{who} cannot play"
    if kind == "spell":
        return f"Spell revealed: {rules.spell_names[rest[0]]}"
    if kind == "miss":
        return f"{rules.spell_names[rest[0]]} misses (caster stunned)"
    if kind == "trick":
        return f"{who} uses {C.TRICKS[rest[0]]}"
    if kind == "binx":
        return f"{who} places Binx before player_{rest[0]}"
    if kind == "discard":
        return f"{who} discards {card_text(rules, rest[0])}"
    if kind == "swap":
        return f"{who} swaps a card with player_{rest[0]}"
    if kind == "stun":
        return f"{C.WITCHES[rest[0]]} is stunned! The Sun rises."
    return {"won": "The Sun is up: the team wins!", "lost": "The deck ran out: the team loses."}[
        kind
    ]


def render_table(rules: HocusPocusRules, state: State, seat: int | None) -> str:
    """The table as ``seat`` sees it (other hands hidden unless Binx shows them), or all of it."""
    status = (
        {1: "the team won", -1: "the team lost"}[state.outcome]
        if state.outcome
        else f"phase: {state.phase.name.lower()} (player_{state.actor} to act)"
    )
    lines = [
        f"Sun {state.sun}/{rules.options.sunrise_steps}  stunned: "
        f"{C.WITCHES[state.stunned] if state.stunned >= 0 else '-'}  deck {len(state.deck)}  "
        f"spells {len(state.spell_deck)}  {status}",
        "Cauldron:",
    ]
    for space, pile in enumerate(state.piles):
        colour, kind = rules.options.board[space]
        top = (
            card_text(rules, pile[-1])
            if pile
            else f"(empty: {C.COLOURS[colour]} / {C.TYPES[kind]})"
        )
        lines.append(f"  {space}: {top}  x{len(pile)}")
    for other, hand in enumerate(state.hands):
        shown = seat is None or other == seat or other == state.binx
        cards = ", ".join(card_text(rules, c) for c in sorted(hand)) if shown else "?" * len(hand)
        marks = (" <turn>" if other == state.turn else "") + (
            " [Binx]" if other == state.binx else ""
        )
        yes, no = state.questions[1, other], state.questions[2, other]
        answers = [QUESTIONS[q] + ("yes" if yes[q] else "no") for q in range(10) if yes[q] or no[q]]
        lines.append(
            f"  player_{other}{marks}: {cards}" + (f"  | {' '.join(answers)}" if answers else "")
        )
    used = [t for t, u in zip(C.TRICKS, state.tricks_used, strict=True) if u]
    lines.append(f"Tricks used: {', '.join(used) or 'none'}")
    lines.extend("> " + event_text(rules, e) for e in state.log[-6:])
    return "\n".join(lines)
