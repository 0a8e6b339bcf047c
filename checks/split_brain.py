"""check split-brain: writes accepted by a node that is not the topology's one primary.

Findings, each naming the node and the evidence:

- errant-transactions (CRITICAL): a replica holds transactions its source never had.
  MySQL: GTID_SUBTRACT(replica gtid_executed, sources' gtid_executed); MariaDB: per
  (domain, server_id), the replica's gtid_binlog_state beyond the sources' state. The
  replica is read before its sources (a second read of each source follows all first
  reads), and a source only gains transactions: that order cannot give a false positive.
  Where the binlog is readable the exact errant GTIDs, the first one's position, time and
  a one-line summary are added.
- writable-replica (WARNING): read_only (and super_read_only) off on a replicating node.
- multiple-primaries (CRITICAL): two MySQL-family nodes of one topology (linked by
  replication or by shared GTID history) both writable and replicating from no one; two
  PostgreSQL nodes out of recovery with the same system identifier.
- timeline-divergence (CRITICAL): a PostgreSQL standby on another timeline than its
  upstream, or whose replay position is ahead of the upstream's current WAL.
- concurrent-heartbeat-writers (CRITICAL): heartbeat rows of two server_ids advancing.

Remediation hints go into each finding's `fix`; dbgauge prints them and never runs them.
Pure analysis (`analyze_mysql`, `analyze_postgres`, `analyze_heartbeats`) is apart from
the reads (`snapshot_*`) so it is unit-tested on captured values.
"""

from __future__ import annotations

import re
import socket
import struct
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from checks.health.model import failure
from collectors.mysql_heartbeat import HEARTBEAT_NEEDS, HeartbeatRow, parse_heartbeat_rows
from collectors.mysql_replication import parse_replica_status
from toolkit.db import Connection, connect
from toolkit.db.privileges import PROCESS, REPLICA_MONITOR, query
from toolkit.db.values import number, text
from toolkit.dsn import parse_dsn
from toolkit.errors import QueryError
from toolkit.gtid import (
    GtidSet,
    MariaErrant,
    errant_mariadb,
    local_mariadb_writes,
    mariadb_state,
    parse_mariadb_gtids,
)
from toolkit.heartbeat import heartbeat_sql
from toolkit.result import CheckResult, Finding, Status, plugin_result, worst
from toolkit.targets import Selection, Target, fan_out

NAME = "split-brain"
ERRANT = "errant-transactions"
WRITABLE_REPLICA = "writable-replica"
PRIMARIES = "multiple-primaries"
TIMELINE = "timeline-divergence"
HEARTBEAT = "concurrent-heartbeat-writers"
# Every kind a split-brain finding can have: the daemon's metric label values.
KINDS = (ERRANT, WRITABLE_REPLICA, PRIMARIES, TIMELINE, HEARTBEAT, "unreachable",
         "query-failed", "check-failed")
DEFAULT_HEARTBEAT_TABLE = "dbgauge.heartbeat"
DEFAULT_HEARTBEAT_WAIT = 2.0  # seconds between the two heartbeat reads (writers beat each 1 s)
_MAX_BINLOG_EVENTS = 20000  # events read per replica to find the first errant one
_BINLOG_PAGE = 2000
_MAX_LISTED = 20  # errant GTIDs listed in a finding
_SUMMARY_CHARS = 120

Address = tuple[str, int]


# ----------------------------------------------------------------------------- MySQL family

@dataclass(frozen=True)
class Channel:
    """Where one replication channel of a MySQL-family node replicates from."""

    name: str
    source_host: str
    source_port: int | None
    source_server_id: int | None
    source_uuid: str


def parse_channel(row: Mapping[str, Any]) -> Channel:
    """One SHOW REPLICA/SLAVE STATUS (or SHOW ALL SLAVES STATUS) row -> Channel."""
    st = parse_replica_status(row)
    port = number(row.get("Source_Port", row.get("Master_Port")))
    return Channel(st.channel, text(row.get("Source_Host", row.get("Master_Host"))).strip(),
                   None if port is None else int(port),
                   st.source_server_id or None,
                   text(row.get("Source_UUID", row.get("Master_UUID"))).strip().lower())


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


