"""Write an evaluation's ``results.json``, ``report.md`` and PNG plots into its run folder."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from cauldron.envs.core.errors import ConfigError  # noqa: E402
from cauldron.envs.core.folders import atomic_file  # noqa: E402


def pct(r: dict) -> str:
    return f"{r['rate']:.1%} [{r['low']:.1%}, {r['high']:.1%}]"


def signed_pct(m: dict) -> str:
    """A difference of rates with its interval, in signed percentage points."""
    return f"{m['mean']:+.1%} [{m['low']:+.1%}, {m['high']:+.1%}]"


def num(m: dict, sign: bool = False) -> str:
    f = "+.2f" if sign else ".2f"
    return f"{m['mean']:{f}} [{m['low']:{f}}, {m['high']:{f}}]"


def ends(r: dict) -> str:
    """A row's games by how they ended (won / lost / drawn / truncated), adding up to its
    games; rows written before truncated games were counted show a dash."""
    counts = r.get("ends")
    if counts is None:
        return "–"
    return " / ".join(str(counts[k]) for k in ("won", "lost", "drawn", "truncated"))


def judged(m: dict) -> str:
    """A paired difference of the game's measure: interval, verdict, detectable difference."""
    if "verdict" not in m:
        return f"{signed_pct(m)} | – | –"
    return f"{signed_pct(m)} | {m['verdict']} | ±{m['detectable']:.1%}"


def names(summary: dict) -> dict[str, str]:
    """Display name of every agent spec (long checkpoint paths shortened)."""
    return summary.get("labels", {})


