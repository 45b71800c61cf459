"""Your own agents: ``python:`` specs with options, agent objects through
``cauldron.eval.evaluate``, display names, sampling ``torch:`` agents, and clear errors naming the
spec."""

from __future__ import annotations

import numpy as np
import pytest

from cauldron import envs
from cauldron import eval as cauldron_eval
from cauldron.agents import AgentError, make_agent
from cauldron.agents.specs import display_name, display_names, parse_spec
from cauldron.eval import harness, report
from cauldron.eval.config import parse_config

HERE = "tests.test_agents_user"


class NthLegal:
    """Plays the ``nth`` legal action (wrapping around): a deterministic user agent."""

    def __init__(self, nth: int = 0) -> None:
        self.nth = nth
        self.name = f"nth{nth}"

    def reset(self, seed: int | None = None) -> None:
        """No memory."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[self.nth % len(legal)])


class Crashes(NthLegal):
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        raise RuntimeError("boom")


class NotAnAgent:
    def reset(self, seed: int | None = None) -> None:
        """Has no act."""


def needs_depth(depth: int) -> NthLegal:
    return NthLegal(depth)


def first_action(agent, env_id: str = "hocus_pocus_v1") -> int:
    env = envs.make(env_id, num_players=2)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    agent.reset(0)
    return agent.act(obs["observation"], obs["action_mask"])


def test_spec_options_are_read_as_yaml_scalars():
    spec = parse_spec("python:pkg.mod:Class?temperature=0.5&greedy=true&label=bold")
    assert (spec.kind, spec.target) == ("python", "pkg.mod:Class")
    assert spec.options == {"temperature": 0.5, "greedy": True, "label": "bold"}
    assert parse_spec("torch:runs/a b/final.pt?sample=1").options == {"sample": 1}


def test_python_spec_builds_the_class_with_its_options_and_plays_legally():
    env = envs.make("hocus_pocus_v1", num_players=2)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    legal = np.flatnonzero(obs["action_mask"])
    assert first_action(make_agent(f"python:{HERE}:NthLegal", "hocus_pocus_v1")) == legal[0]
    agent = make_agent(f"python:{HERE}:NthLegal?nth=1", "hocus_pocus_v1")
    assert first_action(agent) == legal[1 % len(legal)]
    assert (
        first_action(make_agent(f"python:{HERE}:needs_depth?depth=1", "hocus_pocus_v1"))
        == (legal[1 % len(legal)])
    )


def test_python_spec_in_an_evaluation_config_and_in_worker_processes():
    spec = f"python:{HERE}:NthLegal?nth=2"
    data = {"env": "headless_horseman_v1", "players": [2], "agents": ["random", spec]}
    one = parse_config({**data, "games": 8, "workers": 1})
    two = parse_config({**data, "games": 8, "workers": 2})
    rows = [harness.summarize(c, harness.play_all(c, progress=False))["rows"] for c in (one, two)]
    assert rows[0] == rows[1]
    assert [r["label"] for r in rows[0]] == ["random×2", f"{spec}×2", f"random + {spec}"]


@pytest.mark.parametrize(
    "spec, match",
    [
        ("python:no_such_pkg.agents:Bold", r"'python:no_such_pkg.agents:Bold': cannot import"),
        (f"python:{HERE}:Missing", "has no class or function 'Missing'"),
        (f"python:{HERE}:NotAnAgent", "is a NotAnAgent, not an agent: it has no act method"),
        (f"python:{HERE}:needs_depth", r"needs_depth\(\*\*\{\}\) raised TypeError"),
        (f"python:{HERE}:NthLegal?nth", "option 'nth' is not key=value"),
        ("python:NthLegal", "use python:<package.module>:<Class>"),
        ("torch:x.pt?temperature=2", r"unknown option\(s\) \['temperature'\]"),
        ("torch:x.pt?sample=3", "sample must be 0 or 1"),
        ("random?sample=1", r"random agents take none"),
    ],
)
def test_bad_specs_name_the_spec(spec, match):
    with pytest.raises(envs.ConfigError, match=match):
        make_agent(spec, "hocus_pocus_v1")


def test_an_agent_that_raises_in_act_is_named():
    spec = f"python:{HERE}:Crashes"
    cfg = parse_config(
        {"env": "hocus_pocus_v1", "players": [2], "agents": [spec], "games": 2, "workers": 1}
    )
    with pytest.raises(AgentError, match=f"agent '{spec}' raised in act: RuntimeError: boom"):
        harness.play_all(cfg, progress=False)


def test_evaluate_takes_agent_objects_and_specs_by_name(tmp_path):
    summary = cauldron_eval.evaluate(
        "headless_horseman_v1",
        {"second": NthLegal(1), "focal": "heuristic:focal"},
        players=[3],
        games=6,
        out=tmp_path,
        name="mine",
        progress=False,
    )
    assert summary["config"]["agents"] == ["second", "heuristic:focal"]
    assert summary["labels"] == {"second": "second", "heuristic:focal": "focal"}
    assert [r["label"] for r in summary["rows"]][:2] == ["second×3", "heuristic:focal×3"]
    text = (tmp_path / "mine" / "report.md").read_text()
    assert "| focal | 3 | 6 |" in text and "| second | 3 | 6 |" in text
    with pytest.raises(AgentError, match="agent 'bad' raised in act: RuntimeError: boom"):
        cauldron_eval.evaluate("hocus_pocus_v1", {"bad": Crashes()}, games=1, progress=False)
    with pytest.raises(AgentError, match="'thing' is a NotAnAgent, not an agent"):
        cauldron_eval.evaluate("hocus_pocus_v1", {"thing": NotAnAgent()}, progress=False)


def test_display_names_shorten_checkpoint_paths_unless_they_collide():
    assert display_name("torch:runs/train/hocus_long_name/final.pt?sample=1") == (
        "torch:hocus_long_name/final.pt?sample=1"
    )
    assert display_name("python:my.pkg.agents:Bold?depth=2") == "python:Bold?depth=2"
    assert display_name("heuristic:greedy") == "heuristic:greedy"
    clash = ["torch:a/run/final.pt", "torch:b/run/final.pt", "sb3:x/y/z.zip"]
    assert display_names(clash) == {
        "torch:a/run/final.pt": "torch:a/run/final.pt",
        "torch:b/run/final.pt": "torch:b/run/final.pt",
        "sb3:x/y/z.zip": "sb3:y/z.zip",
    }
    assert display_names(clash[:1], {"torch:a/run/final.pt": "ppo"}) == {
        "torch:a/run/final.pt": "ppo"
    }


def test_config_labels_must_name_agents_and_appear_in_reports():
    base = {"env": "hocus_pocus_v1", "players": [2], "agents": ["random"], "games": 3}
    with pytest.raises(envs.ConfigError, match=r"labels \['greedy'\] name no agent"):
        parse_config({**base, "labels": {"greedy": "g"}})
    cfg = parse_config({**base, "labels": {"random": "uniform"}, "workers": 1})
    summary = harness.summarize(cfg, harness.play_all(cfg, progress=False))
    assert "| uniform | 2 | 3 |" in report.team_table(summary)


def test_torch_agents_can_sample(tmp_path):
    from cauldron.agents.torch_policy import PolicyNet, save_checkpoint

    env_id = "hocus_pocus_v1"
    env = envs.make(env_id, num_players=2)
    net = PolicyNet(
        env.observation_space("player_0")["observation"].shape[0],
        env.action_space("player_0").n,
        [8],
    )
    path = tmp_path / "net.pt"
    save_checkpoint(net, env_id, path)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"].sum() >= 2  # a choice to sample from

    def choices(spec: str, seed: int) -> list[int]:
        agent = make_agent(spec, env_id)
        agent.reset(seed)
        return [agent.act(obs["observation"], obs["action_mask"]) for _ in range(40)]

    assert len(set(choices(f"torch:{path}", 0))) == 1
    sampled = choices(f"torch:{path}?sample=1", 0)
    assert len(set(sampled)) > 1
    assert all(obs["action_mask"][a] == 1 for a in sampled)
    assert sampled == choices(f"torch:{path}?sample=true", 0)  # seeded by reset
