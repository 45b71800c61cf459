"""Text picture of a Voodoo Mania table (``render_mode="ansi"``), kept apart from the rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envs.core.views import Secret
from envs.voodoo_mania import components as C

if TYPE_CHECKING:
    from envs.voodoo_mania.rules import State, VoodooManiaRules


def side_text(rules: VoodooManiaRules, card: int, side: int) -> str:
    face = rules.deck[card][side]
    return f"#{card}/{side} (no {C.pair_name(face.missing)})"


def secret_action(rules: VoodooManiaRules, state: State, actor: int, action: int) -> Secret:
    """Everyone chooses at once each tick: the others see that a choice was made, not which
    (wait, play or cycle, and which hand card); the tick's outcome shows in the events (the play
    that won, with its card, and who cycled a card, not which)."""
    return Secret("chooses this tick's action in secret")


def event_text(rules: VoodooManiaRules, event: tuple) -> str:
    kind, *rest = event
    if kind in ("play", "voodoo"):
        seat, card, side = rest
        shout = "Voodoo!" if kind == "voodoo" else "plays"
        return f"player_{seat} {shout} {side_text(rules, card, side)}"
    if kind == "cycle":
        return f"player_{rest[0]} cycles a card"
    if kind == "stalled":
        return "nobody can ever play on this pair: the round ends"
    if kind == "round":
        return f"round {rest[0] + 1} over, points {list(rest[1])}"
    return f"truncated after {rest[0]} ticks"


def render_table(rules: VoodooManiaRules, state: State, seat: int | None) -> str:
    card, side = state.voodoo[-1]
    lines = [
        f"round {min(state.round, C.ROUNDS - 1) + 1}/{C.ROUNDS}  tick {state.tick}  "
        f"scores {state.scores}",
        f"Voodoo pile ({len(state.voodoo)}): top {side_text(rules, card, side)}; wanted: "
        f"{C.pair_name(rules.wanted(state))}",
    ]
    for other, hand in enumerate(state.hands):
        shown = seat is None or seat == other
        cards = ", ".join(f"#{c}" for c in hand) if shown else f"{len(hand)} cards"
        lines.append(f"  player_{other}: hand {cards}  pile {len(state.piles[other])}")
    lines.extend("> " + event_text(rules, e) for e in state.log[-6:])
    return "\n".join(lines)
