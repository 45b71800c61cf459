"""A reward-shaping function for the bridge's hook tests: a bonus for every move of seat 0."""

from __future__ import annotations

from typing import Any

CALLS: list[dict[str, Any]] = []


def bonus_for_seat_0(state: Any, event: dict[str, Any]) -> float:
    CALLS.append(event)
    return 0.25 if event["seat"] == 0 else 0.0


NOT_CALLABLE = 3
