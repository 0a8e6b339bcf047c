"""mysql_replication: replica threads, lag, errors and GTID backlog per channel; read_only.

The statement follows flavor and version: MySQL 8.0.22+ and 8.4 `SHOW REPLICA STATUS`
(Source/Replica column names), older MySQL 8.0 `SHOW SLAVE STATUS`, MariaDB `SHOW ALL
SLAVES STATUS` (every named connection). `parse_replica_status` reads either naming.
`read` returns `ReplicationFacts` (the channels and the server's flags); `read_channels`
and `read_flags` are its two halves, for checks that need only one of them.

Nothing here silently disappears: `dbgauge_mysql_replication_configured` is 0 on a
primary or after RESET REPLICA ALL, and when the server reports Seconds_Behind_Source as
NULL (SQL or IO thread stopped, IO thread not yet connected) the seconds-behind series is
left out and `..._seconds_behind_source_unknown` says 1 -- alert on both, or use the
heartbeat lag, which keeps growing while the SQL thread is stopped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from dbgauge.toolkit.db import Connection, Row, ServerInfo
from dbgauge.toolkit.db.privileges import (
    PROCESS,
    PS_SELECT,
    REPLICA_MONITOR,
    process_hidden,
    query,
)
from dbgauge.toolkit.db.values import is_on, number, text
from dbgauge.toolkit.errors import Incomplete
from dbgauge.toolkit.gtid import GtidSet, parse_mariadb_gtids
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample, present

CONFIGURED = MetricSpec(
    "dbgauge_mysql_replication_configured", "gauge",
    "1 if this server has at least one replication channel configured (SHOW REPLICA STATUS "
    "returns a row), else 0: the per-channel series below exist only while it is 1.")
IO_RUNNING = MetricSpec(
    "dbgauge_mysql_replica_io_running", "gauge",
    "1 if the replication I/O (receiver) thread is running and connected (Replica_IO_Running "
    "= Yes), 0 if it is stopped or still connecting.", ("channel",))
SQL_RUNNING = MetricSpec(
    "dbgauge_mysql_replica_sql_running", "gauge",
    "1 if the replication SQL (applier) thread is running (Replica_SQL_Running = Yes).",
    ("channel",))
SECONDS_BEHIND = MetricSpec(
    "dbgauge_mysql_replica_seconds_behind_source", "gauge",
    "Seconds_Behind_Source as the server reports it; absent while the server reports NULL "
    "(see ..._seconds_behind_source_unknown).", ("channel",))
SECONDS_BEHIND_UNKNOWN = MetricSpec(
    "dbgauge_mysql_replica_seconds_behind_source_unknown", "gauge",
    "1 while Seconds_Behind_Source is NULL (a replication thread is stopped or not "
    "connected, so the server cannot tell the lag), else 0.", ("channel",))
SQL_DELAY = MetricSpec(
    "dbgauge_mysql_replica_sql_delay_seconds", "gauge",
    "Configured delayed replication (SQL_Delay, SOURCE_DELAY); 0 when not delayed.",
    ("channel",))
LAST_IO_ERRNO = MetricSpec(
    "dbgauge_mysql_replica_last_io_errno", "gauge",
    "Error number of the last I/O thread error (Last_IO_Errno); 0 when none.", ("channel",))
LAST_SQL_ERRNO = MetricSpec(
    "dbgauge_mysql_replica_last_sql_errno", "gauge",
    "Error number of the last SQL thread error (Last_SQL_Errno); 0 when none.", ("channel",))
RELAY_LOG_SPACE = MetricSpec(
    "dbgauge_mysql_replica_relay_log_space_bytes", "gauge",
    "Total size of the channel's relay logs (Relay_Log_Space).", ("channel",))
SOURCE_SERVER_ID = MetricSpec(
    "dbgauge_mysql_replica_source_server_id", "gauge",
    "server_id of the source the channel replicates from (Source_Server_Id; 0 before the "
    "I/O thread first connected).", ("channel",))
GTID_PENDING = MetricSpec(
    "dbgauge_mysql_replica_gtid_pending_transactions", "gauge",
    "Transactions received into the relay log but not applied yet. MySQL: size of "
    "Retrieved_Gtid_Set minus Executed_Gtid_Set; MariaDB: Gtid_IO_Pos minus Gtid_Slave_Pos "
    "sequence numbers per domain. Absent when the channel does not use GTIDs.", ("channel",))
READ_ONLY = MetricSpec("dbgauge_mysql_read_only", "gauge",
                       "1 if the server refuses writes from ordinary users (@@read_only).")
SUPER_READ_ONLY = MetricSpec(
    "dbgauge_mysql_super_read_only", "gauge",
    "1 if the server refuses writes from SUPER users too (@@super_read_only; MySQL only).")
CONNECTED_REPLICAS = MetricSpec(
    "dbgauge_mysql_connected_replicas", "gauge",
    "Replicas streaming the binlog from this server right now (Binlog Dump threads).")
METRICS = MetricTable(CONFIGURED, IO_RUNNING, SQL_RUNNING, SECONDS_BEHIND,
                      SECONDS_BEHIND_UNKNOWN, SQL_DELAY, LAST_IO_ERRNO, LAST_SQL_ERRNO,
                      RELAY_LOG_SPACE, SOURCE_SERVER_ID, GTID_PENDING, READ_ONLY,
                      SUPER_READ_ONLY, CONNECTED_REPLICAS)


@dataclass(frozen=True)
class ReplicaStatus:
    """One replication channel, whichever naming the server used."""

    channel: str
    io_thread: str  # Yes, No or Connecting
    sql_running: bool
    seconds_behind: float | None
    sql_delay: float | None
    last_io_errno: int
    last_sql_errno: int
    relay_log_space: float | None
    source_server_id: int | None
    gtid_pending: int | None
    source_host: str = ""
    source_port: int | None = None
    source_uuid: str = ""  # lowercased; MySQL only
    last_io_error: str = ""
    last_sql_error: str = ""
    # every column as the server named and wrote it (None for NULL), in its order: what
    # `--compat mysqld_exporter` reads, as mysqld_exporter reads every column
    columns: tuple[tuple[str, str | None], ...] = ()

    @property
    def io_running(self) -> bool:
        return is_on(self.io_thread)


def _col(row: Row, *names: str) -> Any:
    """The first of `names` present in `row` (Source/Replica names first, then Master/Slave)."""
    for name in names:
        if name in row:
            return row[name]
    return None


def gtid_subtract_count(minuend: str, subtrahend: str) -> int:
    """How many GTIDs are in `minuend` and not in `subtrahend` (GTID_SUBTRACT, counted)."""
    return len(GtidSet.parse(minuend) - GtidSet.parse(subtrahend))


def _seq_by_domain(position: str) -> dict[int, int]:
    """MariaDB GTID position 'domain-server-seq,...' -> the highest seq per domain."""
    out: dict[int, int] = {}
    for gtid in parse_mariadb_gtids(position):
        out[gtid.domain] = max(out.get(gtid.domain, 0), gtid.seq)
    return out


def _gtid_pending(row: Row) -> int | None:
    io_pos = text(row.get("Gtid_IO_Pos")).strip()
    if "Gtid_IO_Pos" in row:  # MariaDB
        if not io_pos:
            return None
        received = _seq_by_domain(io_pos)
        applied = _seq_by_domain(text(row.get("Gtid_Slave_Pos")))
        domains = [d for d in received if d in applied]
        if not domains:
            return None
        return sum(max(0, received[d] - applied[d]) for d in domains)
    retrieved = text(row.get("Retrieved_Gtid_Set")).strip()
    auto_position = number(row.get("Auto_Position"))
    if not retrieved and not auto_position:
        return None
    return gtid_subtract_count(retrieved, text(row.get("Executed_Gtid_Set")))


def parse_replica_status(row: Row) -> ReplicaStatus:
    """One SHOW REPLICA/SLAVE STATUS or SHOW ALL SLAVES STATUS row -> ReplicaStatus."""
    server_id = number(_col(row, "Source_Server_Id", "Master_Server_Id"))
    port = number(_col(row, "Source_Port", "Master_Port"))
    return ReplicaStatus(
        channel=text(_col(row, "Channel_Name", "Connection_name")),
        io_thread=text(_col(row, "Replica_IO_Running", "Slave_IO_Running")) or "No",
        sql_running=is_on(_col(row, "Replica_SQL_Running", "Slave_SQL_Running")),
        seconds_behind=number(_col(row, "Seconds_Behind_Source", "Seconds_Behind_Master")),
        sql_delay=number(row.get("SQL_Delay")),
        last_io_errno=int(number(row.get("Last_IO_Errno")) or 0),
        last_sql_errno=int(number(row.get("Last_SQL_Errno")) or 0),
        relay_log_space=number(row.get("Relay_Log_Space")),
        source_server_id=None if server_id is None else int(server_id),
        gtid_pending=_gtid_pending(row),
        source_host=text(_col(row, "Source_Host", "Master_Host")).strip(),
        source_port=None if port is None else int(port),
        source_uuid=text(_col(row, "Source_UUID", "Master_UUID")).strip().lower(),
        last_io_error=text(row.get("Last_IO_Error")).strip(),
        last_sql_error=text(row.get("Last_SQL_Error")).strip(),
        columns=tuple((str(name), None if value is None else text(value))
                      for name, value in row.items()),
    )


@dataclass(frozen=True)
class ReplicationFlags:
    """@@read_only and @@super_read_only as the server reports them (1 or 0; None where the
    server has no such variable: MariaDB has no super_read_only) and the Binlog Dump
    threads (None, with `replicas_hidden` saying why and the grant, when the role cannot
    see other accounts' threads: MariaDB's processlist would show its own only)."""

    read_only: float | None = None
    super_read_only: float | None = None
    connected_replicas: int | None = None
    replicas_hidden: str = ""

    @property
    def writable(self) -> bool:
        """Ordinary and SUPER users alike can write (neither flag is on)."""
        return not self.read_only and not self.super_read_only


def parse_flags(row: Row) -> ReplicationFlags:
    """The replication_flags row -> ReplicationFlags (a NULL or absent column is None)."""
    replicas = number(row.get("replicas"))
    return ReplicationFlags(number(row.get("read_only")), number(row.get("super_read_only")),
                            None if replicas is None else int(replicas))


@dataclass(frozen=True)
class ReplicationFacts:
    """What the collector read: every replication channel (none on a primary), the
    server's flags, and the server (which statement, hence which column names)."""

    channels: tuple[ReplicaStatus, ...]
    flags: ReplicationFlags
    server: ServerInfo | None = None


