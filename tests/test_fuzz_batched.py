"""The batched fuzz (``cauldron fuzz-batched``): a short run holds every
promise, truncations are told from rule endings, each check catches the breakage it is for,
and (slow) the full 10^5 calls per game."""

from __future__ import annotations

import re

import pytest
import torch
from tqdm import tqdm

from cauldron import envs
from cauldron.envs.core.batched import BatchedEnv
from cauldron.envs.core.errors import ConfigError
from cauldron.envs.headless_horseman.batched import BatchedHeadlessHorseman
from cauldron.eval.fuzz_batched import Fuzzer, Tally, fuzz, main, table

HORSEMAN = "headless_horseman_v1"


def test_a_few_hundred_calls_per_game_hold_every_promise(capsys):
    tallies = main(["--calls", "400", "--seed", "1"])
    table = capsys.readouterr().out
    assert len(tallies) == sum(
        4 * (envs.spec(g).players[1] - envs.spec(g).players[0] + 1) for g in envs.batched_ids()
    )
    assert all(t.violations == 0 and t.calls >= 400 // 20 for t in tallies.values())
    for env_id in envs.batched_ids():
        mine = [t for (g, _, policy), t in tallies.items() if g == env_id and policy == "penalty"]
        assert sum(t.penalty for t in mine) > 0, env_id
    assert sum(t.rules for (g, _, _), t in tallies.items() if g == HORSEMAN) > 0
    assert "| headless_horseman_v1 | 4 | penalty |" in table
    calls = sum(t.calls for t in tallies.values())
    assert re.search(
        r"^headless_horseman_v1: [\d,]+ step calls, [\d,]+ games ended, 0 violations", table, re.M
    )
    assert re.search(
        rf"^all 4 game\(s\): {calls:,} step calls, [\d,]+ games ended, 0 violations, "
        r"[\d.]+ s CPU, [\d.]+ s wall-clock$",
        table,
        re.M,
    )


def test_truncations_at_max_steps_and_by_a_games_own_clock_are_no_violations():
    tallies = fuzz([HORSEMAN, "voodoo_mania_v1"], calls=600, max_steps=20, progress=False)
    assert all(t.violations == 0 for t in tallies.values())
    assert all(t.truncated > 0 for (g, _, _), t in tallies.items() if g == "voodoo_mania_v1")
    clock = Tally()
    Fuzzer("voodoo_mania_v1", 2, "lowest", 8, 0, {"max_ticks": 5}).run(
        40, clock, tqdm(disable=True)
    )
    assert clock.truncated > 0 and clock.violations == 0


def broken(name: str, monkeypatch) -> None:
    """Break the Horseman's engine in one way the fuzz must see."""
    game = BatchedHeadlessHorseman
    if name == "observation":
        observe = game.observe
        monkeypatch.setattr(game, "observe", lambda self, s, seat: observe(self, s, seat) * 2)
    elif name == "mask":
        legal = game.legal_mask

        def no_legal_in_row_0(self, state):
            mask = legal(self, state)
            mask[0] = False
            return mask

        monkeypatch.setattr(game, "legal_mask", no_legal_in_row_0)
    elif name == "early truncation":
        monkeypatch.setattr(BatchedEnv, "_out_of_steps", lambda self: self.steps >= 3)
    elif name == "no result":
        figures = game.figures
        monkeypatch.setattr(
            game, "figures", lambda self, s: {**figures(self, s), "outcome": s.outcome * 0}
        )
    elif name == "penalty":
        monkeypatch.setattr(
            BatchedEnv, "_penalty", lambda self, seat: torch.zeros(self.batch_size, 2)
        )
    elif name == "never ending":
        monkeypatch.setattr(BatchedEnv, "_out_of_steps", lambda self: self.steps < 0)
        monkeypatch.setattr(game, "is_over", lambda self, s: s.phase < 0)
    elif name == "exception":
        apply = game.apply

        def fails_sometimes(self, state, actions, generator):
            if int(state.turns.sum()) % 7 == 3:
                raise RuntimeError("an engine bug")
            return apply(self, state, actions, generator)

        monkeypatch.setattr(game, "apply", fails_sometimes)


@pytest.mark.parametrize(
    "breakage, policy, message",
    [
        ("observation", "random", "outside its Box"),
        ("mask", "lowest", "a live game without a legal action"),
        ("early truncation", "random", "truncated after 3 of 20000 steps"),
        ("no result", "highest", "ended without a result and without truncation"),
        ("penalty", "penalty", "penalty rewards [0.0, 0.0]"),
        ("never ending", "random", "still playing after"),
        ("exception", "random", "RuntimeError: an engine bug"),
    ],
)
def test_each_check_catches_its_breakage(breakage, policy, message, monkeypatch):
    broken(breakage, monkeypatch)
    options = {"max_steps": 30} if breakage == "never ending" else {}
    tally = Tally()
    Fuzzer(HORSEMAN, 2, policy, 16, 0, options).run(200, tally, tqdm(disable=True))
    assert tally.violations > 0
    assert any(message in line for line in tally.shown), tally.shown


def test_a_violation_exits_1_and_prints_it(monkeypatch, capsys):
    broken("observation", monkeypatch)
    with pytest.raises(SystemExit) as exit_:
        main(["--games", HORSEMAN, "--calls", "24"])
    assert exit_.value.code == 1
    assert "outside its Box" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--games", "tic_tac_toe"], "no batched engine for"),
        (["--calls", "0"], "--calls must be at least 1"),
        (["--seed", "-1"], "seed must be None or an integer from 0 to 2\\*\\*64 - 1"),
    ],
)
def test_bad_arguments_are_config_errors(argv, match):
    with pytest.raises(ConfigError, match=match):
        main(argv)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", envs.batched_ids())
def test_the_full_fuzz_of_10_to_the_5_calls_per_game(env_id):
    """The full size: 10^5 batched step calls per game, every player count and policy."""
    tallies = fuzz([env_id], calls=100_000, progress=False)
    assert sum(t.calls for t in tallies.values()) >= 100_000
    failed = {key: t.shown for key, t in tallies.items() if t.violations}
    print("\n".join(table(tallies, 16)))  # the counts, with pytest -s
    assert not failed, failed
