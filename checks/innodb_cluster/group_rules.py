"""Rules across the members: what must be unique, what must agree, seeds and group size.

Pure: a function of the `Group` given (voting members and read replicas counted
apart), from files or live servers alike.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence

from dbgauge.checks.innodb_cluster.model import Group, Member, Out, norm_addr
from dbgauge.checks.innodb_cluster.mycnf import as_int
from dbgauge.checks.innodb_cluster.rules import GROUP
from dbgauge.toolkit.result import Finding, Severity


def check_group(members: Sequence[Member]) -> list[Finding]:
    """Rules across the member files: uniqueness, agreement, seeds and group size."""
    return GROUP.findings(Group(tuple(members)), Out)


# ------------------------------------------------------------------------- unique


def _reused(pool: Sequence[Member], value_of: Callable[[Member], str | None]
            ) -> list[tuple[Member, str, Member]]:
    """(member, value, first member with it) for each member whose value an earlier
    member of `pool` already has."""
    seen: dict[str, Member] = {}
    found = []
    for m in pool:
        val = value_of(m)
        if val is None:
            continue
        if val in seen:
            found.append((m, val, seen[val]))
        else:
            seen[val] = m
    return found


def _report_reused(out: Out, key: str, what: str, reused: list[tuple[Member, str, Member]]
                   ) -> None:
    for m, val, first in reused:
        out.about(m, Severity.ERROR, key, f"{what} {val} is also used by {first.label}",
                  f"give every member its own {what}")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


@GROUP.rule("gr/report-address")
def report_host_unset(g: Group, out: Out) -> None:
    """Members without report_host, once for the set, unless their local addresses are
    host names (they reach each other by name) or all loopback (a one-host lab)."""
    bare = [m for m in g.voting if not m.text("report_host")]
    if not bare:
        return
    hosts = [norm_addr(m.text("group_replication_local_address") or "").rpartition(":")[0]
             for m in bare]
    if all(h and not _is_ip(h) for h in hosts):
        return  # they reach each other by name already
    if all(h and _is_ip(h) and ipaddress.ip_address(h.strip("[]")).is_loopback for h in hosts):
        return  # one host (a lab): its hostname is everybody's hostname
    names = ", ".join(m.label for m in bare)
    out.about(bare[0], Severity.WARNING, "report_host",
              f"report_host is not set on {names}: MySQL Shell and Router will know "
              f"{'this member' if len(bare) == 1 else 'these members'} by the system "
              "hostname, which must resolve from every other member and Router host",
              "set report_host to the address the other members use")


@GROUP.rule("gr/server-id")
def server_id_reused(g: Group, out: Out) -> None:
    """Two members (read replicas included) with the same server_id."""
    _report_reused(out, "server_id", "server_id",
                   _reused(g.members, lambda m: m.text("server_id")))


@GROUP.rule("gr/group", "Group-wide setting that must agree across members")
def report_address_reused(g: Group, out: Out) -> None:
    """Two members with the same report address (report_host:report_port)."""
    _report_reused(out, "report_host", "report address",
                   _reused(g.members, lambda m: m.address))


@GROUP.rule("gr/group")
def local_address_reused(g: Group, out: Out) -> None:
    """Two voting members with the same group_replication_local_address."""
    key = "group_replication_local_address"
    _report_reused(out, key, key,
                   _reused(g.voting, lambda m: norm_addr(m.text(key) or "") or None))


# -------------------------------------------------------------------------- agree


def _names_set(g: Group) -> bool:
    """Whether the files set the group name (MySQL Shell usually persists it elsewhere)."""
    return len(g.voting) >= 2 and any(m.text("group_replication_group_name") for m in g.voting)


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return repr(value)


def _disagree(g: Group, out: Out, key: str, value_of: Callable[[Member], object]) -> None:
    """Every voting member whose value differs from the first member's."""
    voting = g.voting
    values = {m.label: value_of(m) for m in voting}
    if len(voting) < 2 or len(set(values.values())) < 2:
        return
    first = voting[0]
    for m in voting[1:]:
        if values[m.label] != values[first.label]:
            out.about(m, Severity.ERROR, key,
                      f"{key} is {_show(values[m.label])} here but "
                      f"{_show(values[first.label])} in {first.label}: all members must agree")


@GROUP.rule("gr/group")
def group_name_missing(g: Group, out: Out) -> None:
    """group_replication_group_name set in some member files but not in this one (warning)."""
    if not _names_set(g):
        return
    for m in g.voting:
        if not m.text("group_replication_group_name"):
            out.about(m, Severity.WARNING, "group_replication_group_name",
                      "group_replication_group_name is set in other member files but not here")


