"""Captured server output: loaders for tests/fixtures/, and a connection that answers
named statements with captured rows (for paths no local server can run, e.g. MySQL 8).

Every fixture under tests/fixtures/mysql-*/ and mariadb-*/ starts with `#` lines naming the
server version and the statement it came from (and, when taken from a public repository,
where). The body keeps the client's own format: SHOW ENGINE INNODB STATUS text, `\\G`
vertical rows, `+---+` tables, or `mariadb -B` tab-separated rows. PostgreSQL and PgBouncer
rows are JSON documents carrying the same provenance (`source`, `statement`) next to
their `rows`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbgauge.toolkit.db import Row, ServerInfo
from dbgauge.toolkit.db.version import Version
from dbgauge.toolkit.sql import load_sql

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MYSQL_FIXTURES = sorted(p for pattern in ("mysql-*/*", "mariadb-*/*")
                        for p in FIXTURES.glob(pattern) if p.is_file())


def load(relative: str) -> tuple[list[str], str]:
    """(header lines without '# ', body) of tests/fixtures/<relative>."""
    lines = (FIXTURES / relative).read_text(encoding="utf-8").split("\n")
    header: list[str] = []
    while lines and lines[0].startswith("#"):
        header.append(lines.pop(0)[1:].strip())
    return header, "\n".join(lines)


def body(relative: str) -> str:
    return load(relative)[1]


def json_doc(relative: str) -> dict[str, Any]:
    """The JSON document tests/fixtures/<relative>."""
    return dict(json.loads((FIXTURES / relative).read_text(encoding="utf-8")))


def json_rows(relative: str, source: str = "") -> list[Row]:
    """The rows of a JSON fixture, whose provenance must be there (a `statement`, and a
    `source` starting with `source`)."""
    doc = json_doc(relative)
    assert doc["statement"] and doc["source"] and doc["source"].startswith(source), \
        f"{relative}: no provenance, or not from {source}"
    return list(doc["rows"])


def _null(value: str) -> str | None:
    return None if value == "NULL" else value


_VERTICAL_KEY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*): ?(.*)$")


def vertical_rows(relative: str) -> list[Row]:
    """Rows of `\\G` output; a line without 'Key:' continues the previous value."""
    rows: list[Row] = []
    key = None
    for line in body(relative).split("\n"):
        if re.match(r"^\*+ \d+\. row \*+$", line.strip()):
            rows.append({})
            key = None
            continue
        m = _VERTICAL_KEY.match(line)
        if m and rows:
            key = m.group(1)
            rows[-1][key] = _null(m.group(2))
        elif key is not None and line.strip() and rows:
            rows[-1][key] = f"{rows[-1][key]}\n{line.strip()}"
    return rows


def table_rows(relative: str) -> list[Row]:
    """Rows of the mysql client's `+---+` table output."""
    lines = [ln for ln in body(relative).split("\n") if ln.startswith("|")]
    names = [c.strip() for c in lines[0].strip().strip("|").split("|")]
    return [dict(zip(names, (_null(c.strip()) for c in ln.strip().strip("|").split("|")),
                     strict=True)) for ln in lines[1:]]


def tsv_rows(relative: str) -> list[Row]:
    """Rows of `mariadb -B` / tab-separated output (first line: column names)."""
    lines = [ln for ln in body(relative).split("\n") if ln]
    names = lines[0].split("\t")
    return [dict(zip(names, (_null(v) for v in ln.split("\t")), strict=True))
            for ln in lines[1:]]


_SELECT = re.compile(r"^\s*SELECT\s+(?:DISTINCT\s+)?(?P<cols>.*?)\s+FROM\s", re.S | re.I)


def selected_columns(sql: str) -> list[tuple[str, str]]:
    """(source column, output name) for a plain 'SELECT a, b AS c FROM ...' statement."""
    m = _SELECT.match(sql)
    assert m, f"not a plain SELECT: {sql}"
    out = []
    for item in m.group("cols").split(","):
        parts = item.split()
        source = parts[0]
        out.append((source, parts[2] if len(parts) == 3 and parts[1].upper() == "AS"
                    else source))
    return out


def project(sql: str, rows: list[Row]) -> list[Row]:
    """Answer `sql` from captured `SELECT *` rows: every selected column must exist there."""
    columns = selected_columns(sql)
    for row in rows:
        missing = [src for src, _ in columns if src not in row]
        assert not missing, f"{missing} selected by the SQL but absent from the captured rows"
    return [{out: row[src] for src, out in columns} for row in rows]


@dataclass
class FixtureConnection:
    """Answers named statements with captured rows, for paths no local server can run
    (MySQL 8). The statement must exist in sql/ for this flavor and version."""

    flavor: str
    version: Version
    answers: dict[str, list[Row]]
    target: Any = None
    connect_seconds: float = 0.0
    asked: list[str] = field(default_factory=list)

    @property
    def server(self) -> ServerInfo:
        return ServerInfo(self.flavor, self.version, ".".join(map(str, self.version)))

    def sql(self, name: str) -> str:
        return load_sql(self.flavor, name, self.version)

    def query(self, name: str, params: Any = None) -> list[Row]:
        self.sql(name)
        self.asked.append(name)
        assert name in self.answers, f"no captured answer for {name}"
        return self.answers[name]

    def execute_sql(self, sql: str, params: Any = None) -> list[Row]:
        raise AssertionError(f"unexpected literal SQL: {sql}")

    closed = False


class Answers:
    """Answers named statements with the given rows and records which were asked: for
    collectors whose statements need no flavor or version (PostgreSQL, PgBouncer)."""

    def __init__(self, answers: dict[str, list[Row]],
                 server: ServerInfo | None = None) -> None:
        self.answers = answers
        self.asked: list[str] = []
        # what the connection identified when it opened (SHOW VERSION on PgBouncer)
        self.server = server or ServerInfo("", (), "")

    def query(self, name: str, params: Any = None) -> list[Row]:
        self.asked.append(name)
        return self.answers[name]
