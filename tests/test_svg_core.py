"""The shared SVG drawing kit (envs/core/svg.py) and the render modes of the AEC layer."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.core.svg import CARD_H, CARD_W, Drawing, rasterize

SVG = "{http://www.w3.org/2000/svg}"


def test_a_drawing_grows_to_hold_what_is_drawn_and_escapes_text():
    drawing = Drawing()
    drawing.card(100, 20, "#c33", "7", "<b>&", "x")
    drawing.text(5, 200, 'a "quoted" <name>')
    root = ET.fromstring(drawing.svg(margin=10))
    assert int(root.get("width")) >= 100 + CARD_W + 10
    assert int(root.get("height")) >= 200 + 10
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "<b>&" in texts and 'a "quoted" <name>' in texts


def test_a_face_down_card_shows_no_face():
    drawing = Drawing()
    drawing.card(0, 0, "#c33", "7", "secret", face_down=True)
    root = ET.fromstring(drawing.svg())
    assert not [t.text for t in root.iter(f"{SVG}text")]
    assert len(list(root.iter(f"{SVG}rect"))) == 3  # the table, the back and its frame


def test_extra_attributes_are_written_with_dashes():
    drawing = Drawing()
    drawing.rect(0, 0, CARD_W, CARD_H, "#fff", data_action="12", title="play 12")
    rect = ET.fromstring(drawing.svg()).findall(f"{SVG}rect")[1]
    assert rect.get("data-action") == "12"
    assert rect.find(f"{SVG}title").text == "play 12"


def test_rasterize_gives_an_rgb_picture_of_the_drawing():
    drawing = Drawing()
    drawing.rect(0, 0, 40, 20, "#ff0000", stroke="#ff0000", rx=0)
    picture = rasterize(drawing.svg(margin=0, background="#0000ff"))
    assert picture.dtype == np.uint8 and picture.shape == (20, 40, 3)
    assert tuple(picture[10, 20]) == (255, 0, 0)


def test_an_unknown_render_mode_is_refused_naming_the_modes():
    env_id = envs.ids()[0]
    with pytest.raises(ConfigError, match="render_mode"):
        envs.make(env_id, render_mode="pdf")
    env = envs.make(env_id)
    env.reset(seed=0)
    with pytest.raises(ConfigError, match="'pdf' is not one of"):
        env.unwrapped.render_for("player_0", "pdf")
