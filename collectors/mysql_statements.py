"""mysql_statements: the statements that cost the most, by digest (MySQL and MariaDB).

From performance_schema.events_statements_summary_by_digest: the top `limit` digests by
total latency (SUM_TIMER_WAIT, picoseconds, exported in seconds), labelled by schema and
digest hash only -- never the digest text, which can carry literals and is unbounded. The
label set is bounded by `limit`; a digest that drops out of the top N loses its series (its
counters come back from the server's own totals if it returns). The row with a NULL digest
(MySQL's overflow row once the digest table is full) is labelled `digest="other"`; a NULL
schema (statements run without a default database) is `schema=""`.

`dbgauge_mysql_performance_schema_enabled` is always there: with performance_schema off the
collector still succeeds and says why the statement series are missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import PS_SELECT, query
from dbgauge.toolkit.db.values import is_on, numbers, text
from dbgauge.toolkit.metrics import (
    Collector,
    Column,
    MetricSpec,
    MetricTable,
    Option,
    Sample,
    column_samples,
)

PICOSECONDS = 1e-12
_LABELS = ("schema", "digest")
_SRC = "performance_schema.events_statements_summary_by_digest"


def _counter(name: str, column: str, what: str, field: str, scale: float = 1.0) -> Column:
    """A digest counter: the summary table's `column`, read as the statement's `field`."""
    return Column(MetricSpec(f"dbgauge_mysql_statements_{name}_total", "counter",
                             f"{what}, per statement digest in the top N by total latency "
                             f"({_SRC}.{column}).", _LABELS), field, scale)


ENABLED = MetricSpec(
    "dbgauge_mysql_performance_schema_enabled", "gauge",
    "1 if performance_schema is on (@@performance_schema), else 0: with 0 the statement and "
    "table I/O series are absent, not zero.")
METRICS = MetricTable(
    _counter("calls", "COUNT_STAR", "Executions", "calls"),
    _counter("seconds", "SUM_TIMER_WAIT", "Time spent executing (seconds)", "timer_wait",
             PICOSECONDS),
    _counter("rows_examined", "SUM_ROWS_EXAMINED", "Rows read by the engine", "rows_examined"),
    _counter("rows_sent", "SUM_ROWS_SENT", "Rows returned to clients", "rows_sent"),
    _counter("errors", "SUM_ERRORS", "Executions that raised an error", "errors"),
    _counter("no_index_used", "SUM_NO_INDEX_USED",
             "Executions that scanned a table without an index", "no_index_used"),
    ENABLED)


@dataclass(frozen=True)
class Digest:
    """One digest row: counters by column (NULL columns left out)."""

    schema: str
    digest: str
    values: Mapping[str, float]


@dataclass(frozen=True)
class StatementsFacts:
    enabled: bool
    digests: tuple[Digest, ...] = ()


def parse_enabled(rows: Sequence[Row]) -> bool:
    """The `performance_schema_enabled` answer: True only for a 1/ON value."""
    return bool(rows) and is_on(rows[0].get("enabled"))


def parse_digests(rows: Iterable[Row], limit: int) -> tuple[Digest, ...]:
    """`statement_digests` rows -> at most `limit` Digests (the SQL already limits; this
    keeps the bound when it is answered by something else)."""
    out: list[Digest] = []
    for row in rows:
        if len(out) >= limit:
            break
        digest = text(row.get("digest")) or "other"
        out.append(Digest(text(row.get("schema_name")), digest, numbers(row, METRICS.column_names)))
    return tuple(out)


def statement_samples(facts: StatementsFacts) -> Iterator[Sample]:
    yield Sample(ENABLED.name, 1.0 if facts.enabled else 0.0)
    for digest in facts.digests:
        yield from column_samples(METRICS.columns, digest.values,
                                  {"schema": digest.schema, "digest": digest.digest})


def performance_schema_on(conn: Connection) -> bool:
    return parse_enabled(conn.query("performance_schema_enabled"))


class MySQLStatements(Collector[StatementsFacts]):
    name = "mysql_statements"
    help = ("Top statement digests by total latency from performance_schema "
            "(calls, seconds, rows examined and sent, errors, scans without an index), "
            "labelled by schema and digest hash; whether performance_schema is on.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS
    options = {"limit": Option(50, "How many digests, the costliest by total latency.",
                               maximum=1000)}

    def read(self, conn: Connection) -> StatementsFacts:
        if not performance_schema_on(conn):
            return StatementsFacts(False)
        limit = int(self.setting("limit"))
        rows = query(conn, "statement_digests", PS_SELECT, (limit,))
        return StatementsFacts(True, parse_digests(rows, limit))

    def samples(self, facts: StatementsFacts) -> Iterable[Sample]:
        return statement_samples(facts)
