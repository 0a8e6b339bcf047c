"""check group-replication: the members of a MySQL 8 Group Replication group (InnoDB
Cluster) as the checked member sees them (performance_schema.replication_group_members,
the mysql_group_replication collector's facts).

A member in ERROR, OFFLINE or UNREACHABLE is CRITICAL, one RECOVERING is WARNING; fewer
than a majority ONLINE is CRITICAL (the group has lost quorum and accepts no writes). A
server without Group Replication (MariaDB included) is OK and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, NodeOutcome, nothing_to_check
from dbgauge.toolkit.result import Finding, Status, perf_label

if TYPE_CHECKING:
    from dbgauge.collectors.mysql_group_replication import GroupFacts
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

METRIC = "members_online"
_SEVERITY = {"RECOVERING": Status.WARNING, "ERROR": Status.CRITICAL,
             "OFFLINE": Status.CRITICAL, "UNREACHABLE": Status.CRITICAL,
             "other": Status.WARNING}


def group_findings(node: str, facts: GroupFacts) -> list[Finding]:
    """Problems of a group as one member sees it (pure: tested on captured MySQL 8 rows)."""
    out = [Finding(_SEVERITY[m.state], node, "member-" + m.state.lower(),
                   f"member {m.member} is {m.state}")
           for m in facts.members if m.state != "ONLINE"]
    online = sum(1 for m in facts.members if m.state == "ONLINE")
    if online * 2 <= len(facts.members):
        out.append(Finding(Status.CRITICAL, node, "no-quorum",
                           f"only {online} of {len(facts.members)} members ONLINE: no "
                           "majority, the group accepts no writes"))
    return out


def _read(node: Target, conn: Connection) -> NodeOutcome:
    from dbgauge.collectors.mysql_group_replication import read_group

    if conn.server.flavor != "mysql" or conn.server.version < (8, 0):
        return nothing_to_check(node, f"no Group Replication on {conn.server.version_text}")
    facts = read_group(conn)
    if not facts.members:
        return nothing_to_check(node, "Group Replication is not running here")
    findings = group_findings(node.name, facts)
    online = sum(1 for m in facts.members if m.state == "ONLINE")
    primary = next((m.member for m in facts.members if m.primary), None)
    note = f"{online} of {len(facts.members)} members ONLINE" + (
        f", primary {primary}" if primary else "")
    perf = ((perf_label(node.name, METRIC), float(online)),
            (perf_label(node.name, "members"), float(len(facts.members))))
    return NodeOutcome(node.name, tuple(findings), perf, note)


CHECK = HealthCheck(
    name="group-replication",
    summary="Group Replication members online, quorum kept (MySQL 8).",
    measures="member states and quorum (see below)", kinds=frozenset({"mysql"}),
    requires="MySQL 8", metric=METRIC, read=_read)
