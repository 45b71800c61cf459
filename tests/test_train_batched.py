"""PPO on the batched engines: configs, advantages across opponents' moves,
tiny runs whose checkpoints play in the harness, and learning on a small case."""

from __future__ import annotations

import warnings

import pytest
import torch

from cauldron import envs
from cauldron.agents import make_agent
from cauldron.eval.play import play_game, play_team
from cauldron.train.config import parse_config
from cauldron.train.ppo import gae
from cauldron.train.runlog import RunLog, read_metrics


def tiny_batched(env_id: str, tmp_path, **extra) -> dict:
    return {
        "name": f"{env_id}-batched",
        "env": env_id,
        "num_players": 2,
        "engine": "batched",
        "total_steps": 2048,
        "num_envs": 64,
        "rollout_steps": 16,
        "minibatches": 2,
        "epochs": 1,
        "hidden": [16],
        "eval_every": 2,
        "eval_games": 2,
        "final_eval_games": 3,
        "out": str(tmp_path),
        "opponents": [] if envs.spec(env_id).cooperative else ["random"],
        **extra,
    }


@pytest.mark.parametrize(
    "extra, match",
    [
        ({"trainer": "sb3"}, "engine 'batched' needs trainer 'torch'"),
        ({"workers": 1}, "workers must be 0"),
        ({"device": "tpu9"}, "device must name a torch device"),
        ({"engine": "jax"}, "engine: Input should be 'reference' or 'batched'"),
    ],
)
def test_bad_batched_configs_are_rejected_before_any_work(extra, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        parse_config(tiny_batched("headless_horseman_v1", tmp_path, **extra))


def test_batched_opponents_need_a_batched_form(tmp_path):
    spec = "python:cauldron.agents.random_agent:RandomAgent"
    data = tiny_batched("headless_horseman_v1", tmp_path, num_players=2)
    data.update(env="hexenflug_v1", opponents=[spec])
    with pytest.raises(ValueError, match="has no batched form"):
        parse_config(data)


def test_reference_engine_keeps_its_256_games_limit(tmp_path):
    data = tiny_batched("headless_horseman_v1", tmp_path, engine="reference", num_envs=512)
    with pytest.raises(ValueError, match="above 256 needs engine 'batched'"):
        parse_config(data)


def test_gae_with_every_step_the_learners_is_cleanrl_gae():
    torch.manual_seed(0)
    rewards, values = torch.randn(5, 3), torch.randn(5, 3)
    dones = (torch.rand(5, 3) < 0.3).float()
    next_value, next_done = torch.randn(3), torch.zeros(3)
    ours, settled = gae(
        rewards, values, dones, torch.ones(5, 3), next_value, next_done, torch.ones(3), 0.9, 0.8
    )
    assert torch.equal(settled, torch.ones(5, 3))
    expected = torch.zeros(5, 3)
    last = torch.zeros(3)
    for t in reversed(range(5)):
        nd = next_done if t == 4 else dones[t + 1]
        nv = next_value if t == 4 else values[t + 1]
        delta = rewards[t] + 0.9 * nv * (1 - nd) - values[t]
        last = delta + 0.9 * 0.8 * (1 - nd) * last
        expected[t] = last
    assert torch.allclose(ours, expected)


def test_gae_folds_opponents_moves_into_the_learners_transition():
    """Learner, opponent, learner: the first decision's advantage is that of one transition
    paid both steps' rewards, discounted once, as in the single-agent view."""
    rewards = torch.tensor([[1.0], [2.0], [4.0]])
    values = torch.tensor([[0.5], [9.0], [3.0]])  # the opponent step's value must not leak in
    learners = torch.tensor([[1.0], [0.0], [1.0]])
    dones = torch.zeros(3, 1)
    gamma, lam = 0.9, 0.7
    adv, _ = gae(
        rewards,
        values,
        dones,
        learners,
        torch.tensor([0.0]),
        torch.tensor([1.0]),
        torch.tensor([1.0]),
        gamma,
        lam,
    )
    last_step = 4.0 - 3.0  # the game ends after the last step
    first = (1.0 + 2.0) + gamma * 3.0 - 0.5 + gamma * lam * last_step
    assert torch.isclose(adv[2, 0], torch.tensor(last_step))
    assert torch.isclose(adv[0, 0], torch.tensor(first))


@pytest.mark.parametrize(
    "env_id",  # Voodoo Mania's games are the longest: its run is CI's, after the default run
    [
        pytest.param(i, marks=pytest.mark.heavy) if i == "voodoo_mania_v1" else i
        for i in envs.batched_ids()
    ],
)
def test_tiny_batched_run_saves_a_checkpoint_the_harness_plays(env_id, tmp_path):
    """A tiny run logs the games' share of each update's time (``perf/game_share``) and saves
    a checkpoint that the harness plays."""
    from cauldron.train import __main__ as train_cli
    from cauldron.train.ppo import train

    config = parse_config(tiny_batched(env_id, tmp_path))
    log = RunLog(config.folder, quiet=True)
    checkpoint = train(config, log)
    shares = [v for _, k, v in read_metrics(log.csv_path) if k == "perf/game_share"]
    assert len(shares) == 2 and all(0.0 < share < 1.0 for share in shares), shares
    agent = make_agent(f"torch:{checkpoint}", env_id)
    env = envs.make(env_id, num_players=2)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs["observation"], obs["action_mask"])] == 1
    summary = train_cli.final_evaluation(config, checkpoint, workers=1)
    assert any(f"torch:{checkpoint}" in r["lineup"] for r in summary["rows"])


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_batched_ppo_learns_the_horseman(precision, tmp_path):
    """Learning on a small case: 150k batched steps of the 2-player Horseman beat random teams,
    with the network's products in float32 or in bfloat16."""
    from cauldron.train.ppo import train

    config = parse_config(
        {
            "name": "learn-batched",
            "env": "headless_horseman_v1",
            "num_players": 2,
            "options": {"progress_reward": 1.0},
            "precision": precision,
            "engine": "batched",
            "total_steps": 150_000,
            "num_envs": 512,
            "rollout_steps": 16,
            "learning_rate": 0.0005,
            "eval_every": 1000,
            "eval_games": 10,
            "out": str(tmp_path),
        }
    )
    checkpoint = train(config, RunLog(config.folder, quiet=True))
    seeds = range(500, 700)
    trained = play_team("headless_horseman_v1", 2, f"torch:{checkpoint}", seeds)
    randoms = play_team("headless_horseman_v1", 2, "random", seeds)
    win = lambda games: sum(g.info["outcome"] == 1 for g in games) / len(games)  # noqa: E731
    assert win(trained) > win(randoms) + 0.1, (win(trained), win(randoms))


