"""MySQL-family analysis: which node each replica replicates from, which nodes form one
topology, errant transactions, and the findings (writable replicas, several primaries,
errant transactions with the binlog's evidence). Pure, apart from the binlog file header
`event_time` reads when the binlog is local.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from dbgauge.checks.split_brain.address import same_address
from dbgauge.checks.split_brain.binlog import event_time
from dbgauge.checks.split_brain.model import (
    ERRANT,
    PRIMARIES,
    WRITABLE_REPLICA,
    Channel,
    Errant,
    ErrantEvents,
    MySQLNode,
)
from dbgauge.toolkit.gtid import GtidSet, errant_mariadb, local_mariadb_writes, mariadb_state
from dbgauge.toolkit.result import Finding, Status

_MAX_LISTED = 20  # errant GTIDs listed in a finding


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
