"""mysql_group_replication: the health of an InnoDB Cluster / Group Replication group (MySQL 8).

From performance_schema.replication_group_members (state and role of every member, as this
member sees the group) and replication_group_member_stats (certifier and applier queues and
certification conflicts, every member's row visible from any member), joined on MEMBER_ID
and labelled `member` = MEMBER_HOST:MEMBER_PORT. States are one of a fixed set (ONLINE,
RECOVERING, OFFLINE, ERROR, UNREACHABLE; anything else is "other") and every state of a
member is exported, 1 for the current one, so an alert can match `state="UNREACHABLE"`.

Without Group Replication the members table is empty, or holds one placeholder row with an
empty MEMBER_ID (plugin not installed): no member series then, and
`dbgauge_mysql_group_replication_configured` says 0. MariaDB has no Group Replication
(Galera instead): MySQL 8.0+ only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import PS_SELECT, query
from dbgauge.toolkit.db.values import number, numbers, text
from dbgauge.toolkit.metrics import (
    Collector,
    Column,
    MetricSpec,
    MetricTable,
    Sample,
    column_samples,
    state_set,
)

_M = ("member",)
_P = "dbgauge_mysql_group_replication_"
_MEMBERS = "performance_schema.replication_group_members"
_STATS = "performance_schema.replication_group_member_stats"
STATES = ("ONLINE", "RECOVERING", "OFFLINE", "ERROR", "UNREACHABLE", "other")

CONFIGURED = MetricSpec(_P + "configured", "gauge",
                        f"1 if this server is in a Group Replication group ({_MEMBERS} lists "
                        "members), else 0 (then no member series).")
ONLINE = MetricSpec(_P + "member_online", "gauge",
                    f"1 if the member's state is ONLINE, else 0 ({_MEMBERS}.MEMBER_STATE).", _M)
STATE = MetricSpec(_P + "member_state", "gauge",
                   f"1 for the member's current state, 0 for the others ({_MEMBERS}."
                   "MEMBER_STATE: ONLINE, RECOVERING, OFFLINE, ERROR, UNREACHABLE, other).",
                   ("member", "state"))
PRIMARY = MetricSpec(_P + "primary", "gauge",
                     f"1 if the member is a PRIMARY, 0 if a SECONDARY ({_MEMBERS}.MEMBER_ROLE).",
                     _M)
METRICS = MetricTable(
    CONFIGURED, ONLINE, STATE, PRIMARY,
    Column(MetricSpec(
        _P + "applier_queue", "gauge",
        f"Transactions received from the group waiting to be applied on the member "
        f"({_STATS}.COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE).", _M), "applier_queue"),
    Column(MetricSpec(
        _P + "certifier_queue", "gauge",
        f"Transactions waiting for conflict detection on the member "
        f"({_STATS}.COUNT_TRANSACTIONS_IN_QUEUE).", _M), "certifier_queue"),
    Column(MetricSpec(
        _P + "conflicts_detected_total", "counter",
        f"Transactions that failed certification on the member "
        f"({_STATS}.COUNT_CONFLICTS_DETECTED).", _M), "conflicts_detected"),
)


@dataclass(frozen=True)
class Member:
    """One group member: label, state (one of STATES), primary (None: role unknown) and
    its stats by column (absent when the stats table has no row for it)."""

    member: str
    state: str
    primary: bool | None
    stats: Mapping[str, float]


@dataclass(frozen=True)
class GroupFacts:
    members: tuple[Member, ...]


def member_label(host: object, port: object) -> str:
    """MEMBER_HOST:MEMBER_PORT (the host alone when the port is NULL)."""
    p = number(port)
    return f"{text(host)}:{int(p)}" if p is not None else text(host)


def parse_group(members: Iterable[Row], stats: Iterable[Row]) -> GroupFacts:
    """Members and stats rows (joined on member_id) -> GroupFacts; placeholder rows without
    a MEMBER_ID or host are not members."""
    by_id = {text(row.get("member_id")): row for row in stats}
    out: list[Member] = []
    for row in members:
        member_id, host = text(row.get("member_id")), text(row.get("member_host"))
        if not member_id or not host:
            continue
        state = text(row.get("member_state")).upper()
        role = text(row.get("member_role")).upper()
        values = numbers(by_id.get(member_id, {}), METRICS.column_names)
        out.append(Member(member_label(host, row.get("member_port")),
                          state if state in STATES else "other",
                          role == "PRIMARY" if role in ("PRIMARY", "SECONDARY") else None,
                          values))
    return GroupFacts(tuple(out))


def read_group(conn: Connection) -> GroupFacts:
    """The members and their stats; the stats only when the server is in a group."""
    members = query(conn, "group_replication_members", PS_SELECT)
    if not any(text(r.get("member_id")) for r in members):
        return GroupFacts(())
    return parse_group(members, query(conn, "group_replication_member_stats", PS_SELECT))


def group_samples(facts: GroupFacts) -> Iterator[Sample]:
    yield Sample(CONFIGURED.name, 1.0 if facts.members else 0.0)
    for m in facts.members:
        labels = {"member": m.member}
        yield Sample(ONLINE.name, 1.0 if m.state == "ONLINE" else 0.0, labels)
        yield from state_set(STATE, "state", STATES, m.state, labels)
        if m.primary is not None:
            yield Sample(PRIMARY.name, 1.0 if m.primary else 0.0, labels)
        yield from column_samples(METRICS.columns, m.stats, labels)


class MySQLGroupReplication(Collector[GroupFacts]):
    name = "mysql_group_replication"
    help = ("Group Replication members: online, state, primary, applier and certifier queues, "
            "certification conflicts (performance_schema, MySQL 8.0+).")
    kind = "mysql"
    flavors = frozenset({"mysql"})
    min_versions = {"mysql": (8, 0)}
    metrics = METRICS

    def read(self, conn: Connection) -> GroupFacts:
        return read_group(conn)

    def samples(self, facts: GroupFacts) -> Iterable[Sample]:
        return group_samples(facts)
