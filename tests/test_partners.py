"""Partners drawn from a population (``partners``): validation, sampling by weight, seats played
by their member, only the learner's decisions trained, and a short run that reports the counts."""

from __future__ import annotations

import json

import pytest
import torch

from cauldron.agents.batched import make_batched_agent
from cauldron.envs.core.errors import ConfigError
from cauldron.train.batched import BatchedGames
from cauldron.train.config import load_config, parse_config
from cauldron.train.partners import LEARNER, Partners


def config(tmp_path, partners, **extra):
    return parse_config(
        {
            "env": "hocus_pocus_v1",
            "num_players": 2,
            "engine": "batched",
            "num_envs": 16,
            "partners": partners,
            "out": str(tmp_path),
            **extra,
        }
    )


@pytest.mark.parametrize(
    ("partners", "extra", "message"),
    [
        ([], {}, "partners: the population is empty"),
        ([{"agent": "random", "weight": -1.0}], {}, "partners.0.weight: Input should be greater"),
        ([{"agent": "random", "weight": float("nan")}], {}, "partners.0.weight: Input should be"),
        ([{"agent": "random", "weight": 0.0}] * 2, {}, "partners: every weight is 0"),
        ([{"agent": "random", "wieght": 1.0}], {}, "partners: unknown key(s) ['wieght']"),
        ([{"agent": "bogus"}], {}, "partners[0]: unknown agent spec 'bogus'"),
        ([{"agent": "heuristic:nope"}], {}, "partners[0]: no batched heuristic 'nope'"),
        ([{"agent": "self", "epsilon": 0.1}], {}, "partners[0]: epsilon must be 0 for agent"),
        ([{"agent": "random", "epsilon": 1.5}], {}, "partners.0.epsilon: Input should be less"),
        ([{"agent": "snapshots"}], {}, "partners[0]: agent 'snapshots' needs self_play_every"),
        (
            [{"agent": "self"}, {"agent": "torch:checkpoints/voodoo_mania_torch.pt"}],
            {},
            "partners[1]: checkpoint 'checkpoints/voodoo_mania_torch.pt' was trained for "
            "'voodoo_mania_v1', not 'hocus_pocus_v1'",
        ),
        (
            [{"agent": "torch:checkpoints/hocus_pocus_torch.pt"}],
            {},
            "partners[0]: checkpoint 'checkpoints/hocus_pocus_torch.pt' was trained for 4 "
            "players, not 2",
        ),
        ([{"agent": "self"}], {"engine": "reference"}, "partners needs a cooperative game and"),
        (
            [{"agent": "self"}],
            {"env": "hexenflug_v1", "opponents": ["random"]},
            "partners needs a cooperative game and engine 'batched'",
        ),
    ],
)
def test_a_bad_population_is_refused_naming_the_field(tmp_path, partners, extra, message):
    with pytest.raises(ConfigError) as err:
        config(tmp_path, partners, **extra)
    assert message in str(err.value)


def test_a_shipped_checkpoint_of_the_game_and_player_count_is_a_member(tmp_path):
    run = config(tmp_path, [{"agent": "torch:checkpoints/hocus_pocus_2p_torch_seed1.pt"}])
    assert run.partners[0].weight == 1.0 and run.partners[0].epsilon == 0.0


