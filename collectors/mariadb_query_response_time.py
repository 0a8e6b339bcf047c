"""mariadb_query_response_time: a latency histogram of every query (MariaDB plugin).

MariaDB's Query Response Time plugin (Debian's mariadb-server ships query_response_time.so;
load it with `plugin_load_add = query_response_time` and `query_response_time_stats = ON`)
counts queries per response-time range in information_schema.QUERY_RESPONSE_TIME. The
ranges are per-range counts; dbgauge adds them up into cumulative buckets, `le` in seconds
and "+Inf" last (the plugin's TOO LONG row), so `histogram_quantile(0.99,
rate(dbgauge_mysql_query_response_time_total[5m]))` works. The bucket family carries `le`,
which Prometheus' linter reserves for histograms, so it is exposed untyped (still a
cumulative counter: use rate()). MySQL 8 has no such plugin: this collector is MariaDB
only. `dbgauge_mysql_query_response_time_configured` is always there: 0 when the plugin is
not loaded or its statistics are off, and then there are no buckets.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import PROCESS, query
from dbgauge.toolkit.db.values import is_on, number, text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

_SRC = "information_schema.QUERY_RESPONSE_TIME"
BUCKETS = MetricSpec(
    "dbgauge_mysql_query_response_time_total", "untyped",
    f"Queries that took at most `le` seconds, cumulative over the plugin's ranges, \"+Inf\" "
    f"= all queries ({_SRC}.COUNT added up); exposed untyped because only histograms may "
    "carry `le`.", ("le",))
SECONDS = MetricSpec(
    "dbgauge_mysql_query_response_time_seconds_total", "counter",
    f"Total time of the queries counted in the finite buckets ({_SRC}.TOTAL summed; the "
    "TOO LONG range reports no time).")
CONFIGURED = MetricSpec(
    "dbgauge_mysql_query_response_time_configured", "gauge",
    "1 if the Query Response Time plugin is loaded and query_response_time_stats is ON, "
    "else 0 (then no bucket series).")
METRICS = MetricTable(BUCKETS, SECONDS, CONFIGURED)
OVERFLOW = "TOO LONG"


@dataclass(frozen=True)
class ResponseTimeFacts:
    """Cumulative buckets as (upper bound in seconds, count), ascending, +Inf last; the
    summed time of the finite ranges."""

    configured: bool
    buckets: tuple[tuple[float, float], ...] = ()
    seconds: float | None = None


def parse_configured(rows: Sequence[Row]) -> bool:
    """`query_response_time_plugin` rows: True for an ACTIVE plugin with stats ON."""
    return bool(rows) and text(rows[0].get("plugin_status")).upper() == "ACTIVE" \
        and is_on(rows[0].get("stats"))


def parse_ranges(rows: Iterable[Row]) -> ResponseTimeFacts:
    """QUERY_RESPONSE_TIME rows (time, count, total) -> cumulative buckets. Rows whose
    bound or count is not a number (other than TOO LONG) are skipped."""
    ranges: list[tuple[float, float]] = []
    total_seconds: float | None = None
    for row in rows:
        bound_text = text(row.get("time")).strip()
        count = number(row.get("count"))
        if count is None:
            continue
        bound = float("inf") if bound_text.upper() == OVERFLOW else number(bound_text)
        if bound is None:
            continue
        ranges.append((bound, count))
        spent = number(text(row.get("total")).strip())
        if spent is not None:
            total_seconds = (total_seconds or 0.0) + spent
    buckets: list[tuple[float, float]] = []
    running = 0.0
    for bound, count in sorted(ranges):
        running += count
        buckets.append((bound, running))
    if buckets and buckets[-1][0] != float("inf"):
        buckets.append((float("inf"), running))
    return ResponseTimeFacts(True, tuple(buckets), total_seconds)


def le_label(bound: float) -> str:
    """An upper bound as Prometheus writes `le`: "+Inf", else the shortest float text."""
    return "+Inf" if bound == float("inf") else repr(float(bound))


def response_time_samples(facts: ResponseTimeFacts) -> Iterator[Sample]:
    yield Sample(CONFIGURED.name, 1.0 if facts.configured else 0.0)
    for bound, count in facts.buckets:
        yield Sample(BUCKETS.name, count, {"le": le_label(bound)})
    if facts.buckets and facts.seconds is not None:
        yield Sample(SECONDS.name, facts.seconds)


class MariaDBQueryResponseTime(Collector[ResponseTimeFacts]):
    name = "mariadb_query_response_time"
    help = ("Cumulative query response-time buckets (le in seconds) and their total time from "
            "MariaDB's Query Response Time plugin; whether the plugin is collecting.")
    kind = "mysql"
    flavors = frozenset({"mariadb"})
    metrics = METRICS

    def read(self, conn: Connection) -> ResponseTimeFacts:
        if not parse_configured(conn.query("query_response_time_plugin")):
            return ResponseTimeFacts(False)
        return parse_ranges(query(conn, "query_response_time", PROCESS))

    def samples(self, facts: ResponseTimeFacts) -> Iterable[Sample]:
        return response_time_samples(facts)
