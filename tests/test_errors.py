"""Bad input gets a clear error, and a rejected action never changes the game."""

from __future__ import annotations

import numpy as np
import pytest

from cauldron import envs
from cauldron.envs.hocus_pocus import actions as A


def _started(**options):
    env = envs.make("hocus_pocus_v1", num_players=3, **options)
    env.reset(seed=0)
    return env


def test_illegal_action_names_action_phase_and_legal_actions_and_changes_nothing():
    env = _started()
    before = (env.state().tobytes(), env.agent_selection, dict(env.rewards))
    with pytest.raises(envs.IllegalActionError) as err:
        env.step(A.REVEAL_SPELL)  # phase 'ask': only questions are legal
    message = str(err.value)
    assert "328" in message and "'ask'" in message and "player_0" in message
    assert "0 (ask orange)" in message
    assert isinstance(err.value, ValueError)
    assert (env.state().tobytes(), env.agent_selection, dict(env.rewards)) == before
    env.step(A.ASK)  # the game goes on
    assert env.unwrapped.game.phase.name == "ACT"


@pytest.mark.parametrize("action", [-1, 329, 10**9, 2.5, "ask", None])
def test_out_of_range_or_wrong_type_action_is_illegal(action):
    env = _started()
    before = env.state().tobytes()
    with pytest.raises(envs.IllegalActionError):
        env.step(action)
    assert env.state().tobytes() == before


def test_numpy_integer_actions_are_accepted():
    env = _started()
    env.step(np.int64(A.ASK))
    assert env.unwrapped.game.phase.name == "ACT"


def test_penalty_option_terminates_with_illegal_reward_shared_by_the_team():
    env = _started(illegal_action="penalty", illegal_reward=-5.0)
    env.step(A.REVEAL_SPELL)
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -5.0, "player_1": -5.0, "player_2": -5.0}
    _, reward, term, _, info = env.last()
    assert term and reward == -5.0 and info["illegal_action"]
    assert not env.observe("player_0")["action_mask"].any()
    for _ in env.agent_iter():
        env.step(None)
    assert env.agents == []


@pytest.mark.parametrize("count", [1, 7, 0, -2, "4", 3.0, True])
def test_bad_player_count(count):
    with pytest.raises(envs.ConfigError, match="takes 2 to 6 players"):
        envs.make("hocus_pocus_v1", num_players=count)


def test_unknown_option_lists_the_allowed_ones():
    with pytest.raises(envs.ConfigError, match="unknown option.*'sunrise_step'.*sunrise_steps"):
        envs.make("hocus_pocus_v1", sunrise_step=4)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"sunrise_steps": "3"}, "must be of type int"),
        ({"stun_reward": True}, "must be of type float"),
        ({"illegal_action": "ignore"}, r"must be one of \['raise', 'penalty'\]"),
        ({"start_seat": "youngest"}, "must be one of"),
        ({"spell_deck": ("Abracadabra",)}, "unknown: \\['Abracadabra'\\]"),
        ({"board": ((0, 0),)}, "must list 5 spaces"),
        ({"binx_cards": ((0, 9),)}, "pairs of ints 0..4"),
        ({"binx_cards": ((0, 2),), "spell_book_cards": ((0, 2),)}, "both Binx and the Spell"),
        ({"sunrise_steps": 0}, "at least 1"),
    ],
)
def test_bad_option_values(options, match):
    with pytest.raises(envs.ConfigError, match=match):
        envs.make("hocus_pocus_v1", **options)


def test_unknown_env_id_and_render_mode():
    with pytest.raises(envs.ConfigError, match="registered ids"):
        envs.make("hocus_pocus_v9")
    with pytest.raises(envs.ConfigError, match="render_mode"):
        envs.make("hocus_pocus_v1", render_mode="human")


