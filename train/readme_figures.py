"""The README's figures and their sources.

    cauldron figures [--play [--quick]] [--readme README.md]

The training table holds the rows of ``configs/results/benchmark.yaml`` (:data:`BENCHMARK`): each
row is one training config's seeds (3 or more, one step budget) played by ``python -m
cauldron.eval.batched`` on the **test split** against the game's reference agents, on the same deals
(``--play`` plays them into ``docs/results/test/<name>/``; ``--quick`` plays
:data:`QUICK_GAMES` games a row into ``runs/results-quick/`` for a fast look). Each row gives the
game's own measure (:data:`cauldron.envs.registry.MEASURES`): every seed's paired difference, how
many seeds hold on their own, and the seeds together (their mean outcome minus the reference's, deal
by deal), whose 95% interval gives the verdict (:func:`cauldron.eval.stats.verdict`: *yes* above 0,
*no* below, otherwise *not sure* beside the smallest difference the games could detect). Progress
figures (stuns) stand beside it as diagnostics. ``--readme`` rewrites the README's ``training``
block and the docs site's copy (:data:`DOC_PAGE`).

Every figure with a 95% interval that the README quotes (:data:`FIGURE`) must be printed by a
report under ``docs/results/`` (``tests/test_readme_figures.py`` says which have none).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cauldron import envs
from cauldron.envs.core.docs import update_file
from cauldron.envs.core.errors import ConfigError, run_command
from cauldron.eval import batched
from cauldron.eval.config import MAX_GAMES, parse_model, read_config_file
from cauldron.eval.stats import MIN_SEEDS

BENCHMARK = Path("configs/results/benchmark.yaml")
PUBLISHED = Path("docs/results/test")
QUICK = Path("runs/results-quick")
DOC_PAGE = Path("docs/reports/training.md")  # the docs site's copy of the table
QUICK_GAMES = 500
HEADER = (
    "| game | config | against | measure | each seed, paired [95% CI] | seeds above 0 | "
    "mean over the seeds [95% CI over seeds] | the seeds together, paired [95% CI] | verdict | "
    "detectable | diagnostic | budget | deals |"
    "\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


class BenchmarkRow(BaseModel):
    """One README row: a training config's seeds against the game's reference agents."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$", description="its folder's name")
    env: str = Field(description="registered environment id")
    players: int = Field(ge=2, description="player count")
    config: str = Field(
        description="the config that trains the seeds (a training config, or a methods row's)"
    )
    budget: str = Field(description="each seed's training budget, as the runs reported it")
    seeds: list[str] = Field(min_length=MIN_SEEDS, description="the seeds' torch checkpoints")
    against: list[str] = Field(
        min_length=1,
        description="cooperative: the reference team (one spec); competitive: the opponents",
    )
    games: int | None = Field(None, ge=1, le=MAX_GAMES, description="games (default: the file's)")
    partner: str | None = Field(
        None,
        description="cooperative, ad-hoc teamwork: each seed plays one seat (going round the "
        "table) beside this agent in the others, against this agent's own team (``against``)",
    )

    def argv(self, games: int, out: Path) -> list[str]:
        """The ``cauldron eval-batched`` command line that plays this row on the test split."""
        seeds = [f"torch:{path}" for path in self.seeds]
        cooperative = envs.spec(self.env).cooperative
        specs = [*self.against, *seeds] if cooperative else [*seeds, *self.against]
        agents = [] if cooperative else ["--agents", str(len(seeds))]
        partner = [] if self.partner is None else ["--partner", self.partner]
        return [
            self.env,
            *specs,
            "--players",
            str(self.players),
            "--games",
            str(games),
            "--split",
            "test",
            "--across-seeds",
            *agents,
            *partner,
            "--out",
            str(out / self.name),
        ]


