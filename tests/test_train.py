"""Training: configs, the SB3 bridge, tiny runs of both trainers on every game, resume, learning."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml
from stable_baselines3.common.env_checker import check_env

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.envs.hexenflug import actions as HA
from cauldron.eval.play import play_team
from cauldron.train import __main__ as train_cli
from cauldron.train.bridge import SingleAgentBridge
from cauldron.train.config import load_config, parse_config
from cauldron.train.runlog import read_metrics

OPPONENTS = {
    "hexenflug_v1": ["random", "heuristic:cautious"],
    "voodoo_mania_v1": ["random", "heuristic:fast"],
}


def tiny(env_id: str, trainer: str, tmp_path, **extra) -> dict:
    return {
        "name": f"{env_id}-{trainer}",
        "env": env_id,
        "num_players": 2,
        "trainer": trainer,
        "total_steps": 256,
        "num_envs": 2,
        "rollout_steps": 64,
        "minibatches": 2,
        "epochs": 1,
        "hidden": [16],
        "eval_every": 2,
        "eval_games": 2,
        "final_eval_games": 3,
        "out": str(tmp_path),
        "opponents": OPPONENTS.get(env_id, []),
        **extra,
    }


@pytest.mark.parametrize(
    "data, match",
    [
        ({"lr": 0.1}, r"unknown key 'lr' \(allowed: name, env"),
        ({"total_steps": "many"}, "total_steps: Input should be a valid integer"),
        ({"gamma": 1.5}, "gamma: Input should be less than or equal to 1"),
        ({"trainer": "dqn"}, "trainer: Input should be 'torch', 'sb3' or 'rllib'"),
        ({"num_players": 9}, "num_players 9 outside 2..4"),
        ({"opponents": ["random"]}, "cooperative: opponents must be empty"),
        ({"minibatches": 7}, "divisible by minibatches"),
        ({"options": {"speed": 4}}, "unknown option"),
        ({"hidden": [64, 0]}, r"hidden.1: Input should be greater than or equal to 1"),
        ({"seed": 2**40}, r"seed: Input should be less than 100000000"),
    ],
)
def test_bad_train_configs_are_rejected_before_any_work(data, match):
    base = {"env": "headless_horseman_v1", "num_players": 2}
    with pytest.raises(envs.ConfigError, match=match):
        parse_config({**base, **data})


def test_competitive_and_trainer_specific_checks():
    with pytest.raises(envs.ConfigError, match="competitive: opponents must name"):
        parse_config({"env": "hexenflug_v1"})
    with pytest.raises(envs.ConfigError, match="unknown heuristic"):
        parse_config({"env": "hexenflug_v1", "opponents": ["heuristic:bold"]})
    with pytest.raises(envs.ConfigError, match="centralized_critic needs a cooperative game"):
        parse_config({"env": "hexenflug_v1", "opponents": ["random"], "centralized_critic": True})
    with pytest.raises(envs.ConfigError, match="self_play_every .* needs trainer 'torch'"):
        parse_config(
            {"env": "hexenflug_v1", "trainer": "sb3", "self_play_every": 5, "opponents": ["random"]}
        )


def test_shipped_train_configs_are_valid():
    from pathlib import Path

    names = sorted(p.stem for p in Path("configs/train").glob("*.yaml"))
    assert "quickstart" in names
    for game in ("hocus_pocus", "headless_horseman", "hexenflug", "voodoo_mania"):
        for trainer in ("torch", "sb3"):
            config = load_config(f"configs/train/{game}_{trainer}.yaml")
            assert config.trainer == trainer and config.env == f"{game}_v1"


@pytest.mark.parametrize("env_id", envs.ids())
def test_bridge_passes_sb3_check_env_and_masks_match(env_id):
    opponents = [lambda rng: make_agent("random", env_id)] if env_id in OPPONENTS else []
    bridge = SingleAgentBridge(env_id, 2, opponents=opponents, seed=0)
    check_env(bridge)
    obs, _ = bridge.reset(seed=3)
    aec = bridge.aec
    assert np.array_equal(bridge.action_masks(), aec.observe(aec.agent_selection)["action_mask"])
    assert np.array_equal(obs, aec.observe(aec.agent_selection)["observation"])


def test_end_of_game_reward_reaches_the_learner_when_another_seat_ends_it():
    """Scripted Hexenflug: the learner (who drew this turn) lands and skips; the opponent's draw
    empties both piles, which ends the game at once; the learner, with more cards in hand, wins
    the tie-break."""

    class AlwaysDraw:
        def reset(self, seed=None):
            pass

        def act(self, observation, mask):
            return HA.DRAW if mask[HA.DRAW] else int(np.flatnonzero(mask)[0])

    bridge = SingleAgentBridge("hexenflug_v1", 2, opponents=[lambda rng: AlwaysDraw()], seed=0)
    bridge.reset(seed=0)
    assert bridge.learner == "player_0" and bridge.aec.agent_selection == "player_0"
    game = bridge.aec.unwrapped.game
    game.hands[0] = list(range(10, 74))
    game.layouts[0][0] = [0]
    game.draw_pile, game.discard = [74], []
    game.drew = True  # landing is offered only after a draw this turn
    bridge.aec.unwrapped._mask_key = None  # the state was edited by hand: recompute the mask
    obs, reward, terminated, _, _ = bridge.step(HA.LAND + 0)
    assert reward == 0.0 and not terminated
    obs, reward, terminated, truncated, info = bridge.step(HA.SKIP)
    assert terminated and not truncated and reward == 1.0 and info["winners"] == [0]


@pytest.mark.parametrize("trainer", ["torch", "sb3"])
@pytest.mark.parametrize(
    "env_id",  # Voodoo Mania's games are the longest: its runs are CI's, after the default run
    [pytest.param(i, marks=pytest.mark.heavy) if i == "voodoo_mania_v1" else i for i in envs.ids()],
)
def test_tiny_run_saves_reloads_and_evaluates_a_checkpoint(env_id, trainer, tmp_path):
    config = parse_config(tiny(env_id, trainer, tmp_path))
    from cauldron.train.runlog import RunLog

    if trainer == "torch":
        from cauldron.train.ppo import train
    else:
        from cauldron.train.sb3 import train
    checkpoint = train(config, RunLog(config.folder, quiet=True))
    agent = make_agent(f"{trainer}:{checkpoint}", env_id)
    env = envs.make(env_id, num_players=2)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs["observation"], obs["action_mask"])] == 1
    summary = train_cli.final_evaluation(config, checkpoint, workers=1)
    assert (config.folder / "evaluation" / "report.md").is_file()
    assert any(f"{trainer}:{checkpoint}" in r["lineup"] for r in summary["rows"])
    assert (config.folder / "metrics.csv").read_text().count("eval/win_rate") >= 1


def test_centralized_critic_reads_the_state(tmp_path):
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog

    config = parse_config(tiny("hocus_pocus_v1", "torch", tmp_path, centralized_critic=True))
    checkpoint = train(config, RunLog(config.folder, quiet=True))
    import torch

    saved = torch.load(checkpoint, weights_only=True)
    state_size = envs.make("hocus_pocus_v1").state_space.shape[0]
    assert saved["state_size"] == state_size
    assert saved["state_dict"]["critic.0.0.weight"].shape[1] == state_size
    make_agent(f"torch:{checkpoint}", "hocus_pocus_v1")


def test_recurrent_core_trains_and_keeps_one_memory_per_seat(tmp_path):
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog

    config = parse_config(tiny("hocus_pocus_v1", "torch", tmp_path, recurrent=8))
    checkpoint = train(config, RunLog(config.folder, quiet=True))
    agent = make_agent(f"torch:{checkpoint}", "hocus_pocus_v1")
    assert agent.net.recurrent == 8 and agent.memory is None
    env = envs.make("hocus_pocus_v1", num_players=2)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    agent.act(obs["observation"], obs["action_mask"])
    first = agent.memory.clone()
    agent.act(obs["observation"], obs["action_mask"])
    assert agent.memory.shape == (1, 8) and not torch.equal(first, agent.memory)
    agent.reset(3)
    assert agent.memory is None
    with pytest.raises(envs.ConfigError, match="recurrent needs trainer 'torch'"):
        parse_config(tiny("hocus_pocus_v1", "sb3", tmp_path, recurrent=8))


def test_self_play_snapshots_join_the_opponent_pool(tmp_path, monkeypatch):
    from cauldron.train import ppo, vector
    from cauldron.train.runlog import RunLog

    pools = []
    real_pool = vector.opponent_pool
    monkeypatch.setattr(vector, "opponent_pool", lambda c: pools.append(real_pool(c)) or pools[-1])
    config = parse_config(
        tiny(
            "hexenflug_v1",
            "torch",
            tmp_path,
            self_play_every=1,
            total_steps=512 * 7,
            opponents=["random"],
        )
    )
    ppo.train(config, RunLog(config.folder, quiet=True))
    games_pool = pools[-1]
    assert len(games_pool) == 1 + vector.MAX_SNAPSHOTS  # random, then the newest snapshots
    snapshot = games_pool[-1](np.random.default_rng(0))
    assert snapshot.name == "snapshot"
    assert [p(np.random.default_rng(0)).name for p in games_pool[:1]] == ["random"]


def test_cli_saves_config_and_resumes(tmp_path, capsys):
    path = tmp_path / "run.yaml"
    path.write_text(
        "\n".join(
            f"{k}: {v!r}" if isinstance(v, str) else f"{k}: {v}"
            for k, v in tiny("headless_horseman_v1", "torch", tmp_path).items()
            if k != "opponents"
        )
    )
    train_cli.main([str(path), "--quiet"])
    folder = tmp_path / "headless_horseman_v1-torch"
    assert {
        "config.yaml",
        "final.pt",
        "train_state.pt",
        "metrics.csv",
        "tb",
        "checkpoints",
        "evaluation",
    } <= {p.name for p in folder.iterdir()}
    assert "| torch:" in capsys.readouterr().out
    from cauldron.train.results import table

    row = table([folder]).splitlines()[2]
    assert row.startswith("| headless_horseman (2p) | torch | ") and "| 256 steps, " in row
    train_cli.main([str(path), "--quiet", "--set", "total_steps=512", "--set", "resume=true"])
    steps = [row[0] for row in read_metrics(folder / "metrics.csv")]
    assert max(steps) == 512 and steps.count(256) > 0 and steps.count(384) > 0
    train_cli.main([str(path), "--quiet"])  # a fresh run in the same folder: fresh logs
    rows = read_metrics(folder / "metrics.csv")
    assert max(row[0] for row in rows) == 256
    assert sum(key == "train/mean_return" for _, key, _ in rows) == 2  # one per update


def test_results_table_of_a_competitive_run(tmp_path, capsys):
    from cauldron.train import results

    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(tiny("hexenflug_v1", "sb3", tmp_path)))
    train_cli.main([str(path), "--quiet"])
    curves = tmp_path / "curves"
    text = results.main([str(tmp_path / "hexenflug_v1-sb3"), "--curves", str(curves)])
    assert (curves / "hexenflug_v1-sb3.png").stat().st_size > 0
    header, _, row = text.splitlines()
    assert "trained seat vs random" in header
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:2] == ["hexenflug (2p)", "sb3"]
    assert cells[3].startswith("heuristic:") and cells[5] in ("yes", "no", "not sure")
    assert cells[4].endswith("]") and cells[-1] == "dev split, 3 games"


@pytest.mark.parametrize(
    "pair, match",
    [
        ("bogus=1", "bogus"),
        ("num_envs=0", "num_envs"),
        ("hidden=wide", "hidden"),
        ("total_steps", "KEY=VALUE"),
    ],
)
def test_cli_set_overrides_are_validated_like_the_file(tmp_path, pair, match):
    path = tmp_path / "run.yaml"
    path.write_text("env: headless_horseman_v1\n")
    with pytest.raises(envs.ConfigError, match=match):
        train_cli.main([str(path), "--set", pair])


@pytest.mark.slow
def test_pytorch_trainer_beats_random_play(tmp_path):
    """Learning: 150k steps of PPO on the Headless Horseman (2 players) beat a random team."""
    config = parse_config(
        {
            "name": "learn",
            "env": "headless_horseman_v1",
            "num_players": 2,
            "options": {"progress_reward": 1.0},
            "total_steps": 150_000,
            "num_envs": 8,
            "rollout_steps": 128,
            "learning_rate": 0.0005,
            "eval_every": 1000,
            "eval_games": 10,
            "out": str(tmp_path),
        }
    )
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog

    checkpoint = train(config, RunLog(config.folder, quiet=True))
    seeds = range(500, 700)
    trained = play_team("headless_horseman_v1", 2, f"torch:{checkpoint}", seeds)
    randoms = play_team("headless_horseman_v1", 2, "random", seeds)
    win = lambda games: sum(g.info["outcome"] == 1 for g in games) / len(games)  # noqa: E731
    assert win(trained) > win(randoms) + 0.1, (win(trained), win(randoms))


def test_worker_processes_train_the_same_network_as_the_trainers_own_process(tmp_path):
    """The games keep their own seeds wherever they run: the same config trains the same
    weights with the games in two worker processes as in the trainer's process."""
    import torch

    from cauldron.agents.torch_policy import load_checkpoint
    from cauldron.train import ppo
    from cauldron.train.runlog import RunLog

    weights = []
    for workers in (0, 2):
        config = parse_config(
            tiny("hexenflug_v1", "torch", tmp_path, name=f"w{workers}", workers=workers)
        )
        net, _ = load_checkpoint(ppo.train(config, RunLog(config.folder, quiet=True)))
        weights.append(net.state_dict())
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


