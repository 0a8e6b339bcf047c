"""mysql_user_statistics: MariaDB's user statistics (userstat=ON): per user and per client
host the connections, busy and CPU time, bytes, rows and commands; per table and per schema
the rows read and changed.

From information_schema.USER_STATISTICS, CLIENT_STATISTICS and TABLE_STATISTICS (the
schemas' sums over every table). The server gathers them only with `userstat=ON`; with it
off the tables hold stale or no rows, so the collector fails saying what to set rather than
report them. Without PROCESS the server answers USER_STATISTICS and CLIENT_STATISTICS with
no rows at all, so PROCESS is asked for first; TABLE_STATISTICS lists only the tables the
account may SELECT (docs/mysql.md). Opt-in, as mysqld_exporter's `--collect.info_schema.
userstats`, `clientstats`, `tablestats` and `schemastats`: `limit` (default 1000) bounds each
of the four lists (the busiest first) and a `..._truncated` gauge each says when rows were
left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.collectors._summary import (
    Summary,
    limit_option,
    per_column,
    read_summary,
    truncated_sample,
    truncated_spec,
)
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.privileges import PROCESS, has_process
from dbgauge.toolkit.db.values import is_on
from dbgauge.toolkit.errors import DbgaugeError, QueryError
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, MetricType, Sample

_US = "information_schema.USER_STATISTICS/CLIENT_STATISTICS"
# column -> (dbgauge suffix, type, what it counts) for both USER_ and CLIENT_STATISTICS
ACTIVITY: dict[str, tuple[str, MetricType, str]] = {
    "total_connections": ("connections_total", "counter", "Connections made"),
    "concurrent_connections": ("concurrent_connections", "gauge",
                               "Connections open now (CONCURRENT_CONNECTIONS)"),
    "connected_time": ("connected_seconds_total", "counter",
                       "Seconds while there were connections"),
    "busy_time": ("busy_seconds_total", "counter", "Seconds of activity on the connections"),
    "cpu_time": ("cpu_seconds_total", "counter", "CPU seconds serving the connections"),
    "bytes_received": ("received_bytes_total", "counter", "Bytes received"),
    "bytes_sent": ("sent_bytes_total", "counter", "Bytes sent"),
    "binlog_bytes_written": ("binlog_written_bytes_total", "counter",
                             "Bytes written to the binary log"),
    "rows_read": ("rows_read_total", "counter", "Rows read"),
    "rows_sent": ("rows_sent_total", "counter", "Rows sent"),
    "rows_deleted": ("rows_deleted_total", "counter", "Rows deleted"),
    "rows_inserted": ("rows_inserted_total", "counter", "Rows inserted"),
    "rows_updated": ("rows_updated_total", "counter", "Rows updated"),
    "select_commands": ("select_commands_total", "counter", "SELECT commands"),
    "update_commands": ("update_commands_total", "counter", "Data-changing commands"),
    "other_commands": ("other_commands_total", "counter", "Other commands"),
    "commit_transactions": ("commits_total", "counter", "COMMITs"),
    "rollback_transactions": ("rollbacks_total", "counter", "ROLLBACKs"),
    "denied_connections": ("denied_connections_total", "counter", "Connections refused"),
    "lost_connections": ("lost_connections_total", "counter",
                         "Connections ended uncleanly"),
    "access_denied": ("access_denied_total", "counter", "Commands refused for privileges"),
    "empty_queries": ("empty_queries_total", "counter", "Empty queries"),
    "total_ssl_connections": ("ssl_connections_total", "counter", "TLS connections made"),
    "max_statement_time_exceeded": ("max_statement_time_exceeded_total", "counter",
                                    "Statements stopped by max_statement_time"),
}
TABLE_COLUMNS = ("rows_read", "rows_changed", "rows_changed_x_indexes")
_TABLE_HELP = {"rows_read": "Rows read from", "rows_changed": "Rows changed in",
               "rows_changed_x_indexes": "Rows changed times the indexes changed, in"}


def _activity(who: str) -> dict[str, MetricSpec]:
    return {column: MetricSpec(f"dbgauge_mysql_{who}_stats_{suffix}", type_,
                               f"{what}, per {who} ({_US}.{column.upper()}).", (who,))
            for column, (suffix, type_, what) in ACTIVITY.items()}


def _tables(what: str, labels: tuple[str, ...]) -> dict[str, MetricSpec]:
    return {column: MetricSpec(f"dbgauge_mysql_{what}_stats_{column}_total", "counter",
                               f"{_TABLE_HELP[column]} the {what} "
                               f"(information_schema.TABLE_STATISTICS.{column.upper()}).",
                               labels)
            for column in TABLE_COLUMNS}


USER = _activity("user")
CLIENT = _activity("client")
TABLE = _tables("table", ("schema", "table"))
SCHEMA = _tables("schema", ("schema",))
TRUNCATED = {what: truncated_spec(f"dbgauge_mysql_{what}_stats", plural) for what, plural in
             (("user", "users"), ("client", "client hosts"), ("table", "tables"),
              ("schema", "schemas"))}
METRICS = MetricTable(*USER.values(), *CLIENT.values(), *TABLE.values(), *SCHEMA.values(),
                      *TRUNCATED.values())
USERSTAT_OFF = ("user statistics are off on this server (userstat=OFF): set userstat=ON "
                "(SET GLOBAL userstat=ON, and userstat=ON under [mysqld] to keep it)")


@dataclass(frozen=True)
class UserStatisticsFacts:
    """The four lists, each its busiest rows up to `limit`: users and client hosts (keys:
    the name; ACTIVITY's columns), tables (schema, table) and schemas (schema)."""

    users: Summary
    clients: Summary
    tables: Summary
    schemas: Summary


def read_user_statistics(conn: Connection, limit: int) -> UserStatisticsFacts:
    """userstat first (off: the tables are not being kept), then PROCESS (without it the
    per-user and per-client tables are empty), then the four statements."""
    rows = conn.query("userstat_enabled")
    if not rows or not is_on(rows[0].get("userstat")):
        raise DbgaugeError(f"mysql_user_statistics: {USERSTAT_OFF}")
    if not has_process(conn):
        raise QueryError(f"mysql_user_statistics needs {PROCESS['mariadb']}: without it the "
                         "server answers USER_STATISTICS and CLIENT_STATISTICS with no rows",
                         errno=1227)
    activity = tuple(ACTIVITY)
    return UserStatisticsFacts(
        read_summary(conn, "user_statistics", PROCESS, ("user",), activity, limit),
        read_summary(conn, "client_statistics", PROCESS, ("client",), activity, limit),
        read_summary(conn, "table_statistics", PROCESS, ("table_schema", "table_name"),
                     TABLE_COLUMNS, limit),
        read_summary(conn, "schema_statistics", PROCESS, ("table_schema",), TABLE_COLUMNS,
                     limit))


def _plain(specs: dict[str, MetricSpec]) -> dict[str, tuple[MetricSpec, str, float]]:
    return {column: (spec, "", 1.0) for column, spec in specs.items()}


def user_statistics_samples(facts: UserStatisticsFacts) -> Iterator[Sample]:
    for what, summary in (("user", facts.users), ("client", facts.clients),
                          ("table", facts.tables), ("schema", facts.schemas)):
        yield truncated_sample(TRUNCATED[what], summary)
    yield from per_column(facts.users, ("user",), _plain(USER))
    yield from per_column(facts.clients, ("client",), _plain(CLIENT))
    yield from per_column(facts.tables, ("schema", "table"), _plain(TABLE))
    yield from per_column(facts.schemas, ("schema",), _plain(SCHEMA))


class MySQLUserStatistics(Collector[UserStatisticsFacts]):
    name = "mysql_user_statistics"
    help = ("MariaDB's user statistics (userstat=ON): activity per user and client host, "
            "rows read and changed per table and schema, the busiest N each; opt-in.")
    kind = "mysql"
    flavors = frozenset({"mariadb"})
    default_enabled = False
    metrics = METRICS
    options = limit_option(1000, "users, client hosts, tables and schemas (each)")

    def read(self, conn: Connection) -> UserStatisticsFacts:
        return read_user_statistics(conn, int(self.setting("limit")))

    def samples(self, facts: UserStatisticsFacts) -> Iterable[Sample]:
        return user_statistics_samples(facts)