def read_channels(conn: Connection) -> tuple[ReplicaStatus, ...]:
    """Every replication channel of the server (SHOW REPLICA/SLAVE STATUS), parsed."""
    return tuple(parse_replica_status(row)
                 for row in query(conn, "replica_status", REPLICA_MONITOR))


# MySQL counts dump threads in performance_schema.threads, which shows every thread to
# whoever may SELECT it; MariaDB in information_schema.PROCESSLIST, which needs PROCESS.
_FLAGS_NEED = {"mysql": PS_SELECT["mysql"], "mariadb": PROCESS["mariadb"]}


def read_flags(conn: Connection) -> ReplicationFlags:
    """read_only, super_read_only and the connected replicas (None, and why, when the
    role cannot see other accounts' threads)."""
    flags = parse_flags(query(conn, "replication_flags", _FLAGS_NEED)[0])
    if conn.server.flavor == "mariadb" and (why := process_hidden(conn, "replication_flags")):
        return replace(flags, connected_replicas=None,
                       replicas_hidden=f"connected replicas unknown: {why}")
    return flags


def channel_samples(st: ReplicaStatus) -> list[Sample]:
    """The per-channel series of one parsed row."""
    labels = {"channel": st.channel}
    out = [
        Sample(IO_RUNNING.name, 1.0 if st.io_running else 0.0, labels),
        Sample(SQL_RUNNING.name, 1.0 if st.sql_running else 0.0, labels),
        Sample(SECONDS_BEHIND_UNKNOWN.name, 1.0 if st.seconds_behind is None else 0.0, labels),
        Sample(LAST_IO_ERRNO.name, float(st.last_io_errno), labels),
        Sample(LAST_SQL_ERRNO.name, float(st.last_sql_errno), labels),
    ]
    out += present(((SECONDS_BEHIND, st.seconds_behind), (SQL_DELAY, st.sql_delay),
                     (RELAY_LOG_SPACE, st.relay_log_space),
                     (SOURCE_SERVER_ID, st.source_server_id), (GTID_PENDING, st.gtid_pending)),
                    labels)
    return out


class MySQLReplication(Collector[ReplicationFacts]):
    name = "mysql_replication"
    help = ("Replication per channel (threads, Seconds_Behind_Source with a NULL companion, "
            "delay, errors, relay log space, GTID backlog), read_only/super_read_only and "
            "connected replicas.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS

    def read(self, conn: Connection) -> ReplicationFacts:
        channels = read_channels(conn)
        return ReplicationFacts(channels, read_flags(conn), conn.server)

    def samples(self, facts: ReplicationFacts) -> Iterable[Sample]:
        yield Sample(CONFIGURED.name, 1.0 if facts.channels else 0.0)
        for st in facts.channels:
            yield from channel_samples(st)
        flags = facts.flags
        yield from present(((READ_ONLY, flags.read_only),
                            (SUPER_READ_ONLY, flags.super_read_only),
                            (CONNECTED_REPLICAS, flags.connected_replicas)))
        if (why := self.incomplete(facts)) is not None:  # what it could see stands
            raise Incomplete(why)

    def incomplete(self, facts: ReplicationFacts) -> str | None:
        return facts.flags.replicas_hidden or None
