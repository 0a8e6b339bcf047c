"""mysql_status: a small set of server-wide status values (MySQL and MariaDB).

The foundation collector proving the protocol end to end; the InnoDB, replication
and lock-wait collectors come in their own modules.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolkit.db import Connection
from toolkit.db.values import number
from toolkit.metrics import Collector, MetricSpec, Sample

# SHOW GLOBAL STATUS variable -> exposed metric.
_STATUS = {
    "Uptime": MetricSpec("dbgauge_mysql_uptime_seconds", "gauge",
                         "Seconds since the server started (Uptime)."),
    "Threads_connected": MetricSpec("dbgauge_mysql_threads_connected", "gauge",
                                    "Open client connections (Threads_connected)."),
    "Threads_running": MetricSpec("dbgauge_mysql_threads_running", "gauge",
                                  "Threads not sleeping (Threads_running)."),
    "Max_used_connections": MetricSpec(
        "dbgauge_mysql_max_used_connections", "gauge",
        "Peak simultaneous connections since start or FLUSH STATUS (Max_used_connections)."),
    "Questions": MetricSpec("dbgauge_mysql_questions_total", "counter",
                            "Statements sent by clients (Questions)."),
    "Connections": MetricSpec("dbgauge_mysql_connections_total", "counter",
                              "Connection attempts, successful or not (Connections)."),
    "Aborted_connects": MetricSpec("dbgauge_mysql_aborted_connects_total", "counter",
                                   "Failed connection attempts (Aborted_connects)."),
    "Aborted_clients": MetricSpec(
        "dbgauge_mysql_aborted_clients_total", "counter",
        "Connections dropped without a proper close (Aborted_clients)."),
    "Slow_queries": MetricSpec("dbgauge_mysql_slow_queries_total", "counter",
                               "Statements slower than long_query_time (Slow_queries)."),
}
_MAX_CONNECTIONS = MetricSpec("dbgauge_mysql_max_connections", "gauge",
                              "Configured connection limit (@@max_connections).")


def parse_status_rows(rows: Iterable[dict[str, object]]) -> dict[str, float]:
    """SHOW STATUS rows (Variable_name, Value) -> numeric values by variable name."""
    out: dict[str, float] = {}
    for row in rows:
        value = number(row.get("Value"))
        if value is not None:
            out[str(row.get("Variable_name"))] = value
    return out


class MySQLStatus(Collector):
    name = "mysql_status"
    help = "Uptime, threads, connections and statement counters from SHOW GLOBAL STATUS."
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = (*_STATUS.values(), _MAX_CONNECTIONS)

    def collect(self, conn: Connection) -> Iterable[Sample]:
        status = parse_status_rows(conn.query("global_status_basic"))
        for variable, spec in _STATUS.items():
            if variable in status:
                yield Sample(spec.name, status[variable])
        rows = conn.query("max_connections")
        limit = number(rows[0]["max_connections"]) if rows else None
        if limit is not None:
            yield Sample(_MAX_CONNECTIONS.name, limit)
