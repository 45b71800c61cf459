"""Return of the Headless Horseman components as data (``shared/design/components.md``).

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
TOKENS = ("pumpkin 1", "pumpkin 2", "pumpkin 3", "pumpkin 4", "owl", "toad", "crow", "bat")
PUMPKINS = frozenset(range(4))


@dataclass(frozen=True)
class Board:
    """Spaces of the shared progress index (components.md defaults)."""

    farm: int = 0
    split_tree: int = 20  # the Spinning Tree: Ichabod stops and spins
    green_path_end: tuple[int, ...] = (23, 25, 27)  # spin k lands on green_path_end[k - 1]
    bridge: int = 36
    horseman_start: int = -10
    secret_paths: tuple[tuple[int, int], ...] = ((4, 9), (12, 17), (29, 33))
    tree_spaces: tuple[int, ...] = (7, 15, 31)
    scare_spaces: tuple[int, ...] = (3, 6, 10, 14, 18, 24, 30, 34)

    def is_blank(self, space: int) -> bool:
        """A space with nothing on it; the Spinning Tree and the bridge count as blank."""
        special = {a for a, _ in self.secret_paths} | set(self.tree_spaces) | set(self.scare_spaces)
        return space not in special


BOARD = Board()


def top_of(card: int) -> int:
    return card // 5 + 1


def bottom_of(card: int) -> int:
    return card % 5


def card_name(card: int) -> str:
    return f"{top_of(card)}/{BOTTOMS[bottom_of(card)]}"