def mysql_node(name: str, address: Address, flavor: str, state: Mapping[str, Any],
               flags: Mapping[str, Any], channels: Iterable[Mapping[str, Any]]) -> MySQLNode:
    """Rows of split_brain_state, replication_flags and replica_status -> MySQLNode."""
    writable = not number(flags.get("read_only")) and not number(flags.get("super_read_only"))
    return MySQLNode(
        name=name, address=address, flavor=flavor,
        server_id=int(number(state.get("server_id")) or 0), writable=writable,
        channels=tuple(parse_channel(r) for r in channels),
        server_uuid=text(state.get("server_uuid")).strip().lower(),
        gtid_executed=text(state.get("gtid_executed")).strip(),
        binlog_state=text(state.get("gtid_binlog_state")).strip(),
        slave_pos=text(state.get("gtid_slave_pos")).strip(),
        binlog_basename=text(state.get("log_bin_basename")).strip())


@lru_cache(maxsize=256)
def _ips(host: str) -> frozenset[str]:
    """The addresses a host name stands for (itself when it does not resolve)."""
    try:
        return frozenset(str(info[4][0]) for info in socket.getaddrinfo(host, None))
    except (OSError, UnicodeError):
        return frozenset({host.lower()})


def same_address(a: Address, b: Address) -> bool:
    """Same port and same host, by name or by any resolved address."""
    if a[1] != b[1]:
        return False
    return a[0].lower() == b[0].lower() or bool(_ips(a[0]) & _ips(b[0]))


def source_of(channel: Channel, nodes: Sequence[MySQLNode]) -> MySQLNode | None:
    """The node a channel replicates from: by address, else server_uuid, else a unique
    server_id (server_ids repeat across unrelated topologies, addresses do not)."""
    if channel.source_port is not None:
        for node in nodes:
            if same_address((channel.source_host, channel.source_port), node.address):
                return node
    if channel.source_uuid:
        for node in nodes:
            if node.server_uuid and node.server_uuid == channel.source_uuid:
                return node
    if channel.source_server_id:
        found = [n for n in nodes if n.server_id == channel.source_server_id]
        if len(found) == 1:
            return found[0]
    return None


