"""What every InnoDB Cluster rule looks at: one server's settings as a `Member`.

Settings come from option files (`mycnf`) or from a live server's SHOW GLOBAL VARIABLES;
both become the same `Member`, so every rule in `member_rules`, `group_rules` and `router`
is a pure function of members and runs the same offline and live. `RULES` names every
rule id a finding of this validator can carry (the one table the renderers describe).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
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
from dbgauge.toolkit.db.values import flag
from dbgauge.toolkit.db.version import Version, parse_version

NAME = "validate innodb-cluster"
READ_REPLICA = "read-replica"
MEMBER = "member"

RULES: dict[str, str] = {
    "mycnf/syntax": "mysqld cannot read this option file line",
    "mycnf/include": "!include / !includedir problem",
    "mycnf/removed": "Option removed in this MySQL version (mysqld refuses to start)",
    "mycnf/deprecated": "Deprecated option",
    "mycnf/bad-value": "Value mysqld rejects",
    "mycnf/plugin": "Group Replication options without the plugin",
    "gr/requirement": "Setting dba.checkInstanceConfiguration() requires",
    "gr/recommendation": "Recommended setting for InnoDB Cluster",
    "gr/server-id": "server_id must be set, unique and not 0",
    "gr/report-address": "report_host / report_port",
    "gr/group": "Group-wide setting that must agree across members",
    "gr/seeds": "group_replication_group_seeds coverage",
    "gr/size": "Number of voting members",
    "gr/read-replica": "Read replica configuration",
    "gr/not-innodb-cluster": "Files that configure Galera, or no Group Replication at all",
    "router/config": "MySQL Router routing configuration",
    "live/not-mysql": "Server is not MySQL",
    "live/members": "replication_group_members state",
    "live/flow-control": "Queues against flow-control thresholds",
    "live/tables": "Tables Group Replication cannot replicate",
}


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
