"""Per-server rules: what dba.checkInstanceConfiguration() requires, by MySQL version.

`check_member` runs on one `Member` (from its option files or from a live server) and
also checks the files themselves: syntax problems, includes, removed and deprecated
options, booleans mysqld would refuse, Group Replication options mysqld does not know.
Pure: a function of the member alone; rules across members live in `group_rules`.
"""

from __future__ import annotations

import os
import re
import uuid

from dbgauge.checks.innodb_cluster.model import (
    READ_REPLICA,
    Member,
    port_of,
    replication_name,
)
from dbgauge.checks.innodb_cluster.mycnf import as_bool, as_int, split_prefix
from dbgauge.checks.innodb_cluster.options import (
    BOOLEANS,
    DEPRECATED,
    DISABLED_ENGINES_RECOMMENDED,
    GR_VARIABLES,
    PLUGIN_ACTIVATION,
    REMOVED,
    RENAMED,
    RENAMED_SINCE,
)
from dbgauge.checks.validation import did_you_mean
from dbgauge.toolkit.db.values import is_on
from dbgauge.toolkit.db.version import version_text
from dbgauge.toolkit.result import Finding, Severity, finding


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
        if not is_on(m.text("log_bin")):
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
    elif sid == 1 and m.live:
        # A file that says server_id = 1 set it explicitly, which MySQL Shell accepts
        # (that it differs from the other members' is check_group's business); a live
        # value of 1 may be the compiled default, which MySQL Shell rejects.
        out.add(Severity.WARNING, "gr/server-id", "server_id",
                "server_id is 1, the compiled default: unless it was set explicitly, MySQL "
                "Shell rejects the instance", "set a unique server_id in the option file")


def _check_report(m: Member, out: _Out) -> None:
    # A missing report_host is judged once for the whole set (group_rules.check_group).
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
    activation = m.get("group_replication")
    if activation is not None and activation.option is not None:
        value = (activation.value or "ON").strip().upper()
        if value not in PLUGIN_ACTIVATION:
            out.add(Severity.ERROR, "mycnf/bad-value", "group_replication",
                    f"group_replication={activation.value}: the plugin-activation option "
                    f"takes {', '.join(PLUGIN_ACTIVATION)}; mysqld refuses to start")
        elif not plugin and not activation.option.loose:
            out.add(Severity.ERROR, "mycnf/plugin", "group_replication",
                    f"group_replication={value} (plugin activation) without "
                    "plugin_load_add=group_replication.so: mysqld refuses to start ('unknown "
                    "variable') unless the plugin is installed", "add plugin_load_add = "
                    "group_replication.so, or write loose-group_replication")
    for name, s in gr.items():
        if name == "group_replication":
            continue
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
        port = port_of(local)
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
