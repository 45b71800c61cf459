"""The observation decoder (envs.layout / envs.decode) that feature-based agents read."""

from __future__ import annotations

import numpy as np
import pytest

from cauldron import envs


@pytest.mark.parametrize("env_id", envs.ids())
def test_decode_names_every_entry_of_observations_and_states(env_id):
    env = envs.make(env_id, num_players=3)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    fields = envs.decode(env_id, obs)
    layout = envs.layout(env_id, num_players=3)
    assert list(fields) == [f.name for f in layout.fields]
    assert [v.size for v in fields.values()] == [f.size for f in layout.fields]
    np.testing.assert_array_equal(np.concatenate(list(fields.values())), obs["observation"])
    state = envs.decode(env_id, env.state(), kind="state", num_players=3)
    np.testing.assert_array_equal(np.concatenate(list(state.values())), env.state())
    assert env.unwrapped.encoder.observation_layout.fields == layout.fields


def test_decoded_fields_mean_what_their_names_say():
    """Headless Horseman (RULES.md, Observation): at the start the game is not over and Ichabod
    stands on exactly one space; decoded fields are copies, the vector stays as it was."""
    env = envs.make("headless_horseman_v1", num_players=2)
    env.reset(seed=0)
    vector = env.observe(env.agent_selection)["observation"]
    fields = envs.decode("headless_horseman_v1", vector)
    assert fields["over"].tolist() == [0.0] and fields["ichabod"].sum() == 1
    fields["ichabod"][:] = 7
    assert vector.max() <= 1


def test_decoder_errors_are_clear():
    with pytest.raises(envs.ConfigError, match="unknown environment id 'chess_v6'"):
        envs.layout("chess_v6")
    size = envs.layout("hexenflug_v1").size
    with pytest.raises(envs.ConfigError, match=f"observation vectors have {size} entries, got"):
        envs.decode("hexenflug_v1", np.zeros(size + 1))
    with pytest.raises(envs.ConfigError, match="shape \\(2, 3\\)"):
        envs.decode("hexenflug_v1", np.zeros((2, 3)))
    with pytest.raises(envs.ConfigError, match="kind must be one of"):
        envs.layout("hexenflug_v1", kind="hidden")
    with pytest.raises(envs.ConfigError, match="'observation' entry"):
        envs.decode("hexenflug_v1", {"obs": np.zeros(size)})


def test_a_layout_prints_its_fields_and_slices_like_a_sequence():
    layout = envs.layout("hexenflug_v1")
    text = repr(layout)
    assert text.startswith(f"Layout({len(layout)} fields, {layout.size} entries)")
    assert "  [0:6] phase (6): one-hot phase" in text
    first, second = layout[0:2]
    assert (first, second) == (layout[0], layout[1]) and first.name == "phase"
    assert layout[-1] == layout.fields[-1] and list(layout) == list(layout.fields)
    assert layout["phase"] == slice(0, 6) and "phase" in layout and "nothing" not in layout
    with pytest.raises(KeyError, match="no field 'nothing'; the fields are"):
        layout["nothing"]
