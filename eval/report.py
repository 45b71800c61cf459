"""Write an evaluation's ``results.json``, ``report.md`` and PNG plots into its run folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def pct(r: dict) -> str:
    return f"{r['rate']:.1%} [{r['low']:.1%}, {r['high']:.1%}]"


def num(m: dict, sign: bool = False) -> str:
    f = "+.2f" if sign else ".2f"
    return f"{m['mean']:{f}} [{m['low']:{f}}, {m['high']:{f}}]"


def team_table(summary: dict) -> str:
    """Teams (one agent in every seat): win rate, the game's score, length, with 95% CIs."""
    score = summary["score"]
    rows = [
        f"| team | players | games | win rate [95% CI] | mean {score} [95% CI] | mean steps |",
        "|---|---|---|---|---|---|",
    ]
    for r in summary["rows"]:
        if len(r["lineup"]) == 1:
            rows.append(
                f"| {r['lineup'][0]} | {r['players']} | {r['win']['games']} | "
                f"{pct(r['win'])} | {num(r[score])} | {r['length']['mean']:.0f} |"
            )
    return "\n".join(rows)


def crossplay_table(summary: dict) -> str:
    """Win rate of every two agents sharing the table (diagonal: the agent with itself)."""
    agents = summary["config"]["agents"]
    out = []
    for n in summary["config"]["players"]:
        cells = _matrix(summary, n)
        out.append(f"**{n} players** (row agent and column agent alternate seats)\n")
        out.append("| | " + " | ".join(agents) + " |")
        out.append("|---|" + "---|" * len(agents))
        for a in agents:
            out.append(
                f"| {a} | "
                + " | ".join(pct(cells[a][b]) if cells[a].get(b) else "" for b in agents)
                + " |"
            )
        out.append("")
    return "\n".join(out)


def _matrix(summary: dict, n: int) -> dict[str, dict[str, dict]]:
    cells: dict[str, dict[str, dict]] = {a: {} for a in summary["config"]["agents"]}
    for r in summary["rows"]:
        if r["players"] == n:
            a, b = r["lineup"][0], r["lineup"][-1]
            cells[a][b] = cells[b][a] = r["win"]
    return cells


def head_to_head_table(summary: dict) -> str:
    """A against B: each side's win rate (shared wins count for both) and A's score margin."""
    rows = [
        "| A | B | players | games | A wins [95% CI] | B wins [95% CI] | "
        "A − B mean score [95% CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in summary["rows"]:
        a, b = r["lineup"]
        rows.append(
            f"| {a} | {b} | {r['players']} | {r['wins'][a]['games']} | "
            f"{pct(r['wins'][a])} | {pct(r['wins'][b])} | {num(r['margin'], True)} |"
        )
    return "\n".join(rows)


def ratings_table(summary: dict) -> str:
    rows = ["| agent | players | μ | σ | ordinal (μ − 3σ) |", "|---|---|---|---|---|"]
    for n, table in summary["ratings"].items():
        for agent, r in sorted(table.items(), key=lambda kv: -kv[1]["ordinal"]):
            rows.append(
                f"| {agent} | {n} | {r['mu']:.2f} | {r['sigma']:.2f} | {r['ordinal']:.2f} |"
            )
    return "\n".join(rows)


def main_table(summary: dict) -> str:
    return team_table(summary) if summary["cooperative"] else head_to_head_table(summary)


def markdown(summary: dict) -> str:
    c = summary["config"]
    parts = [
        f"# Evaluation `{c['name']}`: {c['env']}",
        "",
        f"{c['games']} seeded games per pairing and player count (seeds {c['seed']}–"
        f"{c['seed'] + c['games'] - 1}, the same for every pairing); 95% intervals: Wilson "
        "for rates, percentile bootstrap for means.",
        "",
    ]
    if summary["cooperative"]:
        parts += ["## Teams", "", team_table(summary), "", "![win rates](win_rates.png)", ""]
        if c["crossplay"] and len(c["agents"]) > 1:
            parts += [
                "## Cross-play",
                "",
                crossplay_table(summary),
                "![cross-play](crossplay.png)",
                "",
            ]
    else:
        parts += [
            "## Head to head",
            "",
            head_to_head_table(summary),
            "",
            "![win rates](win_rates.png)",
            "",
            "## Ratings (OpenSkill Plackett-Luce)",
            "",
            ratings_table(summary),
            "",
            "![ratings](ratings.png)",
            "",
        ]
    return "\n".join(parts)


def plot_win_rates(summary: dict, path: Path) -> None:
    """Bars with 95% error bars: team win rates, or each agent's head-to-head win rates."""
    bars = []
    for r in summary["rows"]:
        if summary["cooperative"] and len(r["lineup"]) == 1:
            bars.append((f"{r['lineup'][0]} ({r['players']}p)", r["win"]))
        elif not summary["cooperative"]:
            a, b = r["lineup"]
            for side, other in ((a, b), (b, a)):
                bars.append((f"{side}\nvs {other} ({r['players']}p)", r["wins"][side]))
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(bars)), 4.5))
    values = [b[1]["rate"] for b in bars]
    errors = [
        [v - b[1]["low"] for v, b in zip(values, bars, strict=True)],
        [b[1]["high"] - v for v, b in zip(values, bars, strict=True)],
    ]
    ax.bar(range(len(bars)), values, yerr=errors, capsize=4, color="#6a4c93")
    ax.set_xticks(range(len(bars)), [b[0] for b in bars], rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (95% CI)")
    ax.set_title(f"{summary['config']['env']}: win rates")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_crossplay(summary: dict, path: Path) -> None:
    agents = summary["config"]["agents"]
    counts = summary["config"]["players"]
    fig, axes = plt.subplots(1, len(counts), figsize=(4.2 * len(counts), 4), squeeze=False)
    for k, (ax, n) in enumerate(zip(axes[0], counts, strict=True)):
        cells = _matrix(summary, n)
        grid = [
            [cells[a][b]["rate"] if cells[a].get(b) else float("nan") for b in agents]
            for a in agents
        ]
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis")
        ax.set_xticks(range(len(agents)), agents, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(len(agents)), agents if k == 0 else [], fontsize=8)
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                ax.text(j, i, f"{v:.0%}", ha="center", va="center", color="white", fontsize=8)
        ax.set_title(f"{n} players")
    fig.colorbar(image, ax=axes[0].tolist(), label="win rate")
    fig.suptitle(f"{summary['config']['env']}: cross-play")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_ratings(summary: dict, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    agents = summary["config"]["agents"]
    for k, (n, table) in enumerate(summary["ratings"].items()):
        xs = [i + 0.15 * k for i in range(len(agents))]
        ax.errorbar(
            xs,
            [table[a]["mu"] for a in agents],
            yerr=[table[a]["sigma"] for a in agents],
            fmt="o",
            capsize=4,
            label=f"{n} players",
        )
    ax.set_xticks(range(len(agents)), agents, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("OpenSkill μ ± σ")
    ax.set_title(f"{summary['config']['env']}: ratings")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(summary: dict[str, Any], folder: Path) -> Path:
    """Write results.json, report.md and the plots; return the report's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    plot_win_rates(summary, folder / "win_rates.png")
    if (
        summary["cooperative"]
        and summary["config"]["crossplay"]
        and len(summary["config"]["agents"]) > 1
    ):
        plot_crossplay(summary, folder / "crossplay.png")
    if not summary["cooperative"]:
        plot_ratings(summary, folder / "ratings.png")
    report = folder / "report.md"
    report.write_text(markdown(summary))
    return report
