"""Imitation warm start and the curriculum over game options: bad input refused
before any work, both trainers and both engines run them, the options change at the threshold,
and cloning a heuristic gives a policy that plays like it."""

from __future__ import annotations

import pytest
import torch

from cauldron import envs
from cauldron.agents.torch_policy import PolicyNet
from cauldron.train import curriculum, fit, ppo, warm_start
from cauldron.train.config import parse_config
from cauldron.train.runlog import RunLog, read_metrics

HP = "hocus_pocus_v1"
GREEDY = {"agent": "heuristic:greedy", "games": 2, "epochs": 1}
STAGES = [{"until_step": 128, "options": {"sunrise_steps": 1}}, {"options": {"sunrise_steps": 2}}]


def config(tmp_path=None, **extra):
    data = {
        "name": "ws",
        "env": HP,
        "num_players": 2,
        "total_steps": 256,
        "num_envs": 2,
        "rollout_steps": 32,
        "minibatches": 2,
        "epochs": 1,
        "hidden": [16],
        "eval_every": 100,
        "eval_games": 1,
        "out": str(tmp_path or "runs/never"),
        **extra,
    }
    return parse_config(data)


@pytest.mark.parametrize(
    "extra, match",
    [
        (
            {"warm_start": {**GREEDY, "agent": "heuristic:bold"}},
            "warm_start.agent: unknown heuristic",
        ),
        ({"warm_start": {**GREEDY, "agent": "nobody"}}, "warm_start.agent"),
        ({"warm_start": {**GREEDY, "games": 0}}, "warm_start.games: Input should be greater"),
        ({"warm_start": {"agent": "random"}}, "warm_start.games: Field required"),
        ({"warm_start": {**GREEDY, "epochs": 0}}, "warm_start.epochs"),
        ({"warm_start": {**GREEDY, "bc_coef": -1.0}}, "warm_start.bc_coef"),
        ({"warm_start": {**GREEDY, "games_": 3}}, r"warm_start: unknown key\(s\) \['games_'\]"),
        (
            {"warm_start": {**GREEDY, "bc_coef": 0.5}, "trainer": "sb3"},
            "warm_start.bc_coef needs trainer 'torch'",
        ),
        ({"curriculum": [{"options": {"sunrise": 1}}]}, r"curriculum\[0\].options: .*sunrise"),
        ({"curriculum": [{"options": {"sunrise_steps": 0}}]}, r"curriculum\[0\].options: "),
        (
            {"curriculum": [{"options": {"sunrise_steps": "three"}}]},
            r"curriculum\[0\].options: .*sunrise_steps",
        ),
        (
            {"curriculum": [{"options": {}}, {"until_step": 100, "options": {}}]},
            r"curriculum\[0\].until_step: only the last stage may omit it",
        ),
        (
            {"curriculum": [{"until_step": 100}, {"until_step": 100}]},
            r"curriculum\[1\].until_step 100 must be above the previous stage's 100",
        ),
        (
            {"curriculum": [{"until_step": 300}, {"options": {}}]},
            r"curriculum\[1\]: never reached",
        ),
        ({"curriculum": [{"until_step": 0}]}, r"curriculum.0.until_step: Input should be greater"),
        ({"curriculum": [{"until": 10}]}, r"curriculum stage: unknown key\(s\) \['until'\]"),
    ],
)
def test_bad_warm_start_and_curriculum_are_rejected_before_any_work(extra, match):
    with pytest.raises(envs.ConfigError, match=match):
        config(**extra)


def test_rllib_has_neither():
    with pytest.raises(envs.ConfigError, match="warm_start need trainer 'torch' or 'sb3'"):
        parse_config({"env": HP, "trainer": "rllib", "warm_start": GREEDY})


def test_stages_and_their_options():
    cfg = config(options={"stun_reward": 0.2}, curriculum=STAGES)
    assert [curriculum.stage_at(cfg, s) for s in (0, 127, 128, 10**9)] == [0, 0, 1, 1]
    assert curriculum.options_at(cfg, 0) == {"stun_reward": 0.2, "sunrise_steps": 1}
    assert curriculum.options_at(cfg, 128) == {"stun_reward": 0.2, "sunrise_steps": 2}
    ended = config(curriculum=[{"until_step": 64, "options": {"sunrise_steps": 1}}])
    assert curriculum.stage_at(ended, 64) == 1 and curriculum.options_at(ended, 64) == {}


def test_sparse_rows_give_back_the_rows():
    rows = warm_start.SparseRows(6)
    data = torch.tensor([[0, 0.5, 0, 0, 1, 0], [0] * 6, [1, 1, 1, 1, 1, 0.25]])
    for row in data:
        rows.append(row.numpy())
    rows.freeze()
    assert len(rows) == 3
    assert torch.equal(rows.dense(torch.tensor([2, 0, 1, 2])), data[[2, 0, 1, 2]])


def test_discounted_returns():
    assert warm_start._discounted([0.0, 0.0, 1.0], 0.5) == [0.25, 0.5, 1.0]


