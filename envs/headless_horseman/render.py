"""Text picture of the Headless Horseman table (``render_mode="ansi"``), apart from the rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cauldron.envs.core.views import Secret
from cauldron.envs.headless_horseman import actions as A
from cauldron.envs.headless_horseman import components as C

if TYPE_CHECKING:
    from cauldron.envs.headless_horseman.rules import HeadlessHorsemanRules, State


def _cards(cards) -> str:
    return " ".join(C.card_name(c) for c in cards) or "-"


def secret_action(
    rules: HeadlessHorsemanRules, state: State, actor: int, action: int
) -> Secret | None:
    """Every player chooses a card face down (Each Player Plays a Card): the others see that a
    card was chosen, not which, until the row is flipped. A seat without a hand has no choice
    (it plays the draw pile's top card), so that action is public."""
    return None if action == A.PLAY_TOP else Secret("plays a card face down")


def event_text(event: tuple) -> str:
    kind, *rest = event
    texts = {
        "row": lambda: f"row: {_cards(rest[0])}",
        "move": lambda: f"Ichabod moves {rest[0]}",
        "secret": lambda: f"secret path {rest[0]} -> {rest[1]}",
        "tree": lambda: f"tree at {rest[0]}: spin {rest[1]}",
        "split": lambda: f"Spinning Tree: spin {rest[0]}, green path to {rest[1]}",
        "scare_space": lambda: f"scare space {rest[0]}",
        "horseman_scare": lambda: f"the Horseman scares Ichabod at {rest[0]}",
        "flip": lambda: f"Scare token: {C.TOKENS[rest[0]]}",
        "ichabod": lambda: f"player_{rest[0]}: Ichabod! spins {rest[1]}",
        "reshuffle": lambda: "the discard pile is shuffled into a new draw pile",
        "flip_discard": lambda: "the discard pile is flipped over into a new draw pile",
        "won": lambda: "Ichabod escapes over the bridge: the team wins!",
        "lost": lambda: "four pumpkins: the Horseman catches Ichabod, the team loses",
    }
    return texts[kind]()


def track_text(board: C.Board, ichabod: int, horseman: int) -> str:
    """The Horseman's purple path (``-``, from his start to the farm), ``|``, then the track from
    the farm (``.`` blank, ``!`` scare, ``T`` tree, ``S`` secret path, ``Y`` Spinning Tree, ``B``
    bridge) with ``H`` and ``I`` on the figures' spaces."""
    purple = ["-"] * (board.farm - board.horseman_start)
    track = ["."] * (board.bridge + 1)
    for space in board.scare_spaces:
        track[space] = "!"
    for space in board.tree_spaces:
        track[space] = "T"
    for space, _ in board.secret_paths:
        track[space] = "S"
    track[board.split_tree] = "Y"
    track[board.bridge] = "B"
    if horseman >= board.farm:
        track[horseman] = "H"
    else:
        purple[horseman - board.horseman_start] = "H"
    track[ichabod] = "I"
    return "".join(purple) + "|" + "".join(track)


def render_table(rules: HeadlessHorsemanRules, state: State, seat: int | None) -> str:
    board = rules.board
    up = [C.TOKENS[t] for t in state.tokens[: state.flipped]]
    lines = [
        "track: " + track_text(board, state.ichabod, state.horseman),
        f"Ichabod {state.ichabod}/{board.bridge}  Horseman {state.horseman}  speed tile "
        f"{rules.options.speed_tile}  scares: {', '.join(up) or 'none'}",
        f"row: {_cards(state.row)}  draw pile {len(state.draw_pile)}  discard {len(state.discard)}",
    ]
    for other, hand in enumerate(state.hands):
        shown = seat is None or seat == other
        what = _cards(sorted(hand)) if shown else f"{len(hand)} cards"
        tag = " (plays from the pile)" if other in rules.handless else ""
        lines.append(f"  player_{other}{tag}: {what}")
    lines.extend("> " + event_text(e) for e in state.log[-6:])
    return "\n".join(lines)
