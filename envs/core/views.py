"""What each seat may see: the one rule behind every view of a game (the web viewer, ``python -m
cauldron.eval.replay --seat``, ``cauldron play``).

A seat's view of a game at a step is its private table (``render_for``, with the public event
log), every seat's figures and what it saw of the action just taken. The table is the game's
renderer's; this module gives the other two, so that no view builds them on its own:

* :func:`seen_action`: an action as the whole table or one seat sees it. An action is public
  unless the game's render module (the module of its ``render_table``) defines
  ``secret_action(rules, state, actor, action)``, which is asked *before* the action is applied
  and returns a :class:`Secret` for an action that only some seats may see (a card passed, a
  choice made face down): what the others see instead, and who besides the actor sees it.
* :func:`figures`: every seat's figures (its ``info``) from the game state. The AEC env refreshes
  ``infos`` only for the seat to act, so the env's ``infos`` of the other seats can be stale.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Secret:
    """An action the other seats may not see: ``public`` is what they see instead, after the
    actor's name (``"passes a card to player_2"``); ``seen_by`` the seats besides the actor that
    see it in full at that step (a swap partner who receives the card)."""

    public: str
    seen_by: frozenset[int] = frozenset()


def secret_rule(env_class: type) -> Callable[..., Secret | None] | None:
    """The game's ``secret_action`` (defined beside its ``render_table``), or ``None`` when
    every action of the game is public."""
    module = sys.modules[env_class.render_table.__module__]
    return getattr(module, "secret_action", None)


def seen_action(env: Any, action: int, seat: int | None) -> str:
    """What ``seat`` (``None``: the whole table) sees of the acting seat taking ``action`` in
    ``env``'s current state, before the action is applied: ``player_1: play 4/1 (action 21)``,
    or for a secret action the public text, ``player_1 plays a card face down``."""
    base = env.unwrapped
    actor = base.possible_agents.index(base.agent_selection)
    rule = secret_rule(type(base))
    secret = rule(base.rules, base.game, actor, action) if rule else None
    if secret is None or seat is None or seat == actor or seat in secret.seen_by:
        return f"player_{actor}: {action_text(base, action)} (action {action})"
    return f"player_{actor} {secret.public}"


def action_text(env: Any, action: int) -> str:
    """``action``'s name in ``env``'s current state, before it is applied: rules whose
    ``action_name`` takes a ``state`` name what the action refers to there (Voodoo Mania's hand
    slots by the card's faces); the others name the action alone."""
    base = env.unwrapped
    name = base.rules.action_name
    if "state" in inspect.signature(name).parameters:
        return name(action, state=base.game)
    return name(action)


def figures(env: Any) -> list[dict[str, Any]]:
    """Every seat's figures now: the rules' ``info`` of each seat from the game state (once the
    game has ended, the env's final ``infos``, which add what ended it, such as a penalty)."""
    base = env.unwrapped
    agents = base.possible_agents
    if all(base.terminations[a] or base.truncations[a] for a in agents):
        return [dict(base.infos[a]) for a in agents]
    return [base.rules.info(base.game, seat) for seat in range(len(agents))]
