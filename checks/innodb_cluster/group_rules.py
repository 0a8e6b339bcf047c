"""Rules across the members: what must be unique, what must agree, seeds and group size.

Pure: a function of the `Member`s given (voting members and read replicas counted
apart), from files or live servers alike.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

from dbgauge.checks.innodb_cluster.model import MEMBER, READ_REPLICA, Member, norm_addr
from dbgauge.checks.innodb_cluster.mycnf import as_int
from dbgauge.toolkit.result import Finding, Severity, finding


def check_group(members: Sequence[Member]) -> list[Finding]:
    """Rules across the member files: uniqueness, agreement, seeds and group size."""
    out: list[Finding] = []
    voting = [m for m in members if m.role == MEMBER]
    replicas = [m for m in members if m.role == READ_REPLICA]

    def add(m: Member, sev: Severity, rule: str, key: str | None, msg: str,
            fix: str | None = None) -> None:
        file, line = m.where(key) if key else ((None if m.live else m.label), None)
        out.append(finding(sev, rule, msg, node=m.label, file=file, line=line, key=key,
                           fix=fix))

    def unique(key: str, value_of: Any, what: str, pool: Sequence[Member]) -> None:
        seen: dict[str, Member] = {}
        for m in pool:
            val = value_of(m)
            if val is None:
                continue
            if val in seen:
                add(m, Severity.ERROR, "gr/server-id" if key == "server_id" else "gr/group",
                    key, f"{what} {val} is also used by {seen[val].label}",
                    f"give every member its own {what}")
            else:
                seen[val] = m

    _check_report_hosts(voting, add)
    unique("server_id", lambda m: m.text("server_id"), "server_id", members)
    unique("report_host", lambda m: m.address, "report address", members)
    unique("group_replication_local_address",
           lambda m: norm_addr(m.text("group_replication_local_address") or "") or None,
           "group_replication_local_address", voting)

    if len(voting) >= 2:
        def same(key: str, value_of: Any, rule: str = "gr/group") -> None:
            values = {m.label: value_of(m) for m in voting}
            distinct = {v for v in values.values()}
            if len(distinct) > 1:
                first = voting[0]
                for m in voting[1:]:
                    if values[m.label] != values[first.label]:
                        add(m, Severity.ERROR, rule, key,
                            f"{key} is {_show(values[m.label])} here but "
                            f"{_show(values[first.label])} in {first.label}: all members "
                            "must agree")

        names = {m.label: m.text("group_replication_group_name") for m in voting}
        if any(names.values()):
            if not all(names.values()):
                for m in voting:
                    if not names[m.label]:
                        add(m, Severity.WARNING, "gr/group", "group_replication_group_name",
                            "group_replication_group_name is set in other member files but "
                            "not here")
            same("group_replication_group_name",
                 lambda m: (m.text("group_replication_group_name") or "").strip("'\"").lower()
                 or None)
            same("group_replication_single_primary_mode",
                 lambda m: m.flag("group_replication_single_primary_mode") is not False)
        same("lower_case_table_names", lambda m: as_int(m.text("lower_case_table_names")) or 0)
        same("default_table_encryption",
             lambda m: m.flag("default_table_encryption") is True)
        _check_seeds(voting, add)

    n = len(voting)
    label = f"{n} voting member(s)" + (f" and {len(replicas)} read replica(s)" if replicas
                                       else "")
    anchor = voting[0] if voting else (members[0] if members else None)
    if anchor is not None:
        if n == 1 and not anchor.live:
            out.append(finding(Severity.INFO, "gr/size", label + ": pass every member's "
                               "file to check the group as a whole", node=anchor.label,
                               file=None if anchor.live else anchor.label))
        elif n == 2 or n > 9:
            add(anchor, Severity.ERROR, "gr/size", None,
                f"{label}: a group needs 3 to 9 members " +
                ("(2 members cannot survive the loss of one)" if n == 2 else "(9 at most)"))
        elif n >= 3 and n % 2 == 0:
            add(anchor, Severity.WARNING, "gr/size", None,
                f"{label}: an even count tolerates no more failures than one member fewer",
                f"use {n - 1} or {n + 1} voting members")
    return out


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return repr(value)


def _check_seeds(voting: Sequence[Member], add: Any) -> None:
    locals_ = {m.label: norm_addr(m.text("group_replication_local_address") or "")
               for m in voting}
    if not any(locals_.values()):
        return
    seeds_of = {m.label: {norm_addr(s) for s in (m.text("group_replication_group_seeds") or "")
                          .strip("'\"").split(",") if s.strip()} for m in voting}
    union = set().union(*seeds_of.values())
    known = {a for a in locals_.values() if a}
    for m in voting:
        seeds = seeds_of[m.label]
        if locals_[m.label] and not seeds - {locals_[m.label]}:
            add(m, Severity.ERROR, "gr/seeds", "group_replication_group_seeds",
                "no other member in group_replication_group_seeds: this member cannot join "
                "the group after a restart", "list the other members' local addresses")
        stale = sorted(s for s in seeds if s not in known)
        if stale:
            add(m, Severity.WARNING, "gr/seeds", "group_replication_group_seeds",
                f"seed(s) {', '.join(stale)} are not the local address of any given member")
    for m in voting:
        if locals_[m.label] and locals_[m.label] not in union:
            add(m, Severity.WARNING, "gr/seeds", "group_replication_local_address",
                f"{locals_[m.label]} is in no member's group_replication_group_seeds")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _check_report_hosts(voting: Sequence[Member], add: Any) -> None:
    """One finding for the set at most: members without report_host are known by their
    hostname, which is fine where the members already reach each other by name (their
    local addresses are host names, so those resolve there)."""
    bare = [m for m in voting if not m.text("report_host")]
    if not bare:
        return
    hosts = [norm_addr(m.text("group_replication_local_address") or "").rpartition(":")[0]
             for m in bare]
    if all(h and not _is_ip(h) for h in hosts):
        return  # they reach each other by name already
    if all(h and _is_ip(h) and ipaddress.ip_address(h.strip("[]")).is_loopback for h in hosts):
        return  # one host (a lab): its hostname is everybody's hostname
    names = ", ".join(m.label for m in bare)
    add(bare[0], Severity.WARNING, "gr/report-address", "report_host",
        f"report_host is not set on {names}: MySQL Shell and Router will know "
        f"{'this member' if len(bare) == 1 else 'these members'} by the system hostname, "
        "which must resolve from every other member and Router host",
        "set report_host to the address the other members use")


def galera_options(m: Member) -> list[str]:
    """The wsrep_* options that make a member a Galera node, in file order."""
    return sorted((k for k in m.values if k.startswith("wsrep_")),
                  key=lambda k: (m.values[k].source or "", m.values[k].line or 0))


def has_group_replication(m: Member) -> bool:
    """Group Replication configured in the files: its plugin or any of its options."""
    return any(k.startswith("group_replication") for k in m.values) or any(
        "group_replication" in (m.text(k) or "") for k in ("plugin_load_add", "plugin_load"))


def check_kind(members: Sequence[Member]) -> tuple[list[Finding], bool]:
    """(findings, whether the InnoDB Cluster rules apply): a Galera set gets one finding
    instead of dozens about Group Replication it never meant to use; a set with no Group
    Replication at all gets one finding saying so (the other rules still run: MySQL Shell
    may configure the group itself)."""
    files = [m for m in members if not m.live and m.role == MEMBER]
    if not files:
        return [], True
    galera = [m for m in files if galera_options(m)]
    first = files[0]
    if galera:
        m = galera[0]
        opts = galera_options(m)
        file, line = m.where(opts[0])
        shown = ", ".join(opts[:3]) + (", ..." if len(opts) > 3 else "")
        return [finding(Severity.ERROR, "gr/not-innodb-cluster",
                        f"{len(galera)} of {len(files)} file(s) configure Galera ({shown}): "
                        "that is MariaDB Galera Cluster / Percona XtraDB Cluster, not InnoDB "
                        "Cluster (Group Replication); its rules were not applied",
                        node=m.label, file=file, line=line, key=opts[0],
                        fix="validate Galera with its own tools (e.g. galera_new_cluster "
                            "docs); this command checks Group Replication members")], False
    if any(has_group_replication(m) for m in files) or any(m.live for m in members):
        return [], True
    # Members with GTIDs on are prepared the way dba.configureInstance() leaves them, and
    # MySQL Shell persists the group's own settings to mysqld-auto.cnf: worth a note only.
    prepared = all((m.text("gtid_mode") or "").upper() == "ON" for m in files)
    return [finding(Severity.INFO if prepared else Severity.WARNING, "gr/not-innodb-cluster",
                    f"none of the {len(files)} file(s) configures Group Replication (no "
                    "plugin_load_add=group_replication.so, no group_replication_* option): "
                    "as written this is not an InnoDB Cluster, unless MySQL Shell sets the "
                    "group up itself (dba.createCluster persists it to mysqld-auto.cnf)",
                    node=first.label, file=first.label, line=None)], True
