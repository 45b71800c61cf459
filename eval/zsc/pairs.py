"""Which training methods differ: every pair of the methods table's rows compared column by
column on the same deals.

A column's games of one method form an array ``[rows, deals]``: the self-play column one row per
seed, the cross-play column one per pair of seeds, an ad-hoc column one per seed beside that
partner; each row's games sorted by deal. Two methods' arrays share their deals (the table
refuses protocols played on other deals), so a pair's difference has a two-stage paired
bootstrap interval (:func:`cauldron.eval.stats.bootstrap_ratio_interval`: each method's rows
with replacement, then the deals, one draw for both). A pair differs in a column when that
interval excludes 0. The detectable difference (80% power at the 95% level) is that of the
per-deal differences of the seeds' means: the deals' noise alone, so a lower bound.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from cauldron.eval.stats import bootstrap_ratio_interval, detectable_difference, verdict

SELF, CROSS, ADHOC = "self-play", "cross-play", "ad-hoc"  # the roles of the summary's rows


def columns(summary: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """The compared columns: (heading, role, ad-hoc partner or None)."""
    return [("self-play", SELF, None), ("cross-play", CROSS, None)] + [
        (f"beside {summary['labels'][p]}", ADHOC, p) for p in summary["adhoc"]
    ]


def game_values(summary: dict[str, Any], row: dict[str, Any]) -> list[float]:
    """One row's team score per game, in deal order: the win (1 or 0) or the game's figure."""
    games = row["games"]
    if summary["measure"] == "win":
        values = [float(o == 1) for o in games["outcome"]]
    else:
        values = [float(x) for x in games[summary["score"]]]
    order = np.argsort(games["seed"], kind="stable")
    return [values[i] for i in order]


def column_values(summary: dict[str, Any], role: str, partner: str | None) -> np.ndarray:
    """``[rows, deals]``: the games of one column of a method."""
    return np.array(
        [
            game_values(summary, row)
            for row in summary["rows"]
            if row["role"] == role and (partner is None or row["lineup"][1] == partner)
        ]
    )


def compare_pair(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    """Method ``a`` minus method ``b`` in one column: mean, 95% interval, verdict, detectable."""
    mean, low, high = bootstrap_ratio_interval(a, b)["difference"]
    return {
        "mean": mean,
        "low": low,
        "high": high,
        "verdict": verdict(low, high),
        "detectable": detectable_difference(a.mean(axis=0) - b.mean(axis=0)),
    }


def compare_methods(summaries: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every pair of methods (in table order), each column's comparison under its heading."""
    first = next(iter(summaries.values()))
    cols = columns(first)
    values = {
        name: {heading: column_values(s, role, p) for heading, role, p in cols}
        for name, s in summaries.items()
    }
    return [
        {
            "pair": (a, b),
            "columns": {h: compare_pair(values[a][h], values[b][h]) for h, _, _ in cols},
        }
        for a, b in itertools.combinations(summaries, 2)
    ]


def points(summary: dict[str, Any], x: float) -> str:
    """A difference: points of win rate, or the game's figure with a sign."""
    return f"{x * 100:+.1f}" if summary["measure"] == "win" else f"{x:+.2f}"


def cell(summary: dict[str, Any], c: dict[str, Any]) -> str:
    """``+1.2 [-0.3, +2.7]``, bold where the interval excludes 0."""
    low, high = points(summary, c["low"]), points(summary, c["high"])
    text = f"{points(summary, c['mean'])} [{low}, {high}]"
    return f"**{text}**" if c["verdict"] != "not sure" else text


def differs(pair: dict[str, Any]) -> str:
    """The verdict of a pair: the columns where the first method is better, and where worse."""
    parts = []
    for word, verdict_word in (("better", "yes"), ("worse", "no")):
        cols = [h for h, c in pair["columns"].items() if c["verdict"] == verdict_word]
        if cols:
            parts.append(f"{word} {', '.join(cols)}")
    return "; ".join(parts) or "not told apart"


def pairs_table(summaries: dict[str, dict[str, Any]]) -> str:
    """Markdown: a row per pair of methods, each column's paired difference (first minus
    second), the verdict, and last the largest detectable difference of each column (a line
    saying so when there is one method)."""
    if len(summaries) < 2:
        return "One method: no pair to compare."
    first = next(iter(summaries.values()))
    compared = compare_methods(summaries)
    headings = [h for h, _, _ in columns(first)]
    unit = "points of win rate" if first["measure"] == "win" else first["score"]
    lines = [
        f"| first − second ({unit}) | " + " | ".join(headings) + " | the first is |",
        "|---|" + "---|" * (len(headings) + 1),
    ]
    for pair in compared:
        a, b = pair["pair"]
        lines.append(
            f"| {a} − {b} | "
            + " | ".join(cell(first, pair["columns"][h]) for h in headings)
            + f" | {differs(pair)} |"
        )
    detectable = [max(p["columns"][h]["detectable"] for p in compared) for h in headings]
    lines.append(
        "| detectable (80% power, at most) | "
        + " | ".join(f"±{points(first, d)[1:]}" for d in detectable)
        + " | |"
    )
    return "\n".join(lines)
