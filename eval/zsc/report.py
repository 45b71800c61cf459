"""Write the cooperative-AI protocol's ``report.md``, ``results.json.xz``, ``crossplay.png`` and
``adhoc.png`` (the summary of :func:`cauldron.eval.zsc.summarize`), and read the results back.

``results.json.xz`` is the summary as :func:`cauldron.eval.report.dumps` writes it, compressed
with xz (LZMA; it also folds the columns of consecutive deal seeds that gzip cannot): a
protocol's 20-odd seat compositions of 5,000 games each are 5 MB of JSON and 150 kB compressed,
small enough to commit beside a published table, which
``cauldron methods`` compares game by game."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from cauldron.envs.core.errors import ConfigError  # noqa: E402
from cauldron.envs.core.folders import atomic_file  # noqa: E402
from cauldron.eval import report  # noqa: E402

RESULTS = "results.json.xz"  # the summary with every game, as write() leaves it

ENGINES = {  # how the games were played, as the report's first paragraph says it
    "reference": " on the reference engine (the harness)",
    "batched": " on the batched engine (other deals than the harness's for the same seeds)",
}


def fmt(summary: dict, x: float | None) -> str:
    """A team score: a percentage for win rates, two decimals for the game's figure."""
    if x is None:
        return "n/a"
    return f"{x:.1%}" if summary["measure"] == "win" else f"{x:.2f}"


def interval(summary: dict, m: dict) -> str:
    if m["mean"] is None:
        return "undefined (the self-play mean is 0)"
    return f"{fmt(summary, m['mean'])} [{fmt(summary, m['low'])}, {fmt(summary, m['high'])}]"


def ratio(m: dict) -> str:
    if m["mean"] is None:
        return "undefined (the self-play mean is 0)"
    return f"{m['mean']:.2f} [{m['low']:.2f}, {m['high']:.2f}]"


def measure_name(summary: dict) -> str:
    return "win rate" if summary["measure"] == "win" else f"mean {summary['score']}"


def headline(summary: dict) -> str:
    """Self-play mean, cross-play mean, their ratio and difference (one table)."""
    m = measure_name(summary)
    lines = [
        f"| {m}: self-play [95% CI] | cross-play [95% CI] | cross / self [95% CI] | "
        "cross − self [95% CI] |",
        "|---|---|---|---|",
        f"| {interval(summary, summary['selfplay'])} | {interval(summary, summary['crossplay'])} "
        f"| {ratio(summary['ratio'])} | {interval(summary, summary['difference'])} |",
    ]
    if "note" in summary:
        lines += ["", summary["note"]]
    return "\n".join(lines)


