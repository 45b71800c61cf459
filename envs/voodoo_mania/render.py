"""Text picture of a Voodoo Mania table (``render_mode="ansi"``), kept apart from the rules.

Cards are named by their faces, never by their ids: a side by the pair it misses and the four
pairs it shows (``no purple top hat: red Voodoo doll, yellow mask, green magic potion, blue
amulet``), the other side by the pair it misses (``other side no red mask``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cauldron.envs.core.views import Secret
from cauldron.envs.voodoo_mania import components as C
from cauldron.envs.voodoo_mania.actions import side_name

if TYPE_CHECKING:
    from cauldron.envs.voodoo_mania.rules import State, VoodooManiaRules


def side_text(rules: VoodooManiaRules, card: int, side: int) -> str:
    """A side by the pair it misses and the four pairs it shows, ingredient by ingredient."""
    shows = ", ".join(C.pair_name(p) for p in sorted(rules.deck[card][side].shows))
    return f"{side_name(rules.deck, card, side)}: {shows}"


def secret_action(rules: VoodooManiaRules, state: State, actor: int, action: int) -> Secret:
    """Everyone chooses at once each tick: the others see that a choice was made, not which
    (wait, play or cycle, and which hand card); the tick's outcome shows in the events (the play
    that won, with its card, and who cycled a card, not which)."""
    return Secret("chooses this tick's action in secret")


def event_text(rules: VoodooManiaRules, event: tuple) -> str:
    kind, *rest = event
    if kind in ("play", "voodoo"):
        seat, card, side = rest
        shout = "shouts Voodoo! with" if kind == "voodoo" else "plays"
        up, down = side_name(rules.deck, card, side), side_name(rules.deck, card, 1 - side)
        return f"player_{seat} {shout} {up} (other side {down})"
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
        f"Voodoo pile ({len(state.voodoo)}): top {side_text(rules, card, side)}",
        f"wanted: {C.pair_name(rules.wanted(state))}",
    ]
    for other, hand in enumerate(state.hands):
        pile = len(state.piles[other])
        if seat is not None and seat != other:
            lines.append(f"  player_{other}: hand {len(hand)} cards  pile {pile}")
            continue
        lines.append(f"  player_{other}: pile {pile}, hand:")
        for held in hand:
            lines.append(f"    - {side_text(rules, held, 0)}")
            lines.append(f"      / {side_text(rules, held, 1)}")
    lines.extend("> " + event_text(rules, e) for e in state.log[-6:])
    return "\n".join(lines)
