"""The split-brain check's data: what it reads from each node, what it concludes.

Frozen dataclasses only (plus the finding kinds): `MySQLNode` and `PgNode` are one read of
a server, `Channel` where a replica replicates from, `BinlogEvent`/`ErrantEvents` what a
replica's binlog says, `Errant` the transactions a replica has and its sources do not.
The analysis is in `mysql`, `postgres` and `heartbeats`, the reads in `reads`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dbgauge.checks.nodes import NOT_CHECKED
from dbgauge.toolkit.gtid import GtidSet, MariaErrant, mariadb_state, parse_mariadb_gtids

NAME = "split-brain"
APPLIES_TO = frozenset({"mysql", "postgres"})  # the target kinds the check reads
ERRANT = "errant-transactions"
WRITABLE_REPLICA = "writable-replica"
PRIMARIES = "multiple-primaries"
TIMELINE = "timeline-divergence"
HEARTBEAT = "concurrent-heartbeat-writers"
# Every kind a split-brain finding can have: the daemon's metric label values.
KINDS = (ERRANT, WRITABLE_REPLICA, PRIMARIES, TIMELINE, HEARTBEAT, *NOT_CHECKED)

Address = tuple[str, int]


@dataclass(frozen=True)
class Channel:
    """Where one replication channel of a MySQL-family node replicates from."""

    name: str
    source_host: str
    source_port: int | None
    source_server_id: int | None
    source_uuid: str


@dataclass(frozen=True)
class MySQLNode:
    """What the split-brain check reads from one MySQL or MariaDB server."""

    name: str
    address: Address
    flavor: str  # mysql or mariadb
    server_id: int
    writable: bool
    channels: tuple[Channel, ...] = ()
    server_uuid: str = ""  # MySQL
    gtid_executed: str = ""  # MySQL
    binlog_state: str = ""  # MariaDB gtid_binlog_state
    slave_pos: str = ""  # MariaDB gtid_slave_pos
    binlog_basename: str = ""

    @property
    def gtids(self) -> GtidSet:
        return GtidSet.parse(self.gtid_executed)

    def history(self) -> frozenset[str]:
        """Keys of whose transactions this server holds (shared history = one topology)."""
        if self.flavor == "mariadb":
            return frozenset(f"{d}-{s}" for d, s in mariadb_state(self.binlog_state))
        return frozenset(self.gtids.uuids())


@dataclass(frozen=True)
class PgNode:
    """What the split-brain check reads from one PostgreSQL server."""

    name: str
    address: Address
    system_identifier: str
    in_recovery: bool
    timeline: int | None
    wal_lsn: int | None
    replay_lsn: int | None
    sender: Address | None = None
    unseen: str = ""  # what the role cannot see of its WAL receiver, with the grant


@dataclass(frozen=True)
class BinlogEvent:
    """One row of SHOW BINLOG EVENTS."""

    log_name: str
    pos: int
    event_type: str
    server_id: int
    end_log_pos: int
    info: str


@dataclass(frozen=True)
class ErrantEvents:
    """What the replica's own binlog says about its errant transactions."""

    gtids: tuple[str, ...]
    first: BinlogEvent | None
    summary: str = ""
    complete: bool = True  # False when the scan stopped at its bound


@dataclass(frozen=True)
class Errant:
    """A replica's transactions that its sources do not have (or, without a source among
    the nodes, its own writes that did not come through replication)."""

    replica: MySQLNode
    sources: tuple[MySQLNode, ...]  # as read after the replica
    mysql: GtidSet = field(default_factory=GtidSet)
    mariadb: tuple[MariaErrant, ...] = ()

    @property
    def against_sources(self) -> bool:
        return bool(self.sources)

    def __bool__(self) -> bool:
        return bool(self.mysql) or bool(self.mariadb)

    def text(self) -> str:
        if self.replica.flavor == "mariadb":
            return ",".join(str(e.last) for e in self.mariadb)
        return str(self.mysql)

    def is_errant(self, gtid: str) -> bool:
        """True for a GTID (as a binlog Gtid event names it) in the errant set."""
        if self.replica.flavor == "mariadb":
            found = parse_mariadb_gtids(gtid)
            return bool(found) and any(e.covers(found[0]) for e in self.mariadb)
        return gtid in self.mysql

    def before_file(self, state: str) -> bool:
        """True if a binlog file's starting GTID state already holds errant transactions."""
        if self.replica.flavor == "mariadb":
            have = mariadb_state(state)
            return any(have.get((e.domain, e.server_id), 0) > e.after for e in self.mariadb)
        first = self.mysql.first()
        return first is not None and first in GtidSet.parse(state)
