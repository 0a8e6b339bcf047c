"""check replication: are replication threads running, without errors?

MySQL/MariaDB: every channel of SHOW REPLICA/SLAVE STATUS (the mysql_replication
collector's statement and parser): a stopped SQL or I/O thread is CRITICAL with the
server's last error, an I/O thread still connecting or a recorded error on running
threads is WARNING. PostgreSQL standby: the WAL receiver must be streaming (else
CRITICAL), paused replay is WARNING; primary: standbys not streaming and inactive or
lost replication slots (the postgres_replication collector's statements). A server that
is not replicating at all is OK and says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from checks.health.model import NodeOutcome, Thresholds, not_applicable
from collectors.mysql_replication import parse_replica_status
from toolkit.db import Connection
from toolkit.db.privileges import REPLICA_MONITOR, query
from toolkit.db.values import number, text
from toolkit.result import Finding, Status, perf_label
from toolkit.targets import Target

NAME = "replication"
HELP = ("Replication threads running and error-free (MySQL/MariaDB channels); standby WAL "
        "receiver streaming, replay not paused, slots in use (PostgreSQL).")
KINDS = frozenset({"mysql", "postgres"})
DEFAULTS: Thresholds | None = None
METRIC = "channels_running"


def channel_findings(node: str, row: Mapping[str, Any]) -> list[Finding]:
    """Problems of one SHOW REPLICA/SLAVE STATUS row (pure: unit-tested on captured rows)."""
    st = parse_replica_status(row)
    where = f"channel '{st.channel}'" if st.channel else "replication"
    sql_error = text(row.get("Last_SQL_Error")).strip()
    io_error = text(row.get("Last_IO_Error")).strip()
    out = []
    if not st.sql_running:
        why = f": error {st.last_sql_errno}: {sql_error}" if st.last_sql_errno else ""
        out.append(Finding(Status.CRITICAL, node, "sql-thread-stopped",
                           f"{where}: SQL thread stopped{why}"))
    if st.io_thread == "No":
        why = f": error {st.last_io_errno}: {io_error}" if st.last_io_errno else ""
        out.append(Finding(Status.CRITICAL, node, "io-thread-stopped",
                           f"{where}: I/O thread stopped{why}"))
    elif not st.io_running:
        why = f" (last error {st.last_io_errno}: {io_error})" if st.last_io_errno else ""
        out.append(Finding(Status.WARNING, node, "io-thread-connecting",
                           f"{where}: I/O thread is {st.io_thread}{why}"))
    elif st.sql_running and (st.last_io_errno or st.last_sql_errno):
        errno = st.last_sql_errno or st.last_io_errno
        out.append(Finding(Status.WARNING, node, "replication-error",
                           f"{where}: running, but the last error ({errno}) is still "
                           f"recorded: {sql_error or io_error}"))
    return out


def _mysql(node: Target, conn: Connection) -> NodeOutcome:
    rows = query(conn, "replica_status", REPLICA_MONITOR)
    if not rows:
        return not_applicable(node, "not a replica (no replication channel)")
    findings = [f for row in rows for f in channel_findings(node.name, row)]
    running = sum(1 for row in rows if not channel_findings(node.name, row))
    perf = ((perf_label(node.name, METRIC), float(running)),
            (perf_label(node.name, "channels"), float(len(rows))))
    return NodeOutcome(node.name, tuple(findings), perf,
                       f"{running} of {len(rows)} channel(s) replicating")


def standby_findings(node: str, local: Mapping[str, Any]) -> list[Finding]:
    """Problems of a PostgreSQL standby (`replication_local` row)."""
    status = str(local.get("wal_receiver_status") or "stopped")
    out = []
    if status != "streaming":
        out.append(Finding(Status.CRITICAL, node, "wal-receiver-not-streaming",
                           f"WAL receiver is {status}, not streaming from its upstream"))
    if local.get("replay_paused") is True:
        out.append(Finding(Status.WARNING, node, "replay-paused",
                           "WAL replay is paused (pg_wal_replay_pause)"))
    return out


def primary_findings(node: str, standbys: Sequence[Mapping[str, Any]],
                     slots: Sequence[Mapping[str, Any]]) -> list[Finding]:
    """Problems a PostgreSQL primary shows (`replication_standbys`, `replication_slots`)."""
    out = []
    for row in standbys:
        state = str(row.get("state") or "")
        if state != "streaming":
            out.append(Finding(Status.WARNING, node, "standby-not-streaming",
                               f"standby {row.get('application_name')} is {state}"))
    for row in slots:
        name, wal_status = row.get("slot_name"), str(row.get("wal_status") or "")
        retained = number(row.get("retained_bytes"))
        if wal_status == "lost":
            out.append(Finding(Status.CRITICAL, node, "slot-lost",
                               f"replication slot {name} lost WAL its consumer needs"))
        elif row.get("active") is not True:
            held = f" and retains {retained:.0f} bytes of WAL" if retained is not None else ""
            out.append(Finding(Status.WARNING, node, "slot-inactive",
                               f"replication slot {name} is inactive{held}"))
    return out


def _postgres(node: Target, conn: Connection) -> NodeOutcome:
    local = conn.query("replication_local")[0]
    if local.get("in_recovery") is True:
        findings = standby_findings(node.name, local)
        perf = ((perf_label(node.name, METRIC), 0.0 if findings else 1.0),)
        return NodeOutcome(node.name, tuple(findings), perf, "standby, streaming")
    standbys = conn.query("replication_standbys") if number(local.get("standbys")) else []
    slots = conn.query("replication_slots") if number(local.get("slots")) else []
    if not standbys and not slots:
        return not_applicable(node, "not replicating (no standby, no slot)")
    findings = primary_findings(node.name, standbys, slots)
    streaming = sum(1 for r in standbys if r.get("state") == "streaming")
    perf = ((perf_label(node.name, METRIC), float(streaming)),)
    return NodeOutcome(node.name, tuple(findings), perf,
                       f"primary, {streaming} standby(s) streaming")


def evaluate(node: Target, conn: Connection, limits: Thresholds | None) -> NodeOutcome:
    return _mysql(node, conn) if node.kind == "mysql" else _postgres(node, conn)