def topologies(nodes: Sequence[MySQLNode]) -> list[list[MySQLNode]]:
    """Nodes grouped by replication links and shared GTID history (union-find)."""
    parent = list(range(len(nodes)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        parent[root(i)] = root(j)

    index = {n.name: i for i, n in enumerate(nodes)}
    histories = [n.history() for n in nodes]
    for i, node in enumerate(nodes):
        for ch in node.channels:
            src = source_of(ch, nodes)
            if src is not None:
                join(i, index[src.name])
        for j in range(i):
            if histories[i] & histories[j]:
                join(i, j)
    groups: dict[int, list[MySQLNode]] = {}
    for i, node in enumerate(nodes):
        groups.setdefault(root(i), []).append(node)
    return list(groups.values())


@dataclass(frozen=True)
class BinlogEvent:
    """One row of SHOW BINLOG EVENTS."""

    log_name: str
    pos: int
    event_type: str
    server_id: int
    end_log_pos: int
    info: str


def parse_event(row: Mapping[str, Any]) -> BinlogEvent:
    return BinlogEvent(text(row.get("Log_name")), int(number(row.get("Pos")) or 0),
                       text(row.get("Event_type")), int(number(row.get("Server_id")) or 0),
                       int(number(row.get("End_log_pos")) or 0), text(row.get("Info")))


_MARIADB_EVENT_GTID = re.compile(r"\bGTID (\d+-\d+-\d+)\b")
_MYSQL_EVENT_GTID = re.compile(r"GTID_NEXT\s*=\s*'([^']+)'")
_TABLE_MAP = re.compile(r"\(([^()]+)\)\s*$")


def event_gtid(event: BinlogEvent) -> str | None:
    """The GTID a Gtid event starts ('0-2-5' on MariaDB, 'uuid:n' on MySQL), else None."""
    if event.event_type != "Gtid":
        return None
    m = _MARIADB_EVENT_GTID.search(event.info) or _MYSQL_EVENT_GTID.search(event.info)
    return m.group(1) if m else None


def summarize_transaction(events: Sequence[BinlogEvent]) -> str:
    """One line for a transaction's events (those after its Gtid event).

    The statement when the binlog carries it (MariaDB Annotate_rows, MySQL Rows_query,
    statement-based or DDL Query events), else the row events and their tables.
    """
    def clip(value: str) -> str:
        flat = " ".join(value.split())
        return flat if len(flat) <= _SUMMARY_CHARS else flat[: _SUMMARY_CHARS - 3] + "..."

    for e in events:
        if e.event_type in ("Annotate_rows", "Rows_query"):
            return clip(e.info.removeprefix("# "))
        if e.event_type == "Query" and e.info.strip().upper() not in ("BEGIN", "COMMIT"):
            return clip(e.info)
    tables = [m.group(1) for e in events if e.event_type == "Table_map"
              for m in [_TABLE_MAP.search(e.info)] if m]
    rows = sorted({e.event_type.split("_rows")[0].lower() for e in events
                   if "_rows" in e.event_type.lower()})
    if rows:
        return clip(f"{'/'.join(rows)} rows in {', '.join(dict.fromkeys(tables)) or '?'}")
    return clip(", ".join(e.event_type for e in events) or "empty transaction")


def parse_event_header(header: bytes) -> tuple[int, int, int]:
    """A binlog event's first 19 bytes -> (unix timestamp, event type code, server_id)."""
    timestamp, type_code, server_id = struct.unpack_from("<IBI", header)
    return timestamp, type_code, server_id


def event_time(basename: str, event: BinlogEvent) -> float | None:
    """The event's timestamp read from the binlog file itself, when it is readable here
    (dbgauge runs on the database host); None otherwise or when the header disagrees."""
    if not basename:
        return None
    try:
        with open(Path(basename).parent / event.log_name, "rb") as handle:
            handle.seek(event.pos)
            header = handle.read(19)
    except OSError:
        return None
    if len(header) < 19:
        return None
    timestamp, _, server_id = parse_event_header(header)
    return float(timestamp) if server_id == event.server_id else None


@dataclass(frozen=True)
class ErrantEvents:
    """What the replica's own binlog says about its errant transactions."""

    gtids: tuple[str, ...]
    first: BinlogEvent | None
    summary: str = ""
    complete: bool = True  # False when the scan stopped at its bound


def _header_state(events: Sequence[BinlogEvent]) -> str | None:
    """The GTID state a binlog file starts with (Gtid_list / Previous_gtids Info)."""
    for e in events:
        if e.event_type == "Gtid_list":
            return e.info.strip().strip("[]")
        if e.event_type == "Previous_gtids":
            return e.info
    return None


def read_errant_events(conn: Connection, is_errant: Callable[[str], bool],
                       before_file: Callable[[str], bool]) -> ErrantEvents | None:
    """Scan the binlog from the file where the errant GTIDs begin.

    `before_file(state)` says whether a file's starting GTID state already holds errant
    transactions (then they began in an earlier file). None if the binlog cannot be read.
    """
    try:
        files = [text(r.get("Log_name")) for r in conn.query("split_brain_binary_logs")]
        start = 0
        for i in range(len(files) - 1, -1, -1):
            head = [parse_event(r) for r in
                    conn.query("split_brain_binlog_events", (files[i], 4, 4))]
            state = _header_state(head)
            if state is None or not before_file(state):
                start = i
                break
        found: list[str] = []
        first: BinlogEvent | None = None
        body: list[BinlogEvent] = []  # the first errant transaction's events
        collecting = False
        read = 0
        for name in files[start:]:
            pos = 4
            while read < _MAX_BINLOG_EVENTS:
                page = [parse_event(r) for r in conn.query(
                    "split_brain_binlog_events", (name, pos, _BINLOG_PAGE))]
                read += len(page)
                for e in page:
                    gtid = event_gtid(e)
                    if gtid is None:
                        if collecting and len(body) < 20:
                            body.append(e)
                        continue
                    collecting = False
                    if is_errant(gtid):
                        found.append(gtid)
                        if first is None:
                            first, collecting = e, True
                if len(page) < _BINLOG_PAGE or not page[-1].end_log_pos:
                    break
                pos = page[-1].end_log_pos  # where the next event starts
        return ErrantEvents(tuple(found), first, summarize_transaction(body) if first else "",
                            complete=read < _MAX_BINLOG_EVENTS)
    except QueryError:
        return None


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


def find_errant(replica: MySQLNode, nodes: Sequence[MySQLNode],
                later: Mapping[str, MySQLNode]) -> Errant:
    """Errant transactions of `replica` (read first) against its sources (read `later`).

    Every channel's source must be among the nodes for an exact answer; otherwise only
    the replica's own local writes are reported (they cannot have come from a source).
    """
    sources = [source_of(ch, nodes) for ch in replica.channels]
    if replica.channels and all(s is not None for s in sources):
        now = tuple(later.get(s.name, s) for s in sources if s is not None)
        if replica.flavor == "mariadb":
            reference = mariadb_state(*(t for s in now for t in (s.binlog_state, s.slave_pos)))
            return Errant(replica, now, mariadb=errant_mariadb(replica.binlog_state, reference))
        union = GtidSet()
        for s in now:
            union = union | s.gtids
        return Errant(replica, now, mysql=replica.gtids - union)
    if replica.flavor == "mariadb":
        return Errant(replica, (), mariadb=local_mariadb_writes(
            replica.binlog_state, replica.slave_pos, replica.server_id))
    own = replica.gtids.only(replica.server_uuid) if replica.server_uuid else GtidSet()
    return Errant(replica, (), mysql=own)


def _writers(errant: Errant, nodes: Sequence[MySQLNode]) -> str:
    """Who wrote the errant transactions, by node name where one matches."""
    def who(node: MySQLNode | None, label: str) -> str:
        if node is None:
            return label
        return f"{label} = {'this replica' if node.name == errant.replica.name else node.name}"

    if errant.replica.flavor == "mariadb":
        ids = sorted({(e.domain, e.server_id) for e in errant.mariadb})
        return ", ".join(who(next((n for n in nodes if n.server_id == s), None),
                             f"server_id {s} in domain {d}") for d, s in ids)
    return ", ".join(who(next((n for n in nodes if n.server_uuid == u), None),
                         f"server_uuid {u}") for u in errant.mysql.uuids())


def _listed(gtids: Sequence[str]) -> str:
    shown = ", ".join(gtids[:_MAX_LISTED])
    return shown + (f" (+{len(gtids) - _MAX_LISTED} more)" if len(gtids) > _MAX_LISTED else "")


def errant_finding(errant: Errant, nodes: Sequence[MySQLNode],
                   events: ErrantEvents | None = None) -> Finding:
    """The finding for one replica's errant transactions, with the binlog's evidence."""
    replica = errant.replica
    names = ", ".join(s.name for s in errant.sources)
    gtids = errant.text()
    if events is not None and events.gtids and replica.flavor == "mariadb":
        gtids = _listed(events.gtids)
    count = len(errant.mysql) if replica.flavor == "mysql" else (
        len(events.gtids) if events is not None and events.gtids and events.complete else None)
    how_many = f"{count} " if count is not None else ""
    evidence = {"errant_gtids": gtids, "written_by": _writers(errant, nodes)}
    if count is not None:
        evidence["errant_count"] = str(count)
    if errant.against_sources:
        severity = Status.CRITICAL
        detail = f"{how_many}errant transaction(s) its source {names} does not have: {gtids}"
        state = "; ".join(f"{s.name} {s.binlog_state if s.flavor == 'mariadb' else s.gtids}"
                          for s in errant.sources)
        evidence["source_state"] = state or "(empty)"
    elif replica.flavor == "mariadb":
        severity = Status.CRITICAL
        applied = replica.slave_pos or "empty"
        detail = (f"{how_many}local write(s) not in its gtid_slave_pos ({applied}): {gtids} "
                  "(its source is not among the checked nodes)")
    else:
        severity = Status.WARNING
        detail = (f"{how_many}transaction(s) under its own server_uuid: {gtids} (written "
                  "locally, now or while it was a primary; its source is not among the "
                  "checked nodes to tell)")
    if replica.flavor == "mariadb" and errant.mariadb and (events is None or not events.gtids):
        detail += " (last GTID per server; the binlog was not readable to list them all)"
    if events is not None and events.first is not None:
        evidence["first_errant_event"] = f"{events.first.log_name}:{events.first.pos}"
        moment = event_time(replica.binlog_basename, events.first)
        if moment is not None:
            evidence["first_errant_time"] = datetime.fromtimestamp(moment, UTC).isoformat()
        evidence["first_errant_summary"] = events.summary
    source = errant.sources[0].name if errant.sources else "its source"
    if replica.flavor == "mariadb":
        fix = (f"undo the change on {replica.name} (or apply it on {source}), then on "
               f"{replica.name}: STOP SLAVE; RESET MASTER; SET GLOBAL gtid_slave_pos="
               f"'{replica.slave_pos}'; START SLAVE; (RESET MASTER discards its binlog) -- "
               f"or re-clone {replica.name} from {source}")
    else:
        first = errant.mysql.first() or "uuid:n"
        fix = (f"if the change may stay only on {replica.name}: on {source}, for each errant "
               f"GTID, SET GTID_NEXT='{first}'; BEGIN; COMMIT; SET GTID_NEXT='AUTOMATIC'; "
               f"(inject empty transactions) -- else re-clone {replica.name} from {source}")
    return Finding(severity, replica.name, ERRANT, detail, evidence, fix=fix)


def mysql_findings(first: Sequence[MySQLNode], errants: Sequence[Errant],
                   events: Mapping[str, ErrantEvents | None]) -> list[Finding]:
    """Writable replicas, several primaries per topology, errant transactions."""
    out: list[Finding] = []
    for node in first:
        if node.writable and node.channels:
            sources = [source_of(ch, first) for ch in node.channels]
            names = ", ".join(s.name if s else f"{ch.source_host}:{ch.source_port}"
                              for s, ch in zip(sources, node.channels, strict=True))
            flags = "read_only and super_read_only are" if node.flavor == "mysql" \
                else "read_only is"
            setting = "super_read_only" if node.flavor == "mysql" else "read_only"
            out.append(Finding(
                Status.WARNING, node.name, WRITABLE_REPLICA,
                f"{flags} OFF on a replica (replicates from {names}): any write here "
                "becomes an errant transaction",
                {"server_id": str(node.server_id)},
                fix=f"SET GLOBAL {setting} = ON on {node.name}, and in its option file"))
    for group in topologies(first):
        primaries = [n for n in group if n.writable and not n.channels]
        if len(primaries) < 2:
            continue
        for node in primaries:
            others = ", ".join(p.name for p in primaries if p is not node)
            out.append(Finding(
                Status.CRITICAL, node.name, PRIMARIES,
                f"writable and replicating from no one, like {others} in the same topology: "
                f"{len(primaries)} primaries",
                {"server_id": str(node.server_id),
                 "history": ", ".join(sorted(node.history())) or "(none)"},
                fix="keep one primary: set read_only on the other(s), compare their writes "
                    "(errant transactions), then re-point or re-clone them as replicas"))
    for errant in errants:
        if errant:
            out.append(errant_finding(errant, first, events.get(errant.replica.name)))
    return out


# ----------------------------------------------------------------------------- PostgreSQL

def parse_lsn(value: object) -> int | None:
    """'16/B374D848' -> byte position; None for NULL or garbage."""
    hi, sep, lo = text(value).partition("/")
    try:
        return (int(hi, 16) << 32) | int(lo, 16) if sep else None
    except ValueError:
        return None


def format_lsn(value: int) -> str:
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


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
    receiver_status: str = ""
    sender: Address | None = None


def pg_node(name: str, address: Address, row: Mapping[str, Any]) -> PgNode:
    """The split_brain_state row -> PgNode."""
    timeline = number(row.get("timeline"))
    port = number(row.get("sender_port"))
    host = text(row.get("sender_host")).strip()
    return PgNode(name, address, text(row.get("system_identifier")),
                  row.get("in_recovery") is True, None if timeline is None else int(timeline),
                  parse_lsn(row.get("wal_lsn")), parse_lsn(row.get("replay_lsn")),
                  text(row.get("receiver_status")),
                  (host, int(port)) if host and port is not None else None)


def upstream_of(standby: PgNode, nodes: Sequence[PgNode]) -> PgNode | None:
    """The node a standby streams from: by its WAL receiver's sender address, else the one
    primary of its system identifier."""
    if standby.sender is not None:
        for node in nodes:
            if node is not standby and same_address(standby.sender, node.address):
                return node
    primaries = [n for n in nodes if not n.in_recovery
                 and n.system_identifier == standby.system_identifier]
    return primaries[0] if len(primaries) == 1 else None


def pg_findings(first: Sequence[PgNode], later: Mapping[str, PgNode]) -> list[Finding]:
    """Two primaries of one system identifier; standbys off their upstream's timeline or
    ahead of its WAL (standbys read first, upstreams `later`)."""
    out: list[Finding] = []
    systems: dict[str, list[PgNode]] = {}
    for node in first:
        systems.setdefault(node.system_identifier, []).append(node)
    for sysid, members in systems.items():
        primaries = [n for n in members if not n.in_recovery]
        if len(primaries) < 2:
            continue
        for node in primaries:
            others = ", ".join(f"{p.name} (timeline {p.timeline})"
                               for p in primaries if p is not node)
            out.append(Finding(
                Status.CRITICAL, node.name, PRIMARIES,
                f"not in recovery, like {others}: {len(primaries)} primaries of system "
                f"identifier {sysid}",
                {"system_identifier": sysid, "timeline": str(node.timeline)},
                fix="stop writes to all but one primary; rebuild the others as its standbys "
                    "with pg_rewind (needs wal_log_hints or data checksums) or a fresh "
                    "pg_basebackup"))
    for standby in first:
        if not standby.in_recovery:
            continue
        upstream = upstream_of(standby, first)
        if upstream is None:
            continue
        now = later.get(upstream.name, upstream)
        fix = (f"rebuild {standby.name} from {upstream.name}: pg_rewind onto its timeline "
               "(needs wal_log_hints or data checksums), or a fresh pg_basebackup")
        if standby.timeline is not None and now.timeline is not None \
                and standby.timeline != now.timeline:
            out.append(Finding(
                Status.CRITICAL, standby.name, TIMELINE,
                f"on timeline {standby.timeline}, its upstream {upstream.name} is on timeline "
                f"{now.timeline}", {"upstream": upstream.name}, fix=fix))
        elif standby.replay_lsn is not None and now.wal_lsn is not None \
                and standby.replay_lsn > now.wal_lsn:
            out.append(Finding(
                Status.CRITICAL, standby.name, TIMELINE,
                f"replayed WAL up to {format_lsn(standby.replay_lsn)}, ahead of its upstream "
                f"{upstream.name}'s current WAL {format_lsn(now.wal_lsn)}: their histories "
                "diverged", {"upstream": upstream.name}, fix=fix))
    return out


# ----------------------------------------------------------------------------- heartbeats

def advancing(before: Sequence[HeartbeatRow], after: Sequence[HeartbeatRow]) -> frozenset[int]:
    """server_ids whose heartbeat row got newer between two reads."""
    old = {r.server_id: r.ts for r in before}
    return frozenset(r.server_id for r in after if r.ts > old.get(r.server_id, r.ts))


def heartbeat_findings(groups: Sequence[Sequence[MySQLNode]],
                       seen: Mapping[str, frozenset[int]]) -> list[Finding]:
    """Two or more heartbeat writers advancing within one topology."""
    out: list[Finding] = []
    for group in groups:
        writers = sorted(set().union(*(seen.get(n.name, frozenset()) for n in group)))
        if len(writers) < 2:
            continue
        by_id = {n.server_id: n.name for n in group}
        listed = ", ".join(f"{w} ({by_id[w]})" if w in by_id else str(w) for w in writers)
        where = [by_id[w] for w in writers if w in by_id] or [
            next(n.name for n in group if len(seen.get(n.name, ())) > 1)]
        for name in where:
            out.append(Finding(
                Status.CRITICAL, name, HEARTBEAT,
                f"heartbeat rows of server_id {listed} are all advancing: more than one "
                "server believes it is the primary", {"writers": listed},
                fix="run the heartbeat writer only on the primary (dbgauge heartbeat mode "
                    "read elsewhere; pt-heartbeat --update only on the primary)"))
    return out


# ----------------------------------------------------------------------------- reads

def _address(node: Target) -> Address:
    params = parse_dsn(node.dsn)
    return params.host, params.port


def snapshot(node: Target, conn: Connection) -> MySQLNode | PgNode:
    """First read of a node: its identity, role, GTID state or WAL position."""
    state = conn.query("split_brain_state")[0]
    if node.kind == "postgres":
        return pg_node(node.name, _address(node), state)
    flags = query(conn, "replication_flags", PROCESS)[0]
    channels = query(conn, "replica_status", REPLICA_MONITOR)
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


def read_heartbeats(node: Target, conn: Connection, table: str) -> list[HeartbeatRow] | None:
    """The heartbeat rows of a MySQL-family node; None without a heartbeat table (or the
    right to read it: this part of the check is best effort)."""
    settings = node.heartbeat
    name = settings.table if settings is not None else table
    (statement,) = heartbeat_sql(conn.server.flavor, "heartbeat_read", name)
    try:
        return parse_heartbeat_rows(query(conn, "heartbeat_read", HEARTBEAT_NEEDS,
                                          sql=statement))
    except QueryError:
        return None


@dataclass
class _Live:
    node: Target
    conn: Connection
    first: MySQLNode | PgNode | None = None
    beats: list[HeartbeatRow] | None = None


def check_split_brain(nodes: Selection, *,
                      heartbeat_wait: float = DEFAULT_HEARTBEAT_WAIT,
                      heartbeat_table: str = DEFAULT_HEARTBEAT_TABLE) -> CheckResult:
    """Read every node (replicas before their sources), analyse, and return the result.

    Unreachable nodes are UNKNOWN findings; the others are still compared.
    """
    started = time.monotonic()
    candidates, misfits = nodes.of_kinds(("mysql", "postgres"))
    problems = [Finding(Status.UNKNOWN, node.name, "check-failed",
                        f"split-brain applies to mysql and postgres nodes, not {node.kind}")
                for node in misfits]
    live: list[_Live] = []
    for node, conn in zip(candidates, fan_out(candidates, connect, name="check"), strict=True):
        if isinstance(conn, Exception):
            problems += failure(node.name, conn).findings
        else:
            live.append(_Live(node, conn))
    try:
        def first_read(item: _Live) -> _Live:
            item.first = snapshot(item.node, item.conn)
            if item.node.kind == "mysql" and heartbeat_wait > 0:
                item.beats = read_heartbeats(item.node, item.conn, heartbeat_table)
            return item

        ok: list[_Live] = []
        for item, got in zip(live, fan_out(live, first_read, name="check"), strict=True):
            if isinstance(got, Exception):
                problems += failure(item.node.name, got).findings
            else:
                ok.append(got)
        beats_at = time.monotonic()
        findings = problems + _analyse(ok, heartbeat_wait, beats_at, heartbeat_table)
    finally:
        for item in live:
            item.conn.close()
    mysql = [i for i in live if isinstance(i.first, MySQLNode)]
    pg = [i for i in live if isinstance(i.first, PgNode)]
    if findings:
        head = next(f for f in findings if f.severity is worst(g.severity for g in findings))
        summary = f"{head.node}: {head.detail}"
        if len(findings) > 1:
            summary += f" (+{len(findings) - 1} more finding(s))"
    else:
        summary = (f"no split-brain in {len(mysql)} MySQL-family and {len(pg)} PostgreSQL "
                   f"node(s)")
    errant = sum(int(f.evidence.get("errant_count", "1")) for f in findings if f.kind == ERRANT)
    perf = [("nodes", float(len(nodes.targets))), ("findings", float(len(findings))),
            ("errant_transactions", float(errant)),
            ("seconds", round(time.monotonic() - started, 3))]
    return plugin_result(NAME, findings, summary, perf)


def _analyse(items: Sequence[_Live], heartbeat_wait: float, beats_at: float,
             heartbeat_table: str) -> list[Finding]:
    """Second reads (sources and upstreams, after every first read), binlog details and
    the second heartbeat read; then the pure analysis."""
    mysql_first = [i.first for i in items if isinstance(i.first, MySQLNode)]
    pg_first = [i.first for i in items if isinstance(i.first, PgNode)]
    by_name = {i.node.name: i for i in items}
    sources = {s.name for n in mysql_first for ch in n.channels
               for s in [source_of(ch, mysql_first)] if s is not None}
    sources |= {u.name for n in pg_first if n.in_recovery
                for u in [upstream_of(n, pg_first)] if u is not None}
    again = [by_name[name] for name in sorted(sources)]
    problems: list[Finding] = []
    later: dict[str, Any] = {}

    def second(item: _Live) -> MySQLNode | PgNode:
        assert item.first is not None
        return reread(item.conn, item.first)

    for item, read in zip(again, fan_out(again, second, name="check"), strict=True):
        if isinstance(read, Exception):
            problems += failure(item.node.name, read).findings
        else:
            later[item.node.name] = read
    errants = [find_errant(n, mysql_first, later) for n in mysql_first
               if n.channels and n.name not in {f.node for f in problems}]
    errants = [e for e in errants if e]

    def details(errant: Errant) -> ErrantEvents | None:
        return read_errant_events(by_name[errant.replica.name].conn, errant.is_errant,
                                  errant.before_file)

    events: dict[str, ErrantEvents | None] = {}
    for errant, found in zip(errants, fan_out(errants, details, name="check"), strict=True):
        events[errant.replica.name] = None if isinstance(found, Exception) else found
    seen: dict[str, frozenset[int]] = {}
    watched = [i for i in items if i.beats]
    if watched:
        time.sleep(max(0.0, heartbeat_wait - (time.monotonic() - beats_at)))
        for item, rows in zip(watched, fan_out(watched, lambda i: read_heartbeats(
                i.node, i.conn, heartbeat_table), name="check"), strict=True):
            if isinstance(rows, list) and item.beats is not None:
                seen[item.node.name] = advancing(item.beats, rows)
    return (problems + mysql_findings(mysql_first, errants, events)
            + pg_findings(pg_first, later)
            + heartbeat_findings(topologies(mysql_first), seen))
