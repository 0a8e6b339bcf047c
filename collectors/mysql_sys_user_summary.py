"""mysql_sys_user_summary: per account user, the sys schema's summary of its statements,
file I/O, connections and memory (MySQL 8 and MariaDB 10.6+).

From sys.x$user_summary (performance_schema, summed per user; 'background' is the server's
own threads): which user's statements take the time, scan tables or hold memory. Opt-in,
as mysqld_exporter's `--collect.sys.user_summary` (upstream 0.15+): `limit` (default 1000
users, the most statement latency first) bounds it and `..._truncated` says when users were
left out. Needs SELECT on sys and performance_schema.
"""

from __future__ import annotations

from dbgauge.collectors._summary import (
    PICOSECONDS,
    SummaryCollector,
    limit_option,
    truncated_spec,
)
from dbgauge.toolkit.metrics import MetricSpec, MetricTable, MetricType

_SRC = "sys.x$user_summary"
# column -> (dbgauge suffix, type, what, scale)
COLUMNS_INFO: dict[str, tuple[str, MetricType, str, float]] = {
    "statements": ("statements_total", "counter", "Statements run", 1.0),
    "statement_latency": ("statement_seconds_total", "counter", "Time in statements",
                          PICOSECONDS),
    "table_scans": ("table_scans_total", "counter", "Statements that scanned a table", 1.0),
    "file_ios": ("file_ios_total", "counter", "File I/O operations", 1.0),
    "file_io_latency": ("file_io_seconds_total", "counter", "Time in file I/O", PICOSECONDS),
    "current_connections": ("connections", "gauge", "Connections open now", 1.0),
    "total_connections": ("connections_total", "counter", "Connections made", 1.0),
    "unique_hosts": ("hosts", "gauge", "Distinct hosts the user connected from", 1.0),
    "current_memory": ("memory_bytes", "gauge", "Memory held now (negative when freed by "
                       "another user's thread)", 1.0),
    "total_memory_allocated": ("memory_allocated_bytes_total", "counter", "Memory allocated",
                               1.0),
}
SPECS = {column: MetricSpec(f"dbgauge_mysql_user_summary_{suffix}", type_,
                            f"{what}, per user ({_SRC}.{column}).", ("user",))
         for column, (suffix, type_, what, _) in COLUMNS_INFO.items()}
TRUNCATED = truncated_spec("dbgauge_mysql_user_summary", "users")
METRICS = MetricTable(*SPECS.values(), TRUNCATED)
SYS_AND_PS = {flavor: ("SELECT on sys and performance_schema (GRANT SELECT ON sys.* TO ... and "
                       "GRANT SELECT ON performance_schema.* TO ..., or GRANT SELECT ON *.* TO "
                       "...)") for flavor in ("mysql", "mariadb")}


class MySQLSysUserSummary(SummaryCollector):
    name = "mysql_sys_user_summary"
    help = ("Per user statements, latency, table scans, file I/O, connections and memory "
            "from the sys schema (x$user_summary), the top N users; opt-in.")
    metrics = METRICS
    options = limit_option(1000, "users, the most statement latency first")
    statement = "sys_user_summary"
    keys = ("account_user",)
    columns = tuple(COLUMNS_INFO)
    labels = ("user",)
    families = {column: (SPECS[column], "", scale)
                for column, (_, _, _, scale) in COLUMNS_INFO.items()}
    truncated = TRUNCATED
    privilege = SYS_AND_PS
