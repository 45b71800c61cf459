"""The README's figures and their sources: the training table rendered from the shipped reports.

    python -m train.readme_figures [--readme README.md]

Every figure with a 95% interval that the README quotes (:data:`FIGURE`) must be printed by a
report under ``docs/results/`` (``tests/test_readme_figures.py`` says which have none). The
training table is rendered from the evaluations of the shipped checkpoints,
``docs/results/trained/<name>/results.json``: ``python -m eval configs/eval/trained/<name>.yaml
--out docs/results/trained`` for the harness's, ``python -m eval.batched ... --out
docs/results/trained/<name>_batched`` for the batched engine's (:data:`ROWS`).
``--readme`` rewrites the README's ``training`` block.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import envs
from envs.core.docs import update_file
from envs.core.errors import run_command
from train.results import COMPETITIVE, COOPERATIVE, cells, game_name, percent, verdict

TRAINED = Path("docs/results/trained")
ROWS = (
    (
        "hocus_pocus_torch_cooldown_batched",
        "12,001,280 steps, about 90 min, 1 thread, batched engine, lr cooldown over the "
        "second half",
    ),
    (
        "hocus_pocus_torch_residual_batched",
        "4,820,992 steps, 55 min, 1 thread, batched engine, prior heuristic:planner",
    ),
    ("hocus_pocus_2p_torch", "14,012,416 steps, 110 min, 1 thread, batched engine"),
    ("hocus_pocus_sb3", "1,687,552 steps, 25 min, 1 thread"),
    ("headless_horseman_torch", "3,883,008 steps, 10 min, 1 thread, batched engine"),
    ("headless_horseman_sb3", "1,413,120 steps, 10 min, 1 thread"),
    ("hexenflug_torch", "4,841,472 steps, 45 min, 1 thread"),
    ("hexenflug_torch_batched", "10,002,432 steps, 45 min, 1 thread, batched engine"),
    ("hexenflug_sb3", "1,230,848 steps, 20 min, 1 thread"),
    ("voodoo_mania_torch", "39,018,496 steps, 60 min, 1 thread, batched engine"),
    (
        "voodoo_mania_factored_20k",
        "6,004,736 steps, about 15 min (3 seeds side by side on 2 cores), 1 thread, batched "
        "engine, factored head, pfsp",
    ),
    (
        "voodoo_mania_torch_residual",
        "28,508,160 steps, 60 min, 1 thread, batched engine, prior heuristic:chain",
    ),
    ("voodoo_mania_sb3", "1,640,448 steps, 20 min, 1 thread"),
)
"""Each row: its evaluation folder in :data:`TRAINED`, and the training column as the run
reported it (steps, minutes, threads, engine, prior; the checkpoints do not record them)."""

NUMBER = r"[+\-−]?\d+(?:\.\d+)?"
FIGURE = re.compile(
    rf"(?<![\w.+\-−])(?P<value>{NUMBER})(?P<percent>%)?(?:\s+(?P<unit>[a-z]+))?"
    rf"\s+\[(?P<low>{NUMBER})%?,\s+(?P<high>{NUMBER})%?\]"
)
"""A figure with its interval: a number (not the tail of a longer one, no thousands commas), then
``%`` or one unit word, then ``[low, high]``, the bounds with or without ``%``, lines broken
anywhere a space is (``83.6% [82.1, 85.0]``, ``1.19 stuns [1.11, 1.27]``, ``+5.1% [+3.8, +6.3]``,
``−0.032 [−0.066, +0.004]``, a report's ``83.6% [82.1%, 85.0%]``)."""


def figure_key(match: re.Match) -> tuple[str, bool, str, str]:
    """What a figure says, whatever its notation: value, whether a percentage, low and high, as
    printed (same digits), with ``−`` read as ``-`` and a leading ``+`` dropped; the unit word
    and ``%`` inside the brackets are left out (a report prints ``0.87 [0.80, 0.95]`` under
    "mean stuns", the README ``0.87 stuns [0.80, 0.95]``)."""

    def number(text: str) -> str:
        return text.replace("−", "-").removeprefix("+")

    return (
        number(match["value"]),
        bool(match["percent"]),
        number(match["low"]),
        number(match["high"]),
    )


def figures(text: str) -> list[re.Match]:
    """Every figure of ``text`` (:data:`FIGURE`), in order."""
    return list(FIGURE.finditer(text))


def sourced(root: Path) -> set[tuple[str, bool, str, str]]:
    """The keys of every figure that a ``report.md`` or ``results.json`` under ``root`` prints."""
    paths = [*root.rglob("report.md"), *root.rglob("results.json")]
    return {figure_key(m) for path in paths for m in figures(path.read_text())}


def unsourced(readme: str, root: Path) -> list[str]:
    """The figures of ``readme`` that no report under ``root`` prints, one line each."""
    known = sourced(root)
    return [
        f"line {readme.count(chr(10), 0, m.start()) + 1}: {' '.join(m[0].split())}"
        for m in figures(readme)
        if figure_key(m) not in known
    ]


def batched_games(config: dict) -> str:
    """How many games an ``eval.batched`` row played, and from which seeds."""
    return f"{config['games']:,} games, `eval.batched`, seeds from {config['seed']}"


def batched_cells(results: dict) -> list[str]:
    """A cooperative row's cells from ``python -m eval.batched``'s ``results.json`` (its first
    spec the trained team), each figure as its report prints it."""
    config = results["config"]
    score = envs.spec(config["env"]).score
    teams = {row["spec"]: row for row in results["rows"]}
    if "random" not in teams or teams[config["specs"][0]].get("opponent") is not None:
        raise ValueError("a batched row needs a cooperative evaluation with a random team")
    mine = teams[config["specs"][0]]
    heuristics = {k: v for k, v in teams.items() if k.startswith("heuristic:")}
    best = heuristics[max(heuristics, key=lambda k: heuristics[k]["win"]["rate"])]

    def team(row: dict) -> str:
        mean = row["score"]
        text = f"{mean['mean']:.3f} {score} [{mean['low']:.3f}, {mean['high']:.3f}]"
        return f"{percent(row['win'])}; {text}"

    deals = batched_games(config)
    return [
        f"{team(mine)} ({deals})",
        team(teams["random"]),
        f"{best['spec']}: {team(best)} (the same deals)",
        verdict(
            mine["win"]["low"] - best["win"]["high"], mine["win"]["high"] - best["win"]["low"], 0.0
        ),
    ]


def batched_versus_cells(results: dict) -> list[str]:
    """A competitive row's cells from ``python -m eval.batched``'s ``results.json`` (its first
    spec the trained seat, played against random and the heuristics): its win rate against
    random; against the heuristic it does worst against, its win rate and won − lost (a shared
    win counts for both seats, so won − lost decides); whether won − lost is above 0."""
    config = results["config"]
    trained = config["specs"][0]
    rows = {row["opponent"]: row for row in results["rows"] if row["spec"] == trained}
    if "random" not in rows:
        raise ValueError("a batched competitive row needs the trained seat against random")
    heuristics = {k: v for k, v in rows.items() if k.startswith("heuristic:")}
    hardest = min(heuristics, key=lambda k: heuristics[k]["won_minus_lost"]["mean"])
    margin = heuristics[hardest]["won_minus_lost"]
    balance = (
        f"won − lost {100 * margin['mean']:+.1f}% "
        f"[{100 * margin['low']:+.1f}, {100 * margin['high']:+.1f}]"
    ).replace("-", "−")
    deals = batched_games(config)
    return [
        percent(rows["random"]["win"]),
        f"{hardest}: {percent(heuristics[hardest]['win'])}, {balance} ({deals})",
        verdict(margin["low"], margin["high"], 0.0),
    ]


def row(name: str, training: str, root: Path = TRAINED) -> tuple[bool, str]:
    """Whether the row's game is cooperative, and its table row from ``root/name``."""
    results = json.loads((root / name / "results.json").read_text())
    config = results["config"]
    if "command" in results:  # python -m eval.batched
        players, trained = config["players"], config["specs"][0]
        cooperative = all(row.get("opponent") is None for row in results["rows"])
        comparison = (batched_cells if cooperative else batched_versus_cells)(results)
    else:
        players, trained = config["players"][0], config["agents"][0]
        cooperative, comparison = results["cooperative"], cells(results)
    game = game_name({"env": config["env"], "num_players": players})
    line = " | ".join([game, trained.split(":")[0], *comparison, training])
    return cooperative, f"| {line} |"


def table(root: Path = TRAINED) -> str:
    """The README's training block: the cooperative rows' table, then the competitive rows'."""
    rows = [row(name, training, root) for name, training in ROWS]
    return "\n\n".join(
        "\n".join([header, *(text for coop, text in rows if coop == cooperative)])
        for cooperative, header in ((True, COOPERATIVE), (False, COMPETITIVE))
    )


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(
        prog="python -m train.readme_figures", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--readme", type=Path, help="write the table into this file's block")
    args = parser.parse_args(argv)
    text = table()
    print(text)
    if args.readme:
        update_file(args.readme, {"training": text})
    return text


if __name__ == "__main__":
    run_command(main)
