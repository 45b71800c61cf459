"""One table from several runs of the cooperative-AI protocol: a row per training method.

``cauldron methods "PPO=runs/zsc/ppo" "recurrent=runs/zsc/recurrent" ... --out
docs/results/hocus_pocus_methods [--readme README.md]`` reads each folder's
``results.json.xz`` (written by ``cauldron zsc``) and writes ``report.md``: per method its
training (the overrides of the protocol's training config and the seeds' steps), self-play and
cross-play means, their ratio, and the ad-hoc score beside each partner kind (mean over
seeds), every figure with its 95% interval; then every pair of methods compared column by column
on the same deals (:mod:`cauldron.eval.zsc.pairs`): which differ, which cannot be told apart.
The folders must play the same game, player count, measure, engine, deals and partners, or the
rows would not compare. ``--readme`` also rewrites the README's ``methods`` block (or the one named
by ``--block``) with both tables.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import yaml

from cauldron.envs.core.docs import update_file
from cauldron.envs.core.errors import ConfigError, run_command
from cauldron.eval.zsc.pairs import pairs_table
from cauldron.eval.zsc.report import interval, load, measure_name, ratio

SAME = ("env", "players", "measure", "score", "games", "first_seed", "engine")
DEFAULTS = {"engine": "reference"}  # a summary written before the field existed


def check_comparable(summaries: dict[str, dict[str, Any]]) -> None:
    """Every summary plays the same game, table, measure, engine, deals and partners."""
    (first_name, first), *others = summaries.items()
    for name, summary in others:
        for key in SAME:
            theirs, ours = (s.get(key, DEFAULTS.get(key)) for s in (summary, first))
            if theirs != ours:
                raise ConfigError(
                    f"{name}: {key} is {theirs!r}, {first_name}'s is {ours!r}; "
                    "methods compare only on the same game, measure, engine and deals"
                )
        if list(summary["adhoc"]) != list(first["adhoc"]):
            raise ConfigError(
                f"{name}: partners {list(summary['adhoc'])}, {first_name}'s "
                f"{list(first['adhoc'])}; every method needs the same partners"
            )


UNSHOWN = {"name"}  # overrides that only label a run


def overrides(summary: dict[str, Any]) -> dict[str, Any]:
    """The protocol's ``train_overrides`` that shape training (no labels, no clock guard of 0)."""
    return {
        k: v
        for k, v in summary["config"]["train_overrides"].items()
        if k not in UNSHOWN and (k, v) != ("max_minutes", 0)
    }


