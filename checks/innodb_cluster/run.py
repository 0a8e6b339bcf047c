"""The whole `dbgauge validate innodb-cluster`: read the files, build members, run rules.

Reading option files (with their !include/!includedir) is the I/O of the offline path;
everything it reads goes through the pure `mycnf` parser, and the members through the
rules in `member_rules`, `group_rules` and `router`; `--live` members come from `live`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from checks.innodb_cluster.group_rules import check_group
from checks.innodb_cluster.live import live_member
from checks.innodb_cluster.member_rules import check_member
from checks.innodb_cluster.model import NAME, READ_REPLICA, Member, member_from_file
from checks.innodb_cluster.mycnf import CnfFile
from checks.innodb_cluster.options import LATEST_PATCH
from checks.innodb_cluster.router import check_router
from toolkit.clientcnf import load_option_file
from toolkit.db.version import Version, version_text
from toolkit.errors import CheckFailed
from toolkit.result import CheckResult, Finding, config_result


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def load_cnf(path: str) -> CnfFile:
    """One option file with its includes, read the way mysqld reads them.

    An unreadable main file is a `CheckFailed` (nothing to validate); an unreadable
    include becomes a finding, as mysqld only warns about it.
    """
    try:
        return load_option_file(path, _read)
    except OSError as exc:
        raise CheckFailed(f"cannot read {path}: {exc.strerror or exc}") from None


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
        members.append(member)
        findings += live
    for m in members:
        findings += check_member(m)
    findings += check_group(members)
    if opts.router:
        findings += check_router(load_cnf(opts.router), members)
    target = ", ".join([*files, *opts.read_replicas, *opts.live]) or "-"
    return config_result(f"{NAME} {target} (MySQL {version_text(opts.version[:2])})", findings)
