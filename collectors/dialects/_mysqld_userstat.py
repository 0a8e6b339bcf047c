"""mysqld_exporter's user-statistics scrapers (info_schema.userstats, clientstats,
tablestats, schemastats; the same names in Debian's 0.14 and upstream), from the facts of
dbgauge's mysql_user_statistics: merged into the mysqld_exporter dialect (`FAMILIES`,
`TRANSLATE`).

The peer reads `SELECT *` and names a family per column: the columns it knows typed, any
other one untyped as `..._statistics_<column>` ("Unsupported metric from column ...").
MariaDB 10.11's USER_STATISTICS has MAX_STATEMENT_TIME_EXCEEDED, which the peer's user map
lacks (its client map has it): untyped for users, a counter for clients, as the peer's.
The peer's ROWS_FETCHED and TABLE_ROWS_READ (Percona Server's) do not exist on MariaDB.
"""

from __future__ import annotations

from collections.abc import Iterator

from dbgauge.collectors.mysql_user_statistics import ACTIVITY, UserStatisticsFacts
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec, Translate
from dbgauge.toolkit.metrics import MetricType, Sample

_IS = "mysql_info_schema_"
_TOP_N = "dbgauge keeps the collector's top N (`limit`, each list); the peer has no limit"
# column -> (family suffix, type, help with {who} and {whose}), the peer's client map
# (collector/info_schema_clientstats.go); its user map is the same but for the four
# "user's" below and MAX_STATEMENT_TIME_EXCEEDED
_PEER: dict[str, tuple[str, MetricType, str]] = {
    "total_connections": ("total_connections", "counter",
        "The number of connections created for this {who}."),
    "concurrent_connections": ("concurrent_connections", "gauge",
        "The number of concurrent connections for this {who}."),
    "connected_time": ("connected_time_seconds_total", "counter",
        "The cumulative number of seconds elapsed while there were connections from this "
        "{who}."),
    "busy_time": ("busy_seconds_total", "counter",
        "The cumulative number of seconds there was activity on connections from this "
        "{who}."),
    "cpu_time": ("cpu_time_seconds_total", "counter",
        "The cumulative CPU time elapsed, in seconds, while servicing this {who}'s "
        "connections."),
    "bytes_received": ("bytes_received_total", "counter",
        "The number of bytes received from this {whose} connections."),
    "bytes_sent": ("bytes_sent_total", "counter",
        "The number of bytes sent to this {whose} connections."),
    "binlog_bytes_written": ("binlog_bytes_written_total", "counter",
        "The number of bytes written to the binary log from this {whose} connections."),
    "rows_read": ("rows_read_total", "counter",
        "The number of rows read by this {whose} connections."),
    "rows_sent": ("rows_sent_total", "counter",
        "The number of rows sent by this {whose} connections."),
    "rows_deleted": ("rows_deleted_total", "counter",
        "The number of rows deleted by this {whose} connections."),
    "rows_inserted": ("rows_inserted_total", "counter",
        "The number of rows inserted by this {whose} connections."),
    "rows_fetched": ("rows_fetched_total", "counter",
        "The number of rows fetched by this {whose} connections."),
    "rows_updated": ("rows_updated_total", "counter",
        "The number of rows updated by this {whose} connections."),
    "table_rows_read": ("table_rows_read_total", "counter",
        "The number of rows read from tables by this {whose} connections. (It may be "
        "different from ROWS_FETCHED.)"),
    "select_commands": ("select_commands_total", "counter",
        "The number of SELECT commands executed from this {whose} connections."),
    "update_commands": ("update_commands_total", "counter",
        "The number of UPDATE commands executed from this {whose} connections."),
    "other_commands": ("other_commands_total", "counter",
        "The number of other commands executed from this {whose} connections."),
    "commit_transactions": ("commit_transactions_total", "counter",
        "The number of COMMIT commands issued by this {whose} connections."),
    "rollback_transactions": ("rollback_transactions_total", "counter",
        "The number of ROLLBACK commands issued by this {whose} connections."),
    "denied_connections": ("denied_connections_total", "counter",
        "The number of connections denied to this {who}."),
    "lost_connections": ("lost_connections_total", "counter",
        "The number of this {whose} connections that were terminated uncleanly."),
    "access_denied": ("access_denied_total", "counter",
        "The number of times this {whose} connections issued commands that were denied."),
    "empty_queries": ("empty_queries_total", "counter",
        "The number of times this {whose} connections sent empty queries to the server."),
    "total_ssl_connections": ("total_ssl_connections_total", "counter",
        "The number of times this {whose} connections connected using SSL to the server."),
    "max_statement_time_exceeded": ("max_statement_time_exceeded_total", "counter",
        "The number of times a statement was aborted, because it was executed longer than"
        " its MAX_STATEMENT_TIME threshold."),
}
_STRAIGHT = frozenset({"rows_read", "rows_sent", "rows_deleted", "rows_inserted"})
_USER_LACKS = "max_statement_time_exceeded"


