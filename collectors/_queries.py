"""What postgres_queries and mysql_queries share: run a queries.yaml file's queries and
turn their rows into postgres_exporter's samples (not a collector module: the registry
skips names starting with '_').

Per query: the LABEL columns become labels, COUNTER, GAUGE, MAPPEDMETRIC and DURATION
columns become `<prefix>_<column>` samples (DURATION `..._milliseconds`), DISCARD columns
are dropped, and numeric columns the file does not list are exported untyped, as
postgres_exporter does. Values are converted the way postgres_exporter converts them
(numbers, numeric text, booleans as 1/0, timestamps as Unix seconds), except that NULL
gives no sample instead of NaN. A failing query leaves its own samples out and shows
as `..._custom_query_success{query} 0`; the other queries' samples stay.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import ClassVar

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


@dataclass(frozen=True)
class QueriesFacts:
    """Every query that applies to this server, in file order; `server` is the value of
    postgres_exporter's `server` label (None: no such label)."""

    results: tuple[QueryRows, ...] = ()
    version: Version = ()
    server: str | None = None


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
                 server: str | None) -> QueriesFacts:
    """Run every query of the file at `path` that applies to this server."""
    results: list[QueryRows] = []
    now = time.monotonic()
    where = conn.target.name if conn.target is not None else conn.server.flavor
    for query in current_file(path, state).queries:
        if query.runonserver is not None and not query.runonserver.matches(
                conn.server.version):
            continue
        cached = state.cache.get(query.name)
        if cached is not None and now - cached[0] <= query.cache_seconds:
            results.append(QueryRows(query, cached[1]))
            continue
        try:
            rows = tuple(conn.query_read_only(query.sql, max_rows))
        except QueryError as exc:
            if conn.closed:
                raise  # the connection is gone: the target is down, not the query
            error = f"query {query.name}: {exc}"
            if state.last_errors.get(query.name) != error:
                log.warning("custom %s failed on %s", error, where)
            state.last_errors[query.name] = error
            results.append(QueryRows(query, error=error))
            continue
        state.last_errors.pop(query.name, None)
        if query.cache_seconds > 0:
            state.cache[query.name] = (now, rows)
        results.append(QueryRows(query, rows))
    return QueriesFacts(tuple(results), conn.server.version, server)


# ------------------------------------------------------------------ rows -> samples

_GO_FLOAT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
                       re.IGNORECASE)


def metric_value(value: object) -> float | None:
    """A column as postgres_exporter's dbToFloat64 reads it; None for NULL and for what
    it cannot read (it would export NaN for NULL: dbgauge leaves the sample out)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float | Decimal):
        return float(value)
    if isinstance(value, datetime | date):
        return float(math.floor(_timestamp(value)))
    if isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value).decode("utf-8", "replace")
    if isinstance(value, str) and _GO_FLOAT.fullmatch(value):
        return float(value)
    return None


def label_value(value: object) -> str:
    """A column as postgres_exporter's dbToString writes a label value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, datetime | date):
        return str(math.floor(_timestamp(value)))
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _timestamp(value: datetime | date) -> float:
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if value.tzinfo is None:  # timestamp without time zone: lib/pq reads it as UTC
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def go_float(value: float) -> str:
    """`value` as Go's %v prints a float64: shortest digits, exponent form below 1e-4
    and from 1e6 on (1e+06, 1.5e-05)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    exp = len(text) + exponent - 1
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exponent >= 0:
        return minus + text + "0" * exponent
    point = len(text) + exponent
    if point > 0:
        return f"{minus}{text[:point]}.{text[point:]}"
    return f"{minus}0.{'0' * -point}{text}"


def _duration_ms(value: object) -> float | None:
    """A Go duration string ('1h2m3.5s', '250ms') in whole milliseconds, as
    postgres_exporter's DURATION usage computes it; '-1' and others: None."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if not isinstance(value, str) or value == "-1":
        return None
    m = re.fullmatch(r"([+-]?)((?:\d*\.?\d*(?:ns|us|µs|μs|ms|s|m|h))+|0)", value)
    if m is None:
        return None
    units = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "μs": 1e-3, "ms": 1.0, "s": 1e3,
             "m": 6e4, "h": 3.6e6}
    total = 0.0
    for number, unit in re.findall(r"(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)", m.group(2)):
        if number in ("", "."):
            return None
        total += float(number) * units[unit]
    return float(math.trunc(-total if m.group(1) == "-" else total))


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
    else:
        kind = "counter" if column.usage == "COUNTER" else "gauge"
        if (kind == "counter" and not name.endswith("_total")) or \
                (kind == "gauge" and name.endswith("_total")):
            kind = "untyped"
        help_ = column.description or f"Column {column.name} of custom query {query.name}."
    return MetricSpec(name, kind, help_, labels)


def query_samples(result: QueryRows, version: Version, server: str | None
                  ) -> tuple[list[Sample], str | None]:
    """One query's samples, or none and why (a label column missing, a series twice)."""
    query = result.query
    label_names = query.labels + (("server",) if server is not None else ())
    specs: dict[str, MetricSpec] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out: list[Sample] = []
    for row in result.rows:
        missing = [name for name in query.labels if name not in row]
        if missing:
            return [], f"query {query.name} returned no column {missing[0]!r} (a LABEL)"
        labels = {name: label_value(row[name]) for name in query.labels}
        if server is not None:
            labels["server"] = server
        for column_name, raw in row.items():
            column = query.column(column_name)
            if column is not None and (
                    column.usage in ("LABEL", "DISCARD")
                    or (column.versions is not None and not column.versions.matches(version))):
                continue
            value = _value(column, raw)
            if value is None:
                continue
            name = column.metric(query.name) if column else f"{query.name}_{column_name}"
            spec = specs.get(name)
            if spec is None:
                spec = specs[name] = _spec(query, column, name, label_names)
            key = (name, tuple(labels.values()))
            if key in seen:
                return [], (f"query {query.name} returned two rows with the same labels "
                            f"{labels}")
            seen.add(key)
            out.append(Sample(name, value, dict(labels), spec))
    return out, None


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
        return _duration_ms(raw)
    return None


def queries_samples(facts: QueriesFacts, success: MetricSpec) -> Iterator[Sample]:
    """Every query's samples (a family another query already made with other labels
    is skipped), then each query's success; raises Incomplete at the end when a query
    failed, so the collector is reported failed while the other queries' samples stand."""
    families: dict[str, MetricSpec] = {}
    errors: list[str] = []
    for result in facts.results:
        samples, error = ([], result.error) if result.error is not None else \
            query_samples(result, facts.version, facts.server)
        for sample in samples:
            assert sample.spec is not None
            if families.setdefault(sample.name, sample.spec) == sample.spec:
                yield sample
        yield Sample(success.name, 0.0 if error else 1.0, {"query": result.query.name})
        if error:
            errors.append(str(error))
    if errors:
        raise Incomplete(f"{len(errors)} of {len(facts.results)} custom queries failed; "
                         f"first: {errors[0]}")


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
