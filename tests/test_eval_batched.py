"""Large evaluations on the batched engine (cauldron.eval.batched): one game per row, the agent's
seat going round, each game's chance from its own seed (whatever the chunk), paired differences,
provenance, ``python:`` agents row by row, the reference harness's statistics, and clear
errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cauldron.envs.core.errors import ConfigError
from cauldron.eval.batched import evaluate, main
from cauldron.eval.play import play_team
from cauldron.eval.stats import bootstrap_mean_interval, verdict, wilson_interval


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
    assert batched.lost is None and batched.agent_seat is None  # no column that is always false


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
    assert "agent won − opponent won [95% CI] | verdict | detectable |" in lines[2]
    difference, said, detectable = lines[-1].split(" | ")[-3:]
    assert difference.startswith("+") and difference.endswith("]")
    assert said == "yes" and detectable.startswith("±")


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


def test_command_prints_a_row_per_team_and_paired_differences(capsys):
    """Teams of one command play the same deals: the same team twice differs by exactly 0 on
    every deal, in win rate and in stuns; random play gets a negative difference."""
    argv = ["--games", "40", "--chunk", "16", "--players", "3"]
    specs = ["heuristic:greedy", "heuristic:greedy", "random"]
    lines = main(["hocus_pocus_v1", *specs, *argv])
    printed = capsys.readouterr().out
    assert (
        "| team | games | won / lost / drawn / truncated | win [95% CI] | mean stuns [95% CI] "
        "| length |" in printed
    )
    teams = lines[4:7]
    assert [line.split(" | ")[0] for line in teams] == [f"| {s}" for s in specs]
    assert all("| 40 |" in line for line in teams)
    header = (
        "| team | reference | win rate, paired [95% CI] | verdict | detectable | "
        "stuns, paired [95% CI] |"
    )
    assert lines[-4] == header
    same, other = lines[-2:]
    assert same == (
        "| heuristic:greedy | heuristic:greedy | +0.0% [+0.0%, +0.0%] | not sure | ±0.0% | "
        "+0.000 [+0.000, +0.000] |"
    )
    assert other.startswith("| random | heuristic:greedy | -")
    assert other.split(" | ")[-1].startswith("-")  # random play stuns less than greedy


def test_paired_win_rate_differences_against_a_baseline_are_the_per_deal_means():
    """``--baseline`` names the reference team; each other team's paired figures are the
    means of its per-deal differences from that team's games on the same seeds."""
    common = dict(games=60, seed=11, chunk=32, progress=False)
    greedy = evaluate("hocus_pocus_v1", 2, "heuristic:greedy", **common)
    rand = evaluate("hocus_pocus_v1", 2, "random", **common)
    argv = ["hocus_pocus_v1", "random", "heuristic:greedy", "--games", "60", "--seed", "11"]
    lines = main([*argv, "--baseline", "heuristic:greedy", "--chunk", "32"])
    (row,) = [line for line in lines if line.startswith("| random | heuristic:greedy |")]
    win, said, _, stuns = row.split(" | ")[2:6]
    diff = rand.won.astype(float) - greedy.won.astype(float)
    assert win.startswith(f"{diff.mean():+.1%} [")
    low, high = bootstrap_mean_interval(diff.tolist())[1:]
    assert win == f"{diff.mean():+.1%} [{low:+.1%}, {high:+.1%}]"
    assert said == verdict(low, high)
    assert stuns.startswith(f"{(rand.score - greedy.score).mean():+.3f} [")
    assert not any(line.startswith("| heuristic:greedy | heuristic:greedy |") for line in lines)


