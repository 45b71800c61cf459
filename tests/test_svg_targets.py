"""Every legal action that belongs to a drawn thing is a click target of the seat's drawing.

In random games of every game, the acting seat's view (``render_for(seat, "svg")``) holds, for
each legal action but those with nothing to draw (questions, "let the Spell resolve", ...), a
``<g data-action>`` group naming it; only groups carry ``data-action``; and every legal action
has words a player reads (no action numbers, no seat offsets, no ``player_N``).
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.hexenflug import actions as HX
from cauldron.envs.hocus_pocus import actions as HP
from cauldron.envs.voodoo_mania import actions as VM

SVG = "{http://www.w3.org/2000/svg}"
UNDRAWN = {  # the actions a page offers as named buttons: nothing on the table is theirs
    "hocus_pocus_v1": {*range(HP.ASK, HP.PLAY), HP.FINISH, HP.SALT_DECLINE},
    "hexenflug_v1": {HX.CRASH, HX.CRASH_KEEP, HX.SKIP, HX.FINISH},
    "voodoo_mania_v1": {VM.WAIT},
    "headless_horseman_v1": set(),
}
DEVELOPER_WORDS = re.compile(r"action \d|offset|player_\d|#\d|\bslot\b|\b1 cards\b")


def targets(svg: str) -> tuple[set[int], list[str]]:
    """The actions the drawing's groups name, and the tags of every element with an action."""
    named, tags = set(), []
    for element in ET.fromstring(svg).iter():
        if element.get("data-action") is not None:
            tags.append(element.tag.removeprefix(SVG))
            named |= {int(a) for a in element.get("data-action").split()}
    return named, tags


def words_of(base):
    """The game's ``action_words``, beside its ``svg_table``."""
    return sys.modules[type(base).svg_table.__module__].action_words


@pytest.mark.parametrize("env_id", envs.ids())
@pytest.mark.parametrize("players", [2, 4])
def test_every_legal_action_of_a_drawn_thing_is_a_target_of_the_seats_view(env_id, players):
    env = envs.make(env_id, num_players=players, render_mode="svg")
    env.reset(seed=players)
    base, rng = env.unwrapped, np.random.default_rng(players)
    words, checked = words_of(base), 0
    for _ in range(400):
        if not env.agents:
            break
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = base.legal_actions()
        named, tags = targets(base.render_for(env.agent_selection, "svg"))
        assert set(tags) == {"g"}
        missing = set(legal) - named - UNDRAWN[env_id]
        assert not missing, f"legal actions with nothing to click: {sorted(missing)}"
        for action in legal:
            said = words(base.rules, base.game, action)
            assert said and not DEVELOPER_WORDS.search(said), said
        checked += len(legal)
        env.step(int(rng.choice(legal)))
    assert checked > 50


def test_a_card_in_hand_is_one_group_around_its_shapes_and_words():
    env = envs.make("hocus_pocus_v1", num_players=3, render_mode="svg")
    env.reset(seed=1)
    base = env.unwrapped
    root = ET.fromstring(base.render_for("player_0", "svg"))
    for card in base.game.hands[0]:
        [group] = [
            g for g in root.iter(f"{SVG}g") if f"{HP.CHOOSE + card}" in g.get("data-action", "")
        ]
        assert {e.tag.removeprefix(SVG) for e in group} >= {"rect", "text", "title"}
        assert group.find(f"{SVG}rect[@data-card='{card}']") is not None