def test_members_are_drawn_in_proportion_to_their_weights_for_every_seat_but_the_learners(
    tmp_path,
):
    run = config(
        tmp_path,
        [
            {"agent": "self", "weight": 3.0},
            {"agent": "random", "weight": 1.0},
            {"agent": "heuristic:safe", "weight": 0.0},
            {"agent": "heuristic:focal", "weight": 2.0},
        ],
        env="headless_horseman_v1",
        num_players=3,
        num_envs=4000,
    )
    table = Partners(run, 3, torch.device("cpu"), torch.Generator().manual_seed(5))
    learner_seat = torch.arange(4000) % 3
    table.draw(torch.ones(4000, dtype=torch.bool), learner_seat, snapshots=0)
    own = table.member[torch.arange(4000), learner_seat]
    assert own.eq(-1).all() and table.player[torch.arange(4000), learner_seat].eq(LEARNER).all()
    drawn = table.member[table.member >= 0]
    assert len(drawn) == 8000
    counts = torch.bincount(drawn, minlength=4).double()
    assert counts.tolist() == table.games.double().tolist()
    assert counts[2] == 0
    expected = 8000 * torch.tensor([3.0, 1.0, 0.0, 2.0]) / 6
    chi_square = ((counts - expected)[[0, 1, 3]].pow(2) / expected[[0, 1, 3]]).sum()
    assert chi_square < 13.8  # 2 degrees of freedom, p = 0.001
    assert table.weights.tolist() == pytest.approx([0.5, 1 / 6, 0.0, 1 / 3])
    players = table.player[table.member >= 0]
    assert players[drawn == 0].eq(LEARNER).all()  # self: the learner plays that seat
    assert players[drawn == 1].eq(0).all() and players[drawn == 3].eq(2).all()


def test_snapshots_are_played_by_the_learner_until_the_first_and_then_drawn_among_them(tmp_path):
    run = config(tmp_path, [{"agent": "snapshots"}], self_play_every=1, num_envs=600)
    table = Partners(run, 2, torch.device("cpu"), torch.Generator().manual_seed(0))
    rows, seat = torch.ones(600, dtype=torch.bool), torch.zeros(600, dtype=torch.long)
    table.draw(rows, seat, snapshots=0)
    assert table.player.eq(LEARNER).all()
    table.draw(rows, seat, snapshots=3)
    assert table.player[:, 0].eq(LEARNER).all()
    assert sorted(table.player[:, 1].unique().tolist()) == [0, 1, 2]


def partner_game(tmp_path, epsilon):
    run = config(tmp_path, [{"agent": "heuristic:greedy", "epsilon": epsilon}], num_envs=32)
    games = BatchedGames(run)
    games.reset([3])
    return games


def play_partners(games, steps):
    """``steps`` steps with random learner actions: per step, whether each partner row's action
    is what heuristic greedy chooses for it, and the learner flags against the seats."""
    greedy = make_batched_agent("heuristic:greedy", "hocus_pocus_v1", 2, games.device, None)
    chooser = torch.Generator().manual_seed(1)
    agreed, seen = [], 0
    for _ in range(steps):
        rows = games.rows
        partner = ~rows["learner"].bool()
        assert torch.equal(partner, rows["seat"] != games.learner_seat)
        mask = rows["mask"].bool()
        chosen = games._opponent_actions()
        expected = greedy.act(rows["obs"][partner], mask[partner], rows["seat"][partner])
        agreed.append(chosen[partner] == expected)
        assert mask[partner].gather(1, chosen[partner, None]).all()
        seen += int(partner.sum())
        keys = torch.rand(mask.shape, generator=chooser).masked_fill(~mask, -1.0)
        games.step(keys.argmax(1))
    assert seen > 100
    return torch.cat(agreed).float().mean()


def test_partner_seats_play_the_members_choices_and_carry_no_learner_flag(tmp_path):
    assert play_partners(partner_game(tmp_path, 0.0), 40) == 1.0


def test_a_noisy_member_replaces_its_choices_by_random_legal_ones(tmp_path):
    assert play_partners(partner_game(tmp_path, 1.0), 40) < 0.6


def tiny(tmp_path, partners, **extra):
    return config(
        tmp_path,
        partners,
        num_envs=32,
        rollout_steps=16,
        total_steps=2048,
        minibatches=2,
        epochs=1,
        hidden=[16],
        eval_every=100,
        eval_games=1,
        final_eval_games=1,
        **extra,
    )


