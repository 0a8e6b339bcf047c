"""mysql_status: a small set of server-wide status values (MySQL and MariaDB).

The foundation collector proving the protocol end to end; the InnoDB, replication
and lock-wait collectors come in their own modules. Its facts also serve `check
connections` (Threads_connected against max_connections).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import flag, number, text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample, present

UPTIME = MetricSpec("dbgauge_mysql_uptime_seconds", "gauge",
                    "Seconds since the server started (Uptime).")
THREADS_CONNECTED = MetricSpec("dbgauge_mysql_threads_connected", "gauge",
                               "Open client connections (Threads_connected).")
THREADS_RUNNING = MetricSpec("dbgauge_mysql_threads_running", "gauge",
                             "Threads not sleeping (Threads_running).")
MAX_USED_CONNECTIONS = MetricSpec(
    "dbgauge_mysql_max_used_connections", "gauge",
    "Peak simultaneous connections since start or FLUSH STATUS (Max_used_connections).")
QUESTIONS = MetricSpec("dbgauge_mysql_questions_total", "counter",
                       "Statements sent by clients (Questions).")
CONNECTIONS = MetricSpec("dbgauge_mysql_connections_total", "counter",
                         "Connection attempts, successful or not (Connections).")
ABORTED_CONNECTS = MetricSpec("dbgauge_mysql_aborted_connects_total", "counter",
                              "Failed connection attempts (Aborted_connects).")
ABORTED_CLIENTS = MetricSpec(
    "dbgauge_mysql_aborted_clients_total", "counter",
    "Connections dropped without a proper close (Aborted_clients).")
SLOW_QUERIES = MetricSpec("dbgauge_mysql_slow_queries_total", "counter",
                          "Statements slower than long_query_time (Slow_queries).")
MAX_CONNECTIONS = MetricSpec("dbgauge_mysql_max_connections", "gauge",
                             "Configured connection limit (@@max_connections).")
METRICS = MetricTable(UPTIME, THREADS_CONNECTED, THREADS_RUNNING, MAX_USED_CONNECTIONS,
                      QUESTIONS, CONNECTIONS, ABORTED_CONNECTS, ABORTED_CLIENTS, SLOW_QUERIES,
                      MAX_CONNECTIONS)


@dataclass(frozen=True)
class StatusFacts:
    """The facts: SHOW GLOBAL STATUS values and @@max_connections (None when the server
    did not report one, or reported NULL)."""

    uptime: float | None = None
    threads_connected: float | None = None
    threads_running: float | None = None
    max_used_connections: float | None = None
    questions: float | None = None
    connections: float | None = None
    aborted_connects: float | None = None
    aborted_clients: float | None = None
    slow_queries: float | None = None
    max_connections: float | None = None


def status_value(raw: object) -> float | None:
    """A SHOW STATUS/VARIABLES value as a number: ON/OFF as 1/0; None when not numeric."""
    value = number(raw)
    if value is None:
        on = flag(raw)
        return None if on is None else float(on)
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return value


def parse_status_rows(rows: Iterable[Row]) -> dict[str, float]:
    """SHOW STATUS/VARIABLES rows (Variable_name, Value) -> numeric values by variable
    name; text and NULL left out. The one reader of such rows: this collector, InnoDB's and
    the global status and variables collectors use it."""
    return split_status_rows(rows)[0]


def split_status_rows(rows: Iterable[Row]) -> tuple[dict[str, float], dict[str, str]]:
    """SHOW STATUS/VARIABLES rows -> (numeric values as `parse_status_rows` reads them,
    the text of every other non-NULL value as the server wrote it). A word such as ON or
    Primary is in both when it reads as a number (ON = 1): the text keeps what a peer
    exporter reads differently (Galera's wsrep_cluster_status, uuids, versions)."""
    values: dict[str, float] = {}
    texts: dict[str, str] = {}
    for row in rows:
        name = row.get("Variable_name")
        raw = row.get("Value")
        if not name or raw is None:
            continue
        number_ = number(raw)
        if number_ is not None and number_ == number_ and abs(number_) != float("inf"):
            values[str(name)] = number_
            continue
        texts[str(name)] = text(raw)
        on = flag(raw)
        if on is not None:
            values[str(name)] = float(on)
    return values, texts


def status_facts(status: Mapping[str, float], max_connections: float | None) -> StatusFacts:
    """Status values by variable name and the connection limit -> StatusFacts."""
    return StatusFacts(
        uptime=status.get("Uptime"), threads_connected=status.get("Threads_connected"),
        threads_running=status.get("Threads_running"),
        max_used_connections=status.get("Max_used_connections"),
        questions=status.get("Questions"), connections=status.get("Connections"),
        aborted_connects=status.get("Aborted_connects"),
        aborted_clients=status.get("Aborted_clients"), slow_queries=status.get("Slow_queries"),
        max_connections=max_connections)


def read_status(conn: Connection) -> StatusFacts:
    """The status values and the connection limit: two statements."""
    status = parse_status_rows(conn.query("global_status_basic"))
    rows = conn.query("max_connections")
    return status_facts(status, number(rows[0]["max_connections"]) if rows else None)


class MySQLStatus(Collector[StatusFacts]):
    name = "mysql_status"
    help = "Uptime, threads, connections and statement counters from SHOW GLOBAL STATUS."
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS

    def read(self, conn: Connection) -> StatusFacts:
        return read_status(conn)

    def samples(self, facts: StatusFacts) -> Iterable[Sample]:
        return present(((UPTIME, facts.uptime), (THREADS_CONNECTED, facts.threads_connected),
                        (THREADS_RUNNING, facts.threads_running),
                        (MAX_USED_CONNECTIONS, facts.max_used_connections),
                        (QUESTIONS, facts.questions), (CONNECTIONS, facts.connections),
                        (ABORTED_CONNECTS, facts.aborted_connects),
                        (ABORTED_CLIENTS, facts.aborted_clients),
                        (SLOW_QUERIES, facts.slow_queries),
                        (MAX_CONNECTIONS, facts.max_connections)))
