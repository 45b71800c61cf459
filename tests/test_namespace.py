"""One import namespace: the top-level folders are installed as ``cauldron.<folder>`` (and only
so), and the ``cauldron`` command runs every tool by name."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from cauldron import cli

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("envs", "agents", "train", "eval")


def python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_namespace_imports_outside_the_checkout_and_the_folder_names_do_not(tmp_path):
    done = python("import cauldron.envs, cauldron.eval.stats; print(cauldron.envs.ids())", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hocus_pocus_v1" in done.stdout
    for folder in FOLDERS:
        refused = python(f"import {folder}", tmp_path)
        assert refused.returncode != 0
        assert f"No module named '{folder}'" in refused.stderr


def test_pyproject_installs_every_package_folder_under_the_namespace():
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {
        ".".join(("cauldron", *init.parent.relative_to(ROOT).parts))
        for folder in FOLDERS
        for init in (ROOT / folder).rglob("__init__.py")
    }
    assert set(settings["packages"]) == folders | {"cauldron"}
    assert settings["package-dir"] == {"cauldron": "cauldron"} | {
        f"cauldron.{folder}": folder for folder in FOLDERS
    }


def test_no_module_imports_a_folder_name_instead_of_the_namespace():
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        if {"runs", "site", "build", ".venv"} & set(path.relative_to(ROOT).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(ROOT)}:{node.lineno} {name}"
                for name in names
                if name.split(".")[0] in FOLDERS
            ]
    assert offenders == []


def test_help_lists_every_subcommand(capsys):
    assert cli.main(["--help"]) == 0
    shown = capsys.readouterr().out
    assert all(f"  {name} " in shown for name in cli.COMMANDS)


def test_an_unknown_subcommand_is_refused_with_the_known_ones(capsys):
    assert cli.main(["trian", "configs/train/quickstart.yaml"]) == 2
    error = capsys.readouterr().err
    assert "unknown command 'trian'" in error
    assert "train, results" in error and "serve" in error


@pytest.mark.filterwarnings("ignore:.*found in sys.modules:RuntimeWarning")
@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_every_subcommand_runs_its_module(name, capsys):
    assert cli.main([name, "--help"]) == 0
    assert f"cauldron {name}" in capsys.readouterr().out


def test_the_installed_command_runs(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "cauldron", "nope"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 2 and "unknown command 'nope'" in done.stderr