def test_only_the_learners_decisions_are_trained(tmp_path):
    """The trainer's learner flags are those of the seats the learner plays: its own and the
    ones that drew ``self``; the network decides on those rows alone."""
    from cauldron.agents.torch_policy import PolicyNet
    from cauldron.train import ppo
    from cauldron.train.runlog import RunLog

    flags, expected, decided = [], [], []
    step, gae, logits = BatchedGames.step, ppo.gae, PolicyNet.masked_logits

    def spy_step(self, actions):
        expected.append(self.partners.acting(self.rows["seat"]) == LEARNER)
        step(self, actions)

    def spy_gae(rewards, values, dones, learners, *rest):
        flags.append(learners.clone())
        return gae(rewards, values, dones, learners, *rest)

    def spy_logits(self, obs, *rest):
        decided.append(len(obs))
        return logits(self, obs, *rest)

    run = tiny(tmp_path, [{"agent": "self"}, {"agent": "heuristic:planner", "weight": 2.0}])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BatchedGames, "step", spy_step)
        patch.setattr(ppo, "gae", spy_gae)
        patch.setattr(PolicyNet, "masked_logits", spy_logits)
        torch.set_num_threads(1)
        ppo.train(run, RunLog(run.folder, quiet=True, plot=False))
    learners = torch.cat(flags).bool()
    assert torch.equal(learners, torch.stack(expected).view_as(learners))
    assert 0.5 < float(learners.float().mean()) < 0.9
    assert decided[: len(learners.view(-1, 32))] == learners.view(-1, 32).sum(1).tolist()


def test_a_short_run_with_partners_reports_the_games_of_each_member(tmp_path):
    from cauldron.train.ppo import train
    from cauldron.train.runlog import RunLog, read_metrics

    partners = [
        {"agent": "self", "weight": 2.0},
        {"agent": "heuristic:planner"},
        {"agent": "heuristic:planner", "epsilon": 0.2},
        {"agent": "torch:checkpoints/hocus_pocus_2p_torch_seed1.pt"},
        {"agent": "snapshots"},
    ]
    run = tiny(tmp_path, partners, options={"max_steps": 20}, self_play_every=1)
    torch.set_num_threads(1)
    train(run, RunLog(run.folder, quiet=True, plot=False))
    report = json.loads((run.folder / "partners.json").read_text())
    names = [row["member"] for row in report]
    assert names == [
        "self",
        "heuristic:planner",
        "heuristic:planner~0.2",
        "torch:checkpoints/hocus_pocus_2p_torch_seed1.pt",
        "snapshots",
    ]
    assert [row["weight"] for row in report] == pytest.approx([1 / 3] + [1 / 6] * 4)
    games = [row["games"] for row in report]
    assert sum(games) > 32 * 2 and min(games) > 0  # games of 20 steps: every row restarted
    metrics = {key: value for _, key, value in read_metrics(run.folder / "metrics.csv")}
    assert metrics["partners/snapshots/games"] == games[-1]
    assert metrics["partners/self/weight"] == pytest.approx(1 / 3)


def shipped_recipe(file: str) -> dict:
    """A shipped training config (configs/train/<file>), every field filled in."""
    return load_config(f"configs/train/{file}").model_dump()


def changed_fields(base: dict, derived: dict) -> list[str]:
    """The fields where a derived recipe departs from its base, sorted."""
    return sorted(k for k in base if base[k] != derived[k])


@pytest.mark.parametrize(
    ("recipe", "partners"),
    [
        ("hocus_pocus_2p_torch.yaml", "hocus_pocus_2p_partners.yaml"),
        ("hocus_pocus_torch_cooldown.yaml", "hocus_pocus_4p_partners.yaml"),
    ],
)
def test_a_shipped_partners_config_is_its_recipe_with_the_one_population(recipe, partners):
    plain = shipped_recipe(recipe)
    mixed = shipped_recipe(partners)
    two_players = shipped_recipe("hocus_pocus_2p_partners.yaml")
    differ = changed_fields(plain, mixed)
    assert differ == ["max_minutes", "name", "partners", "self_play_every"]
    assert mixed["partners"] == two_players["partners"]
    assert {m["agent"] for m in mixed["partners"]} == {
        "self",
        "heuristic:planner",
        "heuristic:greedy",
        "heuristic:consensus",
        "snapshots",
    }
    assert any(m["epsilon"] for m in mixed["partners"])


