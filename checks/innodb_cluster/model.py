"""What every InnoDB Cluster rule looks at: one server's settings as a `Member`.

Settings come from option files (`mycnf`) or from a live server's SHOW GLOBAL VARIABLES;
both become the same `Member`, so every member, group and router rule is a pure
function of members and runs the same offline and live. `Group` is the members
validated together, `Server` and `Rows` what a live server answered; `Out` is where one
rule's findings go.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dbgauge.checks.innodb_cluster.mycnf import (
    CnfFile,
    CnfOption,
    as_bool,
    as_int,
    effective,
    lookup,
)
from dbgauge.checks.innodb_cluster.options import LATEST_PATCH, RENAMED, RENAMED_SINCE
from dbgauge.checks.validation import Emitter
from dbgauge.toolkit.db.base import ServerInfo
from dbgauge.toolkit.db.values import flag
from dbgauge.toolkit.db.version import Version, parse_version
from dbgauge.toolkit.result import Severity

NAME = "validate innodb-cluster"
READ_REPLICA = "read-replica"
MEMBER = "member"

@dataclass(frozen=True)
class Setting:
    """One setting's value and, from files, where it is written (for file:line findings)."""

    name: str
    value: str | None  # None: bare switch in a file
    source: str | None
    line: int | None
    option: CnfOption | None = None  # files only


@dataclass(frozen=True)
class Member:
    """One server's settings, from option files or from SHOW GLOBAL VARIABLES."""

    label: str  # file path or "host:port"
    version: Version
    values: Mapping[str, Setting]
    live: bool = False
    role: str = MEMBER
    role_line: int | None = None
    cnf: CnfFile | None = None

    def get(self, name: str) -> Setting | None:
        if self.live:
            return self.values.get(name)
        eff = {k: s.option for k, s in self.values.items() if s.option is not None}
        opt = lookup(eff, name)
        return self.values.get(opt.name) if opt is not None else None

    def text(self, name: str) -> str | None:
        s = self.get(name)
        if s is None:
            return None
        return "1" if s.value is None else s.value.strip()

    def flag(self, name: str) -> bool | None:
        """The boolean a setting resolves to (None if unset or not a boolean)."""
        s = self.get(name)
        if s is None:
            return None
        if s.option is not None:
            return as_bool(s.option)
        return flag(s.value)

    def where(self, name: str) -> tuple[str | None, int | None]:
        s = self.get(name)
        if s is None or self.live:
            return (None if self.live else self.label), None
        return s.source, s.line

    @property
    def port(self) -> int:
        return as_int(self.text("port")) or 3306

    @property
    def address(self) -> str | None:
        host = self.text("report_host") or (self.text("hostname") if self.live else None)
        if not host:
            return None
        return f"{host}:{as_int(self.text('report_port')) or self.port}"


def member_from_file(cnf: CnfFile, version: Version, role: str | None = None) -> Member:
    eff = effective(cnf.options, version)
    values = {k: Setting(k, o.value, o.source, o.line, o) for k, o in eff.items()}
    marker = next((m for m in cnf.markers if m[0] == READ_REPLICA), None)
    return Member(cnf.main, version, values, role=role or (READ_REPLICA if marker else MEMBER),
                  role_line=marker[2] if marker else None, cnf=cnf)


def member_from_variables(rows: Iterable[Mapping[str, Any]], version: Version,
                          label: str) -> Member:
    """SHOW GLOBAL VARIABLES rows (Variable_name, Value) as a live Member."""
    values: dict[str, Setting] = {}
    for row in rows:
        low = {str(k).lower(): v for k, v in row.items()}
        name = str(low.get("variable_name", "")).lower()
        if name:
            value = low.get("value")
            values[name] = Setting(name, "" if value is None else str(value), None, None)
    return Member(label, version, values, live=True)


def version_for(text: str) -> Version:
    """'8.0' -> latest 8.0 patch we model, '8.0.19' -> (8, 0, 19)."""
    parts = parse_version(text, exact=True, min_parts=2)
    if len(parts) == 2:
        return LATEST_PATCH.get(parts, (*parts, 0))
    return parts


def replication_name(version: Version, new: str) -> str:
    """log_replica_updates on 8.0.26+, else the old log_slave_updates name."""
    if version >= RENAMED_SINCE:
        return new
    return next((old for old, n in RENAMED.items() if n == new), new)


def port_of(address: str) -> int | None:
    """The port of 'host:port' (None without one): local addresses, Router ports."""
    host, _, port = address.strip().rpartition(":")
    return int(port) if host and port.isascii() and port.isdigit() and len(port) < 8 else None


def norm_addr(address: str) -> str:
    """An address as members compare them: unquoted, lower case."""
    return address.strip().strip("'\"").lower()


@dataclass(frozen=True)
class Group:
    """The members validated together; read replicas are counted apart."""

    members: tuple[Member, ...]

    @property
    def voting(self) -> list[Member]:
        return [m for m in self.members if m.role == MEMBER]

    @property
    def replicas(self) -> list[Member]:
        return [m for m in self.members if m.role == READ_REPLICA]


@dataclass(frozen=True)
class Server:
    """What a live DSN turned out to be."""

    node: str  # host:port
    server: ServerInfo


@dataclass(frozen=True)
class Rows:
    """What a live member answered to one performance_schema or catalog query."""

    node: str
    rows: tuple[Mapping[str, Any], ...]  # column names lower case
    single_primary: bool | None = None  # group_replication_single_primary_mode, if known
    variables: Mapping[str, str] = field(default_factory=dict)  # the member's variables


class Out(Emitter):
    """The findings of one rule: about a member's setting (`about`) or anywhere (`emit`)."""

    def about(self, m: Member, sev: Severity, key: str | None, msg: str,
              fix: str | None = None, *, name: str | None = None) -> None:
        """A finding about `key` of member `m`, located where `name` (default: key) is set;
        without either, at the member's file (no file for a live member)."""
        target = name or key
        file, line = m.where(target) if target else ((None if m.live else m.label), None)
        self.emit(sev, msg, node=m.label, file=file, line=line, key=key, fix=fix)