def shared_overrides(summaries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The overrides every row has alike: stated once, above the table."""
    first, *others = (overrides(s) for s in summaries.values())
    return {k: v for k, v in first.items() if all(o.get(k, object()) == v for o in others)}


def braces(items: dict[str, Any]) -> str:
    """``{key: value, ...}`` as the YAML configs write it (``other_play: true``), "" for no
    items."""
    if not items:
        return ""
    return yaml.safe_dump(items, default_flow_style=True, sort_keys=False, width=10**9).strip()


def training(summary: dict[str, Any], shared: dict[str, Any], base: str | None) -> str:
    """What a row's seeds changed beyond the ``shared`` overrides of the ``base`` train config
    ("as configured": nothing; the row's own config when there is no common one), and whether
    they were played from given checkpoints (trained by that config earlier, then shipped)."""
    own = {k: v for k, v in overrides(summary).items() if k not in shared}
    text = braces(own) or "as configured"
    if summary["config"].get("checkpoints"):
        text += " (given checkpoints)"
    return text if base else f"`{summary['config']['train']}` {text}"


def base_config(summaries: dict[str, dict[str, Any]]) -> str | None:
    """The train config every row used (None when they differ)."""
    files = {s["config"]["train"] for s in summaries.values()}
    return files.pop() if len(files) == 1 else None


def steps(summary: dict[str, Any]) -> str:
    """The seeds' learner steps (a range when they differ; "unknown" without metrics)."""
    trained = sorted({run["steps"] for run in summary["runs"] if run["steps"]})
    if not trained:
        return "unknown"
    return f"{trained[0]:,}" if len(trained) == 1 else f"{trained[0]:,}–{trained[-1]:,}"


def table(summaries: dict[str, dict[str, Any]]) -> str:
    """The Markdown table: a row per method."""
    first = next(iter(summaries.values()))
    partners = list(first["adhoc"])
    measure = measure_name(first)
    shared, base = shared_overrides(summaries), base_config(summaries)
    lines = [
        f"| method | training | steps per seed | {measure}: self-play [95% CI] | "
        "cross-play [95% CI] | cross / self [95% CI] | "
        + " | ".join(f"beside {first['labels'][p]} ×{first['players'] - 1}" for p in partners)
        + " |",
        "|---|---|---|---|---|---|" + "---|" * len(partners),
    ]
    for name, s in summaries.items():
        adhoc = [interval(s, s["adhoc"][p]["numerator"]) for p in partners]
        lines.append(
            f"| {name} | {training(s, shared, base)} | {steps(s)} | {interval(s, s['selfplay'])} | "
            f"{interval(s, s['crossplay'])} | {ratio(s['ratio'])} | " + " | ".join(adhoc) + " |"
        )
    return "\n".join(lines)


def markdown(summaries: dict[str, dict[str, Any]], folders: dict[str, Path]) -> str:
    first = next(iter(summaries.values()))
    seeds = {len(s["runs"]) for s in summaries.values()}
    base = base_config(summaries)
    trains = f"`{base}`" if base else "its own train config (in the column *training*)"
    return "\n".join(
        [
            f"# Training methods compared: {first['env']}, {first['players']} players",
            "",
            f"Each row is one run of the cooperative-AI protocol (`cauldron zsc`) on the "
            f"{first.get('engine', DEFAULTS['engine'])} engine: "
            f"{'/'.join(map(str, sorted(seeds)))} training seeds of the method, "
            f"{first['games']} games per seat composition on seeds from {first['first_seed']} "
            "(the same deals for every row). Self-play: a seed's own team; cross-play: two "
            "seeds half and half; the ad-hoc columns: one seed with partners of one kind, mean "
            "over seeds. Intervals: 95%, two-stage percentile bootstrap (seeds or pairs of "
            "seeds, then deals).",
            "",
            f"Every row trains {trains} with "
            f"{braces(shared_overrides(summaries)) or 'no overrides'}; the column *training* "
            "gives what a row changes on top of that.",
            "",
            table(summaries),
            "",
            "## Which methods differ",
            "",
            "Each pair of methods, column by column: the first's score minus the second's on the "
            "same deals, with its 95% two-stage paired bootstrap interval (each method's seeds, "
            "then the deals); bold where the interval excludes 0. The last row gives the largest "
            "difference each column could miss (80% power, from the deals' noise alone).",
            "",
            pairs_table(summaries),
            "",
            "Each method's own report: "
            + ", ".join(f"[{name}]({folders[name]}/report.md)" for name in summaries)
            + ".",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(prog="cauldron methods", description=__doc__.splitlines()[0])
    parser.add_argument("methods", nargs="+", help="NAME=FOLDER: a method and its protocol's out")
    parser.add_argument("--out", type=Path, required=True, help="folder for report.md")
    parser.add_argument("--readme", type=Path, help="also rewrite this file's block (--block)")
    parser.add_argument(
        "--block", default="methods", help="the README block to rewrite (default: methods)"
    )
    args = parser.parse_args(argv)
    folders: dict[str, Path] = {}
    for item in args.methods:
        name, sep, folder = item.partition("=")
        if not sep or not name or not folder:
            raise ConfigError(f"{item!r}: give each method as NAME=FOLDER")
        if name in folders:
            raise ConfigError(f"method {name!r} given twice")
        folders[name] = Path(folder)
    summaries = {name: load(folder) for name, folder in folders.items()}
    check_comparable(summaries)
    args.out.mkdir(parents=True, exist_ok=True)
    relative = {name: Path(os.path.relpath(folder, args.out)) for name, folder in folders.items()}
    (args.out / "report.md").write_text(markdown(summaries, relative))
    text = table(summaries) + "\n\n" + pairs_table(summaries)
    if args.readme:
        try:
            update_file(args.readme, {args.block: text})
        except ValueError as err:
            raise ConfigError(f"--block {args.block}: {err}") from None
    print(text)
    return text


if __name__ == "__main__":
    run_command(main)
