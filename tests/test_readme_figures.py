"""Every figure with an interval in README.md comes from a shipped report (issue 32, item 6):
some ``report.md`` or ``results.json`` under docs/results/ prints it, and the training table is
the one :mod:`train.readme_figures` renders from the shipped checkpoints' evaluations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs.core.docs import BLOCK
from train import readme_figures

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
MIN_FIGURES = 60  # the README quotes about 80; far fewer means the pattern stopped matching
# the documentation site's hand-written pages (docs/results holds the reports themselves)
SITE_PAGES = sorted((ROOT / "docs" / "guides").glob("*.md")) + sorted(
    (ROOT / "docs" / "reports").glob("*.md")
)


def test_every_readme_figure_has_a_source_under_docs_results():
    missing = readme_figures.unsourced(README, ROOT / "docs" / "results")
    assert not missing, (
        "README figures that no report under docs/results prints (regenerate the report, or "
        "move the figure to docs/history.md):\n" + "\n".join(missing)
    )


@pytest.mark.parametrize("page", SITE_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_docs_page_figure_has_a_source_under_docs_results(page):
    missing = readme_figures.unsourced(page.read_text(), ROOT / "docs" / "results")
    assert not missing, (
        f"figures in {page.name} that no report under docs/results prints:\n" + "\n".join(missing)
    )


def test_the_pattern_finds_the_readme_figures_and_every_form():
    assert len(readme_figures.figures(README)) >= MIN_FIGURES

    def key(text: str) -> tuple[str, bool, str, str]:
        (match,) = readme_figures.figures(text)
        assert match[0] == text.strip()
        return readme_figures.figure_key(match)

    assert key("83.6% [82.1, 85.0]") == ("83.6", True, "82.1", "85.0")
    assert key("1.19 stuns [1.11, 1.27]") == ("1.19", False, "1.11", "1.27")
    assert key("+5.1% [+3.8, +6.3]") == ("5.1", True, "3.8", "6.3")
    assert key("−0.032 [−0.066, +0.004]") == ("-0.032", False, "-0.066", "0.004")
    assert key("0.96 [0.58,\n1.57]") == ("0.96", False, "0.58", "1.57")
    assert key("68% [63, 72]") == ("68", True, "63", "72")
    assert key("3.6% [2.3%, 5.6%]") == key("3.6% [2.3, 5.6]")  # a report's notation
    assert key("0.87 [0.80, 0.95]") == key("0.87 stuns [0.80, 0.95]")
    assert key("-1.9% [-2.8%, +1.4%]") == key("−1.9% [−2.8, +1.4]")
    assert key("0.87 [0.80, 0.95]") != key("0.870 [0.800, 0.950]")  # the same digits only
    assert key("3.6% [2.3, 5.6]") != key("3.6 [2.3, 5.6]")
    assert readme_figures.figures("`[B, n]`, 1,024 × 16 [rows], focal [55.5, 59.8]") == []


def test_a_figure_missing_from_the_reports_is_named(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "report.md").write_text("| a | 93.0% [90.4%, 94.9%] | 2.33 [2.14, 2.54] |")
    readme = "won 93.0% [90.4, 94.9]; 2.33 scares [2.14, 2.54]\nand 93.1% [90.4, 94.9]\n"
    assert readme_figures.unsourced(readme, tmp_path) == ["line 2: 93.1% [90.4, 94.9]"]


def test_the_training_table_is_rendered_from_the_shipped_reports(monkeypatch):
    monkeypatch.chdir(ROOT)
    (block,) = [m.group(3) for m in BLOCK.finditer(README) if m.group(2) == "training"]
    assert block.strip() == readme_figures.table(), (
        "run: python -m train.readme_figures --readme README.md"
    )


def test_a_competitive_batched_row_names_the_hardest_heuristic(tmp_path):
    """A competitive ``eval.batched`` evaluation (rows of the trained seat against random and
    each heuristic) gives the win rate against random, the heuristic with the lowest won − lost,
    and a verdict on won − lost (a shared win counts for both seats)."""

    def versus(opponent: str, win: float, margin: tuple[float, float, float]) -> dict:
        return {
            "spec": "torch:a.pt",
            "opponent": opponent,
            "win": {"rate": win, "low": win - 0.01, "high": win + 0.01},
            "won_minus_lost": dict(zip(("mean", "low", "high"), margin, strict=True)),
        }

    config = {"env": "voodoo_mania_v1", "specs": ["torch:a.pt"], "players": 2}
    results = {
        "command": "python -m eval.batched ...",
        "config": {**config, "games": 5000, "seed": 1000},
        "rows": [
            versus("random", 0.99, (0.99, 0.98, 1.0)),
            versus("heuristic:chain", 0.52, (0.021, -0.006, 0.047)),
            versus("heuristic:fast", 0.85, (0.72, 0.70, 0.74)),
        ],
    }
    (tmp_path / "vm").mkdir()
    (tmp_path / "vm" / "results.json").write_text(json.dumps(results))
    cooperative, text = readme_figures.row("vm", "1 min", tmp_path)
    assert not cooperative
    assert text == (
        "| voodoo_mania (2p) | torch | 99.0% [98.0, 100.0] | heuristic:chain: 52.0% [51.0, 53.0],"
        " won − lost +2.1% [−0.6, +4.7] (5,000 games, `eval.batched`, seeds from 1000) |"
        " not sure | 1 min |"
    )
