"""The group's own view of itself, read from a live member.

The `check_*` functions are pure interpretations of performance_schema rows
(replication_group_members, replication_group_member_stats) and of the incompatible
tables query, tested on published MySQL outputs; `live_member` is the only I/O: it
connects, reads SHOW GLOBAL VARIABLES as a `Member` and runs those interpretations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dbgauge.checks.innodb_cluster.model import Member, member_from_variables
from dbgauge.toolkit.db import connect_dsn
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import CheckFailed
from dbgauge.toolkit.result import Finding, Severity, finding


def _lower(row: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in row.items()}


def check_group_members(rows: Iterable[Mapping[str, Any]], single_primary: bool | None,
                        node: str) -> list[Finding]:
    """performance_schema.replication_group_members: states, primaries, version mix."""
    out: list[Finding] = []
    members = [_lower(r) for r in rows]

    def add(sev: Severity, msg: str, key: str | None = None, fix: str | None = None,
            rule: str = "live/members") -> None:
        out.append(finding(sev, rule, msg, node=node, key=key, fix=fix))

    if not members or (len(members) == 1 and str(members[0].get("member_state")) in
                       ("OFFLINE", "", "None")):
        add(Severity.ERROR, "Group Replication is not running on this server "
            "(replication_group_members has no active member)",
            fix="START GROUP_REPLICATION, or dba.rebootClusterFromCompleteOutage()")
        return out
    for r in members:
        state = str(r.get("member_state") or "")
        who = f"{r.get('member_host')}:{r.get('member_port')}"
        if state == "RECOVERING":
            add(Severity.WARNING, f"member {who} is RECOVERING (catching up)", who)
        elif state != "ONLINE":
            add(Severity.ERROR, f"member {who} is {state}", who,
                "see the member's error log; rejoin with cluster.rejoinInstance()")
    roles = [str(r.get("member_role") or "") for r in members if r.get("member_state") ==
             "ONLINE"]
    primaries = roles.count("PRIMARY")
    if single_primary is None:
        single_primary = primaries <= 1
    if single_primary and primaries != 1:
        add(Severity.ERROR, f"single-primary group has {primaries} ONLINE PRIMARY members",
            fix="check cluster.status(); a group without a primary accepts no writes")
    if not single_primary and any(r != "PRIMARY" for r in roles):
        add(Severity.WARNING, "multi-primary group has ONLINE members that are not PRIMARY")
    versions = sorted({str(r.get("member_version")) for r in members
                       if r.get("member_version")})
    if len(versions) > 1:
        add(Severity.WARNING, f"members run different versions ({', '.join(versions)}): "
            "fine during a rolling upgrade; the primary should run the lowest version",
            fix="finish the upgrade")
    n = len(members)
    if n == 2 or n > 9:
        add(Severity.ERROR, f"{n} members: a group needs 3 to 9", rule="gr/size")
    elif n >= 3 and n % 2 == 0:
        add(Severity.WARNING, f"{n} members: an even count tolerates no more failures than "
            f"{n - 1}", rule="gr/size")
    return out


def check_member_stats(rows: Iterable[Mapping[str, Any]], variables: Mapping[str, str],
                       node: str) -> list[Finding]:
    """replication_group_member_stats queues against the flow-control thresholds."""
    out: list[Finding] = []
    mode = (variables.get("group_replication_flow_control_mode") or "QUOTA").upper()
    cert = int(variables.get("group_replication_flow_control_certifier_threshold") or 25000)
    appl = int(variables.get("group_replication_flow_control_applier_threshold") or 25000)
    for r in (_lower(x) for x in rows):
        who = str(r.get("member_id"))
        for col, limit, what in (
                ("count_transactions_in_queue", cert, "certifier"),
                ("count_transactions_remote_in_applier_queue", appl, "applier")):
            raw = r.get(col)
            if raw is None or str(raw) == "":
                continue
            queued = int(raw)
            if queued >= limit:
                throttled = "flow control is throttling writers" if mode != "DISABLED" else (
                    "flow control is DISABLED, the member falls further behind")
                out.append(finding(Severity.WARNING, "live/flow-control",
                                   f"member {who}: {queued} transactions in the {what} queue "
                                   f"(threshold {limit}): {throttled}", node=node, key=who,
                                   fix="find the slow member (disk, CPU, large transactions)"))
        conflicts = int(r.get("count_conflicts_detected") or 0)
        if conflicts:
            out.append(finding(Severity.INFO, "live/flow-control",
                               f"member {who}: {conflicts} certification conflicts so far",
                               node=node, key=who))
    return out


def check_tables(rows: Iterable[Mapping[str, Any]], node: str) -> list[Finding]:
    """Tables that are not InnoDB or have no primary key (or non-null unique key)."""
    out: list[Finding] = []
    for r in (_lower(x) for x in rows):
        table = f"{r.get('table_schema')}.{r.get('table_name')}"
        engine = str(r.get("engine") or "")
        if engine.lower() != "innodb":
            out.append(finding(Severity.ERROR, "live/tables",
                               f"table {table} uses {engine or 'no'} engine: Group "
                               "Replication refuses writes to it", node=node, key=table,
                               fix=f"ALTER TABLE {table} ENGINE=InnoDB"))
        if not int(r.get("has_primary_key") or 0):
            out.append(finding(Severity.ERROR, "live/tables",
                               f"table {table} has no primary key (or non-null unique key): "
                               "Group Replication refuses writes to it", node=node, key=table,
                               fix=f"ALTER TABLE {table} ADD PRIMARY KEY (...), or an "
                                   "invisible auto-increment key"))
    return out


def live_member(dsn: str, password: str | None = None) -> tuple[Member, list[Finding]]:
    """One server: its variables as a Member, plus the group's view and table checks."""
    params = parse_dsn(dsn)
    conn = connect_dsn(dsn, password=password, kind="mysql")
    try:
        server = conn.server
        if server.flavor == "mariadb":
            raise CheckFailed(
                f"{params.address} is MariaDB {server.version_text}: Group Replication and "
                "InnoDB Cluster do not exist on MariaDB (it uses Galera or async "
                "replication), so there is nothing to validate live")
        label = params.address
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
