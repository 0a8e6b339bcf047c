"""GTIDs of both MySQL-family servers (pure: no I/O), shared by the replication collector
and the split-brain check.

MySQL (8.0/8.4): a server's `gtid_executed` is a set of `uuid[:tag]:n` GTIDs written as
intervals per UUID; `GtidSet` parses it into normal form and does GTID_SUBTRACT, union,
containment and counting locally, so neither caller needs a server round trip for the
arithmetic. Errant transactions on a replica are GTID_SUBTRACT(replica, source).

MariaDB: GTIDs are `domain-server_id-seq`. A position (`gtid_slave_pos`, `gtid_binlog_pos`)
keeps one GTID per domain; `gtid_binlog_state` keeps the last seq per (domain, server_id),
which is what tells whose writes a binlog holds. `errant_mariadb` compares those states.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_GTID_INTERVAL = re.compile(r"^(\d+)(?:-(\d+))?$")
Interval = tuple[int, int]
SidKey = tuple[str, str]  # (uuid, tag); tag is "" for untagged GTIDs


def parse_gtid_set(value: str) -> dict[tuple[str, str], list[Interval]]:
    """MySQL GTID set text -> {(uuid, tag): [(first, last), ...]}.

    Handles the newlines MySQL puts after commas and 8.3+ tags ("uuid:tag:1-5").
    """
    out: dict[tuple[str, str], list[Interval]] = {}
    for member in value.replace("\n", "").split(","):
        parts = [p.strip() for p in member.strip().split(":") if p.strip()]
        if not parts:
            continue
        uuid, tag = parts[0].lower(), ""
        for part in parts[1:]:
            m = _GTID_INTERVAL.match(part)
            if m is None:
                tag = part.lower()
                continue
            first = int(m.group(1))
            last = int(m.group(2)) if m.group(2) else first
            out.setdefault((uuid, tag), []).append((first, last))
    return out


def _merge(intervals: Iterable[Interval]) -> tuple[Interval, ...]:
    """Sorted, non-overlapping, non-adjacent intervals (MySQL's normal form)."""
    merged: list[Interval] = []
    for first, last in sorted(intervals):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return tuple(merged)


def _minus(have: tuple[Interval, ...], take: tuple[Interval, ...]) -> tuple[Interval, ...]:
    """Interval-set difference of two normal-form interval lists."""
    out: list[Interval] = []
    for first, last in have:
        start = first
        for t_first, t_last in take:
            if t_last < start or t_first > last:
                continue
            if t_first > start:
                out.append((start, t_first - 1))
            start = max(start, t_last + 1)
            if start > last:
                break
        if start <= last:
            out.append((start, last))
    return tuple(out)


@dataclass(frozen=True)
class GtidSet:
    """A MySQL GTID set in normal form: UUIDs lowercased, intervals merged and sorted."""

    members: tuple[tuple[SidKey, tuple[Interval, ...]], ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> GtidSet:
        """`gtid_executed` text (newlines after commas, 8.3+ tags allowed) -> GtidSet."""
        parsed = parse_gtid_set(text or "")
        return cls._of({key: _merge(v) for key, v in parsed.items()})

    @classmethod
    def _of(cls, mapping: Mapping[SidKey, tuple[Interval, ...]]) -> GtidSet:
        return cls(tuple(sorted((k, v) for k, v in mapping.items() if v)))

    def as_dict(self) -> dict[SidKey, tuple[Interval, ...]]:
        return dict(self.members)

    def __sub__(self, other: GtidSet) -> GtidSet:
        """GTID_SUBTRACT(self, other)."""
        theirs = other.as_dict()
        return self._of({k: _minus(v, theirs.get(k, ())) for k, v in self.members})

    def __or__(self, other: GtidSet) -> GtidSet:
        """The union of both sets."""
        out = self.as_dict()
        for key, intervals in other.members:
            out[key] = _merge((*out.get(key, ()), *intervals))
        return self._of(out)

    def issubset(self, other: GtidSet) -> bool:
        """GTID_SUBSET(self, other)."""
        return not (self - other)

    def __contains__(self, gtid: str) -> bool:
        """One GTID ('uuid:n' or 'uuid:tag:n') in the set."""
        return GtidSet.parse(gtid).issubset(self)

    def __bool__(self) -> bool:
        return bool(self.members)

    def __len__(self) -> int:
        """How many transactions the set holds."""
        return sum(last - first + 1 for _, intervals in self.members for first, last in intervals)

    def uuids(self) -> tuple[str, ...]:
        return tuple(sorted({uuid for (uuid, _), _ in self.members}))

    def only(self, uuid: str) -> GtidSet:
        """The part of the set that `uuid` originated."""
        return GtidSet(tuple(m for m in self.members if m[0][0] == uuid.lower()))

    def first(self) -> str | None:
        """The lowest GTID of the first UUID, e.g. to look up the first errant event."""
        if not self.members:
            return None
        (uuid, tag), intervals = self.members[0]
        return f"{uuid}:{tag + ':' if tag else ''}{intervals[0][0]}"

    def __str__(self) -> str:
        """MySQL's text form without its newlines: 'uuid:1-5:7,uuid2:tag:1-3'."""
        parts: list[str] = []
        for uuid in self.uuids():
            text = uuid
            for (u, tag), intervals in self.members:
                if u != uuid:
                    continue
                if tag:
                    text += f":{tag}"
                text += "".join(f":{a}" if a == b else f":{a}-{b}" for a, b in intervals)
            parts.append(text)
        return ",".join(parts)


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
