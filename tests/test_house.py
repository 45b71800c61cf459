"""The house: no import circles among the project's modules (every import counts, those inside
functions and ``TYPE_CHECKING`` blocks too), ``eval`` imports ``train`` only in the ZSC protocol
(``eval/zsc/``, which trains), every game's agents live in ``agents/<game>/``, and no function
of the training code is longer than :data:`MAX_TRAINING_FUNCTION` lines."""

from __future__ import annotations

import ast
from pathlib import Path

from cauldron import agents, envs
from cauldron.agents.heuristics import batched_heuristics

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("envs", "agents", "train", "eval")
MAX_TRAINING_FUNCTION = 80
GENERIC_AGENTS = {
    "__init__",
    "base",
    "batched",
    "checkpoints",
    "heuristics",
    "random_agent",
    "rllib_policy",
    "sb3_policy",
    "specs",
    "torch_policy",
    "user",
}


def modules() -> dict[str, Path]:
    """Every module of the project's packages by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(("cauldron", *(parts[:-1] if parts[-1] == "__init__" else parts)))] = (
                path
            )
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules that module ``name`` imports anywhere in its file; ``from p import x``
    counts as ``p.x`` when that is a module, else as ``p``; other names as their nearest
    enclosing project module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(head + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.add(full if full in known else base)
    found = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_import_scan_sees_imports_inside_functions():
    graph = import_graph()
    assert (
        "cauldron.agents.checkpoints" in graph["cauldron.agents.batched"]
    )  # inside make_batched_agent
    assert "cauldron.train.config" in graph["cauldron.eval.zsc.runs"]


def test_the_circle_finder_finds_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert sorted(circles(graph)) == [["a", "b", "c"], ["d", "e"]]


def test_no_import_circles():
    assert circles(import_graph()) == []


def test_eval_imports_train_only_in_the_zsc_protocol():
    graph = import_graph()
    upward = sorted(
        (name, target)
        for name, targets in graph.items()
        for target in targets
        if name.split(".")[1] == "eval"
        and target.split(".")[1] == "train"
        and not (name == "cauldron.eval.zsc" or name.startswith("cauldron.eval.zsc."))
    )
    assert upward == []


def test_environments_and_agents_import_neither_train_nor_eval():
    graph = import_graph()
    upward = sorted(
        (name, target)
        for name, targets in graph.items()
        for target in targets
        if name.split(".")[1] in ("envs", "agents") and target.split(".")[1] in ("train", "eval")
    )
    assert upward == []


def test_every_games_agents_live_in_its_own_package():
    games = {envs.spec(env_id).module.split(".")[-1]: env_id for env_id in envs.ids()}
    top = {path.stem for path in (ROOT / "agents").glob("*.py")}
    assert top == GENERIC_AGENTS, "a game's agents belong in agents/<game>/"
    packages = {path.parent.name for path in (ROOT / "agents").glob("*/__init__.py")}
    assert packages == set(games)
    for game, env_id in games.items():
        folder = ROOT / "agents" / game
        assert (folder / "heuristic.py").is_file() and (folder / "batched.py").is_file()
        heuristics = agents.HEURISTICS[env_id]
        assert heuristics
        assert all(
            cls.__module__.startswith(f"cauldron.agents.{game}.") for cls in heuristics.values()
        )
        batched = batched_heuristics(env_id)
        assert set(batched) == set(heuristics)
        assert all(
            cls.__module__.startswith(f"cauldron.agents.{game}.") for cls in batched.values()
        )


def test_training_functions_are_short():
    """Every function in ``train/``, counted from ``def`` to its last line, reads on one screen."""
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
        for path in sorted((ROOT / "train").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_TRAINING_FUNCTION
    ]
    assert long == []
