"""check group-replication: the members of a MySQL 8 Group Replication group (InnoDB
Cluster) as the checked member sees them (performance_schema.replication_group_members,
the mysql_group_replication collector's facts).

A member in ERROR, OFFLINE or UNREACHABLE is CRITICAL, one RECOVERING is WARNING; fewer
than a majority ONLINE is CRITICAL (the group has lost quorum and accepts no writes). A
server without Group Replication (MariaDB included) is OK and says so.
"""

from __future__ import annotations

from dbgauge.checks.health.model import NodeOutcome, Thresholds, not_applicable
from dbgauge.collectors.mysql_group_replication import GroupFacts, read_group
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.result import Finding, Status, perf_label
from dbgauge.toolkit.targets import Target

NAME = "group-replication"
HELP = "Group Replication members ONLINE, none in ERROR/UNREACHABLE, quorum kept (MySQL 8)."
KINDS = frozenset({"mysql"})
DEFAULTS: Thresholds | None = None
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


def evaluate(node: Target, conn: Connection, limits: Thresholds | None) -> NodeOutcome:
    if conn.server.flavor != "mysql" or conn.server.version < (8, 0):
        return not_applicable(node, f"no Group Replication on {conn.server.version_text}")
    facts = read_group(conn)
    if not facts.members:
        return not_applicable(node, "Group Replication is not running here")
    findings = group_findings(node.name, facts)
    online = sum(1 for m in facts.members if m.state == "ONLINE")
    primary = next((m.member for m in facts.members if m.primary), None)
    note = f"{online} of {len(facts.members)} members ONLINE" + (
        f", primary {primary}" if primary else "")
    perf = ((perf_label(node.name, METRIC), float(online)),
            (perf_label(node.name, "members"), float(len(facts.members))))
    return NodeOutcome(node.name, tuple(findings), perf, note)
