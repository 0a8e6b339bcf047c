"""GTID arithmetic for the split-brain check (pure: no I/O).

MySQL (8.0/8.4) GTIDs are `uuid[:tag]:n`; a server's `gtid_executed` is a *set* of them,
written as intervals per UUID. Errant transactions on a replica are
`GTID_SUBTRACT(replica.gtid_executed, source.gtid_executed)`: `GtidSet` does that
subtraction (and union, containment, counting) locally, so the check needs no extra round
trip and the logic is unit-tested on captured values.

MariaDB GTIDs are `domain-server_id-seq`. A position (`gtid_slave_pos`, `gtid_binlog_pos`)
keeps one GTID per domain; `gtid_binlog_state` keeps the last seq per (domain, server_id),
which is what tells whose writes a binlog holds. `errant_mariadb` compares those states.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolkit.gtid import GtidSet as GtidSet  # the MySQL part lives there, shared

# ----------------------------------------------------------------------------- MariaDB

_MARIADB_GTID = re.compile(r"^(\d+)-(\d+)-(\d+)$")


@dataclass(frozen=True, order=True)
class MariaGtid:
    """One MariaDB GTID: domain, the server_id that wrote it, sequence number."""

    domain: int
    server_id: int
    seq: int

    def __str__(self) -> str:
        return f"{self.domain}-{self.server_id}-{self.seq}"


def parse_mariadb_gtids(text: str | None) -> tuple[MariaGtid, ...]:
    """'0-1-5,1-2-9' (gtid_binlog_state, gtid_*_pos) -> GTIDs; malformed items are skipped."""
    out: list[MariaGtid] = []
    for item in (text or "").replace("\n", "").split(","):
        m = _MARIADB_GTID.match(item.strip())
        if m:
            out.append(MariaGtid(int(m.group(1)), int(m.group(2)), int(m.group(3))))
    return tuple(out)


MariaState = dict[tuple[int, int], int]


def mariadb_state(*texts: str | None) -> MariaState:
    """Highest seq per (domain, server_id) over any number of states/positions."""
    state: MariaState = {}
    for text in texts:
        for g in parse_mariadb_gtids(text):
            key = (g.domain, g.server_id)
            state[key] = max(state.get(key, 0), g.seq)
    return state


@dataclass(frozen=True)
class MariaErrant:
    """Writes of one server in one domain that the reference does not have.

    `last` is the newest such GTID; `after` the highest seq of that server in that domain
    the reference does have (0 if none): every errant GTID of it has after < seq <= last.
    """

    last: MariaGtid
    after: int

    @property
    def domain(self) -> int:
        return self.last.domain

    @property
    def server_id(self) -> int:
        return self.last.server_id

    def covers(self, gtid: MariaGtid) -> bool:
        """True if `gtid` belongs to this errant range."""
        return (gtid.domain, gtid.server_id) == (self.domain, self.server_id) \
            and self.after < gtid.seq <= self.last.seq


def errant_mariadb(replica_binlog_state: str | None, reference: MariaState) -> tuple[
        MariaErrant, ...]:
    """(domain, server_id) streams in the replica's binlog that go beyond `reference`.

    `reference` is the source's gtid_binlog_state (plus its positions), read *after* the
    replica: the source only grows, so what it lacks then, it never sent.
    """
    out = []
    for (domain, server_id), seq in sorted(mariadb_state(replica_binlog_state).items()):
        have = reference.get((domain, server_id), 0)
        if seq > have:
            out.append(MariaErrant(MariaGtid(domain, server_id, seq), have))
    return tuple(out)


def local_mariadb_writes(binlog_state: str | None, slave_pos: str | None,
                         own_server_id: int) -> tuple[MariaErrant, ...]:
    """Without the source: this server's own writes newer than what it replicated.

    A replica's binlog holds its own server_id only for transactions written locally; one
    newer than `gtid_slave_pos` in its domain has not come back through replication.
    """
    applied = {g.domain: g.seq for g in parse_mariadb_gtids(slave_pos)}
    out = []
    for (domain, server_id), seq in sorted(mariadb_state(binlog_state).items()):
        if server_id == own_server_id and seq > applied.get(domain, 0):
            out.append(MariaErrant(MariaGtid(domain, server_id, seq), applied.get(domain, 0)))
    return tuple(out)
