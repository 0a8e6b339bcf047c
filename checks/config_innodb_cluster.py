"""Validate InnoDB Cluster (Group Replication) member configurations, offline and live.

MySQL Shell's `dba.checkInstanceConfiguration()` needs a running server; this check
applies the same requirements (by server version) to my.cnf files before deployment,
and across all member files at once: unique server_id/report_host/local_address, one
group name, matching modes, seeds that cover the members, a sensible member count,
read replicas counted apart, and MySQL Router's routing sections. With --live the same
rules run on SHOW GLOBAL VARIABLES, plus the group's own view of itself.

Settings come from files (`checks.mycnf`) or from a server; both become `Member`s and
every rule below is a pure function of them.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.data.mysql_options import (
    BINLOG_FORMATS,
    DEPRECATED,
    DISABLED_ENGINES_RECOMMENDED,
    GR_VARIABLES,
    GTID_MODES,
    LATEST_PATCH,
    REMOVED,
    RENAMED,
    RENAMED_SINCE,
)
from checks.mycnf import (
    CnfFile,
    CnfOption,
    as_bool,
    as_int,
    effective,
    flatten_mycnf,
    lookup,
    parse_mycnf,
    split_prefix,
)
from checks.validation import did_you_mean
from toolkit.db.version import Version, parse_version, version_text
from toolkit.errors import CheckFailed
from toolkit.result import CheckResult, Finding, Severity, config_result, finding

NAME = "validate innodb-cluster"
BOOLEANS = frozenset({
    "log_replica_updates", "log_slave_updates", "replica_preserve_commit_order",
    "slave_preserve_commit_order", "performance_schema", "skip_replica_start",
    "skip_slave_start", "default_table_encryption", "group_replication_start_on_boot",
    "group_replication_single_primary_mode", "group_replication_bootstrap_group",
    "group_replication_enforce_update_everywhere_checks"})
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
    "router/config": "MySQL Router routing configuration",
    "live/not-mysql": "Server is not MySQL",
    "live/members": "replication_group_members state",
    "live/flow-control": "Queues against flow-control thresholds",
    "live/tables": "Tables Group Replication cannot replicate",
}


# ---------------------------------------------------------------------------- model


@dataclass(frozen=True)
class Setting:
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
        v = (s.value or "").strip().lower()
        return True if v in ("on", "1", "true") else False if v in ("off", "0", "false") else None

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


# --------------------------------------------------------------------------- output


class _Out:
    def __init__(self, m: Member) -> None:
        self.m = m
        self.items: list[Finding] = []

    def add(self, sev: Severity, rule: str, key: str | None, msg: str, fix: str | None = None,
            *, name: str | None = None) -> None:
        """A finding about `key`, located where `name` (default: key) is set."""
        target = name or key
        file, line = self.m.where(target) if target else (
            (None if self.m.live else self.m.label), None)
        self.items.append(finding(sev, rule, msg, node=self.m.label, file=file, line=line,
                                  key=key, fix=fix))


def _need(out: _Out, key: str, want: str, current: str | None, restart: bool = True,
          default: str | None = None) -> None:
    shown = current if current is not None else f"not set (default {default})"
    how = "set it in [mysqld]" + (" and restart" if restart else "")
    out.add(Severity.ERROR, "gr/requirement", key,
            f"{key} must be {want} for InnoDB Cluster; it is {shown}", f"{key} = {want}: {how}")


# --------------------------------------------------------------------- member rules


def check_member(m: Member) -> list[Finding]:
    """Every per-server requirement of dba.checkInstanceConfiguration(), by version."""
    out = _Out(m)
    v = m.version
    if m.cnf is not None:
        _file_hygiene(m, out)
    gtid = (m.text("gtid_mode") or "").upper()
    if gtid != "ON":
        _need(out, "gtid_mode", "ON", m.text("gtid_mode") if m.get("gtid_mode") else None,
              default="OFF")
    enforce = (m.text("enforce_gtid_consistency") or "").upper()
    if enforce not in ("ON", "1", "TRUE"):
        _need(out, "enforce_gtid_consistency", "ON",
              m.text("enforce_gtid_consistency") if m.get("enforce_gtid_consistency") else None,
              default="OFF")
    if m.role == READ_REPLICA:
        _check_read_replica(m, out)
        return out.items
    fmt = m.text("binlog_format")
    if fmt is not None and fmt.upper() != "ROW":
        _need(out, "binlog_format", "ROW", fmt, restart=False)
    _check_binlog(m, out)
    _check_server_id(m, out)
    _check_report(m, out)
    if v < (8, 0, 21):
        checksum = m.text("binlog_checksum")
        if (checksum or "CRC32").upper() != "NONE":
            _need(out, "binlog_checksum", "NONE", checksum, restart=False, default="CRC32")
    else:
        tls_source = m.text("group_replication_tls_source")
        if tls_source and tls_source.lower() == "mysql_admin":
            _need(out, "group_replication_tls_source", "MYSQL_MAIN", tls_source, restart=False)
    if v < (8, 3, 0):
        wse = m.text("transaction_write_set_extraction")
        if wse is not None and wse.upper() not in ("XXHASH64", "2", "MURMUR32", "1"):
            _need(out, "transaction_write_set_extraction", "XXHASH64", wse)
        for key in ("master_info_repository", "relay_log_info_repository"):
            val = m.text(key)
            if (val is not None and val.upper() != "TABLE") or (val is None and v < (8, 0, 23)):
                _need(out, key, "TABLE", val, default="FILE")
    if v >= (8, 0, 23):
        _check_parallel_applier(m, out)
    pfs = m.flag("performance_schema")
    if pfs is False:
        _need(out, "performance_schema", "ON", m.text("performance_schema"))
    _check_engines(m, out)
    _check_gr_options(m, out)
    return out.items


def _file_hygiene(m: Member, out: _Out) -> None:
    assert m.cnf is not None
    for p in m.cnf.problems:
        rule = "mycnf/include" if p.message.startswith("!") else "mycnf/syntax"
        out.items.append(finding(Severity.ERROR if p.fatal else Severity.WARNING, rule,
                                 p.message, node=m.label, file=p.source, line=p.line))
    for d in m.cnf.directives:
        if not os.path.isabs(d.path):
            out.items.append(finding(Severity.INFO, "mycnf/include",
                                     f"relative !{d.kind} {d.path}: mysqld resolves it against "
                                     "its working directory (dbgauge: next to the file)",
                                     node=m.label, file=d.source, line=d.line,
                                     fix="use an absolute path"))
    v = m.version
    for name, s in m.values.items():
        opt = s.option
        if opt is None:
            continue
        if split_prefix(name)[1] in BOOLEANS and as_bool(opt) is None:
            out.add(Severity.ERROR, "mycnf/bad-value", name,
                    f"{opt.raw}={opt.value} is not a boolean: mysqld refuses to start",
                    "write ON or OFF (1/0, TRUE/FALSE also work)", name=name)
        removed = REMOVED.get(name)
        if removed and v >= removed[0]:
            if opt.loose:
                out.add(Severity.WARNING, "mycnf/removed", name,
                        f"{name} was removed in MySQL {version_text(removed[0])}; with loose- "
                        "mysqld only warns and ignores it", removed[1], name=name)
            else:
                out.add(Severity.ERROR, "mycnf/removed", name,
                        f"{name} was removed in MySQL {version_text(removed[0])}: mysqld "
                        f"{version_text(v[:2])} refuses to start ('unknown variable')", removed[1],
                        name=name)
            continue
        dep = DEPRECATED.get(name)
        if dep and v >= dep[0]:
            out.add(Severity.WARNING, "mycnf/deprecated", name,
                    f"{name} is deprecated since MySQL {version_text(dep[0])}", dep[1], name=name)
        elif name in RENAMED and v >= RENAMED_SINCE:
            out.add(Severity.WARNING, "mycnf/deprecated", name,
                    f"{name} is deprecated since {version_text(RENAMED_SINCE)}",
                    f"use {RENAMED[name]}", name=name)


def _check_binlog(m: Member, out: _Out) -> None:
    if m.live:
        if (m.text("log_bin") or "").upper() not in ("ON", "1"):
            _need(out, "log_bin", "ON", m.text("log_bin"))
    else:
        for off in ("skip_log_bin", "disable_log_bin"):
            if off in m.values:
                out.add(Severity.ERROR, "gr/requirement", "log_bin",
                        f"{off} turns the binary log off; Group Replication needs it",
                        f"remove {off}", name=off)
        val = m.values.get("log_bin")
        if val is not None and val.value is not None and \
                val.value.strip().lower() in ("off", "0", "false", "no"):
            out.add(Severity.WARNING, "gr/requirement", "log_bin",
                    f"log_bin={val.value} does not turn the binary log off: it names the "
                    f"binary log files '{val.value}.000001'...", "remove the value, or use "
                    "skip-log-bin if you meant off (not for InnoDB Cluster)")
    name = replication_name(m.version, "log_replica_updates")
    flag = m.flag(name)
    other = m.flag("log_slave_updates") if name != "log_slave_updates" else None
    if flag is False or other is False or (m.live and flag is None):
        shown = m.text(name) if flag is not None else m.text("log_slave_updates")
        _need(out, name, "ON", shown)


def _check_server_id(m: Member, out: _Out) -> None:
    raw = m.text("server_id")
    if raw is None:
        out.add(Severity.ERROR, "gr/server-id", "server_id",
                "server_id is not set (the compiled default 1 is rejected by MySQL Shell)",
                "set a unique server_id per member, e.g. 1000 + member number")
        return
    sid = as_int(raw)
    if sid is None or not 0 <= sid <= 4294967295:
        out.add(Severity.ERROR, "mycnf/bad-value", "server_id",
                f"server_id {raw!r} is not a number from 1 to 4294967295")
    elif sid == 0:
        out.add(Severity.ERROR, "gr/server-id", "server_id",
                "server_id 0 disables replication", "set a unique non-zero server_id")
    elif sid == 1:
        out.add(Severity.WARNING, "gr/server-id", "server_id",
                "server_id 1 is the compiled default: MySQL Shell rejects it unless set "
                "explicitly, and copies of a default config all collide on it",
                "use a distinctive value, e.g. 1000 + member number")


def _check_report(m: Member, out: _Out) -> None:
    if not m.text("report_host"):
        out.add(Severity.WARNING, "gr/report-address", "report_host",
                "report_host is not set: members and Router will use this server's "
                "hostname, which must resolve from every other host",
                "set report_host to the address other members use")
    rp = m.text("report_port")
    if rp and as_int(rp) not in (None, 0) and as_int(rp) != m.port:
        out.add(Severity.ERROR, "gr/report-address", "report_port",
                f"report_port {rp} differs from port {m.port}: MySQL Shell requires them to "
                "match", f"report_port = {m.port}")


def _check_parallel_applier(m: Member, out: _Out) -> None:
    v = m.version
    pco = replication_name(v, "replica_preserve_commit_order")
    val = m.flag(pco)
    if val is None and not m.live:
        val = m.flag("slave_preserve_commit_order")
    if val is False or (val is None and (m.live or v < (8, 0, 27))):
        _need(out, pco, "ON", m.text(pco), restart=False, default="OFF")
    if v < (8, 3, 0):
        ptype = replication_name(v, "replica_parallel_type")
        cur = m.text(ptype) or (None if m.live else m.text("slave_parallel_type"))
        if (cur is not None and cur.upper() != "LOGICAL_CLOCK") or (
                cur is None and v < (8, 0, 27)):
            _need(out, ptype, "LOGICAL_CLOCK", cur, restart=False, default="DATABASE")
    if v < (8, 4, 0):
        key = "binlog_transaction_dependency_tracking"
        cur = m.text(key)
        if (cur or "COMMIT_ORDER").upper() != "WRITESET":
            _need(out, key, "WRITESET", cur, restart=False, default="COMMIT_ORDER")


def _check_engines(m: Member, out: _Out) -> None:
    raw = m.text("disabled_storage_engines")
    have = {e.strip().lower() for e in (raw or "").strip("'\"").split(",") if e.strip()}
    missing = [e for e in DISABLED_ENGINES_RECOMMENDED if e not in have]
    if missing:
        want = ",".join(e.upper() if e != "myisam" else "MyISAM"
                        for e in DISABLED_ENGINES_RECOMMENDED)
        out.add(Severity.WARNING, "gr/recommendation", "disabled_storage_engines",
                f"disabled_storage_engines does not block {', '.join(missing)}: tables in "
                "non-transactional engines cannot be replicated by Group Replication",
                f'disabled_storage_engines = "{want}"')


def _gr_plugin_loaded(m: Member) -> bool:
    for key in ("plugin_load_add", "plugin_load"):
        if "group_replication" in (m.text(key) or ""):
            return True
    if m.cnf is not None:  # plugin_load_add may repeat: any occurrence counts
        return any(o.name in ("plugin_load_add", "plugin_load") and
                   "group_replication" in (o.value or "") for o in m.cnf.options)
    return False


def _check_gr_options(m: Member, out: _Out) -> None:
    if m.live:
        return
    gr = {k: s for k, s in m.values.items() if k.startswith("group_replication")}
    plugin = _gr_plugin_loaded(m)
    for name, s in gr.items():
        if name not in GR_VARIABLES:
            near = did_you_mean(name, GR_VARIABLES)
            loose = bool(s.option and s.option.loose)
            out.add(Severity.WARNING if loose else Severity.ERROR, "mycnf/bad-value", name,
                    f"unknown Group Replication option {name}" +
                    ("" if loose else ": mysqld refuses to start"),
                    f"did you mean {near}?" if near else None, name=name)
        elif not plugin and s.option is not None and not s.option.loose:
            out.add(Severity.ERROR, "mycnf/plugin", name,
                    f"{name} without plugin_load_add=group_replication.so: mysqld refuses to "
                    "start ('unknown variable') unless the plugin is already installed "
                    "(INSTALL PLUGIN) and the option is written loose-" + name,
                    "add plugin_load_add = group_replication.so, or prefix the option with "
                    "loose-", name=name)
    if m.flag("group_replication_bootstrap_group"):
        out.add(Severity.ERROR, "gr/group", "group_replication_bootstrap_group",
                "group_replication_bootstrap_group is ON in the file: every restart would "
                "bootstrap a new group from this member (split brain)",
                "bootstrap once with SET GLOBAL, keep the file at OFF")
    group_name = m.text("group_replication_group_name")
    if group_name is not None and not _is_uuid(group_name):
        out.add(Severity.ERROR, "mycnf/bad-value", "group_replication_group_name",
                f"group_replication_group_name {group_name!r} is not a UUID",
                "generate one with SELECT UUID()")
    local = m.text("group_replication_local_address")
    if local is not None:
        port = _port_of(local)
        stack = (m.text("group_replication_communication_stack") or "XCOM").upper()
        if port is None:
            out.add(Severity.ERROR, "mycnf/bad-value", "group_replication_local_address",
                    f"group_replication_local_address {local!r} is not host:port")
        elif stack == "XCOM" and port == m.port:
            out.add(Severity.ERROR, "gr/requirement", "group_replication_local_address",
                    f"group_replication_local_address uses port {port}, the MySQL port: "
                    "with the XCOM stack it needs its own port", "use e.g. port 33061")
        elif stack == "MYSQL" and port != m.port:
            out.add(Severity.WARNING, "gr/requirement", "group_replication_local_address",
                    f"with group_replication_communication_stack MYSQL the local address "
                    f"should use the MySQL port {m.port}, not {port}")
    if m.flag("group_replication_single_primary_mode") is False and \
            not m.flag("group_replication_enforce_update_everywhere_checks"):
        out.add(Severity.WARNING, "gr/recommendation",
                "group_replication_enforce_update_everywhere_checks",
                "multi-primary mode without group_replication_enforce_update_everywhere_checks"
                ": conflicting DDL/foreign-key writes are not refused",
                "group_replication_enforce_update_everywhere_checks = ON")


def _check_read_replica(m: Member, out: _Out) -> None:
    if m.version < (8, 4, 0):
        out.add(Severity.INFO, "gr/read-replica", None,
                f"read replicas (Cluster.addReplicaInstance) need MySQL Shell 8.1+; "
                f"validating for MySQL {version_text(m.version[:2])}")
    if _gr_plugin_loaded(m) and m.flag("group_replication_start_on_boot") is not False:
        out.add(Severity.ERROR, "gr/read-replica", "group_replication_start_on_boot",
                "a read replica loads the Group Replication plugin with "
                "group_replication_start_on_boot ON: it would join the group as a voting "
                "member", "remove the plugin, or set group_replication_start_on_boot = OFF",
                name="group_replication_start_on_boot" if m.get(
                    "group_replication_start_on_boot") else "plugin_load_add")
    if m.text("group_replication_group_name"):
        out.add(Severity.WARNING, "gr/read-replica", "group_replication_group_name",
                "a read replica does not belong to the group; group_replication_group_name "
                "has no business here")
    _check_server_id(m, out)
    if not m.text("report_host"):
        out.add(Severity.WARNING, "gr/report-address", "report_host",
                "report_host is not set on the read replica: Router reaches it by hostname")


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text.strip().strip("'\""))
        return bool(re.fullmatch(r"[0-9a-fA-F-]{36}", text.strip().strip("'\"")))
    except ValueError:
        return False


def _port_of(address: str) -> int | None:
    host, _, port = address.strip().rpartition(":")
    return int(port) if host and port.isdigit() else None


def _norm_addr(address: str) -> str:
    return address.strip().strip("'\"").lower()


# ---------------------------------------------------------------------- group rules


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
           lambda m: _norm_addr(m.text("group_replication_local_address") or "") or None,
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
    locals_ = {m.label: _norm_addr(m.text("group_replication_local_address") or "")
               for m in voting}
    if not any(locals_.values()):
        return
    seeds_of = {m.label: {_norm_addr(s) for s in (m.text("group_replication_group_seeds") or "")
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


# --------------------------------------------------------------------------- router


@dataclass(frozen=True)
class RouterSection:
    name: str
    options: Mapping[str, CnfOption]
    line: int


def router_sections(cnf: CnfFile) -> list[RouterSection]:
    sections: dict[str, dict[str, CnfOption]] = {}
    lines: dict[str, int] = {}
    for g in cnf.groups:
        sections.setdefault(g.name, {})
        lines.setdefault(g.name, g.line)
    for o in cnf.options:
        sections.setdefault(o.group or "", {})[o.name] = o
    return [RouterSection(n, opts, lines.get(n, 0)) for n, opts in sections.items()]


def check_router(cnf: CnfFile, members: Sequence[Member]) -> list[Finding]:
    """Routing sections name the members; RW/RO ports are distinct and free."""
    out: list[Finding] = []

    def add(sev: Severity, msg: str, line: int | None, key: str | None = None,
            fix: str | None = None) -> None:
        out.append(finding(sev, "router/config", msg, node=cnf.main, file=cnf.main,
                           line=line, key=key, fix=fix))

    for p in cnf.problems:
        add(Severity.ERROR if p.fatal else Severity.WARNING, p.message, p.line)
    sections = router_sections(cnf)
    caches = {s.name.split(":", 1)[1] if ":" in s.name else "": s for s in sections
              if s.name.split(":")[0] == "metadata_cache"}
    cache_clusters = {(s.options["metadata_cluster"].value or "").lower(): s
                      for s in caches.values() if "metadata_cluster" in s.options}
    routing = [s for s in sections if s.name.split(":")[0] == "routing"]
    if not routing:
        add(Severity.ERROR, "no [routing:...] section: Router routes nothing", 1)
    member_addrs = {a.lower() for m in members if (a := m.address)}
    member_ports: dict[int, str] = {}
    for m in members:
        member_ports.setdefault(m.port, f"port of {m.label}")
        rp = as_int(m.text("report_port"))
        if rp:
            member_ports.setdefault(rp, f"report_port of {m.label}")
        local = _port_of(m.text("group_replication_local_address") or "")
        if local:
            member_ports.setdefault(local, f"group_replication_local_address of {m.label}")
        member_ports.setdefault(as_int(m.text("mysqlx_port")) or 33060,
                                f"X protocol port of {m.label}")
    ports: dict[int, RouterSection] = {}
    for s in routing:
        dest = s.options.get("destinations")
        port_opt = s.options.get("bind_port")
        role = _routing_role(s)
        if dest is None or not dest.value:
            add(Severity.ERROR, f"[{s.name}] has no destinations", s.line, "destinations")
        elif dest.value.startswith("metadata-cache://"):
            cluster = dest.value[len("metadata-cache://"):].split("/", 1)[0].lower()
            if cluster not in caches and cluster not in cache_clusters:
                add(Severity.ERROR, f"[{s.name}] routes to metadata cache {cluster!r}, but "
                    "no [metadata_cache] section defines it", dest.line, "destinations",
                    "run mysqlrouter --bootstrap again, or fix the cluster name")
        else:
            for d in (x.strip() for x in dest.value.split(",") if x.strip()):
                addr = d if ":" in d else f"{d}:3306"
                if members and member_addrs and addr.lower() not in member_addrs:
                    add(Severity.ERROR, f"[{s.name}] destination {d} is not a member "
                        f"({', '.join(sorted(member_addrs))})", dest.line, "destinations")
        port = as_int(port_opt.value) if port_opt else None
        if port is None:
            if "socket" not in s.options:
                add(Severity.ERROR, f"[{s.name}] has no bind_port", s.line, "bind_port")
            continue
        line = port_opt.line if port_opt else s.line
        if port in ports:
            add(Severity.ERROR, f"[{s.name}] bind_port {port} is also used by "
                f"[{ports[port].name}]", line, "bind_port",
                "read-write and read-only routes need their own ports (6446/6447)")
        ports.setdefault(port, s)
        if port in member_ports:
            add(Severity.WARNING, f"[{s.name}] bind_port {port} is the {member_ports[port]}: "
                "Router cannot bind it on a host that also runs that server", line,
                "bind_port")
        if (role == "rw" and port == 6447) or (role == "ro" and port == 6446):
            add(Severity.WARNING, f"[{s.name}] routes {role.upper()} traffic on {port}, the "
                f"conventional {'read-only' if port == 6447 else 'read-write'} port",
                line, "bind_port", "RW on 6446, RO on 6447 (classic protocol)")
    for name, s in caches.items():
        servers = s.options.get("bootstrap_server_addresses")
        if servers and servers.value and member_addrs:
            for addr in servers.value.split(","):
                a = addr.strip().removeprefix("mysql://").lower()
                if a and a not in member_addrs:
                    add(Severity.ERROR, f"[metadata_cache:{name}] bootstrap server {a} is "
                        "not a member", servers.line, "bootstrap_server_addresses")
    return out


def _routing_role(s: RouterSection) -> str | None:
    dest = (s.options["destinations"].value or "") if "destinations" in s.options else ""
    m = re.search(r"role=([A-Z_]+)", dest, re.IGNORECASE)
    if m:
        return "rw" if m.group(1).upper() == "PRIMARY" else "ro"
    mode = s.options.get("mode")
    if mode and mode.value:
        return "rw" if mode.value.lower() == "read-write" else "ro"
    return None


# --------------------------------------------------------------- live interpretation


def _lower(row: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k).lower(): v for k, v in row.items()}


def check_group_members(rows: Iterable[Mapping[str, Any]], single_primary: bool | None,
                        node: str) -> list[Finding]:
    """performance_schema.replication_group_members: states, primaries, version mix."""
    out: list[Finding] = []
    members = [_lower(r) for r in rows]

    def add(sev: Severity, msg: str, key: str | None = None, fix: str | None = None,
            rule: str = "live/members") -> None:
        out.append(finding(sev, rule, msg, node=node, key=key, fix=fix))

    if not members or (len(members) == 1 and str(members[0].get("member_state")) in
                       ("OFFLINE", "", "None")):
        add(Severity.ERROR, "Group Replication is not running on this server "
            "(replication_group_members has no active member)",
            fix="START GROUP_REPLICATION, or dba.rebootClusterFromCompleteOutage()")
        return out
    for r in members:
        state = str(r.get("member_state") or "")
        who = f"{r.get('member_host')}:{r.get('member_port')}"
        if state == "RECOVERING":
            add(Severity.WARNING, f"member {who} is RECOVERING (catching up)", who)
        elif state != "ONLINE":
            add(Severity.ERROR, f"member {who} is {state}", who,
                "see the member's error log; rejoin with cluster.rejoinInstance()")
    roles = [str(r.get("member_role") or "") for r in members if r.get("member_state") ==
             "ONLINE"]
    primaries = roles.count("PRIMARY")
    if single_primary is None:
        single_primary = primaries <= 1
    if single_primary and primaries != 1:
        add(Severity.ERROR, f"single-primary group has {primaries} ONLINE PRIMARY members",
            fix="check cluster.status(); a group without a primary accepts no writes")
    if not single_primary and any(r != "PRIMARY" for r in roles):
        add(Severity.WARNING, "multi-primary group has ONLINE members that are not PRIMARY")
    versions = sorted({str(r.get("member_version")) for r in members
                       if r.get("member_version")})
    if len(versions) > 1:
        add(Severity.WARNING, f"members run different versions ({', '.join(versions)}): "
            "fine during a rolling upgrade; the primary should run the lowest version",
            fix="finish the upgrade")
    n = len(members)
    if n == 2 or n > 9:
        add(Severity.ERROR, f"{n} members: a group needs 3 to 9", rule="gr/size")
    elif n >= 3 and n % 2 == 0:
        add(Severity.WARNING, f"{n} members: an even count tolerates no more failures than "
            f"{n - 1}", rule="gr/size")
    return out


def check_member_stats(rows: Iterable[Mapping[str, Any]], variables: Mapping[str, str],
                       node: str) -> list[Finding]:
    """replication_group_member_stats queues against the flow-control thresholds."""
    out: list[Finding] = []
    mode = (variables.get("group_replication_flow_control_mode") or "QUOTA").upper()
    cert = int(variables.get("group_replication_flow_control_certifier_threshold") or 25000)
    appl = int(variables.get("group_replication_flow_control_applier_threshold") or 25000)
    for r in (_lower(x) for x in rows):
        who = str(r.get("member_id"))
        for col, limit, what in (
                ("count_transactions_in_queue", cert, "certifier"),
                ("count_transactions_remote_in_applier_queue", appl, "applier")):
            raw = r.get(col)
            if raw is None or str(raw) == "":
                continue
            queued = int(raw)
            if queued >= limit:
                throttled = "flow control is throttling writers" if mode != "DISABLED" else (
                    "flow control is DISABLED, the member falls further behind")
                out.append(finding(Severity.WARNING, "live/flow-control",
                                   f"member {who}: {queued} transactions in the {what} queue "
                                   f"(threshold {limit}): {throttled}", node=node, key=who,
                                   fix="find the slow member (disk, CPU, large transactions)"))
        conflicts = int(r.get("count_conflicts_detected") or 0)
        if conflicts:
            out.append(finding(Severity.INFO, "live/flow-control",
                               f"member {who}: {conflicts} certification conflicts so far",
                               node=node, key=who))
    return out


def check_tables(rows: Iterable[Mapping[str, Any]], node: str) -> list[Finding]:
    """Tables that are not InnoDB or have no primary key (or non-null unique key)."""
    out: list[Finding] = []
    for r in (_lower(x) for x in rows):
        table = f"{r.get('table_schema')}.{r.get('table_name')}"
        engine = str(r.get("engine") or "")
        if engine.lower() != "innodb":
            out.append(finding(Severity.ERROR, "live/tables",
                               f"table {table} uses {engine or 'no'} engine: Group "
                               "Replication refuses writes to it", node=node, key=table,
                               fix=f"ALTER TABLE {table} ENGINE=InnoDB"))
        if not int(r.get("has_primary_key") or 0):
            out.append(finding(Severity.ERROR, "live/tables",
                               f"table {table} has no primary key (or non-null unique key): "
                               "Group Replication refuses writes to it", node=node, key=table,
                               fix=f"ALTER TABLE {table} ADD PRIMARY KEY (...), or an "
                                   "invisible auto-increment key"))
    return out


# ------------------------------------------------------------------------------ I/O


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def load_cnf(path: str) -> CnfFile:
    p = Path(path)
    try:
        text = _read(p)
    except OSError as exc:
        raise CheckFailed(f"cannot read {path}: {exc.strerror or exc}") from None

    def resolve(kind: str, inc: str, src: str) -> list[tuple[str, str]] | str:
        target = Path(inc) if os.path.isabs(inc) else Path(src).parent / inc
        try:
            if kind == "includedir":
                files = sorted(f for f in target.iterdir() if f.suffix == ".cnf")
                return [(_read(f), str(f)) for f in files]
            return [(_read(target), str(target))]
        except OSError as exc:
            return f"cannot read {target}: {exc.strerror or exc}; mysqld skips it"

    return flatten_mycnf(text, path, resolve, parse_mycnf)


def live_member(dsn: str, password: str | None = None) -> tuple[Member, list[Finding]]:
    """One server: its variables as a Member, plus the group's view and table checks."""
    from toolkit.db import connect_dsn
    from toolkit.dsn import parse_dsn

    params = parse_dsn(dsn)
    conn = connect_dsn(dsn, password=password, kind="mysql")
    try:
        server = conn.server
        if server.flavor == "mariadb":
            raise CheckFailed(
                f"{params.address} is MariaDB {server.version_text}: Group Replication and "
                "InnoDB Cluster do not exist on MariaDB (it uses Galera or async "
                "replication), so there is nothing to validate live")
        label = params.address
        member = member_from_variables(conn.query("validate_global_variables"),
                                       server.version, label)
        sp = member.flag("group_replication_single_primary_mode")
        findings = check_group_members(conn.query("validate_group_members"), sp, label)
        variables = {k: (s.value or "") for k, s in member.values.items()}
        findings += check_member_stats(conn.query("validate_group_member_stats"), variables,
                                       label)
        findings += check_tables(conn.query("validate_incompatible_tables"), label)
    finally:
        conn.close()
    return member, findings


@dataclass(frozen=True)
class ClusterOptions:
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


__all__ = ["BINLOG_FORMATS", "GTID_MODES", "RULES", "ClusterOptions", "Member",
           "check_group", "check_group_members", "check_member",
           "check_member_stats", "check_router", "check_tables", "load_cnf",
           "member_from_file", "member_from_variables", "validate_innodb_cluster"]
