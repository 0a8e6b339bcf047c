"""The group's own view of itself, read from a live member.

The conditions are pure interpretations of performance_schema rows
(replication_group_members, replication_group_member_stats) and of the incompatible
tables query, tested on published MySQL outputs (`check_group_members`,
`check_member_stats`, `check_tables` run them); `live_member` is the only I/O: it
connects, says so when the server is not MySQL at all, reads SHOW GLOBAL VARIABLES as a
`Member` and runs those interpretations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dbgauge.checks.innodb_cluster.model import Member, Out, Rows, Server, member_from_variables
from dbgauge.checks.innodb_cluster.rules import GROUP_MEMBERS, MEMBER_STATS, SERVER, TABLES
from dbgauge.toolkit.db import connect_dsn
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import CheckFailed
from dbgauge.toolkit.result import Finding, Severity

MYSQL_FAMILY = ("mysql", "mariadb")
_PRODUCTS = {"postgres": "PostgreSQL", "pgbouncer": "PgBouncer"}


def _lower(row: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in row.items()}


# ---------------------------------------------------------- the server itself


@SERVER.rule("live/not-mysql", "Server is not MySQL")
def not_mysql(s: Server, out: Out) -> None:
    """A --live DSN that reaches PostgreSQL or PgBouncer: there is no Group Replication."""
    flavor = s.server.flavor
    if flavor not in MYSQL_FAMILY:
        product = _PRODUCTS.get(flavor, flavor)
        out.emit(Severity.ERROR, f"{s.node} is {product} {s.server.version_text}, not MySQL: "
                 "Group Replication and InnoDB Cluster run on MySQL 8.0/8.4, so there is "
                 "nothing to validate live", node=s.node,
                 fix="point --live at a MySQL member (mysql://USER@HOST:3306/)")


# --------------------------------------------------- replication_group_members


def _running(v: Rows) -> bool:
    """Whether the group has an active member (a lone OFFLINE row means it does not)."""
    return bool(v.rows) and not (len(v.rows) == 1 and str(v.rows[0].get("member_state")) in
                                 ("OFFLINE", "", "None"))


def _online_roles(v: Rows) -> list[str]:
    return [str(r.get("member_role") or "") for r in v.rows if r.get("member_state") == "ONLINE"]


def _single_primary(v: Rows) -> bool:
    """The group's mode: the variable's, else what the roles say (at most one PRIMARY)."""
    if v.single_primary is None:
        return _online_roles(v).count("PRIMARY") <= 1
    return v.single_primary


@GROUP_MEMBERS.rule("live/members", "replication_group_members state")
def group_replication_not_running(v: Rows, out: Out) -> None:
    """Group Replication not running on the server (no active member)."""
    if not _running(v):
        out.emit(Severity.ERROR, "Group Replication is not running on this server "
                 "(replication_group_members has no active member)", node=v.node,
                 fix="START GROUP_REPLICATION, or dba.rebootClusterFromCompleteOutage()")


@GROUP_MEMBERS.rule("live/members")
def member_not_online(v: Rows, out: Out) -> None:
    """A member RECOVERING (warning) or in any state but ONLINE (error)."""
    for r in v.rows if _running(v) else ():
        state = str(r.get("member_state") or "")
        who = f"{r.get('member_host')}:{r.get('member_port')}"
        if state == "RECOVERING":
            out.emit(Severity.WARNING, f"member {who} is RECOVERING (catching up)",
                     node=v.node, key=who)
        elif state != "ONLINE":
            out.emit(Severity.ERROR, f"member {who} is {state}", node=v.node, key=who,
                     fix="see the member's error log; rejoin with cluster.rejoinInstance()")


@GROUP_MEMBERS.rule("live/members")
def primary_count(v: Rows, out: Out) -> None:
    """A single-primary group without exactly one ONLINE PRIMARY."""
    primaries = _online_roles(v).count("PRIMARY")
    if _running(v) and _single_primary(v) and primaries != 1:
        out.emit(Severity.ERROR, f"single-primary group has {primaries} ONLINE PRIMARY "
                 "members", node=v.node,
                 fix="check cluster.status(); a group without a primary accepts no writes")


@GROUP_MEMBERS.rule("live/members")
def multi_primary_secondaries(v: Rows, out: Out) -> None:
    """A multi-primary group with ONLINE members that are not PRIMARY (warning)."""
    if _running(v) and not _single_primary(v) and any(r != "PRIMARY" for r in _online_roles(v)):
        out.emit(Severity.WARNING, "multi-primary group has ONLINE members that are not "
                 "PRIMARY", node=v.node)


@GROUP_MEMBERS.rule("live/members")
def version_mix(v: Rows, out: Out) -> None:
    """Members on different versions: fine during a rolling upgrade (warning)."""
    versions = sorted({str(r.get("member_version")) for r in v.rows if r.get("member_version")})
    if _running(v) and len(versions) > 1:
        out.emit(Severity.WARNING, f"members run different versions ({', '.join(versions)}): "
                 "fine during a rolling upgrade; the primary should run the lowest version",
                 node=v.node, fix="finish the upgrade")


@GROUP_MEMBERS.rule("gr/size")
def live_group_size(v: Rows, out: Out) -> None:
    """The group the server reports: 2 or more than 9 members (error), an even count
    (warning)."""
    n = len(v.rows)
    if not _running(v):
        return
    if n == 2 or n > 9:
        out.emit(Severity.ERROR, f"{n} members: a group needs 3 to 9", node=v.node)
    elif n >= 3 and n % 2 == 0:
        out.emit(Severity.WARNING, f"{n} members: an even count tolerates no more failures "
                 f"than {n - 1}", node=v.node)


def check_group_members(rows: Iterable[Mapping[str, Any]], single_primary: bool | None,
                        node: str) -> list[Finding]:
    """performance_schema.replication_group_members: states, primaries, version mix."""
    return GROUP_MEMBERS.findings(Rows(node, tuple(_lower(r) for r in rows), single_primary),
                                  Out)


# ------------------------------------------------ replication_group_member_stats


def _thresholds(v: Rows) -> tuple[tuple[str, int, str], ...]:
    """(column, threshold, queue) of the two queues flow control watches."""
    cert = int(v.variables.get("group_replication_flow_control_certifier_threshold") or 25000)
    appl = int(v.variables.get("group_replication_flow_control_applier_threshold") or 25000)
    return (("count_transactions_in_queue", cert, "certifier"),
            ("count_transactions_remote_in_applier_queue", appl, "applier"))


@MEMBER_STATS.rule("live/flow-control", "Queues against flow-control thresholds")
def queue_at_threshold(v: Rows, out: Out) -> None:
    """A certifier or applier queue at or above its flow-control threshold (warning)."""
    mode = (v.variables.get("group_replication_flow_control_mode") or "QUOTA").upper()
    throttled = "flow control is throttling writers" if mode != "DISABLED" else (
        "flow control is DISABLED, the member falls further behind")
    thresholds = _thresholds(v)
    for r in v.rows:
        who = str(r.get("member_id"))
        for col, limit, what in thresholds:
            raw = r.get(col)
            if raw is not None and str(raw) != "" and int(raw) >= limit:
                out.emit(Severity.WARNING, f"member {who}: {int(raw)} transactions in the "
                         f"{what} queue (threshold {limit}): {throttled}", node=v.node, key=who,
                         fix="find the slow member (disk, CPU, large transactions)")


@MEMBER_STATS.rule("live/flow-control")
def certification_conflicts(v: Rows, out: Out) -> None:
    """Certification conflicts so far (info)."""
    for r in v.rows:
        who = str(r.get("member_id"))
        conflicts = int(r.get("count_conflicts_detected") or 0)
        if conflicts:
            out.emit(Severity.INFO, f"member {who}: {conflicts} certification conflicts so far",
                     node=v.node, key=who)


def check_member_stats(rows: Iterable[Mapping[str, Any]], variables: Mapping[str, str],
                       node: str) -> list[Finding]:
    """replication_group_member_stats queues against the flow-control thresholds."""
    return MEMBER_STATS.findings(Rows(node, tuple(_lower(r) for r in rows),
                                      variables=variables), Out)


# ------------------------------------------------------------------------ tables


def _table(r: Mapping[str, Any]) -> str:
    return f"{r.get('table_schema')}.{r.get('table_name')}"


@TABLES.rule("live/tables", "Tables Group Replication cannot replicate")
def not_innodb(v: Rows, out: Out) -> None:
    """A table in another engine than InnoDB: Group Replication refuses writes to it."""
    for r in v.rows:
        engine, table = str(r.get("engine") or ""), _table(r)
        if engine.lower() != "innodb":
            out.emit(Severity.ERROR, f"table {table} uses {engine or 'no'} engine: Group "
                     "Replication refuses writes to it", node=v.node, key=table,
                     fix=f"ALTER TABLE {table} ENGINE=InnoDB")


@TABLES.rule("live/tables")
def no_primary_key(v: Rows, out: Out) -> None:
    """A table without a primary key (or non-null unique key): writes are refused."""
    for r in v.rows:
        table = _table(r)
        if not int(r.get("has_primary_key") or 0):
            out.emit(Severity.ERROR, f"table {table} has no primary key (or non-null unique "
                     "key): Group Replication refuses writes to it", node=v.node, key=table,
                     fix=f"ALTER TABLE {table} ADD PRIMARY KEY (...), or an invisible "
                         "auto-increment key")


def check_tables(rows: Iterable[Mapping[str, Any]], node: str) -> list[Finding]:
    """Tables that are not InnoDB or have no primary key (or non-null unique key)."""
    return TABLES.findings(Rows(node, tuple(_lower(r) for r in rows)), Out)


# ----------------------------------------------------------------------- the read


def live_member(dsn: str, password: str | None = None) -> tuple[Member | None, list[Finding]]:
    """One server: its variables as a Member, plus the group's view and table checks.

    A DSN that reaches a server outside the MySQL family (postgresql://...) is a
    live/not-mysql finding and no member; MariaDB stops the run (no Group Replication)."""
    params = parse_dsn(dsn)
    conn = connect_dsn(dsn, password=password)
    try:
        server = conn.server
        label = params.address
        if server.flavor not in MYSQL_FAMILY:
            return None, SERVER.findings(Server(label, server), Out)
        if server.flavor == "mariadb":
            raise CheckFailed(
                f"{params.address} is MariaDB {server.version_text}: Group Replication and "
                "InnoDB Cluster do not exist on MariaDB (it uses Galera or async "
                "replication), so there is nothing to validate live")
        member = member_from_variables(conn.query("validate_global_variables"),
                                       server.version, label)
        sp = member.flag("group_replication_single_primary_mode")
        findings = check_group_members(conn.query("validate_group_members"), sp, label)
        variables = {k: (s.value or "") for k, s in member.values.items()}
        findings += check_member_stats(conn.query("validate_group_member_stats"), variables,
                                       label)
        findings += check_tables(conn.query("validate_incompatible_tables"), label)
    finally:
        conn.close()
    return member, findings
