"""Large evaluations on the batched engine (eval.batched): one game per row, the agent's seat
going round, the reference harness's statistics, and clear errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from envs.core.errors import ConfigError
from eval.batched import evaluate, main
from eval.play import play_team
from eval.stats import bootstrap_mean_interval, wilson_interval


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def test_a_team_wins_and_lasts_as_in_reference_games():
    """The focal Horseman team over 1,000 batched games and 200 reference games: win rates and
    game lengths agree within their 95% intervals (counting a row's later, auto-reset games
    would favour short games and shorten the mean)."""
    batched = evaluate("headless_horseman_v1", 2, "heuristic:focal", games=1000, progress=False)
    reference = play_team("headless_horseman_v1", 2, "heuristic:focal", range(200))
    wins = sum(g.info["outcome"] == 1 for g in reference)
    assert overlap(
        wilson_interval(int(batched.won.sum()), 1000), wilson_interval(wins, len(reference))
    )
    assert overlap(
        bootstrap_mean_interval(batched.steps.tolist())[1:],
        bootstrap_mean_interval([float(g.steps) for g in reference])[1:],
    )
    assert not batched.lost.any()


def test_every_row_counts_one_game_in_any_chunking():
    outcomes = evaluate(
        "hexenflug_v1", 3, "heuristic:cautious", "random", games=100, chunk=50, progress=False
    )
    assert len(outcomes.won) == len(outcomes.steps) == 100
    assert (outcomes.steps > 0).all()
    assert outcomes.won.mean() > 0.45  # a third of the wins would be a random seat's share


def test_random_against_itself_is_even_and_every_game_has_a_winner():
    """Seats go round the table, so random against random wins about half its games; a
    Hexenflug game always names winners (a shared win counts for both sides)."""
    outcomes = evaluate("hexenflug_v1", 2, "random", "random", games=1000, progress=False)
    low, high = wilson_interval(int(outcomes.won.sum()), 1000)
    assert low < 0.5 < high
    assert (outcomes.won | outcomes.lost).all()
    assert abs(float(np.mean(outcomes.score))) < 1.0


def test_competitive_rows_give_the_paired_win_difference():
    lines = main(["hexenflug_v1", "heuristic:cautious", "random", "--games", "60", "--chunk", "30"])
    assert "agent won − opponent won [95% CI]" in lines[2]
    difference = lines[-1].split(" | ")[-1]
    assert difference.startswith("+") and difference.endswith("] |")


@pytest.mark.parametrize(
    "env_id, spec, opponent, games, match",
    [
        ("headless_horseman_v1", "random", "random", 10, "cooperative: no opponent"),
        ("hexenflug_v1", "random", None, 10, "non-cooperative: an opponent"),
        ("hexenflug_v1", "random", "random", 0, "games and chunk must be positive"),
        ("hexenflug_v1", "sb3:model.zip", "random", 10, "has no batched form"),
        ("hexenflug_v1", "heuristic:nobody", "random", 10, "batched heuristics:"),
    ],
)
def test_bad_evaluations_are_refused(env_id, spec, opponent, games, match):
    with pytest.raises(ConfigError, match=match):
        evaluate(env_id, 2, spec, opponent, games=games, progress=False)


def test_command_prints_a_row_per_team_with_paired_differences(capsys):
    """Teams of one command play the same deals: the same team twice differs by exactly 0 on
    every deal; another team gets a signed difference."""
    argv = ["--games", "40", "--chunk", "16", "--players", "3"]
    specs = ["heuristic:greedy", "heuristic:greedy", "random"]
    lines = main(["hocus_pocus_v1", *specs, *argv])
    printed = capsys.readouterr().out
    assert "| team | games | win | mean stuns [95% CI] | length |" in printed
    assert [line.split(" | ")[0] for line in lines[-3:]] == [f"| {s}" for s in specs]
    assert all("| 40 |" in line for line in lines[-3:])
    assert lines[-3].endswith("| – |")
    assert lines[-2].endswith("| +0.000 [+0.000, +0.000] |")
    assert lines[-1].split(" | ")[-1].startswith("-")  # random play stuns less than greedy


def test_out_folder_holds_the_table_every_game_and_a_plot(tmp_path):
    argv = ["hexenflug_v1", "random", "random", "--games", "20", "--out", str(tmp_path / "run")]
    lines = main(argv)
    folder = tmp_path / "run"
    assert (folder / "report.md").read_text().splitlines() == lines
    results = json.loads((folder / "results.json").read_text())
    (row,) = results["rows"]
    assert (row["spec"], row["opponent"]) == ("random", "random")
    assert len(row["games"]["won"]) == len(row["games"]["steps"]) == 20
    assert results["provenance"]["git_commit"] and results["config"]["games"] == 20
    assert (folder / "win_rates.png").stat().st_size > 0


def _checkpoint(tmp_path, env_id: str, num_players: int):
    """A small untrained PolicyNet checkpoint for ``env_id`` (its policy is far from uniform
    and far from one-hot, so greedy and sampled play differ)."""
    import torch

    import envs
    from agents.torch_policy import PolicyNet, save_checkpoint

    benv = envs.make_batched(env_id, num_players, batch_size=1)
    torch.manual_seed(0)
    net = PolicyNet(benv.game.observation_size, benv.num_actions, [32])
    with torch.no_grad():
        net.actor[-1].weight.mul_(5.0)
    path = tmp_path / "net.pt"
    save_checkpoint(net, env_id, path)
    return path


def test_a_sampling_checkpoint_draws_from_its_policy(tmp_path):
    """``torch:<checkpoint>?sample=1`` on the batched engine: on one Hexenflug state repeated
    20,000 times, every action is legal, each action's frequency lies within 4.5 standard errors
    of its policy probability, the same seed repeats the draws, and greedy play is the argmax."""
    import torch

    import envs
    from agents.batched import make_batched_agent

    path = _checkpoint(tmp_path, "hexenflug_v1", 2)
    benv = envs.make_batched("hexenflug_v1", 2, batch_size=64)
    out = benv.reset(seed=3)
    walker = make_batched_agent("random", "hexenflug_v1", 2, torch.device("cpu"), torch.Generator())
    for _ in range(12):
        out = benv.step(walker.act(out["observation"], out["action_mask"], out["seat"]))
    row = int(out["action_mask"].sum(1).argmax())  # the state with the most legal actions
    obs, mask = (out[k][row].expand(20_000, -1) for k in ("observation", "action_mask"))
    seat = out["seat"][row].expand(20_000)

    def policy(spec: str, seed: int):
        generator = torch.Generator().manual_seed(seed)
        return make_batched_agent(spec, "hexenflug_v1", 2, torch.device("cpu"), generator)

    sampler = policy(f"torch:{path}?sample=1", 0)
    chosen = sampler.act(obs, mask, seat)
    assert mask.gather(1, chosen[:, None]).all()
    with torch.no_grad():
        p = torch.softmax(sampler.net.masked_logits(obs[:1], mask[:1])[0][0].double(), 0)
    assert 0.05 < float(p.max()) < 0.95, p.max()  # the test can tell sampling from argmax
    counts = torch.bincount(chosen, minlength=len(p)).double() / 20_000
    half = 4.5 * (p * (1 - p) / 20_000).sqrt() + 1e-9
    assert ((counts - p).abs() <= half).all()
    assert torch.equal(chosen, policy(f"torch:{path}?sample=1", 0).act(obs, mask, seat))
    greedy = policy(f"torch:{path}", 0).act(obs, mask, seat)
    assert (greedy == int(p.argmax())).all()


@pytest.mark.parametrize(
    "query, match", [("?sample=2", "sample must be 0 or 1"), ("?depth=3", "unknown option")]
)
def test_batched_torch_options_are_checked(tmp_path, query, match):
    import torch

    from agents.batched import make_batched_agent

    path = _checkpoint(tmp_path, "hexenflug_v1", 2)
    with pytest.raises(ConfigError, match=match):
        make_batched_agent(
            f"torch:{path}{query}", "hexenflug_v1", 2, torch.device("cpu"), torch.Generator()
        )
