"""What a pgTAP run is given on the command line: test files and directories, extensions,
and psql variables; checked before anything runs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from dbgauge.toolkit.errors import ConfigError

DEFAULT_EXTENSIONS = (".sql", ".pg")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_assignments(values: Sequence[str], what: str) -> tuple[tuple[str, str], ...]:
    """`--set VAR=VALUE` strings -> pairs, refusing names psql would not accept."""
    out: list[tuple[str, str]] = []
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not _VAR_NAME.match(name):
            raise ConfigError(f"{what} {item!r}: expected NAME=VALUE with NAME made of "
                              "letters, digits and _")
        out.append((name, value))
    return tuple(out)


def normalise_extensions(values: Sequence[str]) -> tuple[str, ...]:
    exts = tuple(v if v.startswith(".") else f".{v}" for v in values if v)
    return exts or DEFAULT_EXTENSIONS


def discover(paths: Sequence[str], extensions: Sequence[str]) -> list[Path]:
    """Files named on the command line run whatever their extension; directories are
    searched recursively (hidden ones skipped) for the extensions, in sorted order."""
    found: list[Path] = []
    seen: set[Path] = set()
    exts = tuple(e.lower() for e in extensions)
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            candidates = [path]
        elif path.is_dir():
            candidates = sorted(
                p for p in path.rglob("*")
                if p.is_file() and p.suffix.lower() in exts
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        else:
            raise ConfigError(f"test path {raw!r} does not exist")
        for candidate in candidates:
            key = candidate.resolve()
            if key not in seen:
                seen.add(key)
                found.append(candidate)
    if not found:
        raise ConfigError(f"no test files ({', '.join(exts)}) under "
                          + ", ".join(repr(p) for p in paths)
                          + "; use --ext to pick other extensions")
    return found