def team_table(summary: dict) -> str:
    """Teams (one agent in every seat): win rate, the game's score, length, with 95% CIs."""
    score, label = summary["score"], names(summary)
    rows = [
        f"| team | players | games | won / lost / drawn / truncated | win rate [95% CI] | "
        f"mean {score} [95% CI] | mean steps |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in summary["rows"]:
        if r["kind"] == "team":
            rows.append(
                f"| {label.get(r['lineup'][0], r['lineup'][0])} | {r['players']} | "
                f"{r['win']['games']} | {ends(r)} | {pct(r['win'])} | {num(r[score])} | "
                f"{r['length']['mean']:.0f} |"
            )
    return "\n".join(rows)


def paired_table(summary: dict) -> str:
    """Paired differences on the same deals: A − B in win rate (the game's measure, with its
    verdict and detectable difference) and score (a diagnostic)."""
    score = summary["score"]
    rows = [
        f"| A | B | players | A − B win rate [95% CI] | verdict | detectable | "
        f"A − B mean {score} [95% CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in summary["paired"]:
        rows.append(
            f"| {_relabel(p['a'], summary)} | {_relabel(p['b'], summary)} | {p['players']} | "
            f"{judged(p['win'])} | {num(p[score], True)} |"
        )
    return "\n".join(rows)


def _relabel(text: str, summary: dict) -> str:
    for spec, name in names(summary).items():
        text = text.replace(spec, name)
    return text


def crossplay_splits(summary: dict, n: int) -> list[int]:
    """The seat splits k (row agent's seats) played at ``n`` players, smallest first."""
    return sorted(
        {r["seats"][0] for r in summary["rows"] if r["kind"] == "crossplay" and r["players"] == n}
    )


def _split_title(n: int, k: int) -> str:
    row = "1 seat" if k == 1 else f"{k} seats"
    col = "the other seat" if n - k == 1 else f"the other {n - k}"
    return f"{n} players: row agent in {row}, column agent in {col}"


def crossplay_table(summary: dict) -> str:
    """Win rate and mean score of every seat composition of two agents, one matrix per player
    count and split: row agent in k seats, column agent in the other N − k (diagonal: the
    agent's own team)."""
    agents, score = summary["config"]["agents"], summary["score"]
    label = [names(summary).get(a, a) for a in agents]
    out = []
    for n in summary["config"]["players"]:
        for k in crossplay_splits(summary, n):
            cells = _matrix(summary, n, k)
            out.append(f"**{_split_title(n, k)}** (diagonal: the agent's own team)\n")
            out.append("| row \\ column | " + " | ".join(label) + " |")
            out.append("|---|" + "---|" * len(agents))
            for a, name in zip(agents, label, strict=True):
                out.append(
                    f"| {name} | "
                    + " | ".join(_cell(cells[a].get(b), score) for b in agents)
                    + " |"
                )
            out.append("")
    return "\n".join(out)


def _cell(row: dict | None, score: str) -> str:
    """Win rate and mean score of one lineup row ('' when it was not played)."""
    return f"{pct(row['win'])}; {row[score]['mean']:.2f} {score}" if row else ""


def _matrix(summary: dict, n: int, k: int) -> dict[str, dict[str, dict]]:
    """cells[a][b]: the row with a in k seats and b in n − k; cells[a][a]: a's team's row."""
    cells: dict[str, dict[str, dict]] = {a: {} for a in summary["config"]["agents"]}
    for r in summary["rows"]:
        if r["players"] != n:
            continue
        if r["kind"] == "team":
            cells[r["lineup"][0]][r["lineup"][0]] = r
        elif r["kind"] == "crossplay" and r["seats"][0] == k:
            a, b = r["lineup"]
            cells[a][b] = r
            if k == n - k:
                cells[b][a] = r
    return cells


def head_to_head_table(summary: dict) -> str:
    """A against B: each side's win rate (shared wins count for both) and A's score margin."""
    label = names(summary)
    rows = [
        "| A | B | players | seats | games | A won / B won / drawn / truncated | "
        "A wins [95% CI] | B wins [95% CI] | A − B wins, paired [95% CI] | verdict | detectable | "
        "A − B mean score [95% CI] |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["rows"]:
        a, b = r["lineup"]
        rows.append(
            f"| {label.get(a, a)} | {label.get(b, b)} | {r['players']} | "
            f"{r['seats'][0]} + {r['seats'][1]} | {r['wins'][a]['games']} | {ends(r)} | "
            f"{pct(r['wins'][a])} | {pct(r['wins'][b])} | {judged(r['win_difference'])} | "
            f"{num(r['margin'], True)} |"
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


def provenance_line(summary: dict, results: str = "results.json") -> str:
    """One line: package version, git commit, config hash (full values in ``results``, the
    file of every game)."""
    p = summary.get("provenance", {})
    commit = p.get("git_commit")
    source = f"commit `{commit[:10]}`" if commit else "no git commit"
    if p.get("git_dirty"):
        source += " with uncommitted changes"
    return (
        f"Cauldron {p.get('version') or '(not installed)'}, {source}, config hash "
        f"`{(p.get('config_hash') or '')[:12]}`; every game is in `{results}`."
    )


def has_crossplay(summary: dict) -> bool:
    return any(r["kind"] == "crossplay" for r in summary["rows"])


def markdown(summary: dict) -> str:
    c = summary["config"]
    parts = [
        f"# Evaluation `{c['name']}`: {c['env']}",
        "",
        f"{c['games']} seeded games per lineup (seat composition) and player count (the "
        f"{c.get('split', 'dev')} split, seeds {c['seed']:,}–{c['seed'] + c['games'] - 1:,}, the "
        "same deals for every lineup); seats "
        "rotate with the seed; 95% intervals: Wilson for rates, percentile bootstrap for means.",
        "",
        provenance_line(summary),
        "",
    ]
    if summary.get("note"):
        parts += [f"**{summary['note']}**", ""]
    if summary["cooperative"]:
        parts += ["## Teams", "", team_table(summary), "", "![win rates](win_rates.png)", ""]
        if has_crossplay(summary):
            parts += [
                "## Cross-play",
                "",
                crossplay_table(summary),
                "![cross-play](crossplay.png)",
                "",
            ]
        if summary["paired"]:
            parts += [
                "## Paired differences (same deals)",
                "",
                "A − B over the same seeds, with a bootstrap interval of the per-deal "
                "differences; `A + B×(N−1)` against `B×N` is what one A does to a B team.",
                "",
                paired_table(summary),
                "",
            ]
    else:
        parts += [
            "## Head to head",
            "",
            "Seats: how many seats A and B hold (at odd player counts each way round is its own "
            "row).",
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
    if summary.get("saved_games"):
        parts += saved_games_section(summary["saved_games"])
    return "\n".join(parts)


def saved_games_section(saved: dict) -> list[str]:
    """Where the saved games are (``save_games``): the viewer page and the records."""
    page = saved.get("viewer")
    watch = (
        f"[Watch them step by step]({page}) (the whole table or any seat's view)"
        if page
        else f"Draw them with `cauldron viewer {saved['records']} -o games.html` (the "
        "whole table or any seat's view)"
    )
    return [
        "## Saved games",
        "",
        f"{watch}: up to {saved['per_lineup']} games per lineup, the best and the worst by "
        f"score, then the first seeds. Records: `{saved['records']}` (`cauldron replay "
        f"{saved['records']}` steps through them in a terminal).",
        "",
    ]


def plot_win_rates(summary: dict, path: Path) -> None:
    """Bars with 95% error bars: team win rates, or each agent's head-to-head win rates."""
    label = names(summary)
    bars = []
    for r in summary["rows"]:
        if r["kind"] == "team":
            a = r["lineup"][0]
            bars.append((f"{label.get(a, a)} ({r['players']}p)", r["win"]))
        elif r["kind"] == "head_to_head":
            a, b = r["lineup"]
            seats = dict(zip(r["lineup"], r["seats"], strict=True))
            for side, other in ((a, b), (b, a)):
                bars.append(
                    (
                        f"{label.get(side, side)} ×{seats[side]}\nvs {label.get(other, other)} "
                        f"×{seats[other]} ({r['players']}p)",
                        r["wins"][side],
                    )
                )
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
    save_figure(fig, path, dpi=110)


def plot_crossplay(summary: dict, path: Path) -> None:
    """Heat maps labelled like the cross-play tables: one row of panels per player count, one
    panel per seat split (row agent in k seats)."""
    agents = summary["config"]["agents"]
    label = [names(summary).get(a, a) for a in agents]
    counts = [n for n in summary["config"]["players"] if crossplay_splits(summary, n)]
    width = max(len(crossplay_splits(summary, n)) for n in counts)
    fig, axes = plt.subplots(
        len(counts), width, figsize=(4.6 * width, 4.4 * len(counts)), squeeze=False
    )
    for axes_row, n in zip(axes, counts, strict=True):
        splits = crossplay_splits(summary, n)
        for ax in axes_row[len(splits) :]:
            ax.axis("off")
        for i, (ax, k) in enumerate(zip(axes_row, splits, strict=False)):
            cells = _matrix(summary, n, k)
            grid = [
                [cells[a][b]["win"]["rate"] if cells[a].get(b) else float("nan") for b in agents]
                for a in agents
            ]
            image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis")
            ax.set_xticks(range(len(agents)), label, rotation=30, ha="right", fontsize=8)
            ax.set_yticks(range(len(agents)), label if i == 0 else [], fontsize=8)
            for r, row in enumerate(grid):
                for j, v in enumerate(row):
                    ax.text(j, r, f"{v:.0%}", ha="center", va="center", color="white", fontsize=8)
            ax.set_title(f"{n} players: row agent ×{k}, column agent ×{n - k}", fontsize=9)
            if i == 0:
                ax.set_ylabel("row agent", fontsize=8)
    fig.colorbar(image, ax=axes.ravel().tolist(), label="team win rate")
    fig.suptitle(f"{summary['config']['env']}: cross-play (diagonal: the agent's own team)")
    save_figure(fig, path, dpi=110, bbox_inches="tight")


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
    label = names(summary)
    ax.set_xticks(
        range(len(agents)), [label.get(a, a) for a in agents], rotation=20, ha="right", fontsize=8
    )
    ax.set_ylabel("OpenSkill μ ± σ")
    ax.set_title(f"{summary['config']['env']}: ratings")
    ax.legend()
    fig.tight_layout()
    save_figure(fig, path, dpi=110)


def dumps(summary: dict[str, Any]) -> str:
    """``summary`` as JSON indented by 2, except that each per-game column (a row's ``games``)
    stays on one line: ``pandas.DataFrame(row["games"])`` reads a row's games back."""
    columns: dict[str, list] = {}
    rows = []
    for i, row in enumerate(summary["rows"]):
        stubs = {}
        for key, values in row.get("games", {}).items():
            stubs[key] = f"@games:{i}:{key}@"
            columns[stubs[key]] = values
        rows.append({**row, "games": stubs} if stubs else row)
    text = json.dumps({**summary, "rows": rows}, indent=2, default=str) + "\n"
    for stub, values in columns.items():
        text = text.replace(json.dumps(stub), json.dumps(values, separators=(",", ":")), 1)
    return text


def prepare(folder: Path) -> None:
    """Create the run folder and check that it can be written (before any game is played)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise ConfigError(
            f"cannot write the output folder {str(folder)!r}: {err.strerror or err}"
        ) from None


def write(summary: dict[str, Any], folder: Path) -> Path:
    """Write results.json, report.md and the plots, each file whole (:func:`write_text`,
    :func:`save_figure`); return the report's path."""
    folder.mkdir(parents=True, exist_ok=True)
    write_text(folder / "results.json", dumps(summary))
    plot_win_rates(summary, folder / "win_rates.png")
    if summary["cooperative"] and has_crossplay(summary):
        plot_crossplay(summary, folder / "crossplay.png")
    if not summary["cooperative"]:
        plot_ratings(summary, folder / "ratings.png")
    report = folder / "report.md"
    write_text(report, markdown(summary))
    return report


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a reader never sees half of it)."""
    with atomic_file(path) as file:
        file.write(text)


def save_figure(fig: Any, path: Path, **options: Any) -> None:
    """Save ``fig`` as a PNG at ``path`` atomically (``options`` go to ``savefig``) and close it."""
    try:
        with atomic_file(path, "wb") as file:
            fig.savefig(file, format="png", **options)
    finally:
        plt.close(fig)
