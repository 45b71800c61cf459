"""Every figure with an interval in README.md comes from a shipped report:
some ``report.md`` or ``results.json`` under docs/results/ prints it, and the training table is
the one :mod:`cauldron.train.readme_figures` renders from the shipped checkpoints' evaluations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cauldron.envs.core.docs import BLOCK
from cauldron.envs.core.errors import ConfigError
from cauldron.eval import batched
from cauldron.train import readme_figures

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
MIN_FIGURES = 60  # the README quotes about 80; far fewer means the pattern stopped matching
# the documentation site's hand-written pages (docs/results holds the reports themselves)
SITE_PAGES = sorted((ROOT / "docs" / "guides").glob("*.md")) + sorted(
    (ROOT / "docs" / "reports").glob("*.md")
)


@pytest.fixture(scope="module")
def published() -> set[tuple[str, bool, str, str]]:
    """Every figure the reports under docs/results print (read once: they hold tens of MB)."""
    return readme_figures.sourced(ROOT / "docs" / "results")


def test_every_readme_figure_has_a_source_under_docs_results(published):
    missing = readme_figures.unsourced(README, published)
    assert not missing, (
        "README figures that no report under docs/results prints (regenerate the report, or "
        "move the figure to docs/history.md):\n" + "\n".join(missing)
    )


@pytest.mark.parametrize("page", SITE_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_docs_page_figure_has_a_source_under_docs_results(page, published):
    missing = readme_figures.unsourced(page.read_text(), published)
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
    assert readme_figures.unsourced(readme, readme_figures.sourced(tmp_path)) == [
        "line 2: 93.1% [90.4, 94.9]"
    ]


@pytest.mark.parametrize("name", ["training", "partners"])
def test_the_tables_are_rendered_from_the_shipped_reports(monkeypatch, name):
    monkeypatch.chdir(ROOT)
    table = readme_figures.table(block=name)
    for text in (README, (ROOT / readme_figures.DOC_PAGE).read_text()):
        (block,) = [m.group(3) for m in BLOCK.finditer(text) if m.group(2) == name]
        assert block.strip() == table, "run: cauldron figures --readme README.md"


def test_every_benchmark_row_is_three_shipped_seeds_of_one_config_on_the_test_split():
    benchmark = readme_figures.load_benchmark(ROOT / readme_figures.BENCHMARK)
    assert benchmark.partners
    for row in benchmark.rows + benchmark.partners:
        assert len(row.seeds) >= 3 and all((ROOT / seed).is_file() for seed in row.seeds)
        assert (ROOT / row.config).is_file()
        argv = row.argv(100, Path("out"))
        assert argv[argv.index("--split") + 1] == "test" and "--across-seeds" in argv


def test_a_row_with_too_few_seeds_or_two_reference_teams_is_refused(tmp_path):
    row = {
        "name": "x",
        "env": "hocus_pocus_v1",
        "players": 2,
        "config": "c.yaml",
        "budget": "1 step",
        "seeds": ["a.pt", "b.pt"],
        "against": ["heuristic:planner"],
    }
    path = tmp_path / "benchmark.yaml"
    path.write_text(json.dumps({"games": 10, "rows": [row]}))
    with pytest.raises(ConfigError, match="seeds"):
        readme_figures.load_benchmark(path)
    path.write_text(
        json.dumps(
            {
                "games": 10,
                "rows": [{**row, "seeds": ["a", "b", "c"], "against": ["random", "random"]}],
            }
        )
    )
    with pytest.raises(ConfigError, match="one reference team"):
        readme_figures.load_benchmark(path)


PARTNERS_ROW = {
    "name": "adhoc",
    "env": "hocus_pocus_v1",
    "players": 2,
    "config": "c.yaml",
    "budget": "1 step",
    "seeds": ["a.pt", "b.pt", "c.pt"],
    "partner": "heuristic:planner",
    "against": ["heuristic:planner"],
}


@pytest.mark.parametrize(
    "rows, partners, match",
    [
        ([{**PARTNERS_ROW, "name": "t"}], [], "a partner is given in the partners rows"),
        ([], [{**PARTNERS_ROW, "partner": None}], "a partner is given in the partners rows"),
        ([], [{**PARTNERS_ROW, "against": ["random"]}], "its own team as the reference"),
        (
            [],
            [{**PARTNERS_ROW, "env": "voodoo_mania_v1", "against": ["heuristic:planner"]}],
            "needs a cooperative game",
        ),
        ([], [PARTNERS_ROW, PARTNERS_ROW], "row names must be distinct"),
    ],
)
def test_partners_rows_are_checked(tmp_path, rows, partners, match):
    training = {**PARTNERS_ROW, "name": "plain", "partner": None}
    path = tmp_path / "benchmark.yaml"
    data = {"games": 10, "rows": rows or [training], "partners": partners}
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=match):
        readme_figures.load_benchmark(path)


def test_a_partners_row_plays_each_seed_beside_the_partner():
    row = readme_figures.BenchmarkRow(**PARTNERS_ROW)
    argv = row.argv(100, Path("out"))
    assert argv[argv.index("--partner") + 1] == "heuristic:planner"
    assert argv[1:5] == ["heuristic:planner", "torch:a.pt", "torch:b.pt", "torch:c.pt"]


def test_rows_give_each_seed_the_seeds_together_and_the_verdict_of_the_measure(tmp_path):
    """Three "seeds" (here the chain heuristic) against two opponents, and three random teams
    against the focal team: each row's verdict is its pooled paired interval's, and the counts of
    seeds holding on their own are those of the report."""
    seeds = ["s0.pt", "s1.pt", "s2.pt"]
    common = {"config": "c.yaml", "budget": "1 step", "seeds": seeds}
    specs = ["heuristic:chain"] * 3
    batched.main(
        ["voodoo_mania_v1", *specs, "heuristic:fast", "random", "--agents", "3", "--games", "24"]
        + ["--across-seeds", "--out", str(tmp_path / "vm")]
    )
    row = readme_figures.BenchmarkRow(
        name="vm", env="voodoo_mania_v1", players=2, against=["heuristic:fast", "random"], **common
    )
    results = json.loads((tmp_path / "vm" / "results.json").read_text())
    lines = readme_figures.rendered(row, results)
    assert len(lines) == 2
    cells = lines[1].split(" | ")
    assert cells[2:4] == ["random", "won − lost"]
    assert cells[5:9] == ["3 of 3", "+100.0% [+100.0, +100.0]", "+100.0% [+100.0, +100.0]", "yes"]
    assert cells[-1].startswith("24, dev split, commit `")
    batched.main(
        ["headless_horseman_v1", "heuristic:focal", "random", "random", "random", "--games", "24"]
        + ["--across-seeds", "--out", str(tmp_path / "hh")]
    )
    row = readme_figures.BenchmarkRow(
        name="hh", env="headless_horseman_v1", players=2, against=["heuristic:focal"], **common
    )
    results = json.loads((tmp_path / "hh" / "results.json").read_text())
    (line,) = readme_figures.rendered(row, results)
    pooled = results["across_seeds"]["win"]["pooled"]
    assert line.split(" | ")[8] == pooled["verdict"] == "no"
    assert readme_figures.table(tmp_path, readme_figures.Benchmark(games=24, rows=[row]))