def test_across_seeds_summarises_each_seeds_paired_difference(tmp_path):
    """``--across-seeds``: the teams after the reference are seeds of one recipe; the table
    lists each one's paired difference (the paired table's figure), their mean with an interval
    over the seeds, and counts the seeds whose own interval lies above 0 (greedy stuns
    more than random play, deal by deal; a team equal to the reference does not)."""
    folder = tmp_path / "seeds"
    specs = ["random", "heuristic:greedy", "heuristic:greedy", "random"]
    argv = ["hocus_pocus_v1", *specs, "--games", "16", "--chunk", "16", "--seed", "5"]
    lines = main([*argv, "--across-seeds", "--out", str(folder)])
    results = json.loads((folder / "results.json").read_text())
    paired = [row["paired"]["score"]["mean"] for row in results["rows"][1:]]
    summary = results["across_seeds"]["score"]
    assert summary["per_seed"] == paired and paired[2] == 0.0
    assert summary["mean"]["mean"] == pytest.approx(np.mean(paired))
    assert summary["mean"]["low"] <= summary["mean"]["mean"] <= summary["mean"]["high"]
    assert summary["above"] == 2
    (stuns,) = [line for line in lines if line.startswith("| stuns, paired |")]
    cells = stuns.split(" | ")
    assert cells[1] == ", ".join(f"{v:+.3f}" for v in paired)
    assert cells[3:5] == ["2 of 3", "0 of 3"]
    assert not any(line.startswith("warning:") for line in lines)
    assert "| stuns, paired |" in (folder / "report.md").read_text()


def test_across_seeds_warns_below_three_seeds_and_needs_the_seeds():
    two = main(["hocus_pocus_v1", "random", "random", "random", "--games", "2", "--across-seeds"])
    assert two[-1] == "warning: 2 seeds; the protocol asks for at least 3"
    for argv in (
        ["hocus_pocus_v1", "random", "random"],
        ["hexenflug_v1", "random", "random", "random"],
    ):
        with pytest.raises(ConfigError, match="--across-seeds needs the seeds: .* --agents 2"):
            main([*argv, "--games", "4", "--across-seeds"])


def test_competitive_across_seeds_summarises_each_agents_won_minus_lost(tmp_path):
    """``--agents 3 --across-seeds`` in a competitive game: each of the first three specs meets
    every later one; per opponent, each seed's "won − lost" (the main table's figure), their
    mean with an interval over the seeds, and the seeds whose own interval lies above 0 (the
    banker beats random play; random play against itself does not)."""
    folder = tmp_path / "seeds"
    specs = ["heuristic:banker", "heuristic:banker", "random", "random", "heuristic:cautious"]
    argv = ["hexenflug_v1", *specs, "--agents", "3", "--games", "24", "--seed", "5"]
    lines = main([*argv, "--across-seeds", "--out", str(folder)])
    results = json.loads((folder / "results.json").read_text())
    assert [r["label"] for r in results["rows"]] == [
        f"{a} vs {o}" for a in specs[:3] for o in specs[3:]
    ]
    against_random = [r["won_minus_lost"] for r in results["rows"] if r["opponent"] == "random"]
    summary = results["across_seeds"]["random"]
    assert summary["per_seed"] == [w["mean"] for w in against_random]
    assert summary["mean"]["mean"] == pytest.approx(np.mean(summary["per_seed"]))
    assert summary["above"] == 2 == sum(w["low"] > 0 for w in against_random)
    assert set(results["across_seeds"]) == {"random", "heuristic:cautious"}
    (row,) = [line for line in lines if line.startswith("| won − lost against random |")]
    assert row.split(" | ")[1] == ", ".join(f"{v:+.1%}" for v in summary["per_seed"])
    assert row.split(" | ")[3:5] == ["2 of 3", "0 of 3"]


@pytest.mark.parametrize(
    "argv, match",
    [
        (["hexenflug_v1", "random", "random", "--agents", "2"], "--agents must be 1 to 1"),
        (["hexenflug_v1", "random", "random", "--agents", "0"], "--agents must be 1 to 1"),
        (["hocus_pocus_v1", "random", "--agents", "2"], "--agents is for competitive games"),
    ],
)
def test_agents_is_refused_where_it_leaves_no_opponent_or_the_game_is_cooperative(argv, match):
    with pytest.raises(ConfigError, match=match):
        main([*argv, "--games", "4"])