def test_the_best_response_config_is_the_2p_recipe_beside_the_planner_alone():
    plain = shipped_recipe("hocus_pocus_2p_torch.yaml")
    beside = shipped_recipe("hocus_pocus_2p_planner_partner.yaml")
    differ = changed_fields(plain, beside)
    assert differ == ["max_minutes", "name", "partners", "total_steps"]
    assert beside["total_steps"] == 8_388_608  # the methods table's budget
    assert [(m["agent"], m["epsilon"]) for m in beside["partners"]] == [("heuristic:planner", 0.0)]


def test_the_residual_best_response_starts_from_the_planner_as_a_prior_not_a_clone():
    beside = shipped_recipe("hocus_pocus_2p_planner_partner.yaml")
    residual = shipped_recipe("hocus_pocus_2p_planner_residual.yaml")
    differ = changed_fields(beside, residual)
    assert differ == ["name", "prior", "prior_weight", "warm_start"]
    assert residual["warm_start"] is None
    assert residual["prior"] == "heuristic:planner" and residual["prior_weight"] == 5.0


def test_the_4p_residual_best_response_is_the_cooldown_recipe_beside_the_planner_as_a_prior():
    cooldown = shipped_recipe("hocus_pocus_torch_cooldown.yaml")
    residual = shipped_recipe("hocus_pocus_4p_planner_residual.yaml")
    differ = changed_fields(cooldown, residual)
    assert differ == ["max_minutes", "name", "partners", "prior", "prior_weight", "warm_start"]
    assert residual["total_steps"] == 12_001_280 and residual["max_minutes"] == 0
    assert residual["warm_start"] is None
    assert residual["prior"] == "heuristic:planner" and residual["prior_weight"] == 5.0
    assert [(m["agent"], m["epsilon"]) for m in residual["partners"]] == [
        ("heuristic:planner", 0.0)
    ]


def test_the_4p_self_play_residual_is_the_clocked_recipe_at_a_fixed_budget():
    clocked = shipped_recipe("hocus_pocus_torch_residual.yaml")
    fixed = shipped_recipe("hocus_pocus_4p_residual.yaml")
    differ = changed_fields(clocked, fixed)
    assert differ == ["max_minutes", "name", "total_steps"]
    assert fixed["total_steps"] == 5_013_504 and fixed["max_minutes"] == 0
    assert fixed["total_steps"] % (fixed["num_envs"] * fixed["rollout_steps"]) == 0
    assert fixed["partners"] is None and fixed["prior"] == "heuristic:planner"


def test_the_2p_residual_cooldown_is_the_residual_at_a_longer_budget_ending_cool():
    constant = shipped_recipe("hocus_pocus_2p_planner_residual.yaml")
    cooled = shipped_recipe("hocus_pocus_2p_residual_cooldown.yaml")
    differ = changed_fields(constant, cooled)
    assert differ == ["lr_decay_steps", "name", "total_steps"]
    assert cooled["total_steps"] == 12_582_912 and cooled["max_minutes"] == 0
    assert cooled["lr_decay_steps"] * 2 == cooled["total_steps"]
    assert cooled["total_steps"] % (cooled["num_envs"] * cooled["rollout_steps"]) == 0


def test_the_4p_partner_residual_is_the_self_play_residual_with_the_partner_population():
    self_play = shipped_recipe("hocus_pocus_4p_residual.yaml")
    population = shipped_recipe("hocus_pocus_4p_partners.yaml")
    mixed = shipped_recipe("hocus_pocus_4p_partners_residual.yaml")
    differ = changed_fields(self_play, mixed)
    assert differ == ["name", "partners", "self_play_every"]
    assert mixed["partners"] == population["partners"]
    assert mixed["self_play_every"] == population["self_play_every"]
    assert mixed["prior"] == "heuristic:planner" and mixed["total_steps"] == 5_013_504


def test_the_4p_partner_residual_with_other_play_changes_only_the_relabeling():
    plain = shipped_recipe("hocus_pocus_4p_partners_residual.yaml")
    relabeled = shipped_recipe("hocus_pocus_4p_partners_residual_op.yaml")
    assert changed_fields(plain, relabeled) == ["name", "other_play"]
    assert relabeled["other_play"] is True
