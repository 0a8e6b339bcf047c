"""What a pgTAP run is given on the command line: test files and directories, extensions,
psql and its variables; checked (`plan_run`) before anything runs."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.pgtap.psql import find_psql, psql_target
from dbgauge.toolkit.pgtap.runner import Job, RunOptions, Runtests

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


def discover(paths: Sequence[str], extensions: Sequence[str], recurse: bool = False
             ) -> list[Path]:
    """Files named on the command line run whatever their extension; directories are
    searched for the extensions, in sorted order: the files directly in them, and with
    `recurse` (pg_prove's -r) those of their subdirectories too (hidden ones skipped)."""
    found: list[Path] = []
    seen: set[Path] = set()
    exts = tuple(e.lower() for e in extensions)
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            candidates = [path]
        elif path.is_dir():
            candidates = sorted(
                p for p in (path.rglob("*") if recurse else path.glob("*"))
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
                          + ("" if recurse else " (not searching subdirectories: -r)")
                          + "; use --ext to pick other extensions")
    return found


@dataclass(frozen=True)
class RunPlan:
    """A checked command line: the psql sessions to run and how to run them."""

    options: RunOptions
    jobs: tuple[Job, ...]


def plan_run(dsn: str, paths: Sequence[str], *, extensions: Sequence[str] = (),
             runtests: Runtests | None = None, variables: Sequence[str] = (),
             psets: Sequence[str] = (), timeout: float | None = None,
             psql: str | None = None, recurse: bool = False, order: str = "file"
             ) -> RunPlan:
    """The files under `paths` (or one runtests() session), psql and its --set/--pset
    variables: every usage error (no psql, a bad DSN, nothing to run, a bad variable) is
    a ConfigError raised here, before anything runs. `order`: `file` (as given and found),
    `shuffle` or `reverse` (pg_prove's --shuffle, --reverse)."""
    psql_bin = find_psql(psql)
    psql_target(dsn)  # a bad DSN is a usage error before anything runs
    if runtests is None and not paths:
        raise ConfigError("nothing to run: give test files or directories, or --runtests")
    found = discover(paths, normalise_extensions(extensions), recurse) if paths else []
    if order == "shuffle":
        random.shuffle(found)
    elif order == "reverse":
        found.reverse()
    jobs = [Job(str(p), p) for p in found]
    if not jobs and runtests is not None:
        jobs = [Job(runtests.call_text, None)]
    options = RunOptions(psql_bin, parse_assignments(variables, "--set"),
                         parse_assignments(psets, "--pset"), timeout, runtests)
    return RunPlan(options, tuple(jobs))
