"""The house's shape: no import cycles between dbgauge's modules (imports inside functions
count), and no module over 500 lines. The layering itself (core < collectors < checks <
CLI, drivers only in toolkit/db, click only in the CLI) is import-linter's job: its
contracts are in pyproject.toml and `make test` runs `lint-imports`."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("toolkit", "collectors", "checks")
MAX_LINES = 500
# Modules allowed to be longer, by name, with the reason: data tables only (e.g. a
# parameter table transcribed from upstream docs). Code is split instead.
LONG_DATA_TABLES: dict[str, str] = {}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imported(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """Project modules `name` imports, wherever the import statement is."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for target in targets:
            parts = target.split(".")
            for end in range(len(parts), 0, -1):  # the longest prefix that is a module
                candidate = ".".join(parts[:end])
                if candidate in known:
                    if candidate != name:
                        yield candidate
                    break


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: set(_imported(name, path, known)) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
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


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_function_level_imports_are_edges(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from checks.drift import run\n    import toolkit.db\n")
    assert set(_imported("toolkit.x", module, {"checks.drift", "toolkit.db"})) == {
        "checks.drift", "toolkit.db"}


def test_no_import_cycles() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import cycles (function-level imports included): " + "; ".join(
        " <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("package", [*PACKAGES, "bench"])
def test_no_module_over_500_lines(package: str) -> None:
    long = {}
    for path in sorted((REPO / package).rglob("*.py")):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES and name not in LONG_DATA_TABLES:
            long[name] = lines
    assert not long, f"modules over {MAX_LINES} lines (split them by responsibility): {long}"
