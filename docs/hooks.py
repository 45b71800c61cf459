"""MkDocs hooks of the documentation site (mkdocs.yml names this file).

Two pages list what other commands write, so that no hand-kept list goes stale: the results
index (``<!-- reports -->``: every ``docs/results/**/report.md``, by folder) and the training
page (``<!-- curves -->``: every learning curve in ``docs/training/``). The API pages show the
docstrings' Sphinx roles (``:class:`~a.B```) as plain code (``B``).

The API pages read the source as installed: ``cauldron.envs`` is the folder ``envs/`` (and so on,
pyproject.toml's package-dir). mkdocstrings finds a package by its folders, so at start-up
:func:`stage_namespace` lays out ``runs/docs-api/cauldron/`` as links to those folders.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

# a Sphinx role as mkdocstrings renders it: the role's name, then the target as inline code
ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):<code>(~?)([^<]*)</code>")

ROOT = Path(__file__).resolve().parents[1]
API_STAGE = ROOT / "runs" / "docs-api" / "cauldron"
NAMESPACE = {"envs": "envs", "agents": "agents", "train": "train", "eval": "eval"}

REPORTS_MARK = "<!-- reports -->"
CURVES_MARK = "<!-- curves -->"


def _title(file) -> str:
    """A report's first heading, or its folder's name."""
    for line in file.content_string.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return PurePosixPath(file.src_uri).parent.name


def _relative(target: str, page: str) -> str:
    """The link from the page ``page`` to the file ``target`` (both paths in docs/)."""
    up = len(PurePosixPath(page).parent.parts)
    return "/".join([".."] * up + [target])


def reports_list(files, page: str) -> str:
    """A Markdown list of every results report, grouped by its folder under docs/results (the
    group of ``docs/results/<folder>/<name>/report.md`` is anchored ``#<folder>``)."""
    groups: dict[str, list[str]] = {}
    for f in files.documentation_pages():
        parts = PurePosixPath(f.src_uri).parts
        if parts[0] == "results" and parts[-1] == "report.md":
            groups.setdefault("/".join(parts[1:-2]), []).append(f.src_uri)
    lines: list[str] = []
    for folder in sorted(groups):
        path = "/".join(["docs/results", folder] if folder else ["docs/results"])
        lines += ["", f"### `{path}/` {{#{folder or 'results'}}}", ""]
        for uri in sorted(groups[folder]):
            name = PurePosixPath(uri).parent.name
            title = _title(files.get_file_from_path(uri))
            lines.append(f"- [`{name}`]({_relative(uri, page)}): {title}")
    return "\n".join(lines).strip() + "\n"


def curves_gallery(files, page: str) -> str:
    """Every learning curve in docs/training, one picture each under its name."""
    curves = sorted(
        f.src_uri for f in files if f.src_uri.startswith("training/") and f.src_uri.endswith(".png")
    )
    return "\n\n".join(
        f"**{PurePosixPath(uri).stem}**\n\n![{PurePosixPath(uri).stem}]({_relative(uri, page)})"
        for uri in curves
    )


def stage_namespace() -> None:
    """Link ``runs/docs-api/cauldron/`` to the files of ``cauldron/`` and to the folders that are
    its subpackages (mkdocs.yml's mkdocstrings ``paths``)."""
    API_STAGE.mkdir(parents=True, exist_ok=True)
    links = {p.name: p for p in (ROOT / "cauldron").glob("*.py")}
    links |= {name: ROOT / folder for name, folder in NAMESPACE.items()}
    for name, target in links.items():
        link = API_STAGE / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)


def on_startup(command, dirty) -> None:
    stage_namespace()


def on_page_markdown(markdown: str, page, config, files) -> str:
    if REPORTS_MARK in markdown:
        markdown = markdown.replace(REPORTS_MARK, reports_list(files, page.file.src_uri))
    if CURVES_MARK in markdown:
        markdown = markdown.replace(CURVES_MARK, curves_gallery(files, page.file.src_uri))
    return markdown


def _role(match: re.Match) -> str:
    target = match.group(2).rsplit(".", 1)[-1] if match.group(1) else match.group(2)
    return f"<code>{target}</code>"


def on_page_content(html: str, page, config, files) -> str:
    return ROLE.sub(_role, html)
