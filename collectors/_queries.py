"""What postgres_queries and mysql_queries share: run a queries.yaml file's queries and
turn their rows into postgres_exporter's samples (not a collector module: the registry
skips names starting with '_').

Per query: the LABEL columns become labels, COUNTER, GAUGE, MAPPEDMETRIC and DURATION
columns become `<prefix>_<column>` samples (DURATION `..._milliseconds`), a HISTOGRAM
column with its `_bucket`, `_sum` and `_count` columns becomes the histogram family
`<prefix>_<column>` (`collectors._histogram`), DISCARD columns are dropped, and numeric
columns the file does not list are exported untyped, as postgres_exporter does. Values
are converted the way postgres_exporter converts them (numbers, numeric text, booleans as
1/0, timestamps as Unix seconds; `collectors._values`), except that NULL gives no sample
instead of NaN (a histogram's NULL sum is NaN there too). A failing query leaves its own
samples out and shows as `..._custom_query_success{query} 0`; the other queries' samples
stay.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from dbgauge.collectors._histogram import HistogramError, histogram_samples
from dbgauge.collectors._values import duration_ms, label_value, metric_value
from dbgauge.toolkit.custom_queries import (
    Column,
    CustomQuery,
    QueriesFile,
    load_queries,
    parse_queries,
    read_text_file,
)
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.version import Version
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import ConfigError, Incomplete, QueryError
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricType, Option, OptionValue, Sample

log = logging.getLogger("dbgauge.collectors")

OPTIONS: Mapping[str, Option] = {
    "file": Option("", "Path of a queries file in postgres_exporter's queries.yaml format "
                       "(--extend.query-path); unset, the collector does nothing"),
    "max_rows": Option(10_000, "Most rows one query may return (more fails that query: "
                               "every row is a series)", 1, 1_000_000),
}


def success_spec(kind: str) -> MetricSpec:
    return MetricSpec(
        f"dbgauge_{kind}_custom_query_success", "gauge",
        "1 if the custom query (the queries file's entry named by `query`) ran and its "
        "rows were read during this scrape, or its cached rows are still fresh; else 0.",
        ("query",))


@dataclass(frozen=True)
class QueryRows:
    """One query's rows as the driver returned them, or why there are none."""

    query: CustomQuery
    rows: tuple[Mapping[str, object], ...] = ()
    error: str | None = None
    database: str = ""  # of another database than the DSN's (postgres_queries' `databases`)


@dataclass(frozen=True)
class QueriesFacts:
    """Every query that applies to this server, in file order; `server` is the value of
    postgres_exporter's `server` label (None: no such label)."""

    results: tuple[QueryRows, ...] = ()
    version: Version = ()
    server: str | None = None
    # postgres_queries over several databases: each one's name and why it was not read
    databases: tuple[tuple[str, str | None], ...] = ()


@dataclass
class QueriesState:
    """What one configured collector keeps between scrapes of its target: the file as
    last loaded (re-read when it changes) and the rows of queries with cache_seconds."""

    loaded: QueriesFile | None = None
    text: str | None = None  # what `loaded` was parsed from
    cache: dict[str, tuple[float, tuple[Mapping[str, object], ...]]] = field(
        default_factory=dict)
    last_errors: dict[str, str] = field(default_factory=dict)


def check_file(name: str, settings: dict[str, OptionValue]) -> dict[str, OptionValue]:
    """`settings` once the queries file they name reads and checks cleanly."""
    path = settings.get("file")
    if isinstance(path, str) and path:
        try:
            load_queries(path)
        except ConfigError as exc:
            raise ValueError(f"{name}.file: {exc}") from None
    return settings


def current_file(path: str, state: QueriesState) -> QueriesFile:
    """The file's queries, checked again when its text changed since the last scrape (a
    few KiB read per scrape: no reliance on mtimes); a change that does not check out
    raises ConfigError, so the collector fails until it is fixed."""
    text = read_text_file(path)
    if state.loaded is None or text != state.text:
        state.loaded = parse_queries(text, path)
        state.text = text
        state.cache.clear()
    return state.loaded


def server_label(conn: Connection) -> str | None:
    """postgres_exporter's `server` label: the DSN's host:port."""
    if conn.target is None:
        return None
    params = parse_dsn(conn.target.dsn)
    # a service= DSN leaves host and port to libpq: the service names the server then
    return f"{params.host}:{params.port}" if params.port else params.address


