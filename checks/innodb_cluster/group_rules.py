"""Rules across the members: what must be unique, what must agree, seeds and group size.

Pure: a function of the `Member`s given (voting members and read replicas counted
apart), from files or live servers alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checks.innodb_cluster.model import MEMBER, READ_REPLICA, Member, norm_addr
from checks.innodb_cluster.mycnf import as_int
from toolkit.result import Finding, Severity, finding


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