class Benchmark(BaseModel):
    """:data:`BENCHMARK`: the games per row, the training table's rows and the partners table's
    (ad-hoc teamwork: rows with a ``partner``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    games: int = Field(ge=1, le=MAX_GAMES, description="games per row (a row may set its own)")
    rows: list[BenchmarkRow] = Field(min_length=1)
    partners: list[BenchmarkRow] = Field(default_factory=list)

    def tables(self) -> dict[str, list[BenchmarkRow]]:
        """The README blocks by name, each with its rows."""
        return {"training": self.rows, "partners": self.partners}


def load_benchmark(path: Path = BENCHMARK) -> Benchmark:
    benchmark = parse_model(Benchmark, read_config_file(path), str(path))
    for block, rows in benchmark.tables().items():
        for row in rows:
            game = envs.spec(row.env)
            where = f"{path}: {block} row {row.name}"
            if game.cooperative and len(row.against) != 1:
                raise ConfigError(f"{where}: a cooperative row has one reference team")
            if (row.partner is not None) != (block == "partners"):
                raise ConfigError(
                    f"{where}: a partner is given in the partners rows, and only there"
                )
            if row.partner is not None and (not game.cooperative or row.against != [row.partner]):
                raise ConfigError(
                    f"{where}: partner {row.partner!r} needs a cooperative game and its own team "
                    f"as the reference (against: [{row.partner}]), got against {row.against}"
                )
    names = [row.name for rows in benchmark.tables().values() for row in rows]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: row names must be distinct (they name folders): {names}")
    return benchmark


def play(
    benchmark: Benchmark, out: Path, games: int | None = None, only: list[str] | None = None
) -> None:
    """Play every row (or the rows named in ``only``; :meth:`BenchmarkRow.argv`) into
    ``out/<name>/``."""
    rows = [row for block in benchmark.tables().values() for row in block]
    names = [row.name for row in rows]
    unknown = sorted(set(only or ()) - set(names))
    if unknown:
        raise ConfigError(f"--only: no row {', '.join(unknown)}; the rows: {', '.join(names)}")
    for row in rows:
        if only is None or row.name in only:
            batched.main(row.argv(games or row.games or benchmark.games, out))


def signed(m: dict[str, float]) -> str:
    """A paired difference of rates as its report prints it, without the inner ``%``."""
    return f"{m['mean']:+.1%} [{100 * m['low']:+.1f}, {100 * m['high']:+.1f}]"


def deals(results: dict[str, Any]) -> str:
    """How many test deals, and the commit (and whether the tree was dirty) that played them."""
    config, source = results["config"], results["provenance"]
    commit = (source.get("git_commit") or "no commit")[:10]
    dirty = ", uncommitted changes" if source.get("git_dirty") else ""
    return f"{config['games']:,}, {config['split']} split, commit `{commit}`{dirty}"


def rendered(row: BenchmarkRow, results: dict[str, Any]) -> list[str]:
    """The README lines of ``row`` from its ``cauldron.eval.batched`` ``results.json``: one per
    reference agent."""
    game = envs.spec(row.env)
    name = f"{row.env.rsplit('_v', 1)[0]} ({row.players}p)"
    measure = "win rate" if game.measure == "win_rate" else "won − lost"
    summary = results["across_seeds"]
    if game.cooperative:
        per_seed = [r["paired"]["win"] for r in results["rows"] if "paired" in r]
        score = summary["score"]["mean"]
        against = row.against[0] if row.partner is None else f"beside {row.partner}: its team"
        lines = [
            (
                against,
                per_seed,
                summary["win"],
                f"{game.score} {score['mean']:+.3f} over the seeds",
            )
        ]
    else:
        lines = []
        for opponent in row.against:
            mine = [r for r in results["rows"] if r["opponent"] == opponent]
            wins = sum(r["win"]["rate"] for r in mine) / len(mine)
            lines.append(
                (
                    opponent,
                    [r["won_minus_lost"] for r in mine],
                    summary[opponent],
                    f"seeds win {wins:.1%} of games",
                )
            )
    out = []
    for against, per_seed, over, diagnostic in lines:
        pooled = over["pooled"]
        cells = [
            name,
            f"`{Path(row.config).name}`",
            against,
            measure,
            ", ".join(signed(m) for m in per_seed),
            f"{over['above']} of {len(per_seed)}",
            signed(over["mean"]),
            signed(pooled),
            pooled["verdict"],
            f"±{pooled['detectable']:.1%}",
            diagnostic,
            row.budget,
            deals(results),
        ]
        out.append("| " + " | ".join(cells) + " |")
    return out


def table(
    root: Path = PUBLISHED, benchmark: Benchmark | None = None, block: str = "training"
) -> str:
    """The README's ``block`` (``training`` or ``partners``), from each of its rows'
    ``root/<name>/results.json``."""
    benchmark = benchmark or load_benchmark()
    lines = [HEADER]
    for row in benchmark.tables()[block]:
        path = root / row.name / "results.json"
        if not path.is_file():
            raise ConfigError(f"{path} not found: play the row first (cauldron figures --play)")
        lines += rendered(row, json.loads(path.read_text()))
    return "\n".join(lines)


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


def unsourced(readme: str, known: set[tuple[str, bool, str, str]]) -> list[str]:
    """The figures of ``readme`` not among ``known`` (:func:`sourced`), one line each."""
    return [
        f"line {readme.count(chr(10), 0, m.start()) + 1}: {' '.join(m[0].split())}"
        for m in figures(readme)
        if figure_key(m) not in known
    ]


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(prog="cauldron figures", description=__doc__.splitlines()[0])
    parser.add_argument("--play", action="store_true", help="play every row on the test split")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"with --play: {QUICK_GAMES} games a row, into {QUICK} (the README is left alone)",
    )
    parser.add_argument("--only", nargs="+", metavar="ROW", help="with --play: these rows only")
    parser.add_argument("--readme", type=Path, help="write the table into this file's block")
    args = parser.parse_args(argv)
    benchmark = load_benchmark()
    root = QUICK if args.quick else PUBLISHED
    if args.play:
        play(benchmark, root, QUICK_GAMES if args.quick else None, args.only)
    texts = {
        block: table(root, benchmark, block) for block, rows in benchmark.tables().items() if rows
    }
    text = "\n\n".join(texts.values())
    print(text)
    if args.readme and not args.quick:
        for path in (args.readme, DOC_PAGE):
            update_file(path, texts)
    return text


if __name__ == "__main__":
    run_command(main)
