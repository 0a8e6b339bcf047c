"""The split-brain check's reads: a first snapshot of every node (identity, role, GTID
state or WAL position) and a second read of each source or upstream after all first
reads, which only refreshes what can have grown. MySQL-family flags and channels come
from the mysql_replication collector's facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from dbgauge.checks.split_brain.model import Address, Channel, MySQLNode, PgNode
from dbgauge.checks.split_brain.postgres import parse_lsn
from dbgauge.collectors.mysql_replication import (
    ReplicaStatus,
    ReplicationFlags,
    read_channels,
    read_flags,
)
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.privileges import pg_cannot_see
from dbgauge.toolkit.db.values import is_on, number, text
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.targets import Target


def channel(status: ReplicaStatus) -> Channel:
    """Where a replication channel replicates from (a Source_Server_Id of 0 -- not yet
    connected -- is unknown)."""
    return Channel(status.channel, status.source_host, status.source_port,
                   status.source_server_id or None, status.source_uuid)


def mysql_node(name: str, address: Address, flavor: str, state: Mapping[str, Any],
               flags: ReplicationFlags, channels: Sequence[ReplicaStatus]) -> MySQLNode:
    """The split_brain_state row, the server's flags and its channels -> MySQLNode."""
    return MySQLNode(
        name=name, address=address, flavor=flavor,
        server_id=int(number(state.get("server_id")) or 0), writable=flags.writable,
        channels=tuple(channel(st) for st in channels),
        server_uuid=text(state.get("server_uuid")).strip().lower(),
        gtid_executed=text(state.get("gtid_executed")).strip(),
        binlog_state=text(state.get("gtid_binlog_state")).strip(),
        slave_pos=text(state.get("gtid_slave_pos")).strip(),
        binlog_basename=text(state.get("log_bin_basename")).strip())


def pg_node(name: str, address: Address, row: Mapping[str, Any]) -> PgNode:
    """The split_brain_state row -> PgNode."""
    timeline = number(row.get("timeline"))
    port = number(row.get("sender_port"))
    host = text(row.get("sender_host")).strip()
    return PgNode(name, address, text(row.get("system_identifier")),
                  is_on(row.get("in_recovery")), None if timeline is None else int(timeline),
                  parse_lsn(row.get("wal_lsn")), parse_lsn(row.get("replay_lsn")),
                  (host, int(port)) if host and port is not None else None,
                  pg_cannot_see("the WAL receiver (pg_stat_wal_receiver)", text(row.get("role")))
                  if is_on(row.get("receiver_hidden")) else "")


def _address(node: Target) -> Address:
    params = parse_dsn(node.dsn)
    return params.host, params.port


def snapshot(node: Target, conn: Connection) -> MySQLNode | PgNode:
    """First read of a node: its identity, role, GTID state or WAL position."""
    state = conn.query("split_brain_state")[0]
    if node.kind == "postgres":
        return pg_node(node.name, _address(node), state)
    flags = read_flags(conn)
    channels = read_channels(conn)
    return mysql_node(node.name, _address(node), conn.server.flavor, state, flags, channels)


def reread(conn: Connection, first: MySQLNode | PgNode) -> MySQLNode | PgNode:
    """The second read of a source/upstream: only its GTID state or WAL position."""
    state = conn.query("split_brain_state")[0]
    if isinstance(first, PgNode):
        return replace(first, timeline=pg_node(first.name, first.address, state).timeline,
                       wal_lsn=parse_lsn(state.get("wal_lsn")))
    return replace(first, gtid_executed=text(state.get("gtid_executed")).strip(),
                   binlog_state=text(state.get("gtid_binlog_state")).strip(),
                   slave_pos=text(state.get("gtid_slave_pos")).strip())