@GROUP.rule("gr/group")
def group_name_differs(g: Group, out: Out) -> None:
    """Members with different group_replication_group_name."""
    if _names_set(g):
        _disagree(g, out, "group_replication_group_name",
                  lambda m: (m.text("group_replication_group_name") or "").strip("'\"").lower()
                  or None)


@GROUP.rule("gr/group")
def single_primary_mode_differs(g: Group, out: Out) -> None:
    """Members with different group_replication_single_primary_mode."""
    if _names_set(g):
        _disagree(g, out, "group_replication_single_primary_mode",
                  lambda m: m.flag("group_replication_single_primary_mode") is not False)


@GROUP.rule("gr/group")
def lower_case_table_names_differs(g: Group, out: Out) -> None:
    """Members with different lower_case_table_names."""
    _disagree(g, out, "lower_case_table_names",
              lambda m: as_int(m.text("lower_case_table_names")) or 0)


@GROUP.rule("gr/group")
def table_encryption_differs(g: Group, out: Out) -> None:
    """Members with different default_table_encryption."""
    _disagree(g, out, "default_table_encryption",
              lambda m: m.flag("default_table_encryption") is True)


# -------------------------------------------------------------------------- seeds


def _local(m: Member) -> str:
    return norm_addr(m.text("group_replication_local_address") or "")


def _seeds(m: Member) -> set[str]:
    return {norm_addr(s) for s in (m.text("group_replication_group_seeds") or "")
            .strip("'\"").split(",") if s.strip()}


def _seeded(g: Group) -> list[Member]:
    """The voting members, when there are two or more and the files set local addresses."""
    voting = g.voting
    return voting if len(voting) >= 2 and any(_local(m) for m in voting) else []


@GROUP.rule("gr/seeds", "group_replication_group_seeds coverage")
def no_other_seed(g: Group, out: Out) -> None:
    """A member whose seeds name no other member: it cannot join after a restart."""
    for m in _seeded(g):
        if _local(m) and not _seeds(m) - {_local(m)}:
            out.about(m, Severity.ERROR, "group_replication_group_seeds",
                      "no other member in group_replication_group_seeds: this member cannot "
                      "join the group after a restart", "list the other members' local addresses")


@GROUP.rule("gr/seeds")
def stranger_seed(g: Group, out: Out) -> None:
    """A seed that is not the local address of any given member (warning)."""
    members = _seeded(g)
    known = {_local(m) for m in members if _local(m)}
    for m in members:
        stale = sorted(s for s in _seeds(m) if s not in known)
        if stale:
            out.about(m, Severity.WARNING, "group_replication_group_seeds",
                      f"seed(s) {', '.join(stale)} are not the local address of any given "
                      "member")


@GROUP.rule("gr/seeds")
def local_address_not_seeded(g: Group, out: Out) -> None:
    """A local address no member lists in its seeds (warning)."""
    members = _seeded(g)
    union = set().union(*(_seeds(m) for m in members))
    for m in members:
        if _local(m) and _local(m) not in union:
            out.about(m, Severity.WARNING, "group_replication_local_address",
                      f"{_local(m)} is in no member's group_replication_group_seeds")


# --------------------------------------------------------------------------- size


@GROUP.rule("gr/size", "Number of voting members")
def group_size(g: Group, out: Out) -> None:
    """2 or more than 9 voting members (error), an even count (warning), or one member's
    files alone (info)."""
    voting, replicas = g.voting, g.replicas
    n = len(voting)
    label = f"{n} voting member(s)" + (f" and {len(replicas)} read replica(s)" if replicas
                                       else "")
    anchor = voting[0] if voting else (g.members[0] if g.members else None)
    if anchor is None:
        return
    if n == 1 and not anchor.live:
        out.about(anchor, Severity.INFO, None,
                  label + ": pass every member's file to check the group as a whole")
    elif n == 2 or n > 9:
        out.about(anchor, Severity.ERROR, None, f"{label}: a group needs 3 to 9 members " +
                  ("(2 members cannot survive the loss of one)" if n == 2 else "(9 at most)"))
    elif n >= 3 and n % 2 == 0:
        out.about(anchor, Severity.WARNING, None,
                  f"{label}: an even count tolerates no more failures than one member fewer",
                  f"use {n - 1} or {n + 1} voting members")