def test_bfloat16_run_keeps_float32_weights_and_plays(tmp_path):
    """``precision: bfloat16`` changes only the products' number type: the checkpoint's weights
    stay float32 and the harness plays it; other trainers refuse the option, naming it."""
    from cauldron.train.ppo import train

    config = parse_config({**tiny_batched("hexenflug_v1", tmp_path), "precision": "bfloat16"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # this CPU may lack native bfloat16
        checkpoint = train(config, RunLog(config.folder, quiet=True))
    agent = make_agent(f"torch:{checkpoint}", "hexenflug_v1")
    assert {p.dtype for p in agent.net.parameters()} == {torch.float32}
    env = envs.make("hexenflug_v1", num_players=2)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs["observation"], obs["action_mask"])] == 1
    with pytest.raises(ValueError, match="precision 'bfloat16' needs trainer 'torch'"):
        parse_config(
            {
                **tiny_batched("hexenflug_v1", tmp_path),
                "engine": "reference",
                "trainer": "sb3",
                "precision": "bfloat16",
            }
        )
    with pytest.raises(ValueError, match="precision"):
        parse_config({**tiny_batched("hexenflug_v1", tmp_path), "precision": "float16"})


@pytest.mark.parametrize("native", [True, False])
def test_bfloat16_warns_on_a_cpu_without_native_bfloat16(native, tmp_path, monkeypatch):
    """Autocast's bfloat16 products take a slow path on a CPU without AVX-512 BF16 or AMX
    (8-11x slower than float32 on an AVX2 CPU): the run says so before it starts, and only
    there; float32 never warns."""
    import cauldron.train.ppo as ppo

    monkeypatch.setattr(ppo, "native_bfloat16", lambda device: native)
    for precision in ("bfloat16", "float32"):
        config = parse_config(
            {**tiny_batched("hexenflug_v1", tmp_path / precision), "precision": precision}
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ppo.train(config, RunLog(config.folder, quiet=True))
        slow = [w for w in caught if "without native bfloat16" in str(w.message)]
        assert len(slow) == (precision == "bfloat16" and not native), precision


def test_bfloat16_trains_the_factored_head_with_a_prior(tmp_path):
    """Hocus Pocus' factored head scores plays and choices in the autocast's bfloat16 and writes
    them into the logits beside the float32 prior: a tiny run trains and its agent plays."""
    from cauldron.train.ppo import train

    config = parse_config(
        tiny_batched(
            "hocus_pocus_v1",
            tmp_path,
            head="factored",
            prior="heuristic:planner",
            precision="bfloat16",
        )
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # this CPU may lack native bfloat16
        checkpoint = train(config, RunLog(config.folder, quiet=True))
    (game,) = play_team("hocus_pocus_v1", 2, f"torch:{checkpoint}", range(1))
    assert game.steps > 0 and "stuns" in game.info


@pytest.mark.slow
def test_batched_ppo_learns_voodoo_mania_against_random(tmp_path):
    """Learning on a small case of a competitive batched table: 300k steps of the 2-player Voodoo
    Mania (a reward at every round's end) against random play, with the learner's seat changing
    every game, beats random in more than 80% of games, where random play wins about half (its
    own seat's points alone are what the update sees: a mistake in whose reward or view reaches
    it would not learn)."""
    from cauldron.train.ppo import train

    config = parse_config(
        {
            **tiny_batched("voodoo_mania_v1", tmp_path),
            "name": "learn-voodoo",
            "options": {"reward": "per_round"},
            "total_steps": 300_000,
            "num_envs": 128,
            "rollout_steps": 64,
            "minibatches": 4,
            "epochs": 4,
            "hidden": [64, 64],
            "learning_rate": 0.001,
            "eval_every": 1000,
        }
    )
    checkpoint = train(config, RunLog(config.folder, quiet=True))
    env = envs.make("voodoo_mania_v1", num_players=2)
    trained, rival = (
        make_agent(f"torch:{checkpoint}", "voodoo_mania_v1"),
        make_agent("random", "voodoo_mania_v1"),
    )
    wins = 0
    for seed in range(200):
        seats = [trained, rival] if seed % 2 == 0 else [rival, trained]
        result = play_game(env, dict(zip(env.possible_agents, seats, strict=True)), seed)
        wins += result.returns[env.possible_agents[seed % 2]] > 0  # +1 to winners, -1 to others
    assert wins / 200 > 0.8, wins


def test_recurrent_learner_trains_against_batched_opponents(tmp_path, monkeypatch):
    from cauldron.agents.torch_policy import PolicyNet
    from cauldron.train.ppo import train

    held: list[torch.Tensor] = []
    real = PolicyNet.masked_logits

    def spy(self, obs, mask, memory=None, prior=None):
        if memory is not None and not torch.is_grad_enabled():  # a rollout's decision
            held.append(memory.clone())
        return real(self, obs, mask, memory, prior)

    monkeypatch.setattr(PolicyNet, "masked_logits", spy)
    data = tiny_batched("voodoo_mania_v1", tmp_path, recurrent=8, prior="heuristic:chain")
    config = parse_config(data)
    checkpoint = train(config, RunLog(config.folder, quiet=True))
    assert any(bool(m.abs().sum() > 0) for m in held)  # the memory carries between decisions
    agent = make_agent(f"torch:{checkpoint}", "voodoo_mania_v1")
    assert agent.net.recurrent == 8
    env = envs.make("voodoo_mania_v1", num_players=2)
    opponent = make_agent("random", "voodoo_mania_v1")
    result = play_game(env, {"player_0": agent, "player_1": opponent}, seed=0)
    assert result.steps > 0 and agent.memory is not None
    config = parse_config({**data, "self_play_every": 1, "name": "self-play"})
    checkpoint = train(config, RunLog(config.folder, quiet=True))
    assert make_agent(f"torch:{checkpoint}", "voodoo_mania_v1").net.recurrent == 8