def read_queries(conn: Connection, path: str, max_rows: int, state: QueriesState,
                 server: str | None, database: str = "") -> QueriesFacts:
    """Run every query of the file at `path` that applies to this server; `database`:
    this is another database than the DSN's, where a `master: true` query does not run
    (postgres_exporter runs those on the DSN's database only)."""
    results: list[QueryRows] = []
    now = time.monotonic()
    where = conn.target.name if conn.target is not None else conn.server.flavor
    where += f" (database {database})" if database else ""
    for query in current_file(path, state).queries:
        if (query.runonserver is not None and not query.runonserver.matches(
                conn.server.version)) or (database and query.master):
            continue
        key = f"{database}\0{query.name}"
        cached = state.cache.get(key)
        if cached is not None and now - cached[0] <= query.cache_seconds:
            results.append(QueryRows(query, cached[1], database=database))
            continue
        try:
            rows = tuple(conn.query_read_only(query.sql, max_rows))
        except QueryError as exc:
            if conn.closed and not database:
                raise  # the connection is gone: the target is down, not the query
            error = f"query {query.name}{f' in database {database}' if database else ''}: {exc}"
            if state.last_errors.get(key) != error:
                log.warning("custom %s failed on %s", error, where)
            state.last_errors[key] = error
            results.append(QueryRows(query, error=error, database=database))
            continue
        state.last_errors.pop(key, None)
        if query.cache_seconds > 0:
            state.cache[key] = (now, rows)
        results.append(QueryRows(query, rows, database=database))
    return QueriesFacts(tuple(results), conn.server.version, server)


# ------------------------------------------------------------------ rows -> samples

def _spec(query: CustomQuery, column: Column | None, name: str, labels: tuple[str, ...]
          ) -> MetricSpec:
    """The family's spec. postgres_exporter's counters carry no `_total`; promtool wants
    it on every counter, so such a counter (and a gauge ending in `_total`) is exposed
    with untyped metadata: the same samples, no false type."""
    kind: MetricType
    if column is None:
        kind = "untyped"
        help_ = (f"Column {name.removeprefix(query.name + '_')} of custom query "
                 f"{query.name}, not listed in its metrics (untyped, as postgres_exporter "
                 "exports it).")
    elif column.usage == "HISTOGRAM":
        kind = "histogram"
        help_ = column.description or f"Column {column.name} of custom query {query.name}."
    else:
        kind = "counter" if column.usage == "COUNTER" else "gauge"
        if (kind == "counter" and not name.endswith("_total")) or \
                (kind == "gauge" and name.endswith("_total")):
            kind = "untyped"
        help_ = column.description or f"Column {column.name} of custom query {query.name}."
    return MetricSpec(name, kind, help_, labels)


def query_samples(result: QueryRows, version: Version, server: str | None
                  ) -> tuple[list[Sample], str | None]:
    """One query's samples, or none and why (a label column missing, a series twice, a
    histogram the rows cannot give)."""
    query = result.query
    label_names = query.labels + (("server",) if server is not None else ())
    specs: dict[str, MetricSpec] = {}
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    out: list[Sample] = []
    for row in result.rows:
        missing = [name for name in query.labels if name not in row]
        if missing:
            return [], f"query {query.name} returned no column {missing[0]!r} (a LABEL)"
        labels = {name: label_value(row[name]) for name in query.labels}
        if server is not None:
            labels["server"] = server
        try:
            produced = list(_row_samples(query, row, labels, version))
        except HistogramError as exc:
            return [], f"query {query.name}: {exc}"
        for column, family, sample in produced:
            spec = specs.get(family)
            if spec is None:
                spec = specs[family] = _spec(query, column, family, label_names)
            key = (sample.name, tuple(sample.labels.items()))
            if key in seen:
                return [], (f"query {query.name} returned two rows with the same labels "
                            f"{labels}")
            seen.add(key)
            out.append(Sample(sample.name, sample.value, sample.labels, spec))
    return out, None


