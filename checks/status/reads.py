"""One node's reads for `dbgauge status`: its identity and role, what it replicates from
(for the links), and what it is doing -- through the collectors' facts, judged by the
health checks (replication, lag, locks, pgbouncer-pools) so a node's state means the same
as `dbgauge check` says."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dbgauge.checks.health import lag, locks, pgbouncer_pools
from dbgauge.checks.health.model import NodeOutcome
from dbgauge.checks.health.replication import (
    channel_findings,
    primary_findings,
    standby_findings,
    subscription_findings,
)
from dbgauge.checks.nodes import INSUFFICIENT_PRIVILEGE
from dbgauge.checks.split_brain.model import Address, MySQLNode, PgNode
from dbgauge.checks.split_brain.reads import mysql_node, pg_node
from dbgauge.checks.status.model import NodeState
from dbgauge.collectors.mysql_lock_waits import read_lock_waits
from dbgauge.collectors.mysql_replication import ReplicaStatus, read_channels, read_flags
from dbgauge.collectors.pgbouncer_databases import read_databases
from dbgauge.collectors.pgbouncer_pools import read_pools
from dbgauge.collectors.postgres_locks import LockSummary, read_summary
from dbgauge.collectors.postgres_replication import Standby, Subscription, read_replication
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.values import number
from dbgauge.toolkit.errors import QueryError
from dbgauge.toolkit.result import Finding, Status, perf_label
from dbgauge.toolkit.targets import Target


@dataclass(frozen=True)
class Hints:
    """What links a node to others: its identity, channels, walsenders, pooled servers."""

    address: Address
    mysql: MySQLNode | None = None
    pg: PgNode | None = None
    walsenders: tuple[Standby, ...] = ()  # on a PostgreSQL server: who streams from it
    subscriptions: tuple[Subscription, ...] = ()
    pooled: tuple[Address, ...] = ()  # PgBouncer: the servers its databases point at
    replica_hosts: tuple[tuple[int, str, int], ...] = ()  # SHOW SLAVE HOSTS: id, host, port


def _perf(outcome: NodeOutcome, metric: str) -> float | None:
    label = perf_label(outcome.node, metric)
    return next((v for k, v in outcome.perfdata if k == label), None)


def _lag(node: Target, conn: Connection, channels: Sequence[ReplicaStatus]) -> NodeOutcome:
    """The lag check's outcome from the channels already read (and the heartbeat on a
    target that reads one); a heartbeat the role may not read falls back to the channels:
    status shows what it can instead of no node at all."""
    try:
        return lag.CHECK.judge(node, lag.mysql_lag(node, conn, channels))
    except QueryError:
        return lag.CHECK.judge(node, lag.channels_lag(node, channels))


def _mysql(node: Target, conn: Connection, address: Address) -> tuple[NodeState, Hints]:
    state = conn.query("split_brain_state")[0]
    flags, channels = read_flags(conn), read_channels(conn)
    me = mysql_node(node.name, address, conn.server.flavor, state, flags, channels)
    findings = [f for st in channels for f in channel_findings(node.name, st)]
    lagging = _lag(node, conn, channels) if channels else None
    lock_waits = read_lock_waits(conn)
    waits = locks.CHECK.judge(node, locks.lock_wait(lock_waits))
    trx = lock_waits.transactions
    hosts: tuple[tuple[int, str, int], ...] = ()
    try:  # needs REPLICATION MASTER ADMIN (MariaDB) / REPLICATION SLAVE: optional
        rows = [{str(k).lower(): v for k, v in r.items()}  # Server_id / Server_Id (8.0.22+)
                for r in conn.query("checksum_replica_hosts")]
        hosts = tuple((int(number(r.get("server_id")) or 0), str(r.get("host") or ""),
                       int(number(r.get("port")) or 0)) for r in rows)
    except QueryError:
        pass
    threads = "; ".join(
        (f"{st.channel}: " if st.channel else "")
        + f"IO {st.io_thread}, SQL {'Yes' if st.sql_running else 'No'}" for st in channels)
    if lagging is not None:
        said = {"lag-unknown", "replication-stopped"}  # the channels' findings say it
        findings += [f for f in lagging.findings if f.kind not in said or not findings]
    findings += waits.findings
    return NodeState(
        node.name, node.kind, f"{address[0]}:{address[1]}", True,
        "replica" if channels else "primary", conn.server.flavor,
        conn.server.version_text, read_only=not me.writable,
        lag_seconds=_perf(lagging, lag.CHECK.metric) if lagging else None,
        replication=threads, oldest_lock_wait_seconds=_perf(waits, locks.CHECK.metric),
        oldest_transaction_seconds=trx.oldest_seconds, findings=tuple(findings),
    ), Hints(address, mysql=me, replica_hosts=hosts)


def _postgres_waits(node: Target, summary: LockSummary) -> NodeOutcome:
    """The locks check's outcome, UNKNOWN naming the grant when the role cannot see
    every session (another role's wait would be missed)."""
    if summary.unseen:
        return NodeOutcome(node.name, (Finding(Status.UNKNOWN, node.name,
                                               INSUFFICIENT_PRIVILEGE, summary.unseen),))
    return locks.CHECK.judge(node, locks.lock_wait(summary))


def _postgres(node: Target, conn: Connection, address: Address) -> tuple[NodeState, Hints]:
    me = pg_node(node.name, address, conn.query("split_brain_state")[0])
    facts = read_replication(conn)
    local, subs = facts.local, facts.subscriptions
    summary = read_summary(conn)
    waits = _postgres_waits(node, summary)
    findings: list[Finding] = []
    lag_seconds = lag_bytes = None
    if me.in_recovery:
        role = "standby"
        findings += standby_findings(node.name, local)
        lagging = lag.CHECK.judge(node, lag.standby_lag(node, local))
        findings += [f for f in lagging.findings if not local.wal_receiver_hidden]
        lag_seconds, lag_bytes = _perf(lagging, lag.CHECK.metric), local.receive_replay_bytes
        replication = "WAL receiver unseen" if local.wal_receiver_hidden \
            else f"WAL receiver {local.wal_receiver_status}"
    else:
        role = "subscriber" if subs else "primary"
        findings += primary_findings(node.name, facts.physical, facts.slots, local.hidden)
        if facts.physical and not local.hidden:  # a stalled standby shows here first
            findings += lag.CHECK.judge(node, lag.primary_lag(node, facts)).findings
        findings += subscription_findings(node.name, subs)
        replication = ", ".join(
            f"{s.name}: apply worker {'running' if s.worker_running else 'not running'}"
            + ("" if s.enabled else " (disabled)") for s in subs)
        running = [s for s in subs if s.worker_running]
        if running:  # the subscription furthest behind
            worst = max(running, key=lambda s: (s.lag_seconds or 0.0, s.lag_bytes or 0.0))
            lag_seconds, lag_bytes = worst.lag_seconds, worst.lag_bytes
    findings += waits.findings
    return NodeState(
        node.name, node.kind, f"{address[0]}:{address[1]}", True, role, conn.server.flavor,
        conn.server.version_text, read_only=me.in_recovery, lag_seconds=lag_seconds,
        lag_bytes=lag_bytes, replication=replication,
        oldest_lock_wait_seconds=_perf(waits, locks.CHECK.metric),
        oldest_transaction_seconds=None if summary.unseen else summary.oldest_xact_seconds,
        findings=tuple(findings),
    ), Hints(address, pg=me, walsenders=facts.standbys, subscriptions=subs)


def _pgbouncer(node: Target, conn: Connection, address: Address) -> tuple[NodeState, Hints]:
    pool_facts = read_pools(conn)
    pools = pgbouncer_pools.CHECK.judge(node, pgbouncer_pools.pool_wait(pool_facts))
    waiting = sum(p.clients.get("waiting", 0.0) for p in pool_facts.pools)
    pooled: list[Address] = []
    for db in read_databases(conn).databases:
        port = number(db.port)
        where = (db.host or "localhost", int(port) if port is not None else 5432)
        if db.name != "pgbouncer" and where not in pooled:
            pooled.append(where)
    return NodeState(
        node.name, node.kind, f"{address[0]}:{address[1]}", True, "pooler", "pgbouncer",
        conn.server.version_text, waiting_clients=waiting, findings=pools.findings,
    ), Hints(address, pooled=tuple(pooled))


def read_node(node: Target, conn: Connection, address: Address) -> tuple[NodeState, Hints]:
    """Everything `status` shows of one reachable node, and its link hints."""
    if node.kind == "mysql":
        return _mysql(node, conn, address)
    if node.kind == "postgres":
        return _postgres(node, conn, address)
    return _pgbouncer(node, conn, address)


def down(node: Target, address: Address, error: str,
         previous: Mapping[str, NodeState]) -> NodeState:
    """A node that could not be read: CRITICAL, with the last role seen if any."""
    before = previous.get(node.name)
    return NodeState(node.name, node.kind, f"{address[0]}:{address[1]}", False,
                     before.role if before else "unknown",
                     findings=(Finding(Status.CRITICAL, node.name, "down", error),))
