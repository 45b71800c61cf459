"""What the agent thought: policy agents explain their decisions, evaluation
stores the explanations in saved records (``p`` and ``v``) when asked, and nothing else changes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from cauldron import envs
from cauldron.agents import AgentError, make_agent
from cauldron.agents.base import Thought, thought
from cauldron.agents.torch_policy import PolicyNet, load_checkpoint, save_checkpoint
from cauldron.eval import harness, records
from cauldron.eval.config import parse_config
from cauldron.eval.records import RecordError, parse_games


def checkpoint(tmp_path: Path, env_id: str, seed: int = 0, **net) -> Path:
    """A tiny, untrained but seeded PolicyNet for ``env_id`` (its logits are spread out enough
    that its choices depend on the observation and, if recurrent, on its memory)."""
    env = envs.make(env_id)
    obs = env.observation_space("player_0")["observation"].shape[0]
    torch.manual_seed(seed)
    model = PolicyNet(obs, env.action_space("player_0").n, [32], **net)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(3.0)
    path = tmp_path / f"{env_id}-{seed}-{len(net)}.pt"
    save_checkpoint(model, env_id, path)
    return path


def evaluate(tmp_path: Path, env_id: str, agents: list[str], thoughts: bool, players: int = 2):
    """The saved games of a small evaluation (every game kept) with thoughts on or off."""
    name = f"run-{thoughts}"
    config = parse_config(
        {
            "env": env_id,
            "players": [players],
            "agents": agents,
            "games": 2,
            "workers": 1,
            "crossplay": "none",
            "save_games": 2,
            "record_thoughts": thoughts,
            "out": str(tmp_path),
            "name": name,
        }
    )
    results = harness.play_all(config, progress=False)
    return results, records.read_games(tmp_path / name / "games.jsonl")


def bare(game: records.GameRecord) -> list[dict]:
    """The step lines without what the agents thought: the game itself."""
    return [{k: v for k, v in line.items() if k not in ("p", "v")} for line in game.steps]


def check_thoughts(game: records.GameRecord, nets: dict[str, PolicyNet]) -> int:
    """Replay ``game``, checking each decision of a policy seat (``nets``: spec -> network)
    against the policy itself, with one memory per seat stepped once per decision; the number
    of decisions checked. Other seats must have no thought."""
    memory: dict[int, torch.Tensor | None] = {}
    checked = 0

    def before(env, line):
        nonlocal checked
        spec = game.header["agents"][line["s"]]
        if spec not in nets:
            assert "p" not in line and "v" not in line, line
            return
        net, base = nets[spec], env.unwrapped
        obs = env.observe(env.agent_selection)
        x = torch.as_tensor(obs["observation"])[None]
        with torch.no_grad():
            logits, memory[line["s"]] = net.masked_logits(
                x, torch.as_tensor(obs["action_mask"])[None], memory.get(line["s"])
            )
            probs = torch.softmax(logits[0], -1).numpy()
            value = None if net.config["state_size"] else float(net.value(x)[0])
        actions, chances = zip(*line["p"], strict=True)
        assert set(actions) <= set(base.legal_actions()), line
        assert list(chances) == sorted(chances, reverse=True) and sum(chances) <= 1.00025  # rounded
        assert line["a"] in actions  # the chosen action is always listed
        for action, chance in line["p"]:
            assert chance == pytest.approx(probs[action], abs=1e-4), (line, action)
        legal = np.flatnonzero(obs["action_mask"])
        assert len(actions) == min(5, len(legal))
        if value is None:
            assert "v" not in line  # a centralized critic reads hidden state: no value
        else:
            assert line["v"] == pytest.approx(value, abs=1e-4)
        checked += 1

    for _ in records.replay(game, before=before):
        pass
    return checked


@pytest.mark.parametrize("sample", [False, True])
def test_a_torch_agent_s_thoughts_are_legal_sorted_and_the_policy_s(tmp_path, sample):
    env_id = "hexenflug_v1"
    path = checkpoint(tmp_path, env_id)
    spec = f"torch:{path}" + ("?sample=1" if sample else "")
    agents = [spec, "heuristic:cautious"]
    results_on, games_on = evaluate(tmp_path, env_id, agents, thoughts=True)
    results_off, games_off = evaluate(tmp_path, env_id, agents, thoughts=False)
    net, _ = load_checkpoint(path)
    assert len(games_on) == 2
    assert sum(check_thoughts(game, {spec: net}) for game in games_on) > 20
    assert results_on == results_off
    assert [bare(g) for g in games_on] == [g.steps for g in games_off]
    assert not any("p" in line for g in games_off for line in g.steps)
    assert [g.end for g in games_on] == [g.end for g in games_off]


def test_a_recurrent_policy_s_memory_steps_once_per_decision(tmp_path):
    env_id = "headless_horseman_v1"
    path = checkpoint(tmp_path, env_id, seed=3, recurrent=8)
    spec = f"torch:{path}"
    results_on, games_on = evaluate(tmp_path, env_id, [spec], thoughts=True, players=3)
    results_off, games_off = evaluate(tmp_path, env_id, [spec], thoughts=False, players=3)
    assert results_on == results_off
    assert [bare(g) for g in games_on] == [g.steps for g in games_off]
    net, _ = load_checkpoint(path)
    assert sum(check_thoughts(game, {spec: net}) for game in games_on) > 20
    # the memory matters: the same decisions with a fresh memory each time would differ
    agent = make_agent(spec, env_id)
    obs = np.ones(net.config["obs_size"], np.float32)
    mask = np.ones(net.config["num_actions"], np.int8)
    agent.act(obs, mask)
    first = agent.explain()
    agent.act(obs, mask)
    assert agent.explain() != first and agent.explain() == agent.explain()


def test_a_centralized_critic_gives_no_value(tmp_path):
    env_id = "hexenflug_v1"
    env = envs.make(env_id, num_players=2)
    env.reset(seed=0)
    path = checkpoint(tmp_path, env_id, state_size=len(env.unwrapped.state()))
    spec = f"torch:{path}"
    _, games = evaluate(tmp_path, env_id, [spec, "random"], thoughts=True)
    net, _ = load_checkpoint(path)
    assert sum(check_thoughts(game, {spec: net}) for game in games) > 10


def test_thought_lists_the_chosen_action_and_breaks_ties_by_index():
    probs = np.array([0.1, 0.3, 0.1, 0.2, 0.05, 0.1, 0.15, 0.0])
    mask = np.array([1, 1, 1, 1, 1, 1, 1, 0])
    t = thought(probs, mask, 4, 1.23456)
    assert t.top == ((1, 0.3), (3, 0.2), (6, 0.15), (0, 0.1), (4, 0.05))
    assert t.value == 1.2346
    assert thought(probs, mask, 1, None).top[-1] == (2, 0.1)
    assert [a for a, _ in thought(probs, np.eye(8, dtype=int)[7], 7, None).top] == [7]


def test_heuristic_and_random_agents_give_no_thoughts():
    for spec in ("random", "heuristic:greedy"):
        assert not hasattr(make_agent(spec, "hocus_pocus_v1"), "explain")


def test_thoughts_need_saved_games_and_a_boolean():
    base = {"env": "hocus_pocus_v1", "players": [2], "agents": ["random"], "games": 2}
    with pytest.raises(envs.ConfigError, match="record_thoughts needs save_games"):
        parse_config({**base, "record_thoughts": True})
    with pytest.raises(envs.ConfigError, match="record_thoughts"):
        parse_config({**base, "save_games": 1, "record_thoughts": "yes"})
    assert parse_config({**base, "save_games": 1, "record_thoughts": True}).record_thoughts


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> list[str]:
    """The lines of one saved game of a torch agent with thoughts on."""
    tmp_path = tmp_path_factory.mktemp("recorded")
    spec = f"torch:{checkpoint(tmp_path, 'hexenflug_v1')}"
    _, games = evaluate(tmp_path, "hexenflug_v1", [spec, "random"], thoughts=True)
    return games[0].to_lines()


BAD = [
    ({"p": "top"}, "must list 1 to 5"),
    ({"p": []}, "must list 1 to 5"),
    ({"p": [[i, 0.1] for i in range(6)]}, "must list 1 to 5"),
    ({"p": [[167, 0.5]]}, r"an action in 0\.\.166"),
    ({"p": [[-1, 0.5]]}, "must list 1 to 5"),
    ({"p": [[True, 0.5]]}, "must list 1 to 5"),
    ({"p": [[1, 1.5]]}, "a probability in 0..1"),
    ({"p": [[1, -0.1]]}, "must list 1 to 5"),
    ({"p": [[1, float("nan")]]}, "must list 1 to 5"),
    ({"p": [[1, 0.5, 2]]}, "must list 1 to 5"),
    ({"p": [[1, 0.5], [1, 0.2]]}, "names an action twice"),
    ({"p": [[1, 0.2], [2, 0.5]]}, "highest first"),
    ({"p": [[1, 0.6], [2, 0.5]]}, "sum to 1.1000"),
    ({"v": "high"}, "'v' must be a finite number"),
    ({"v": float("inf")}, "'v' must be a finite number"),
    ({"v": True}, "'v' must be a finite number"),
]


@pytest.mark.parametrize("change, message", BAD)
def test_the_reader_refuses_bad_thoughts(recorded, change, message):
    lines = list(recorded)
    step = json.loads(lines[3])
    step.update(change)
    lines[3] = json.dumps(step)
    with pytest.raises(RecordError, match=rf"<memory>, line 4, step 3: .*{message}"):
        parse_games(lines)


def test_thoughts_are_read_back_and_ignored_by_replay(recorded):
    [game] = parse_games(recorded)
    assert any("p" in line and "v" in line for line in game.steps)
    lines = list(recorded)
    for i, text in enumerate(lines[1:-1], start=1):
        step = json.loads(text)
        if "p" in step:
            step["p"] = [[a, 0.0] for a, _ in step["p"][:1]]
            step["v"] = -1e6
            lines[i] = json.dumps(step)
    [changed] = parse_games(lines)
    assert records.check(changed) == records.check(game) == len(game.steps)


def test_an_sb3_agent_explains_the_action_predict_gives(tmp_path):
    from tests.test_agents import tiny_sb3_model

    env_id = "headless_horseman_v1"
    space = envs.make(env_id).observation_space("player_0")["observation"]
    n = int(envs.make(env_id).action_space("player_0").n)
    path = tiny_sb3_model(env_id, tmp_path)
    spec = f"sb3:{path}"
    agent = make_agent(spec, env_id)
    assert agent.explain() is None
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs = rng.random(space.shape[0], dtype=np.float32)
        mask = (rng.random(n) < 0.4).astype(np.int8)
        mask[rng.integers(n)] = 1
        action = agent.act(obs, mask)
        expected, _ = agent.policy.predict(obs, deterministic=True, action_masks=mask.astype(bool))
        assert action == int(expected)
        t = agent.explain()
        assert isinstance(t, Thought) and t.top[0][0] == action
        assert all(mask[a] for a, _ in t.top) and math.isfinite(t.value)
        obs_tensor, _ = agent.policy.obs_to_tensor(obs)
        with torch.no_grad():
            value = float(agent.policy.predict_values(obs_tensor)[0, 0])
        assert t.value == pytest.approx(value, abs=1e-4)
    _, games = evaluate(tmp_path, env_id, [spec], thoughts=True, players=3)
    steps = [line for g in games for line in g.steps]
    assert steps and all("p" in line and "v" in line for line in steps)


def test_a_thinker_that_does_not_repeat_its_moves_is_refused():
    class Stubborn:
        def reset(self, seed=None):
            pass

        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask)[-1])

        def explain(self):
            return Thought(((0, 1.0),))

    env = records.Recorder(envs.make("hexenflug_v1", num_players=2))
    env.reset(seed=5)
    actions = []
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0])
        env.step(action)
        actions += [] if action is None else [action]
    args = ("hexenflug_v1", 2, {}, 5, actions, ["a", "b"])
    assert records.rebuild(*args).steps == env.record.steps
    with pytest.raises(
        AgentError, match=r"seed 5, step \d+: 'a' \(seat 0\) chose \d+ when asked again"
    ):
        records.rebuild(*args, thinkers={0: Stubborn()})
