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

from dbgauge.checks.health.heartbeat import heartbeat_reading
from dbgauge.checks.health.model import Measured, NodeOutcome, Thresholds, judged, not_applicable
from dbgauge.collectors.mysql_replication import ReplicaStatus, read_channels
from dbgauge.collectors.postgres_replication import LocalReplication, read_local
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.result import Finding, Status
from dbgauge.toolkit.targets import Target

NAME = "lag"
HELP = ("Replication lag in seconds: heartbeat when configured, else Seconds_Behind_Source "
        "(MySQL/MariaDB); replay lag of a PostgreSQL standby.")
KINDS = frozenset({"mysql", "postgres"})
DEFAULTS: Thresholds | None = Thresholds.above(30.0, 120.0)
METRIC = "lag_seconds"


def _mysql(node: Target, conn: Connection, limits: Thresholds) -> NodeOutcome:
    settings = node.heartbeat
    if settings is not None and settings.mode == "read":
        reading = heartbeat_reading(conn)  # the connection's target has the settings
        lag = reading.lag
        return judged(node, limits, Measured(
            lag, f"lag {lag:.2f} s (heartbeat of server_id {reading.source.server_id})"),
            kind="lag", metric=METRIC)
    return judge_channels(node, read_channels(conn), limits)


def judge_channels(node: Target, channels: Sequence[ReplicaStatus], limits: Thresholds | None
                   ) -> NodeOutcome:
    """Seconds_Behind_Source of channels already read (`dbgauge status` reads them once)."""
    chosen = limits or DEFAULTS
    assert chosen is not None
    if not channels:
        return not_applicable(node, "not a replica (no replication channel)")
    unknown = [c for c in channels if c.seconds_behind is None]
    if unknown:
        names = ", ".join(f"'{c.channel}'" if c.channel else "default" for c in unknown)
        return NodeOutcome(node.name, (Finding(
            Status.CRITICAL, node.name, "lag-unknown",
            f"lag unknown: Seconds_Behind_Source is NULL on channel {names} (a replication "
            "thread is stopped or not connected); configure a heartbeat to measure it"),),
            note="lag unknown")
    lag = max(c.seconds_behind or 0.0 for c in channels)
    return judged(node, chosen, Measured(lag, f"lag {lag:.0f} s (Seconds_Behind_Source)"),
                  kind="lag", metric=METRIC)


def _postgres(node: Target, conn: Connection, limits: Thresholds) -> NodeOutcome:
    return judge_standby(node, read_local(conn), limits)


def judge_standby(node: Target, local: LocalReplication, limits: Thresholds | None
                  ) -> NodeOutcome:
    """Replay lag of a PostgreSQL server's replication state already read."""
    chosen = limits or DEFAULTS
    assert chosen is not None
    if not local.in_recovery:
        return not_applicable(node, "not a standby")
    lag = local.lag_seconds
    if lag is None:
        return NodeOutcome(node.name, (Finding(
            Status.UNKNOWN, node.name, "lag-unknown",
            "lag unknown: no WAL receiver position (archive recovery?)"),), note="lag unknown")
    return judged(node, chosen, Measured(lag, f"lag {lag:.2f} s (replay)"), kind="lag",
                  metric=METRIC)


def evaluate(node: Target, conn: Connection, limits: Thresholds | None) -> NodeOutcome:
    chosen = limits or DEFAULTS
    assert chosen is not None
    return _mysql(node, conn, chosen) if node.kind == "mysql" else _postgres(node, conn, chosen)
