"""What the member files configure at all, judged before any Group Replication rule.

Files with wsrep_* options are Galera (MariaDB Galera Cluster / Percona XtraDB Cluster):
one finding instead of dozens about Group Replication it never meant to use. Files with
no Group Replication at all get one finding saying so (the other rules still run: MySQL
Shell may configure the group itself). Pure: a function of the members.
"""

from __future__ import annotations

from collections.abc import Sequence

from dbgauge.checks.innodb_cluster.model import MEMBER, Group, Member, Out
from dbgauge.checks.innodb_cluster.rules import KIND
from dbgauge.toolkit.result import Finding, Severity


def galera_options(m: Member) -> list[str]:
    """The wsrep_* options that make a member a Galera node, in file order."""
    return sorted((k for k in m.values if k.startswith("wsrep_")),
                  key=lambda k: (m.values[k].source or "", m.values[k].line or 0))


def has_group_replication(m: Member) -> bool:
    """Group Replication configured in the files: its plugin or any of its options."""
    return any(k.startswith("group_replication") for k in m.values) or any(
        "group_replication" in (m.text(k) or "") for k in ("plugin_load_add", "plugin_load"))


def _files(g: Group) -> list[Member]:
    """The voting members read from files (live members and read replicas aside)."""
    return [m for m in g.members if not m.live and m.role == MEMBER]


def _galera(g: Group) -> list[Member]:
    return [m for m in _files(g) if galera_options(m)]


@KIND.rule("gr/not-innodb-cluster", "Files that configure Galera, or no Group Replication at all")
def galera(g: Group, out: Out) -> None:
    """Member files with wsrep_* options: Galera, not InnoDB Cluster (no GR rule applied)."""
    nodes = _galera(g)
    if not nodes:
        return
    m, opts = nodes[0], galera_options(nodes[0])
    file, line = m.where(opts[0])
    shown = ", ".join(opts[:3]) + (", ..." if len(opts) > 3 else "")
    out.emit(Severity.ERROR, f"{len(nodes)} of {len(_files(g))} file(s) configure Galera "
             f"({shown}): that is MariaDB Galera Cluster / Percona XtraDB Cluster, not InnoDB "
             "Cluster (Group Replication); its rules were not applied", node=m.label,
             file=file, line=line, key=opts[0],
             fix="validate Galera with its own tools (e.g. galera_new_cluster docs); this "
                 "command checks Group Replication members")


@KIND.rule("gr/not-innodb-cluster")
def no_group_replication(g: Group, out: Out) -> None:
    """Member files without Group Replication (info when GTIDs are on, else warning)."""
    files = _files(g)
    if not files or _galera(g) or any(has_group_replication(m) for m in files) or \
            any(m.live for m in g.members):
        return
    # Members with GTIDs on are prepared the way dba.configureInstance() leaves them, and
    # MySQL Shell persists the group's own settings to mysqld-auto.cnf: worth a note only.
    prepared = all((m.text("gtid_mode") or "").upper() == "ON" for m in files)
    out.emit(Severity.INFO if prepared else Severity.WARNING,
             f"none of the {len(files)} file(s) configures Group Replication (no "
             "plugin_load_add=group_replication.so, no group_replication_* option): as "
             "written this is not an InnoDB Cluster, unless MySQL Shell sets the group up "
             "itself (dba.createCluster persists it to mysqld-auto.cnf)", node=files[0].label,
             file=files[0].label, line=None)


def check_kind(members: Sequence[Member]) -> tuple[list[Finding], bool]:
    """(findings, whether the InnoDB Cluster rules apply): not to a Galera set."""
    group = Group(tuple(members))
    return KIND.findings(group, Out), not _galera(group)
