"""postgres_statements: the costliest statements from pg_stat_statements (PostgreSQL 13+).

The top `limit` statements by total execution time, each by `queryid`, `database` and
`user`: calls, time, mean time, rows and shared-buffer hits and reads. The query text is
never exported (it may hold literals, and it would make labels unbounded); join
`queryid` with pg_stat_statements on the server to read it. The extension lives per
database: `dbgauge_postgres_statements_configured` is 0 where it is not created in the
database dbgauge connects to (or its library is not preloaded), and the collector then
succeeds with no per-statement series.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import pg_cannot_see
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.errors import NotVisible
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Option, Sample, present
from dbgauge.toolkit.sql import load_sql, quote_ident

_P = "dbgauge_postgres_statements_"
_L = ("queryid", "database", "user")
_SRC = "pg_stat_statements"

CONFIGURED = MetricSpec(
    _P + "configured", "gauge",
    "1 if pg_stat_statements can be read in the database dbgauge connects to (extension "
    "created there, library in shared_preload_libraries), else 0 and no per-statement "
    "series.")
CALLS = MetricSpec(_P + "calls_total", "counter",
                   f"Times the statement ran ({_SRC}.calls); top statements by total time.", _L)
SECONDS = MetricSpec(_P + "seconds_total", "counter",
                     f"Time spent executing the statement ({_SRC}.total_exec_time).", _L)
MEAN = MetricSpec(_P + "mean_seconds", "gauge",
                  f"Mean execution time per call since the statistics were reset "
                  f"({_SRC}.total_exec_time / calls).", _L)
ROWS = MetricSpec(_P + "rows_total", "counter",
                  f"Rows the statement returned or affected ({_SRC}.rows).", _L)
HITS = MetricSpec(_P + "shared_blocks_hit_total", "counter",
                  f"Shared-buffer hits of the statement ({_SRC}.shared_blks_hit).", _L)
READS = MetricSpec(_P + "shared_blocks_read_total", "counter",
                   f"Blocks the statement read into shared buffers ({_SRC}.shared_blks_read).",
                   _L)
METRICS = MetricTable(CONFIGURED, CALLS, SECONDS, MEAN, ROWS, HITS, READS)


@dataclass(frozen=True)
class Statement:
    """One `statements` row, summed over top-level and nested executions; times in
    seconds. None where PostgreSQL reports NULL."""

    queryid: str
    database: str
    user: str
    calls: float | None
    seconds: float | None
    rows: float | None
    shared_blocks_hit: float | None
    shared_blocks_read: float | None

    @property
    def mean_seconds(self) -> float | None:
        if self.calls is None or self.seconds is None or self.calls <= 0:
            return None
        return self.seconds / self.calls


@dataclass(frozen=True)
class PgStatementsFacts:
    """Whether pg_stat_statements is usable here, and the top statements if so."""

    configured: bool
    statements: tuple[Statement, ...] = ()


def preloaded(libraries: str) -> bool:
    """True if shared_preload_libraries (a comma list, names maybe quoted) has
    pg_stat_statements."""
    return "pg_stat_statements" in (part.strip().strip('"') for part in libraries.split(","))


def parse_statements(rows: Iterable[Row]) -> tuple[Statement, ...]:
    """`statements` rows -> Statement (milliseconds become seconds)."""
    out = []
    for row in rows:
        ms = number(row.get("total_exec_time"))
        out.append(Statement(
            text(row.get("queryid")), text(row.get("database")), text(row.get("username")),
            number(row.get("calls")), None if ms is None else ms / 1000.0,
            number(row.get("rows")), number(row.get("shared_blks_hit")),
            number(row.get("shared_blks_read"))))
    return tuple(out)


def statement_samples(facts: PgStatementsFacts) -> Iterator[Sample]:
    """`configured`, then each statement's samples (NULL values left out)."""
    yield Sample(CONFIGURED.name, 1.0 if facts.configured else 0.0)
    for st in facts.statements:
        yield from present(((CALLS, st.calls), (SECONDS, st.seconds), (MEAN, st.mean_seconds),
                            (ROWS, st.rows), (HITS, st.shared_blocks_hit),
                            (READS, st.shared_blocks_read)),
                           {"queryid": st.queryid, "database": st.database, "user": st.user})


class PostgresStatements(Collector[PgStatementsFacts]):
    name = "postgres_statements"
    help = ("Top statements by total execution time from pg_stat_statements (calls, time, "
            "mean time, rows, shared blocks hit and read) by queryid, database and user; "
            "never the query text.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}  # total_exec_time; total_time before 13
    metrics = METRICS
    options = {"limit": Option(50, "How many statements to export, costliest first "
                                   "(by total execution time).", maximum=1000)}

    def read(self, conn: Connection) -> PgStatementsFacts:
        found = conn.query("statements_extension")
        if not found or not preloaded(text(found[0].get("preload"))):
            return PgStatementsFacts(False)
        if found[0].get("sees_all") is False:  # the top of its own statements is not the top
            raise NotVisible(pg_cannot_see("other roles' statements (pg_stat_statements)",
                                           text(found[0].get("role"))))
        schema = quote_ident(text(found[0]["schema"]), "postgres")
        sql = load_sql("postgres", "statements", conn.server.version).replace(
            "{schema}", schema)
        rows = conn.execute_sql(sql, (int(self.setting("limit")),))
        return PgStatementsFacts(True, parse_statements(rows))

    def samples(self, facts: PgStatementsFacts) -> Iterable[Sample]:
        return statement_samples(facts)
