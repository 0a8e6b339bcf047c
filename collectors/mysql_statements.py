"""mysql_statements: the statements that cost the most, by digest (MySQL and MariaDB).

From performance_schema.events_statements_summary_by_digest: the top `limit` digests by
total latency (SUM_TIMER_WAIT, picoseconds, exported in seconds), labelled by schema and
digest hash only -- never the digest text, which can carry identifiers and is unbounded (the
mysqld_exporter dialect, which labels by it, gets its first 120 characters from the facts).
The label set is bounded by `limit` (default 250, mysqld_exporter's); a digest that drops
out of the top N loses its series (its counters come back from the server's own totals if
it returns), and `dbgauge_mysql_statements_truncated` is 1 when the server had more. The
row with a NULL digest (MySQL's overflow row once the digest table is full) is labelled
`digest="other"`; a NULL schema (statements run without a default database) is `schema=""`.

`dbgauge_mysql_performance_schema_enabled` is always there: with performance_schema off the
collector still succeeds and says why the statement series are missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import PS_SELECT, query
from dbgauge.toolkit.db.values import is_on, number, numbers, text
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
TRUNCATED = MetricSpec(
    "dbgauge_mysql_statements_truncated", "gauge",
    "1 when performance_schema had more statement digests than the `limit` option (the "
    "rest left out), else 0.")
METRICS = MetricTable(
    _counter("calls", "COUNT_STAR", "Executions", "calls"),
    _counter("seconds", "SUM_TIMER_WAIT", "Time spent executing (seconds)", "timer_wait",
             PICOSECONDS),
    _counter("rows_examined", "SUM_ROWS_EXAMINED", "Rows read by the engine", "rows_examined"),
    _counter("rows_sent", "SUM_ROWS_SENT", "Rows returned to clients", "rows_sent"),
    _counter("rows_affected", "SUM_ROWS_AFFECTED", "Rows inserted, updated or deleted",
             "rows_affected"),
    _counter("errors", "SUM_ERRORS", "Executions that raised an error", "errors"),
    _counter("warnings", "SUM_WARNINGS", "Warnings raised", "warnings"),
    _counter("no_index_used", "SUM_NO_INDEX_USED",
             "Executions that scanned a table without an index", "no_index_used"),
    _counter("tmp_tables", "SUM_CREATED_TMP_TABLES", "Internal temporary tables created",
             "tmp_tables"),
    _counter("tmp_disk_tables", "SUM_CREATED_TMP_DISK_TABLES",
             "Internal temporary tables created on disk", "tmp_disk_tables"),
    _counter("sort_rows", "SUM_SORT_ROWS", "Rows sorted", "sort_rows"),
    _counter("sort_merge_passes", "SUM_SORT_MERGE_PASSES",
             "Merge passes of sorts that did not fit in sort_buffer_size",
             "sort_merge_passes"),
    ENABLED, TRUNCATED)


@dataclass(frozen=True)
class Digest:
    """One digest row: counters by column (NULL columns left out); the schema and digest
    as read (None for NULL), the first 120 characters of the digest text and the seconds
    since it was last seen (for the mysqld_exporter dialect)."""

    schema: str
    digest: str
    values: Mapping[str, float]
    digest_text: str = ""
    last_seen_age: float | None = None
    schema_null: bool = False


@dataclass(frozen=True)
class StatementsFacts:
    enabled: bool
    digests: tuple[Digest, ...] = ()
    truncated: bool = False


def parse_enabled(rows: Sequence[Row]) -> bool:
    """The `performance_schema_enabled` answer: True only for a 1/ON value."""
    return bool(rows) and is_on(rows[0].get("enabled"))


def parse_digests(rows: Iterable[Row], limit: int) -> tuple[tuple[Digest, ...], bool]:
    """`statement_digests` rows -> at most `limit` Digests, and whether a row beyond the
    limit came back (the SQL asks for limit + 1)."""
    out: list[Digest] = []
    for row in rows:
        if len(out) >= limit:
            return tuple(out), True
        digest = text(row.get("digest")) or "other"
        out.append(Digest(text(row.get("schema_name")), digest,
                          numbers(row, METRICS.column_names), text(row.get("digest_text")),
                          number(row.get("last_seen_age")), row.get("schema_name") is None))
    return tuple(out), False


def statement_samples(facts: StatementsFacts) -> Iterator[Sample]:
    yield Sample(ENABLED.name, 1.0 if facts.enabled else 0.0)
    if facts.enabled:
        yield Sample(TRUNCATED.name, 1.0 if facts.truncated else 0.0)
    for digest in facts.digests:
        yield from column_samples(METRICS.columns, digest.values,
                                  {"schema": digest.schema, "digest": digest.digest})


def performance_schema_on(conn: Connection) -> bool:
    return parse_enabled(conn.query("performance_schema_enabled"))


class MySQLStatements(Collector[StatementsFacts]):
    name = "mysql_statements"
    help = ("Top statement digests by total latency from performance_schema "
            "(calls, seconds, rows examined, sent and affected, errors, warnings, scans "
            "without an index, temporary tables in memory and on disk, sorts), "
            "labelled by schema and digest hash; whether performance_schema is on.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS
    options = {"limit": Option(250, "How many digests, the costliest by total latency.",
                               maximum=10_000)}

    def read(self, conn: Connection) -> StatementsFacts:
        if not performance_schema_on(conn):
            return StatementsFacts(False)
        limit = int(self.setting("limit"))
        rows = query(conn, "statement_digests", PS_SELECT, (limit + 1,))
        return StatementsFacts(True, *parse_digests(rows, limit))

    def samples(self, facts: StatementsFacts) -> Iterable[Sample]:
        return statement_samples(facts)