def test_out_folder_holds_the_command_provenance_tables_every_game_and_a_plot(tmp_path):
    argv = ["hexenflug_v1", "random", "random", "--games", "20", "--out", str(tmp_path / "run")]
    lines = main(argv)
    folder = tmp_path / "run"
    text = (folder / "report.md").read_text()
    assert text.splitlines()[-len(lines) - 2 : -2] == lines
    assert "`cauldron eval-batched hexenflug_v1 random random --games 20 --out " in text
    assert "Cauldron " in text and "commit `" in text and "config hash `" in text
    results = json.loads((folder / "results.json").read_text())
    (row,) = results["rows"]
    assert (row["spec"], row["opponent"]) == ("random", "random")
    games = row["games"]
    assert games["seed"] == list(range(20))
    assert len(games["won"]) == len(games["lost"]) == len(games["margin"]) == 20
    assert games["agent_seat"] == [i % 2 for i in range(20)]
    source = results["provenance"]
    assert (
        source["git_commit"] and source["libraries"]["torch"] and len(source["config_hash"]) == 64
    )
    assert source["command"] == results["command"] and results["config"]["games"] == 20
    assert (folder / "win_rates.png").stat().st_size > 0


def test_cooperative_games_keep_a_seed_column_and_no_lost_column(tmp_path):
    folder = tmp_path / "run"
    main(["headless_horseman_v1", "random", "--games", "6", "--seed", "40", "--out", str(folder)])
    (row,) = json.loads((folder / "results.json").read_text())["rows"]
    assert sorted(row["games"]) == ["scares", "seed", "steps", "truncated", "won"]
    assert row["games"]["seed"] == list(range(40, 46))


def test_the_config_hash_ignores_chunk_and_threads(tmp_path):
    def config_hash(*extra: str) -> str:
        folder = tmp_path / "-".join(extra or ("plain",))
        main(["headless_horseman_v1", "random", "--games", "4", "--out", str(folder), *extra])
        return json.loads((folder / "results.json").read_text())["provenance"]["config_hash"]

    assert config_hash() == config_hash("--chunk", "3") != config_hash("--seed", "1")


@pytest.mark.parametrize(
    "env_id, players, spec, opponent",
    [
        ("hocus_pocus_v1", 3, "random", None),
        ("headless_horseman_v1", 2, "random", None),
        ("hexenflug_v1", 3, "heuristic:cautious", "heuristic:greedy"),
        ("voodoo_mania_v1", 2, "random", "random"),
    ],
)
def test_every_game_is_the_same_in_any_chunking(env_id, players, spec, opponent):
    """Each game's chance (deal, draws of play, a random agent's draws) comes from its own
    seed: 7 games at a time or 64, every game ends the same way, after the same steps."""

    def games(chunk: int):
        return evaluate(env_id, players, spec, opponent, games=14, chunk=chunk, progress=False)

    small, large = games(7), games(64)
    for field in ("seed", "won", "lost", "score", "steps", "agent_seat"):
        a, b = getattr(small, field), getattr(large, field)
        assert (a is None and b is None) or np.array_equal(a, b), field
    assert len(set(small.steps.tolist())) > 3  # different games, not one game 14 times


def test_a_game_is_dealt_from_its_own_seed_whatever_the_games_around_it():
    """Games 5..12 of a 16-game run from seed 0 are the 8 games of a run from seed 5."""
    whole = evaluate("headless_horseman_v1", 2, "random", games=16, chunk=8, progress=False)
    part = evaluate("headless_horseman_v1", 2, "random", games=8, seed=5, progress=False)
    for field in ("seed", "won", "score", "steps"):
        assert np.array_equal(getattr(part, field), getattr(whole, field)[5:13]), field


def test_python_agents_play_row_by_row_as_their_batched_form_and_the_reference_games():
    """``python:`` agents have no batched form: each row's seat asks its own object, reset as
    the harness resets a seat's agent (the game's seed + 7919 × (seat + 1)). A python agent
    wrapping the reference greedy heuristic plays every game as the batched greedy heuristic
    (tested equal to the reference) on the same seeds, and scores as the reference harness's
    games of that heuristic do (stuns within 95% intervals)."""
    from tests.batched_python_agents import Reference

    Reference.RESETS.clear()
    spec = "python:tests.batched_python_agents:Reference?env=hocus_pocus_v1&name=greedy"
    common = dict(games=24, seed=3, chunk=10, progress=False)
    python = evaluate("hocus_pocus_v1", 2, spec, **common)
    batched = evaluate("hocus_pocus_v1", 2, "heuristic:greedy", **common)
    for field in ("won", "score", "steps"):
        assert np.array_equal(getattr(python, field), getattr(batched, field)), field
    seeds = {s for s in Reference.RESETS if s is not None}
    assert {g + 7919 * (s + 1) for g in range(3, 27) for s in range(2)} <= seeds
    reference = play_team("hocus_pocus_v1", 2, "heuristic:greedy", range(24))
    assert overlap(
        bootstrap_mean_interval(python.score.tolist())[1:],
        bootstrap_mean_interval([float(g.info["stuns"]) for g in reference])[1:],
    )