def seed_table(summary: dict) -> str:
    """Each seed: its training run, its self-play, its cross-play with the other seeds, ratio."""
    label = summary["labels"]
    lines = [
        "| seed | run folder | trained | steps | self-play [95% CI] | cross-play [95% CI] | "
        "cross / self [95% CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in summary["runs"]:
        s = summary["per_seed"][run["agent"]]
        trained = "given" if run.get("given") else "now" if run["trained_now"] else "earlier"
        steps = "n/a" if run["steps"] is None else f"{run['steps']:,}"
        lines.append(
            f"| {label[run['agent']]} | `{run['folder']}` | {trained} | {steps} | "
            f"{interval(summary, s['denominator'])} | {interval(summary, s['numerator'])} | "
            f"{ratio(s['ratio'])} |"
        )
    return "\n".join(lines)


def matrix_table(summary: dict) -> str:
    """The cross-play matrix (row seed in ⌈N/2⌉ seats, column seed in ⌊N/2⌋)."""
    seeds = [run["agent"] for run in summary["runs"]]
    label = summary["labels"]
    lines = [
        "| row \\ column | " + " | ".join(label[s] for s in seeds) + " |",
        "|---|" + "---|" * len(seeds),
    ]
    for s, cells in zip(seeds, summary["matrix"], strict=True):
        lines.append(f"| {label[s]} | " + " | ".join(fmt(summary, c) for c in cells) + " |")
    return "\n".join(lines)


def adhoc_table(summary: dict) -> str:
    """Each partner: every seed's team score in the focal seat, the mean over seeds, its ratio
    to self-play, and the partner's own team."""
    seeds = [run["agent"] for run in summary["runs"]]
    label = summary["labels"]
    cell = {(r["lineup"][0], r["lineup"][1]): r for r in summary["rows"] if r["role"] == "ad-hoc"}
    team = {r["lineup"][0]: r for r in summary["rows"] if r["role"] == "partner team"}
    score = summary["score"]
    lines = [
        "| partner | "
        + " | ".join(label[s] for s in seeds)
        + " | mean over seeds [95% CI] | ÷ self-play [95% CI] | partner's own team |",
        "|---|" + "---|" * (len(seeds) + 3),
    ]
    for p, figures in summary["adhoc"].items():
        per_seed = [_win_and_score(cell[s, p], score) for s in seeds]
        lines.append(
            f"| {label[p]} | "
            + " | ".join(per_seed)
            + f" | {interval(summary, figures['numerator'])} | {ratio(figures['ratio'])} | "
            f"{_win_and_score(team[p], score)} |"
        )
    return "\n".join(lines)


def _win_and_score(row: dict, score: str) -> str:
    return f"{report.pct(row['win'])}; {row[score]['mean']:.2f} {score}"


def lineup_table(summary: dict) -> str:
    """Every seat composition played, with the harness's figures."""
    score, label = summary["score"], summary["labels"]
    lines = [
        f"| role | composition | games | win rate [95% CI] | mean {score} [95% CI] | mean steps |",
        "|---|---|---|---|---|---|",
    ]
    for r in summary["rows"]:
        composition = " + ".join(
            label[a] + (f"×{k}" if k > 1 else "")
            for a, k in zip(r["lineup"], r["seats"], strict=True)
        )
        lines.append(
            f"| {r['role']} | {composition} | {r['win']['games']} | {report.pct(r['win'])} | "
            f"{report.num(r[score])} | {r['length']['mean']:.0f} |"
        )
    return "\n".join(lines)


def truncated(summary: dict) -> str:
    """How many of the protocol's games a clock cut short (counted as not won)."""
    rows = [r for r in summary["rows"] if "ends" in r]
    if not rows:
        return "games"
    cut = sum(r["ends"]["truncated"] for r in rows)
    return f"{cut:,} of {sum(sum(r['ends'].values()) for r in rows):,} games"


def markdown(summary: dict) -> str:
    c, n = summary["config"], summary["players"]
    first, last = summary["first_seed"], summary["first_seed"] + summary["games"] - 1
    high, low = (n + 1) // 2, n // 2
    trained_with = f" with {c['train_overrides']}" if c["train_overrides"] else ""
    if c.get("checkpoints"):
        trained_with = f" (given checkpoints: {', '.join(c['checkpoints'])})"
    parts = [
        f"# Cooperative-AI protocol `{c['name']}`: {summary['env']}, {n} players",
        "",
        f"Seeds {', '.join(str(r['seed']) for r in summary['runs'])} of `{c['train']}`"
        + trained_with
        + f". {summary['games']} seeded games per seat composition (the "
        f"{c.get('split', 'dev')} split, seeds {first:,}–{last:,}, "
        f"{truncated(summary)} cut short by a clock; the "
        "same deals for every composition; seats rotate with the seed)"
        + ENGINES[summary.get("engine", "reference")]
        + ". Team score: "
        f"{measure_name(summary)}. Cross-play seats two seeds half and half (row seed in "
        f"{high}, column seed in {low} seats"
        + (", each ordered pair" if n % 2 else ", each pair once")
        + "); ad-hoc teamwork seats one seed with N−1 partners of one kind. Intervals: 95%, "
        "two-stage percentile bootstrap (seeds or pairs of seeds, then deals shared by every "
        "composition) for means, ratios and differences; Wilson for win rates.",
        "",
        report.provenance_line(summary, RESULTS),
        "",
    ]
    if summary.get("note"):
        parts += [f"**{summary['note']}**", ""]
    parts += [f"**Warning: {w}**\n" for w in summary.get("warnings", [])]
    parts += [
        "## Self-play vs cross-play",
        "",
        headline({k: v for k, v in summary.items() if k != "note"}),
        "",
        seed_table(summary),
        "",
        f"Cross-play matrix ({measure_name(summary)}; diagonal: self-play):",
        "",
        matrix_table(summary),
        "",
        "![cross-play](crossplay.png)",
        "",
        "## Ad-hoc teamwork",
        "",
        "Each seed in one seat with N−1 partners of one kind (win rate; mean "
        f"{summary['score']}), and the partners' own team for reference.",
        "",
        adhoc_table(summary),
        "",
        "![ad-hoc teamwork](adhoc.png)",
        "",
        "## Every seat composition",
        "",
        lineup_table(summary),
        "",
    ]
    return "\n".join(parts)


def plot_crossplay(summary: dict, path: Path) -> None:
    """Heat map of the seed × seed matrix, each cell annotated."""
    seeds = [run["agent"] for run in summary["runs"]]
    names = [summary["labels"][s] for s in seeds]
    grid = summary["matrix"]
    n = summary["players"]
    fig, ax = plt.subplots(figsize=(1.2 * len(seeds) + 2.5, 1.0 * len(seeds) + 1.8))
    top = 1.0 if summary["measure"] == "win" else max(1e-9, max(max(row) for row in grid))
    image = ax.imshow(grid, vmin=0, vmax=top, cmap="viridis")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            shade = "black" if v > 0.6 * top else "white"
            ax.text(j, i, fmt(summary, v), ha="center", va="center", color=shade, fontsize=9)
    ax.set_xticks(range(len(seeds)), names)
    ax.set_yticks(range(len(seeds)), names)
    ax.set_xlabel(f"column seed (×{n // 2})")
    ax.set_ylabel(f"row seed (×{(n + 1) // 2})")
    fig.colorbar(image, ax=ax, label=measure_name(summary))
    ax.set_title(
        f"{summary['env']} {n}p: cross-play\n(diagonal: self-play; cross/self "
        f"{ratio(summary['ratio'])})",
        fontsize=9,
    )
    fig.tight_layout()
    report.save_figure(fig, path, dpi=110)


def plot_adhoc(summary: dict, path: Path) -> None:
    """Bars per partner: each seed as the focal agent (95% CI), the partners' own team and
    the self-play mean as a line."""
    seeds = [run["agent"] for run in summary["runs"]]
    partners = list(summary["adhoc"])
    rows = {
        tuple(r["lineup"]): r for r in summary["rows"] if r["role"] in ("ad-hoc", "partner team")
    }
    key = "win" if summary["measure"] == "win" else summary["score"]
    centre = "rate" if key == "win" else "mean"
    width = 0.8 / (len(seeds) + 1)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(partners) * (len(seeds) + 1) / 3), 4.2))
    bars = [(summary["labels"][s], lambda p, s=s: rows[s, p]) for s in seeds]
    bars.append(("partner's own team", lambda p: rows[(p,)]))
    for k, (name, row_of) in enumerate(bars):
        figures = [row_of(p)[key] for p in partners]
        values = [f[centre] for f in figures]
        errors = [
            [v - f["low"] for v, f in zip(values, figures, strict=True)],
            [f["high"] - v for v, f in zip(values, figures, strict=True)],
        ]
        xs = [i + (k - len(seeds) / 2) * width for i in range(len(partners))]
        own = {"hatch": "//", "color": "lightgrey", "edgecolor": "grey"} if k == len(seeds) else {}
        ax.bar(xs, values, width, yerr=errors, capsize=3, label=name, **own)
    ax.axhline(summary["selfplay"]["mean"], color="black", linestyle="--", label="self-play mean")
    ax.set_xticks(range(len(partners)), [summary["labels"][p] for p in partners])
    ax.set_ylabel(f"{measure_name(summary)} (95% CI)")
    ax.set_title(f"{summary['env']} {summary['players']}p: ad-hoc teamwork (focal seed ×1)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    report.save_figure(fig, path, dpi=110)


def write(summary: dict[str, Any], folder: Path) -> Path:
    """Write results.json.xz, report.md and both plots into ``folder``; the report's path."""
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_file(folder / RESULTS, "wb") as file:
        file.write(lzma.compress(report.dumps(summary).encode()))
    plot_crossplay(summary, folder / "crossplay.png")
    plot_adhoc(summary, folder / "adhoc.png")
    path = folder / "report.md"
    report.write_text(path, markdown(summary))
    return path


def load(folder: Path) -> dict[str, Any]:
    """The summary a protocol run wrote into ``folder``; a :class:`ConfigError` naming the
    folder when there is none."""
    path = folder / RESULTS
    if not path.is_file():
        raise ConfigError(f"{folder}: no {RESULTS} (run cauldron zsc with out: {folder})")
    return json.loads(lzma.decompress(path.read_bytes()))
