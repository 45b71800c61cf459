"""Return of the Headless Horseman components as data (defaults: the rulebook leaves them open).

Cards are numbered ``0..29``: ``card = (top - 1) * 5 + bottom`` where bottom 0 is blank, 1–3 move
the Horseman that many spaces and 4 is the speed icon. The board is one progress index shared by
both figures (the Horseman starts on his own purple path, below 0).
"""

from __future__ import annotations

from dataclasses import dataclass

NUM_CARDS = 30
NUM_TOPS = 6
HAND_SIZE = 4
MAX_PLAYERS = 4
SPEED_ICON = 4
BOTTOMS = ("blank", "1", "2", "3", "speed")
SPINNER = (1, 2, 3)  # three equal sectors
SPEED_TILE_SIDES = (2, 4)  # Set Up: "2" side up; More Challenging: "4" side up
TOKENS = ("pumpkin 1", "pumpkin 2", "pumpkin 3", "pumpkin 4", "owl", "toad", "crow", "bat")
PUMPKINS = frozenset(range(4))


@dataclass(frozen=True)
class Board:
    """Spaces of the shared progress index.

    The defaults are the first-guess board with every space doubled (bridge 36 -> 72)
    except the green paths' ends, which stay 3, 5 and 7 spaces past the Spinning Tree (43, 45,
    47), and the Horseman starting 6 spaces behind the farm instead of 10. On the first guess the
    best heuristic team won over 99% of games; on this board it wins about 82-90% and random
    teams 4-13% (calibration in RULES.md).
    """

    farm: int = 0
    split_tree: int = 40  # the Spinning Tree: Ichabod stops and spins
    green_path_end: tuple[int, ...] = (43, 45, 47)  # spin k lands on green_path_end[k - 1]
    bridge: int = 72
    horseman_start: int = -6
    secret_paths: tuple[tuple[int, int], ...] = ((8, 18), (24, 34), (58, 66))
    tree_spaces: tuple[int, ...] = (14, 30, 62)
    scare_spaces: tuple[int, ...] = (6, 12, 20, 28, 36, 48, 60, 68)

    def is_blank(self, space: int) -> bool:
        """A space with nothing on it; the Spinning Tree and the bridge count as blank."""
        special = {a for a, _ in self.secret_paths} | set(self.tree_spaces) | set(self.scare_spaces)
        return space not in special


BOARD = Board()
# The lowest Horseman start a board may have: the observation's Horseman field begins here.
LOWEST_HORSEMAN_START = BOARD.horseman_start - 10
# The first-guess board, kept for reference and for rule tests.
FIRST_GUESS_BOARD = Board(
    horseman_start=-10,
    split_tree=20,
    green_path_end=(23, 25, 27),
    bridge=36,
    secret_paths=((4, 9), (12, 17), (29, 33)),
    tree_spaces=(7, 15, 31),
    scare_spaces=(3, 6, 10, 14, 18, 24, 30, 34),
)


def top_of(card: int) -> int:
    return card // 5 + 1


def bottom_of(card: int) -> int:
    return card % 5


def card_name(card: int) -> str:
    return f"{top_of(card)}/{BOTTOMS[bottom_of(card)]}"
