"""The documentation site (mkdocs.yml, docs/) builds strictly, and a broken link fails it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cauldron import envs

pytest.importorskip("mkdocs", reason='the docs site needs its extra: pip install -e ".[docs]"')

ROOT = Path(__file__).resolve().parents[1]


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of ``config`` into ``site``, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = build(ROOT / "mkdocs.yml", out)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    return out


def page(site: Path, uri: str) -> str:
    return (site / uri / "index.html").read_text()


def test_the_site_builds_strictly(site):
    assert (site / "index.html").is_file()
    assert (site / "api" / "index.html").is_file()


@pytest.mark.parametrize("env_id", sorted(envs.ids()))
def test_a_game_page_is_its_rules_md(site, env_id):
    package = envs.spec(env_id).module.rpartition(".")[2]
    html = page(site, f"games/{package}")
    assert f"<code>{env_id}</code>" in html
    assert "Observation layout" in html and "Action table" in html


def test_the_results_index_lists_every_report(site):
    html = page(site, "reports")
    reports = sorted((ROOT / "docs" / "results").rglob("report.md"))
    assert reports
    for report in reports:
        folder = report.parent.relative_to(ROOT / "docs").as_posix()
        assert f'href="../{folder}/report/"' in html, folder
        assert (site / folder / "report" / "index.html").is_file()


def test_a_report_shows_its_plots(site):
    html = page(site, "results/headless_horseman/report")
    assert 'src="../crossplay.png"' in html
    assert (site / "results" / "headless_horseman" / "crossplay.png").is_file()


def test_the_api_reference_documents_the_public_names(site):
    html = page(site, "api")
    for name in ("envs.make", "envs.make_batched", "envs.decode", "agents.make_agent"):
        assert f'id="cauldron.{name}"' in html, name
    assert 'id="cauldron.agents.Agent"' in html
    assert 'id="cauldron.train.config.TrainConfig.total_steps"' in html
    assert "learner decisions to train for" in html  # a TrainConfig field's description
    assert ":class:" not in html and ":func:" not in html


def test_no_page_cites_a_file_users_do_not_have(site):
    for html in site.rglob("*.html"):
        assert "shared/rules" not in html.read_text(), html


def test_a_broken_link_or_anchor_fails_the_build(tmp_path):
    """The site's own strictness settings, on a page with a broken link and a broken anchor."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[a page](missing.md), [a section](#nowhere)\n")
    (tmp_path / "mkdocs.yml").write_text(
        yaml.safe_dump(
            {"site_name": "t", "strict": config["strict"], "validation": config["validation"]}
        )
    )
    result = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    assert "missing.md" in result.stderr and "nowhere" in result.stderr
