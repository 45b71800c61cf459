"""Text picture of a Hexenflug table (``render_mode="ansi"``), kept apart from the rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cauldron.envs.hexenflug import components as C

if TYPE_CHECKING:
    from cauldron.envs.hexenflug.rules import HexenflugRules, State


def _cards(cards: list[int]) -> str:
    return ", ".join(C.card_name(c) for c in sorted(cards)) or "-"


def event_text(event: tuple) -> str:
    kind, seat, *rest = event
    who = f"player_{seat}"
    texts = {
        "draw": lambda: f"{who} draws {C.card_name(rest[0])}",
        "take": lambda: f"{who} takes {C.card_name(rest[0])} from the display",
        "place": lambda: f"{who} places {C.card_name(rest[0])}",
        "display": lambda: f"{who} adds {C.card_name(rest[0])} to the display",
        "crash": lambda: f"{who} crashes with {C.card_name(rest[0])}",
        "land": lambda: (
            f"{who} lands ({'hard' if rest[2] else 'soft'}) with {rest[1]} {C.COLOURS[rest[0]]}"
        ),
        "examine": lambda: f"{who} examines {rest[1]} {C.COLOURS[rest[0]]}: {rest[2]} Spellbook(s)",
        "cat_discard": lambda: f"{who} discards {C.card_name(rest[0])} (black cat)",
        "reshuffle": lambda: "the discard pile becomes the draw pile",
        "over": lambda: "the game is over",
    }
    return texts[kind]()


def render_table(rules: HexenflugRules, state: State, seat: int | None) -> str:
    """The table as ``seat`` sees it, or all of it for ``None``: every hand is public (its cards
    all entered it face up), only the draw pile's order is hidden."""
    scores = rules.scores(state)
    lines = [
        f"draw pile {len(state.draw_pile)}  discard {len(state.discard)}  phase: "
        f"{state.phase.name.lower()} (player_{state.actor} to act)",
        "Spellbooks left: "
        + "  ".join(f"{c} {s}" for c, s in zip(C.COLOURS, state.supply, strict=True)),
        f"display: {_cards(state.display)}",
    ]
    if state.drawn >= 0:
        lines.append(f"drawn: {C.card_name(state.drawn)}")
    for other in range(rules.num_players):
        hand = state.hands[other]
        books = " ".join(f"{C.COLOURS[c][0]}{b}" for c, b in enumerate(state.books[other]) if b)
        marks = " <turn>" if other == state.turn else ""
        lines.append(
            f"  player_{other}{marks}: score {scores[other]} [{books or '-'}]  hand: "
            f"{_cards(hand)} ({len(hand)} cards)"
        )
        rows = [
            "  ".join(
                f"{C.COLOURS[c]}:" + ",".join(str(C.value_of(x)) for x in row)
                for c, row in enumerate(state.layouts[other])
                if row
            )
        ]
        lines.append(f"      layout: {rows[0] or '-'}")
    lines.extend("> " + event_text(e) for e in state.log[-6:])
    return "\n".join(lines)