def test_bc_weight_anneals_to_zero():
    cfg = config(warm_start={**GREEDY, "bc_coef": 0.4, "bc_steps": 100})
    assert [warm_start.bc_weight(cfg, s) for s in (0, 50, 100, 200)] == [0.4, 0.2, 0.0, 0.0]
    assert warm_start.bc_weight(config(warm_start=GREEDY), 0) == 0.0


@pytest.mark.parametrize("engine", ["reference", "batched"])
def test_torch_trainer_switches_the_games_options_at_the_threshold(engine, tmp_path, monkeypatch):
    built = []
    make_games = ppo.make_games

    def recording(cfg, step):
        games = make_games(cfg, step)
        if engine == "batched":
            built.append((step, games.env.options.sunrise_steps))
        else:
            built.append((step, games._local.games[0].aec.options.sunrise_steps))
        return games

    monkeypatch.setattr(ppo, "make_games", recording)
    cfg = config(
        tmp_path,
        engine=engine,
        warm_start={**GREEDY, "bc_coef": 0.5, "bc_steps": 128},
        curriculum=STAGES,
        centralized_critic=True,
    )
    fit(cfg, RunLog(cfg.folder, quiet=True, plot=False))
    assert built == [(0, 1), (128, 2)]
    metrics = {(step, key): value for step, key, value in read_metrics(cfg.folder / "metrics.csv")}
    assert [metrics[(s, "train/curriculum_stage")] for s in (64, 128, 192, 256)] == [0, 0, 1, 1]
    assert [metrics[(s, "train/bc_coef")] for s in (64, 128, 192)] == [0.5, 0.25, 0.0]
    assert 0 <= metrics[(0, "warm_start/agreement")] <= 1
    assert metrics[(0, "warm_start/demo_stuns")] >= 0
    assert "phase/act/entropy" in {key for _, key in metrics}
    assert (256, "game/stuns") in metrics or (256, "game/finished") in metrics


def test_sb3_trainer_warm_starts_and_follows_the_curriculum(tmp_path, monkeypatch):
    from cauldron.train import sb3

    built = []
    games = sb3.games

    def recording(cfg, seed, step):
        factories = games(cfg, seed, step)
        built.append((step, factories[0]().aec.options.sunrise_steps))
        return factories

    monkeypatch.setattr(sb3, "games", recording)
    cfg = config(tmp_path, trainer="sb3", warm_start=GREEDY, curriculum=STAGES)
    fit(cfg, RunLog(cfg.folder, quiet=True, plot=False))
    assert built == [(0, 1), (128, 2)]
    keys = {key for _, key, _ in read_metrics(cfg.folder / "metrics.csv")}
    assert {"warm_start/loss", "warm_start/agreement"} <= keys


def agreement(net: PolicyNet, cfg, games: int, seed: int) -> float:
    """Share of the demonstrator's decisions in ``games`` fresh games where ``net``'s most
    likely action is the demonstrator's."""
    spec = cfg.warm_start.model_copy(update={"games": games})
    fresh = warm_start.collect(cfg.model_copy(update={"seed": seed, "warm_start": spec}), True)
    batch = fresh.batch(torch.arange(len(fresh)))
    with torch.no_grad():
        best = net.masked_logits(batch["obs"], batch["mask"])[0].argmax(-1)
    return float((best == batch["action"]).float().mean())


def test_cloning_learns_a_heuristic_on_fresh_games():
    """Headless Horseman, 2 players: a clone of the focal heuristic agrees with it on most
    decisions of games it never saw (an untrained net: about one in legal-action count)."""
    cfg = parse_config(
        {
            "env": "headless_horseman_v1",
            "hidden": [64],
            "warm_start": {
                "agent": "heuristic:focal",
                "games": 100,
                "epochs": 12,
                "batch_size": 128,
                "learning_rate": 0.003,
                "critic": False,
            },
        }
    )
    demos = warm_start.collect(cfg, quiet=True)
    torch.manual_seed(0)
    net = PolicyNet(demos.obs.width, demos.masks.shape[1], cfg.hidden)
    before = agreement(net, cfg, 20, seed=999)
    warm_start.clone(net, demos, cfg, lambda epoch, figures: None)
    after = agreement(net, cfg, 20, seed=999)
    assert after > 0.8 and after > before + 0.2, (before, after)


@pytest.mark.slow
def test_cloning_greedy_on_hocus_pocus_learns_most_decisions():
    """Hocus Pocus, 2 players: a clone of heuristic:greedy from 300 games agrees with it on
    well over half the decisions of fresh games (measured: 63%; an untrained net about 15%).
    Card plays are cloned worst (about 45%), which is why the clone does not stun yet."""
    cfg = parse_config(
        {
            "env": HP,
            "hidden": [256],
            "warm_start": {
                "agent": "heuristic:greedy",
                "games": 300,
                "epochs": 10,
                "critic": False,
                "batch_size": 256,
            },
        }
    )
    demos = warm_start.collect(cfg, quiet=True)
    torch.manual_seed(0)
    net = PolicyNet(demos.obs.width, demos.masks.shape[1], cfg.hidden)
    before = agreement(net, cfg, 50, seed=999)
    warm_start.clone(net, demos, cfg, lambda epoch, figures: None)
    after = agreement(net, cfg, 50, seed=999)
    assert after > 0.55 and after > before + 0.3, (before, after)
