"""The whole `dbgauge validate innodb-cluster`: read the files, build members, run rules.

Reading option files (with their !include/!includedir) is the I/O of the offline path;
everything it reads goes through the pure `mycnf` parser, and the members through the
stages of `rules.RULES`: `kind`, then per member (`member_rules.check_member`), across
the members (`group_rules`) and the router file (`router`); `--live` members (or a
live/not-mysql finding) come from `live`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from dbgauge.checks.innodb_cluster.group_rules import check_group
from dbgauge.checks.innodb_cluster.kind import check_kind
from dbgauge.checks.innodb_cluster.live import live_member
from dbgauge.checks.innodb_cluster.member_rules import check_member
from dbgauge.checks.innodb_cluster.model import NAME, READ_REPLICA, Member, member_from_file
from dbgauge.checks.innodb_cluster.mycnf import CnfFile
from dbgauge.checks.innodb_cluster.options import LATEST_PATCH
from dbgauge.checks.innodb_cluster.router import check_router
from dbgauge.checks.validation import refuse_long_numbers
from dbgauge.toolkit.clientcnf import load_option_file
from dbgauge.toolkit.db.version import Version, version_text
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.result import CheckResult, Finding, config_result


def load_cnf(path: str) -> CnfFile:
    """One option file with its includes, read the way mysqld reads them.

    An unreadable main file, an include that is not a regular UTF-8 file, an include
    loop or a number longer than any option takes stop the run (ConfigError, exit 2);
    a missing include becomes a finding, as mysqld only warns about it.
    """
    cnf = load_option_file(path, skip_unreadable=False)
    stop = next((p for p in cnf.problems if p.unreadable), None)
    if stop is not None:
        raise ConfigError(stop.message, source=stop.source, line=stop.line)
    refuse_long_numbers((o.raw, o.value or "", o.source, o.line) for o in cnf.options)
    return cnf


MERGED_RULES = ("gr/requirement", "gr/recommendation", "mycnf/deprecated")


def merge_repeats(findings: Sequence[Finding]) -> list[Finding]:
    """The same finding on several members (a requirement every file misses, a deprecated
    option every file repeats) once, at the first member, naming the others. Errors that
    stop a server (a removed option, a bad value) stay one per file."""
    groups: dict[tuple[object, ...], list[Finding]] = {}
    for i, f in enumerate(findings):
        merge = f.kind in MERGED_RULES
        groups.setdefault((f.severity, f.kind, f.key, f.detail) if merge else (i,), []).append(f)
    out = []
    for same in groups.values():
        first = same[0]
        others = [f.node for f in same[1:] if f.node != first.node]
        if others:
            first = replace(first, detail=f"{first.detail} (also in {', '.join(others)})")
        out.append(first)
    return out


@dataclass(frozen=True)
class ClusterOptions:
    """What the command line asks for besides the member files."""

    version: Version = LATEST_PATCH[(8, 4)]
    read_replicas: tuple[str, ...] = ()
    router: str | None = None
    live: tuple[str, ...] = ()
    password: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)


def validate_innodb_cluster(files: Sequence[str], opts: ClusterOptions) -> CheckResult:
    """The whole `dbgauge validate innodb-cluster`."""
    members: list[Member] = []
    findings: list[Finding] = []
    for path in files:
        members.append(member_from_file(load_cnf(path), opts.version))
    for path in opts.read_replicas:
        members.append(member_from_file(load_cnf(path), opts.version, role=READ_REPLICA))
    for dsn in opts.live:
        member, live = live_member(dsn, opts.password)
        if member is not None:
            members.append(member)
        findings += live
    kind, applies = check_kind(members)
    findings += kind
    if applies:
        findings += merge_repeats([f for m in members for f in check_member(m)])
        findings += check_group(members)
    if opts.router:
        findings += check_router(load_cnf(opts.router), members)
    target = ", ".join([*files, *opts.read_replicas, *opts.live]) or "-"
    return config_result(f"{NAME} {target} (MySQL {version_text(opts.version[:2])})", findings)