def test_python_agents_play_their_rows_against_batched_opponents():
    """A python agent against a batched heuristic in Hexenflug: asked about its own rows only,
    it plays every game as its batched form does, seats going round."""
    spec = "python:tests.batched_python_agents:Reference?env=hexenflug_v1&name=cautious"
    common = dict(games=6, chunk=4, progress=False)
    python = evaluate("hexenflug_v1", 2, spec, "heuristic:greedy", **common)
    batched = evaluate("hexenflug_v1", 2, "heuristic:cautious", "heuristic:greedy", **common)
    for field in ("won", "lost", "score", "steps"):
        assert np.array_equal(getattr(python, field), getattr(batched, field)), field


def test_a_python_agent_returning_a_float_is_named_in_one_clear_error():
    from cauldron.agents.user import AgentError

    spec = "python:tests.batched_python_agents:Floaty"
    with pytest.raises(AgentError, match=r"Floaty.*returned \d+\.0, not an integer action"):
        evaluate("hexenflug_v1", 2, spec, "random", games=3, progress=False)


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--baseline", "heuristic:planner"], "--baseline must be one of the teams"),
        (["--games", "0"], "games and chunk must be positive"),
    ],
)
def test_bad_commands_are_refused(extra, match):
    with pytest.raises(ConfigError, match=match):
        main(["hocus_pocus_v1", "random", "heuristic:greedy", "--games", "4", *extra])


def _checkpoint(tmp_path, env_id: str, num_players: int):
    """A small untrained PolicyNet checkpoint for ``env_id`` (its policy is far from uniform
    and far from one-hot, so greedy and sampled play differ)."""
    import torch

    from cauldron import envs
    from cauldron.agents.torch_policy import PolicyNet, save_checkpoint

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

    from cauldron import envs
    from cauldron.agents.batched import make_batched_agent

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

    from cauldron.agents.batched import make_batched_agent

    path = _checkpoint(tmp_path, "hexenflug_v1", 2)
    with pytest.raises(ConfigError, match=match):
        make_batched_agent(
            f"torch:{path}{query}", "hexenflug_v1", 2, torch.device("cpu"), torch.Generator()
        )


def test_a_partner_fills_every_seat_but_the_agents_which_goes_round_the_table():
    """Ad-hoc teamwork: an agent beside copies of itself is its own whole team, deal by deal;
    its seat in game ``i`` is ``i mod n``."""
    whole = evaluate("hocus_pocus_v1", 3, "heuristic:greedy", games=30, chunk=8, progress=False)
    mixed = evaluate(
        "hocus_pocus_v1",
        3,
        "heuristic:greedy",
        games=30,
        chunk=8,
        progress=False,
        partner="heuristic:greedy",
    )
    assert np.array_equal(whole.won, mixed.won) and np.array_equal(whole.score, mixed.score)
    assert whole.agent_seat is None
    assert mixed.agent_seat.tolist() == [i % 3 for i in range(30)]


def test_the_partner_command_compares_each_agent_beside_partners_with_the_partners_team(capsys):
    argv = ["--games", "24", "--chunk", "8", "--players", "2", "--partner", "heuristic:planner"]
    lines = main(["hocus_pocus_v1", "heuristic:planner", "random", "heuristic:greedy", *argv])
    teams = [line.split(" | ")[0] for line in lines[4:7]]
    assert teams == [
        "| heuristic:planner",
        "| random + heuristic:planner",
        "| heuristic:greedy + heuristic:planner",
    ]
    paired = lines[-2:]
    assert all(line.split(" | ")[1] == "heuristic:planner" for line in paired)


def test_a_partner_is_refused_in_competitive_games():
    with pytest.raises(ConfigError, match="--partner is for cooperative games"):
        main(["hexenflug_v1", "random", "heuristic:greedy", "--partner", "random", "--games", "4"])
    with pytest.raises(ConfigError, match="a partner is for cooperative games"):
        evaluate("hexenflug_v1", 2, "random", "random", games=4, partner="random")
