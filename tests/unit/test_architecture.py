"""The house's shape: no import cycles between dbgauge's modules and no import up a floor
(imports inside functions count), no module over 500 lines, no function over 60, and every
import by the package's name. import-linter holds the layering too (core < collectors <
checks < composition root < CLI, drivers only in toolkit/db, click only in the CLI): its
contracts are in pyproject.toml, with no carve-outs, and `make test` runs `lint-imports`."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The floors of the one import package, `dbgauge`: the repository's top-level folders, linked
# into dbgauge/ (whose own modules are the top floor: the CLI and the composition root).
FLOORS = ("toolkit", "collectors", "checks")
MAX_LINES = 500
MAX_FUNCTION_LINES = 60
# Modules allowed to be longer, by name, with the reason: data tables only (e.g. a
# parameter table transcribed from upstream docs). Code is split instead.
LONG_DATA_TABLES: dict[str, str] = {}


def _modules() -> dict[str, Path]:
    """dbgauge's modules by their import name, each at its real path (links not followed)."""
    found: dict[str, Path] = {}
    roots = [(REPO / "dbgauge", ("dbgauge",))] + [(REPO / f, ("dbgauge", f)) for f in FLOORS]
    for root, prefix in roots:
        for path in sorted(root.rglob("*.py")):
            if any(p.is_symlink() for p in (path, *path.parents) if REPO in p.parents):
                continue
            parts = (*prefix, *path.relative_to(root).with_suffix("").parts)
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
    module.write_text("def f():\n    from dbgauge.checks.drift import run\n"
                      "    import dbgauge.toolkit.db\n")
    known = {"dbgauge.checks.drift", "dbgauge.toolkit.db"}
    assert set(_imported("dbgauge.toolkit.x", module, known)) == known


def test_the_package_map_names_every_floor() -> None:
    modules = _modules()
    assert {"dbgauge", "dbgauge.cli", "dbgauge.app", "dbgauge.toolkit", "dbgauge.toolkit.db.base",
            "dbgauge.collectors", "dbgauge.checks.drift.run"} <= set(modules)
    assert all(not path.is_symlink() and ".venv" not in path.parts for path in modules.values())


def test_no_import_cycles() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import cycles (function-level imports included): " + "; ".join(
        " <-> ".join(c) for c in cycles)


def _python_files(*folders: str) -> list[Path]:
    return [path for folder in folders for path in sorted((REPO / folder).rglob("*.py"))
            if not (REPO / folder).is_symlink()]


@pytest.mark.parametrize("package", ["dbgauge", *FLOORS, "bench"])
def test_no_module_over_500_lines(package: str) -> None:
    long = {}
    for path in _python_files(package):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES and name not in LONG_DATA_TABLES:
            long[name] = lines
    assert not long, f"modules over {MAX_LINES} lines (split them by responsibility): {long}"


def _long_functions(path: Path) -> Iterator[tuple[str, int]]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            span = node.end_lineno - node.lineno + 1
            if span > MAX_FUNCTION_LINES:
                yield node.name, span


def test_the_function_length_rule_measures_from_def_to_last_line(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    module.write_text(f"def long():\n{body}\n\ndef short():\n    return 1\n")
    assert list(_long_functions(module)) == [("long", MAX_FUNCTION_LINES + 1)]


@pytest.mark.parametrize("package", ["dbgauge", *FLOORS])
def test_no_function_over_60_lines(package: str) -> None:
    """Long functions are split into named steps; the CLI's commands only parse and dispatch."""
    long = {f"{path.relative_to(REPO)}:{name}": span for path in _python_files(package)
            for name, span in _long_functions(path)}
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_nothing_imports_the_folders_by_their_checkout_names() -> None:
    """The folders are floors of `dbgauge`: `import toolkit` works only in a checkout (and
    would load a second copy of every module), never from the wheel."""
    stale = []
    for path in _python_files("dbgauge", *FLOORS, "tests", "bench"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            stale += [f"{path.relative_to(REPO)}:{node.lineno} {name}" for name in names
                      if name.split(".")[0] in FLOORS]
    assert not stale, f"import dbgauge.<floor>, not the checkout folder: {stale}"


def test_import_linter_contracts_have_no_carve_outs() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    assert all(not c.get("ignore_imports") for c in contracts)
    house = next(c for c in contracts if c["type"] == "layers")
    assert house["containers"] == ["dbgauge"] and house["exhaustive"] is True
    assert house["layers"][-3:] == ["checks", "collectors", "toolkit"]


def test_the_architecture_doc_names_every_part_of_the_house() -> None:
    """docs/architecture.md is where a maintainer looks for a part: a package or module
    added without a word there fails here."""
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    parts = [f"{floor}/{p.name}" for floor in ("toolkit", "checks")
             for p in sorted((REPO / floor).iterdir())
             if p.name != "__init__.py" and (p.suffix == ".py" or (p / "__init__.py").is_file())]
    missing = [part for part in parts
               if part.split("/")[1].removesuffix(".py") not in doc]
    assert not missing, f"not described in docs/architecture.md: {missing}"
    # The design lives in the repository: nothing points outside it.
    for text in (doc, (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")):
        assert "](../" not in text and "`../" not in text and "DESIGN.md" not in text


FLOOR_ORDER = ("toolkit", "collectors", "checks", "app", "cli", "__main__")


def _floor(module: str) -> int:
    """The floor of a dbgauge module: 0 the core ... 5 `python -m dbgauge`; -1 the package
    itself (`dbgauge`, which only names the version)."""
    parts = module.split(".")
    return FLOOR_ORDER.index(parts[1]) if len(parts) > 1 else -1


def test_no_import_goes_up_a_floor() -> None:
    """What import-linter's layers contract says, read from the same graph as the cycles
    (imports inside functions count): the core never imports collectors, checks or the top
    floor, collectors never import checks, and nothing imports the CLI but `__main__`."""
    up = sorted(f"{a} -> {b}" for a, targets in _graph().items() for b in targets
                if _floor(a) >= 0 and _floor(b) > _floor(a))
    assert not up, f"imports that go up a floor: {up}"
    assert _floor("dbgauge.toolkit.targets") < _floor("dbgauge.checks.nodes") < _floor(
        "dbgauge.cli.check")