@pytest.mark.parametrize("env_id", envs.ids())
def test_every_game_rejects_an_illegal_action_and_goes_on_unchanged(env_id):
    env = envs.make(env_id)
    env.reset(seed=1)
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = (env.state().tobytes(), env.agent_selection)
    with pytest.raises(envs.IllegalActionError, match=f"illegal action {illegal} for player_0"):
        env.step(illegal)
    assert (env.state().tobytes(), env.agent_selection) == before
    env.step(int(np.flatnonzero(mask)[0]))
    assert env.state().tobytes() != before[0]


@pytest.mark.parametrize(
    "options, match",
    [
        ({"books_per_colour": 12}, "'books_per_colour' must be 0"),
        ({"reward": "points"}, r"must be one of \['win_loss', 'score_margin'\]"),
        ({"beginner_crash_rule": "yes"}, "must be of type bool"),
        ({"beginner_rule": True}, "unknown option"),
    ],
)
def test_hexenflug_bad_options(options, match):
    with pytest.raises(envs.ConfigError, match=match):
        envs.make("hexenflug_v1", **options)


def test_hexenflug_bad_player_count():
    with pytest.raises(envs.ConfigError, match="takes 2 to 5 players, got 6"):
        envs.make("hexenflug_v1", num_players=6)


@pytest.mark.parametrize(
    "options, match",
    [
        ({"handless_seats": (5,)}, "distinct seats 0..2"),
        ({"handless_seats": (1, 1)}, "distinct seats"),
        ({"speed_tile": -2}, "'speed_tile' must be one of the Speed tile's sides"),
        ({"speed_tile": 2.5}, "must be of type int"),
        ({"challenge": True}, "unknown option"),
    ],
)
def test_headless_horseman_bad_options(options, match):
    with pytest.raises(envs.ConfigError, match=match):
        envs.make_parallel("headless_horseman_v1", num_players=3, **options)


def test_parallel_env_rejects_an_illegal_joint_action_and_goes_on_unchanged():
    env = envs.make_parallel("headless_horseman_v1", num_players=2)
    observations, _ = env.reset(seed=0)
    legal = {a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in observations.items()}
    illegal = int(np.flatnonzero(observations["player_1"]["action_mask"] == 0)[0])
    before = env.state().tobytes()
    with pytest.raises(envs.IllegalActionError, match=f"illegal action {illegal} for player_1"):
        env.step({"player_0": legal["player_0"], "player_1": illegal})
    with pytest.raises(envs.IllegalActionError, match="every live agent must act"):
        env.step({"player_0": legal["player_0"]})
    assert env.state().tobytes() == before
    env.step(legal)
    assert env.state().tobytes() != before


def test_parallel_penalty_mode_ends_the_game_and_the_team_shares_it():
    env = envs.make_parallel("headless_horseman_v1", num_players=2, illegal_action="penalty")
    observations, _ = env.reset(seed=0)
    legal = int(np.flatnonzero(observations["player_0"]["action_mask"])[0])
    illegal = int(np.flatnonzero(observations["player_1"]["action_mask"] == 0)[0])
    _, rewards, terms, _, infos = env.step({"player_0": legal, "player_1": illegal})
    assert rewards == {"player_0": -1.0, "player_1": -1.0} and all(terms.values())
    assert infos["player_1"]["illegal_action"] and not infos["player_0"]["illegal_action"]
    assert infos["player_0"]["illegal_agent"] == "player_1" and env.agents == []


@pytest.mark.parametrize(
    "options, match",
    [
        ({"max_ticks": 0}, "'max_ticks' must be at least 1"),
        ({"reward": "points"}, r"must be one of \['win_loss', 'per_round', 'per_tick'\]"),
        ({"truncation": "draw"}, r"must be one of \['standing', 'loss'\]"),
        ({"cycle_anytime": 1}, "must be of type bool"),
        ({"rounds": 5}, "unknown option"),
    ],
)
def test_voodoo_mania_bad_options(options, match):
    with pytest.raises(envs.ConfigError, match=match):
        envs.make("voodoo_mania_v1", **options)


def test_voodoo_mania_bad_player_count():
    with pytest.raises(envs.ConfigError, match="takes 2 to 6 players, got 7"):
        envs.make_parallel("voodoo_mania_v1", num_players=7)