def _activity_family(who: str, column: str) -> PeerFamily:
    ours = f"dbgauge_mysql_{who}_stats_{ACTIVITY[column][0]}"
    if who == "user" and column == _USER_LACKS:
        return PeerFamily(PeerSpec(f"{_IS}user_statistics_{column}", "untyped",
                                   f"Unsupported metric from column {column.upper()}",
                                   ("user",)), ours, _TOP_N)
    suffix, type_, help_ = _PEER[column]
    whose = f"{who}'s" if who == "user" and column in _STRAIGHT else f"{who}\u2019s"
    return PeerFamily(PeerSpec(f"{_IS}{who}_statistics_{suffix}", type_,
                               help_.format(who=who, whose=whose), (who,)), ours, _TOP_N)


_TABLE_HELP = {
    "rows_read": ("rows_read_total", "The number of rows read from the {}."),
    "rows_changed": ("rows_changed_total", "The number of rows changed in the {}."),
    "rows_changed_x_indexes": ("rows_changed_x_indexes_total", "The number of rows changed "
                               "in the {}, multiplied by the number of indexes changed."),
}


def _table_family(what: str, column: str, labels: tuple[str, ...]) -> PeerFamily:
    suffix, help_ = _TABLE_HELP[column]
    return PeerFamily(PeerSpec(f"{_IS}{what}_statistics_{suffix}", "counter",
                               help_.format(what), labels),
                      f"dbgauge_mysql_{what}_stats_{column}_total", _TOP_N)


_USER = {column: _activity_family("user", column) for column in ACTIVITY}
_CLIENT = {column: _activity_family("client", column) for column in ACTIVITY}
_TABLE = {column: _table_family("table", column, ("schema", "table")) for column in _TABLE_HELP}
_SCHEMA = {column: _table_family("schema", column, ("schema",)) for column in _TABLE_HELP}
FAMILIES: tuple[PeerFamily, ...] = (*_USER.values(), *_CLIENT.values(), *_TABLE.values(),
                                    *_SCHEMA.values())
_MINE = PeerFamilies(*FAMILIES)


def user_statistics(facts: UserStatisticsFacts) -> Iterator[Sample]:
    """The four scrapers' families: a sample per (row, column) the row has."""
    for summary, families, labels in (
            (facts.users, _USER, ("user",)), (facts.clients, _CLIENT, ("client",)),
            (facts.tables, _TABLE, ("schema", "table")), (facts.schemas, _SCHEMA, ("schema",))):
        for row in summary.rows:
            keys = dict(zip(labels, row.keys, strict=True))
            for column, family in families.items():
                if (value := row.values.get(column)) is not None:
                    yield _MINE.sample(family.spec.name, value, keys)


TRANSLATE: dict[str, Translate] = {"mysql_user_statistics": user_statistics}
