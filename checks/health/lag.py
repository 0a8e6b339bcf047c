"""check lag: how far behind its source a replica is, in seconds.

MySQL/MariaDB: from the heartbeat table when the target reads one (`heartbeat: {mode:
read}` in the config, or `--heartbeat-table` with `--node`) -- sub-second, and it keeps
growing while replication is stopped -- else Seconds_Behind_Source, which the server
reports as NULL once a thread stops: that is CRITICAL ("lag unknown"), not OK (the
mysql_heartbeat and mysql_replication collectors' facts). PostgreSQL standby: the
postgres_replication collector's lag, 0 when everything received is replayed. Primaries
are OK ("not a replica").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import (
    HealthCheck,
    Measured,
    NodeOutcome,
    Thresholds,
    nothing_to_check,
)
from dbgauge.toolkit.errors import CheckFailed
from dbgauge.toolkit.result import Finding, Status

if TYPE_CHECKING:
    from dbgauge.collectors.mysql_replication import ReplicaStatus
    from dbgauge.collectors.postgres_replication import LocalReplication
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def heartbeat_lag(conn: Connection) -> Measured:
    """The lag by the source's heartbeat row, read on `conn` (whose target reads a
    heartbeat table); QueryError when the table or the row is missing."""
    from dbgauge.collectors.mysql_heartbeat import read_heartbeat

    reading = read_heartbeat(conn).reading
    if reading is None:
        raise CheckFailed("no heartbeat settings on the connection")
    return Measured(reading.lag, f"lag {reading.lag:.2f} s (heartbeat of server_id "
                                 f"{reading.source.server_id})")


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
    """Replay lag of a PostgreSQL server's replication state already read."""
    if not local.in_recovery:
        return nothing_to_check(node, "not a standby")
    lag = local.lag_seconds
    if lag is None:
        return NodeOutcome(node.name, (Finding(
            Status.UNKNOWN, node.name, "lag-unknown",
            "lag unknown: no WAL receiver position (archive recovery?)"),), note="lag unknown")
    return Measured(lag, f"lag {lag:.2f} s (replay)")


def _read(node: Target, conn: Connection) -> Measured | NodeOutcome:
    if node.kind == "mysql":
        from dbgauge.collectors.mysql_replication import read_channels

        return heartbeat_lag(conn) if node.reads_heartbeat else channels_lag(
            node, read_channels(conn))
    from dbgauge.collectors.postgres_replication import read_local

    return standby_lag(node, read_local(conn))


CHECK = HealthCheck(
    name="lag", summary="Replication lag in seconds (heartbeat when configured).",
    measures="replication lag, seconds", kinds=frozenset({"mysql", "postgres"}),
    metric="lag_seconds", read=_read, defaults=Thresholds.above(30.0, 120.0),
    unit="seconds", finding="lag", takes_heartbeat_table=True)
