"""validate on public configurations (tests/fixtures/validate/realworld): each case gives
exactly the findings its expected.txt lists, each line reviewed with the reason it is true
(`severity file:line rule key -- why`). A new false positive or a lost true finding
fails here. Every case names its source (repository, path, commit) in SOURCE.

Absolute paths are looked up under the case's own `host/` directory (absent unless the
source repository ships the file), never on the machine running the tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dbgauge.checks.innodb_cluster import ClusterOptions, validate_innodb_cluster, version_for
from dbgauge.checks.pgbouncer import PgbouncerOptions, validate_pgbouncer
from dbgauge.checks.pgbouncer.params import table_version
from dbgauge.toolkit.result import Finding
from tests.helpers.validate import FIXTURES, finding_lines, read_expected

REAL = FIXTURES / "realworld"
PGB_CASES = sorted(p.name for p in (REAL / "pgbouncer").iterdir())
CNF_CASES = sorted(p.name for p in (REAL / "innodb").iterdir())
# The one info finding that is a verdict on a whole set, so the corpus pins it too.
VERDICT_INFO = ("gr/not-innodb-cluster",)


def corpus_lines(findings: tuple[Finding, ...], base: Path) -> list[str]:
    """Errors and warnings, plus the set-level verdicts, as expected.txt writes them."""
    lines = finding_lines(findings, base)
    lines += [f"info {f.file and Path(f.file).relative_to(base)}:{f.line or '-'} {f.kind} "
              f"{f.key or '-'}" for f in findings if f.kind in VERDICT_INFO and
              f.severity == 0]
    return sorted(lines)


def run_pgbouncer(case: str) -> tuple[list[str], list[str]]:
    d = REAL / "pgbouncer" / case
    options, expected = read_expected(d, reviewed=True)
    opts = PgbouncerOptions(version=table_version(options.get("version", "1.18")),
                            max_connections=int(options["max_connections"])
                            if "max_connections" in options else None,
                            reserved_connections=int(options.get("reserved_connections", "3")),
                            fd_limit=int(options.get("fd_limit", "1048576")),
                            root=str(d / "host"))
    result = validate_pgbouncer(str(d / "pgbouncer.ini"), opts)
    return corpus_lines(result.findings, d), expected


def run_innodb(case: str) -> tuple[list[str], list[str]]:
    d = REAL / "innodb" / case
    options, expected = read_expected(d, reviewed=True)
    files = sorted(str(p) for p in d.glob("m*.cnf"))
    result = validate_innodb_cluster(files, ClusterOptions(
        version=version_for(options.get("version", "8.0"))))
    return corpus_lines(result.findings, d), expected


@pytest.mark.parametrize("case", PGB_CASES)
def test_pgbouncer_corpus(case: str) -> None:
    got, expected = run_pgbouncer(case)
    assert got == expected


@pytest.mark.parametrize("case", CNF_CASES)
def test_innodb_cluster_corpus(case: str) -> None:
    got, expected = run_innodb(case)
    assert got == expected


def test_corpus_size_and_provenance() -> None:
    assert len(PGB_CASES) >= 20 and len(CNF_CASES) >= 6
    for d in [*(REAL / "pgbouncer").iterdir(), *(REAL / "innodb").iterdir()]:
        source = (d / "SOURCE").read_text()
        assert "repository: https://github.com/" in source and "commit: " in source, d.name
        assert "path: " in source, d.name