@pytest.mark.parametrize("trainer", ["torch", "sb3"])
def test_max_minutes_stops_training_early_and_still_saves(tmp_path, trainer):
    config = parse_config(
        tiny(
            "headless_horseman_v1",
            trainer,
            tmp_path,
            total_steps=10**7,
            max_minutes=1e-5,
            eval_every=10**6,
        )
    )
    module = __import__(f"train.{'ppo' if trainer == 'torch' else 'sb3'}", fromlist=["train"])
    from cauldron.train.runlog import RunLog

    checkpoint = module.train(config, RunLog(config.folder, quiet=True))
    steps = [row[0] for row in read_metrics(config.folder / "metrics.csv")]
    assert checkpoint.is_file() and max(steps) <= 2 * 128  # one or two updates, not 10**7 steps


def test_worker_processes_take_commands_and_raise_their_errors_in_the_trainer(tmp_path):
    from cauldron.agents.torch_policy import PolicyNet
    from cauldron.train.vector import VectorGames

    config = parse_config(tiny("hexenflug_v1", "torch", tmp_path, workers=1, self_play_every=1))
    games = VectorGames(config)
    games.reset(list(range(config.num_envs)))
    games.step(torch.zeros(config.num_envs, dtype=torch.long))
    assert games.rows["mask"].sum(1).min() >= 1  # every row shows a decision with a legal action
    games.add_snapshot(PolicyNet(games.observation_size, games.num_actions, [4]))
    with pytest.raises(IndexError):
        games.reset([0])  # one seed for two games: the worker's IndexError reaches the trainer
    assert games._workers == []  # and the workers are stopped


def test_in_training_evaluation_counts_wins_as_the_harness_does(tmp_path):
    """``eval/win_rate`` counts the harness's wins, not positive returns. A Voodoo Mania game
    cut short after one tick has no winner, but it pays the standing: +1 to both seats when
    nobody played (the learner waits; random often does too), so some returns are positive and
    still no game is won. A cooperative game wins only with ``outcome`` 1."""
    from cauldron.train.ppo import evaluate, learner_won

    data = tiny("voodoo_mania_v1", "torch", tmp_path, options={"max_ticks": 1})
    config = parse_config(data)
    waiter = "python:tests.test_train:Waiter"
    result = evaluate(lambda: make_agent(waiter, config.env, 0), config, 40, seed=0)
    assert result["win_rate"] == 0.0 and result["mean_return"] > -1.0
    assert learner_won({"outcome": 1, "stuns": 0}, 0)
    assert not learner_won({"outcome": 0, "stuns": 3}, 0)
    assert learner_won({"winners": [0, 1]}, 1) and not learner_won({"winners": [0]}, 1)
    assert not learner_won({}, 0)


class Waiter:
    """Waits every tick (Voodoo Mania's action 0)."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation, mask) -> int:
        return 0
