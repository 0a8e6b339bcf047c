"""check lag: how far behind its source a replica is, in seconds.

MySQL/MariaDB: the replication threads with the heartbeat when the target reads one
(`heartbeat: {mode: read}` in the config, or `--heartbeat-table` with `--node`): a stopped
thread is CRITICAL at once, running threads give the row's age (sub-second), and a row no
writer updates is UNKNOWN, not lag (`replica_lag`). Without a heartbeat
Seconds_Behind_Source, which the server reports as NULL once a thread stops: that is
CRITICAL ("lag unknown"), not OK (the mysql_heartbeat and mysql_replication collectors'
facts). PostgreSQL standby: the
postgres_replication collector's lag, 0 when everything received is replayed, the WAL
receiver's silence when it is longer than a working link is ever silent (a stalled
receiver), UNKNOWN when no receiver streams or the role cannot see it. PostgreSQL primary:
the worst lag of the physical standbys streaming from it, as it sees them (a standby silent
longer than wal_receiver_status_interval lags by that silence at least, once it misses
WAL); a logical subscriber's walsender is not a standby (check lag on the subscriber).
A node that replicates from nothing has no lag (OK), unless -S/--replica (check_mysql's
-S) says it must be a replica: then it is a WARNING, as check_mysql's "No slaves defined".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.model import (
    HealthCheck,
    Measured,
    NodeOutcome,
    Thresholds,
    nothing_to_check,
)
from dbgauge.toolkit.errors import QueryError
from dbgauge.toolkit.result import Finding, Status

if TYPE_CHECKING:
    from dbgauge.collectors.mysql_replication import ReplicaStatus
    from dbgauge.collectors.postgres_replication import LocalReplication, PgReplicationFacts
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.heartbeat import HeartbeatReading
    from dbgauge.toolkit.targets import Target


# A heartbeat row this much older than Seconds_Behind_Source (and than a few of the
# writer's intervals) on a replica that has applied all it received: nothing writes it.
STALE_HEARTBEAT_SECONDS = 10.0


def _where(st: ReplicaStatus) -> str:
    return f"channel '{st.channel}'" if st.channel else "replication"


def mysql_lag(node: Target, conn: Connection, channels: Sequence[ReplicaStatus]
              ) -> Measured | NodeOutcome:
    """A MySQL/MariaDB replica's lag from its channels already read and, on a target that
    reads one, the heartbeat: see `replica_lag`."""
    if not node.reads_heartbeat or not channels:
        return channels_lag(node, channels)
    from dbgauge.collectors.mysql_heartbeat import read_heartbeat
    from dbgauge.toolkit.db.privileges import denied

    try:
        reading = read_heartbeat(conn).reading
    except QueryError as exc:
        if denied(exc):  # the grant, not "no writer"
            raise
        return replica_lag(node, channels, None, str(exc))
    interval = node.heartbeat.interval if node.heartbeat is not None else 1.0
    return replica_lag(node, channels, reading, interval=interval)


def replica_lag(node: Target, channels: Sequence[ReplicaStatus],
                reading: HeartbeatReading | None, missing: str = "",
                interval: float = 1.0) -> Measured | NodeOutcome:
    """The threads and the heartbeat together (pure). A stopped thread is CRITICAL: the
    lag grows, whatever the heartbeat's age says yet. Running threads: the heartbeat's
    age is the lag -- unless the row is older than the writer's rhythm and than
    Seconds_Behind_Source while the replica has applied all it received (0): then no
    writer updates it (or nothing arrives), and its age is no lag: UNKNOWN."""
    age = reading.lag if reading is not None else None
    stopped = [Finding(Status.CRITICAL, node.name, "replication-stopped",
                       f"{_where(c)}: {'SQL' if not c.sql_running else 'I/O'} thread "
                       f"{'stopped' if not c.sql_running else c.io_thread}: the lag grows"
                       + (f" (heartbeat {age:.0f} s old)" if age is not None else ""))
               for c in channels if not c.sql_running or not c.io_running]
    if stopped:
        return Measured(age, f"lag {age:.2f} s and growing (heartbeat)", findings=tuple(
            stopped)) if age is not None else NodeOutcome(node.name, tuple(stopped),
                                                          note="replication stopped")
    if reading is None or age is None:
        return _no_writer(node, f"no heartbeat writer: {missing}")
    behind = max(c.seconds_behind or 0.0 for c in channels)
    applied_all = all(c.seconds_behind == 0 for c in channels)
    if applied_all and age > behind + max(STALE_HEARTBEAT_SECONDS, 5 * interval):
        return _no_writer(node, (
            f"no heartbeat writer: the row of server_id {reading.source.server_id} is "
            f"{age:.0f} s old while replication runs and has applied all it received "
            "(Seconds_Behind_Source 0): its age is not lag. Is the writer running on the "
            "source (heartbeat: {mode: write}, or pt-heartbeat --update)?"))
    return Measured(age, f"lag {age:.2f} s (heartbeat of server_id "
                         f"{reading.source.server_id})")


def _no_writer(node: Target, why: str) -> NodeOutcome:
    return NodeOutcome(node.name, (Finding(Status.UNKNOWN, node.name, "no-heartbeat-writer",
                                           why),), note="lag unknown")


def channels_lag(node: Target, channels: Sequence[ReplicaStatus]) -> Measured | NodeOutcome:
    """Seconds_Behind_Source of channels already read (`dbgauge status` reads them once)."""
    if not channels:
        return nothing_to_check(node, "not a replica (no replication channel)")
    unknown = [c for c in channels if c.seconds_behind is None]
    if unknown:
        names = ", ".join(f"'{c.channel}'" if c.channel else "default" for c in unknown)
        return NodeOutcome(node.name, (Finding(
            Status.CRITICAL, node.name, "lag-unknown",
            f"lag unknown: Seconds_Behind_Source is NULL on channel {names} (a replication "
            "thread is stopped or not connected); configure a heartbeat to measure it"),),
            note="lag unknown")
    lag = max(c.seconds_behind or 0.0 for c in channels)
    return Measured(lag, f"lag {lag:.0f} s (Seconds_Behind_Source)")


def standby_lag(node: Target, local: LocalReplication) -> Measured | NodeOutcome:
    """Lag of a PostgreSQL standby's replication state already read: its replay lag, or
    the WAL receiver's silence when that is longer than a working link is ever silent;
    UNKNOWN (with why) when it cannot be known."""
    if not local.in_recovery:
        return nothing_to_check(node, "not a standby")
    lag = local.lag_seconds
    if lag is None:
        return NodeOutcome(node.name, (Finding(
            Status.UNKNOWN, node.name, "lag-unknown", f"lag unknown: {local.lag_unknown}"),),
            note="lag unknown")
    if lag and lag == local.wal_receiver_last_message_age_seconds:
        return Measured(lag, f"lag {lag:.2f} s (nothing received from upstream for "
                             f"{lag:.0f} s)")
    return Measured(lag, f"lag {lag:.2f} s (replay)")


def primary_lag(node: Target, facts: PgReplicationFacts) -> Measured | NodeOutcome:
    """On a PostgreSQL primary: its standbys' lag as it sees them (the worst), so a
    standby whose receiver stalled shows from the side that keeps writing; a primary
    without standbys is OK, one whose walsenders the role cannot see is UNKNOWN."""
    if facts.local.standbys_hidden:
        return NodeOutcome(node.name, (Finding(
            Status.UNKNOWN, node.name, "lag-unknown", f"lag unknown: {facts.local.hidden}"),),
            note="lag unknown")
    standbys = [s for s in facts.physical if s.state == "streaming"]
    if not standbys:
        return nothing_to_check(node, "not a standby, none streaming from it")
    worst = max(standbys, key=lambda s: s.lag_seconds)
    return Measured(worst.lag_seconds, f"standby {worst.application_name} lag "
                                       f"{worst.lag_seconds:.2f} s (seen from the primary)")


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    if node.kind == "mysql":
        from dbgauge.collectors.mysql_replication import read_channels

        channels = read_channels(conn)
        if scope.replica and not channels:
            return _no_replica(node, "no replication channel (SHOW SLAVE STATUS is empty)")
        return mysql_lag(node, conn, channels)
    from dbgauge.collectors.postgres_replication import read_local, read_replication

    local = read_local(conn)
    if scope.replica and not local.in_recovery:
        return _no_replica(node, "not a standby (not in recovery)")
    if local.in_recovery or not (local.standbys or local.standbys_hidden):
        return standby_lag(node, local)
    return primary_lag(node, read_replication(conn, local))


def _no_replica(node: Target, why: str) -> NodeOutcome:
    """-S on a node that replicates from nothing: WARNING, as check_mysql -S says "No
    slaves defined" (without -S such a node is OK: it has no lag)."""
    return NodeOutcome(node.name, (Finding(Status.WARNING, node.name, "not-a-replica",
                                           f"{why}, and -S/--replica says it is one"),),
                       note="not a replica")


CHECK = HealthCheck(
    name="lag", summary="Replication lag in seconds (heartbeat when configured).",
    measures="replication lag, seconds", kinds=frozenset({"mysql", "postgres"}),
    metric="lag_seconds", scoped=_read, plugin_options=frozenset({"replica"}),
    defaults=Thresholds.above(30.0, 120.0), unit="seconds", finding="lag",
    takes_heartbeat_table=True)