def _row_samples(query: CustomQuery, row: Mapping[str, object], labels: Mapping[str, str],
                 version: Version) -> Iterator[tuple[Column | None, str, Sample]]:
    """(column, family name, sample without its spec) for each value of one row."""
    for column_name, raw in row.items():
        column = query.column(column_name)
        if column is not None and (
                column.usage in ("LABEL", "DISCARD")
                or (column.versions is not None and not column.versions.matches(version))):
            continue
        if query.histogram_of(column_name) is not None:
            continue  # a HISTOGRAM's bucket counts, sum or count: read with it
        if column is not None and column.usage == "HISTOGRAM":
            family = column.metric(query.name)
            for sample in histogram_samples(family, column_name, row, labels):
                yield column, family, sample
            continue
        value = _value(column, raw)
        if value is None:
            continue
        family = column.metric(query.name) if column else f"{query.name}_{column_name}"
        yield column, family, Sample(family, value, dict(labels))


def _value(column: Column | None, raw: object) -> float | None:
    """postgres_exporter 0.11 reads every column with dbToFloat64, MAPPEDMETRIC and
    DURATION included; dbgauge does too, and on top maps text through a MAPPEDMETRIC's
    metric_mapping and reads a DURATION's Go duration text ('1m30s') as milliseconds,
    where 0.11 gives no sample."""
    value = metric_value(raw)
    if value is not None or column is None:
        return value
    if column.usage == "MAPPEDMETRIC":
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        return column.mapping.get(text) if isinstance(text, str) else None
    if column.usage == "DURATION":
        return duration_ms(raw)
    return None


def queries_samples(facts: QueriesFacts, success: MetricSpec) -> Iterator[Sample]:
    """Every query's samples (a family another query already made with other labels
    is skipped), then each query's success; raises Incomplete at the end when a query
    failed, so the collector is reported failed while the other queries' samples stand."""
    families: dict[str, MetricSpec] = {}
    errors: list[str] = []
    failed: dict[str, bool] = {}  # by query, in file order: any of its results failed
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()  # across databases
    for result in facts.results:
        samples, error = ([], result.error) if result.error is not None else \
            query_samples(result, facts.version, facts.server)
        if facts.databases and samples:
            samples, error = _unseen(result, samples, seen)
        for sample in samples:
            assert sample.spec is not None
            if families.setdefault(sample.name, sample.spec) == sample.spec:
                yield sample
        failed[result.query.name] = failed.get(result.query.name, False) or bool(error)
        if error:
            errors.append(str(error))
    for name, bad in failed.items():
        yield Sample(success.name, 0.0 if bad else 1.0, {"query": name})
    if errors:
        raise Incomplete(f"{len(errors)} of {len(facts.results)} custom queries failed; "
                         f"first: {errors[0]}")


def _unseen(result: QueryRows, samples: list[Sample],
            seen: set[tuple[str, tuple[tuple[str, str], ...]]]) -> tuple[list[Sample], str | None]:
    """A query's samples from one of several databases, or none and why when a series is
    one another database's rows already made (its rows need a label that tells the
    databases apart: `current_database() AS datname`, as postgres_exporter's examples)."""
    keys = [(s.name, tuple(sorted(s.labels.items()))) for s in samples]
    for key in keys:
        if key in seen:
            where = f" in database {result.database}" if result.database else ""
            return [], (f"query {result.query.name}{where} returned a series another database "
                        f"gave too ({key[0]}): select current_database() as a LABEL column")
    seen.update(keys)
    return samples, None


# ------------------------------------------------------------------ the collector

class QueriesCollector(Collector[QueriesFacts]):
    """What postgres_queries and mysql_queries are, bar their name, kind and whether the
    samples carry postgres_exporter's `server` label (each module subclasses this)."""

    dynamic_prefixes = ("",)  # the file names the families
    options = OPTIONS
    # postgres_exporter's constant `server` label (the DSN's host:port) on every sample
    with_server_label: ClassVar[bool] = False
    _state: QueriesState | None = None

    def check_options(self, given: Mapping[str, object]) -> dict[str, OptionValue]:
        return check_file(self.name, super().check_options(given))

    def configured(self, given: Mapping[str, object]) -> QueriesCollector:
        clone = super().configured(given)
        assert isinstance(clone, QueriesCollector)
        if clone is not self:
            clone._state = QueriesState()  # its own file and cache, never the template's
        return clone

    def read(self, conn: Connection) -> QueriesFacts:
        path = str(self.setting("file"))
        if not path:
            return QueriesFacts()
        if self._state is None:
            self._state = QueriesState()
        return read_queries(conn, path, int(self.setting("max_rows")), self._state,
                            server_label(conn) if self.with_server_label else None)

    def samples(self, facts: QueriesFacts) -> Iterable[Sample]:
        return queries_samples(facts, success_spec(self.kind))
