"""Per-server rules: what dba.checkInstanceConfiguration() requires, by MySQL version.

Each condition reads one `Member` (from its option files or from a live server), so
the same rules run offline and live; read replicas get what an asynchronous replica
needs instead. `check_member` runs them with the rules on the member's files
(`member_files`) and its Group Replication options (`member_gr`). Pure: a function of
the member alone; rules across members live in `group_rules`.
"""

from __future__ import annotations

import dbgauge.checks.innodb_cluster.member_files as member_files
import dbgauge.checks.innodb_cluster.member_gr as member_gr
from dbgauge.checks.innodb_cluster.model import READ_REPLICA, Member, Out, replication_name
from dbgauge.checks.innodb_cluster.mycnf import as_int
from dbgauge.checks.innodb_cluster.options import DISABLED_ENGINES_RECOMMENDED
from dbgauge.checks.innodb_cluster.rules import MEMBER, PER_MEMBER
from dbgauge.toolkit.db.values import is_on
from dbgauge.toolkit.db.version import version_text
from dbgauge.toolkit.result import Finding, Severity

RULE_MODULES = (member_files, member_gr)  # the other per-member stages, registered on import


def check_member(m: Member) -> list[Finding]:
    """Every per-server requirement of dba.checkInstanceConfiguration(), by version."""
    items: list[Finding] = []
    for stage in PER_MEMBER:
        stage.run(m, lambda rule: Out(items, rule))
    return items


def _need(m: Member, out: Out, key: str, want: str, current: str | None, restart: bool = True,
          default: str | None = None) -> None:
    """A requirement not met: `key` must be `want`."""
    shown = current if current is not None else f"not set (default {default})"
    how = "set it in [mysqld]" + (" and restart" if restart else "")
    out.about(m, Severity.ERROR, key, f"{key} must be {want} for InnoDB Cluster; it is {shown}",
              f"{key} = {want}: {how}")


def _voting(m: Member) -> bool:
    """A voting member: the InnoDB Cluster requirements apply (read replicas have theirs)."""
    return m.role != READ_REPLICA


# -------------------------------------------------------------------------- GTIDs


@MEMBER.rule("gr/requirement", "Setting dba.checkInstanceConfiguration() requires")
def gtid_mode_off(m: Member, out: Out) -> None:
    """gtid_mode not ON."""
    if (m.text("gtid_mode") or "").upper() != "ON":
        _need(m, out, "gtid_mode", "ON", m.text("gtid_mode") if m.get("gtid_mode") else None,
              default="OFF")


@MEMBER.rule("gr/requirement")
def gtid_consistency_off(m: Member, out: Out) -> None:
    """enforce_gtid_consistency not ON."""
    key = "enforce_gtid_consistency"
    if (m.text(key) or "").upper() not in ("ON", "1", "TRUE"):
        _need(m, out, key, "ON", m.text(key) if m.get(key) else None, default="OFF")


# ------------------------------------------------------------------- read replicas


@MEMBER.rule("gr/read-replica", "Read replica configuration")
def read_replica_before_8_4(m: Member, out: Out) -> None:
    """A read replica validated for MySQL before 8.4 (info: it needs MySQL Shell 8.1+)."""
    if m.role == READ_REPLICA and m.version < (8, 4, 0):
        out.about(m, Severity.INFO, None,
                  f"read replicas (Cluster.addReplicaInstance) need MySQL Shell 8.1+; "
                  f"validating for MySQL {version_text(m.version[:2])}")


@MEMBER.rule("gr/read-replica")
def read_replica_joins_group(m: Member, out: Out) -> None:
    """A read replica that loads Group Replication with group_replication_start_on_boot
    not OFF: it would join the group as a voting member."""
    if m.role == READ_REPLICA and member_gr.plugin_loaded(m) and \
            m.flag("group_replication_start_on_boot") is not False:
        out.about(m, Severity.ERROR, "group_replication_start_on_boot",
                  "a read replica loads the Group Replication plugin with "
                  "group_replication_start_on_boot ON: it would join the group as a voting "
                  "member", "remove the plugin, or set group_replication_start_on_boot = OFF",
                  name="group_replication_start_on_boot" if m.get(
                      "group_replication_start_on_boot") else "plugin_load_add")


@MEMBER.rule("gr/read-replica")
def read_replica_group_name(m: Member, out: Out) -> None:
    """A read replica with a group_replication_group_name (warning)."""
    if m.role == READ_REPLICA and m.text("group_replication_group_name"):
        out.about(m, Severity.WARNING, "group_replication_group_name",
                  "a read replica does not belong to the group; group_replication_group_name "
                  "has no business here")


# ----------------------------------------------------------------------- server_id


@MEMBER.rule("gr/server-id", "server_id must be set, unique and not 0")
def server_id_not_set(m: Member, out: Out) -> None:
    """No server_id: the compiled default 1 is rejected by MySQL Shell."""
    if m.text("server_id") is None:
        out.about(m, Severity.ERROR, "server_id",
                  "server_id is not set (the compiled default 1 is rejected by MySQL Shell)",
                  "set a unique server_id per member, e.g. 1000 + member number")


def _server_id(m: Member) -> int | None:
    """server_id as a number mysqld accepts (None if unset or not one)."""
    sid = as_int(m.text("server_id"))
    return sid if sid is not None and 0 <= sid <= 4294967295 else None


@MEMBER.rule("mycnf/bad-value")
def server_id_not_a_number(m: Member, out: Out) -> None:
    """A server_id that is not a number from 1 to 4294967295."""
    raw = m.text("server_id")
    if raw is not None and _server_id(m) is None:
        out.about(m, Severity.ERROR, "server_id",
                  f"server_id {raw!r} is not a number from 1 to 4294967295")


@MEMBER.rule("gr/server-id")
def server_id_zero(m: Member, out: Out) -> None:
    """server_id 0, which disables replication."""
    if m.text("server_id") is not None and _server_id(m) == 0:
        out.about(m, Severity.ERROR, "server_id", "server_id 0 disables replication",
                  "set a unique non-zero server_id")


@MEMBER.rule("gr/server-id")
def server_id_compiled_default(m: Member, out: Out) -> None:
    """A live server_id of 1, maybe the compiled default (warning; in a file 1 is explicit)."""
    # A file that says server_id = 1 set it explicitly, which MySQL Shell accepts (that it
    # differs from the other members' is the group rules' business); a live value of 1
    # may be the compiled default, which MySQL Shell rejects.
    if m.live and m.text("server_id") is not None and _server_id(m) == 1:
        out.about(m, Severity.WARNING, "server_id",
                  "server_id is 1, the compiled default: unless it was set explicitly, MySQL "
                  "Shell rejects the instance", "set a unique server_id in the option file")


@MEMBER.rule("gr/report-address", "report_host / report_port")
def read_replica_report_host(m: Member, out: Out) -> None:
    """A read replica without report_host: Router reaches it by hostname (warning).

    For voting members a missing report_host is judged once for the set (group_rules)."""
    if m.role == READ_REPLICA and not m.text("report_host"):
        out.about(m, Severity.WARNING, "report_host",
                  "report_host is not set on the read replica: Router reaches it by hostname")


# ------------------------------------------------------------- binary log, applier


@MEMBER.rule("gr/requirement")
def binlog_format_not_row(m: Member, out: Out) -> None:
    """binlog_format set to other than ROW."""
    fmt = m.text("binlog_format")
    if _voting(m) and fmt is not None and fmt.upper() != "ROW":
        _need(m, out, "binlog_format", "ROW", fmt, restart=False)


@MEMBER.rule("gr/requirement")
def binary_log_off(m: Member, out: Out) -> None:
    """The binary log off: log_bin OFF live, skip-log-bin or disable-log-bin in a file."""
    if not _voting(m):
        return
    if m.live:
        if not is_on(m.text("log_bin")):
            _need(m, out, "log_bin", "ON", m.text("log_bin"))
        return
    for off in ("skip_log_bin", "disable_log_bin"):
        if off in m.values:
            out.about(m, Severity.ERROR, "log_bin",
                      f"{off} turns the binary log off; Group Replication needs it",
                      f"remove {off}", name=off)


@MEMBER.rule("gr/requirement")
def log_bin_named_off(m: Member, out: Out) -> None:
    """log_bin=OFF in a file, which names the binary log files 'OFF' (warning)."""
    val = m.values.get("log_bin")
    if _voting(m) and not m.live and val is not None and val.value is not None and \
            val.value.strip().lower() in ("off", "0", "false", "no"):
        out.about(m, Severity.WARNING, "log_bin",
                  f"log_bin={val.value} does not turn the binary log off: it names the "
                  f"binary log files '{val.value}.000001'...", "remove the value, or use "
                  "skip-log-bin if you meant off (not for InnoDB Cluster)")


@MEMBER.rule("gr/requirement")
def replica_updates_off(m: Member, out: Out) -> None:
    """log_replica_updates (log_slave_updates before 8.0.26) not ON."""
    name = replication_name(m.version, "log_replica_updates")
    flag = m.flag(name)
    other = m.flag("log_slave_updates") if name != "log_slave_updates" else None
    if _voting(m) and (flag is False or other is False or (m.live and flag is None)):
        _need(m, out, name, "ON", m.text(name) if flag is not None else
              m.text("log_slave_updates"))


@MEMBER.rule("gr/report-address")
def report_port_differs(m: Member, out: Out) -> None:
    """report_port other than port: MySQL Shell requires them to match."""
    rp = m.text("report_port")
    if _voting(m) and rp and as_int(rp) not in (None, 0) and as_int(rp) != m.port:
        out.about(m, Severity.ERROR, "report_port",
                  f"report_port {rp} differs from port {m.port}: MySQL Shell requires them to "
                  "match", f"report_port = {m.port}")


@MEMBER.rule("gr/requirement")
def binlog_checksum_on(m: Member, out: Out) -> None:
    """binlog_checksum other than NONE before 8.0.21."""
    checksum = m.text("binlog_checksum")
    if _voting(m) and m.version < (8, 0, 21) and (checksum or "CRC32").upper() != "NONE":
        _need(m, out, "binlog_checksum", "NONE", checksum, restart=False, default="CRC32")


@MEMBER.rule("gr/requirement")
def tls_source_admin(m: Member, out: Out) -> None:
    """group_replication_tls_source MYSQL_ADMIN (8.0.21+)."""
    tls_source = m.text("group_replication_tls_source")
    if _voting(m) and m.version >= (8, 0, 21) and tls_source and \
            tls_source.lower() == "mysql_admin":
        _need(m, out, "group_replication_tls_source", "MYSQL_MAIN", tls_source, restart=False)


@MEMBER.rule("gr/requirement")
def write_set_extraction(m: Member, out: Out) -> None:
    """transaction_write_set_extraction other than XXHASH64 (before 8.3)."""
    wse = m.text("transaction_write_set_extraction")
    if _voting(m) and m.version < (8, 3, 0) and wse is not None and \
            wse.upper() not in ("XXHASH64", "2", "MURMUR32", "1"):
        _need(m, out, "transaction_write_set_extraction", "XXHASH64", wse)


@MEMBER.rule("gr/requirement")
def file_repositories(m: Member, out: Out) -> None:
    """master_info/relay_log_info_repository not TABLE (before 8.3; FILE the default
    before 8.0.23)."""
    if not _voting(m) or m.version >= (8, 3, 0):
        return
    for key in ("master_info_repository", "relay_log_info_repository"):
        val = m.text(key)
        if (val is not None and val.upper() != "TABLE") or (val is None and
                                                             m.version < (8, 0, 23)):
            _need(m, out, key, "TABLE", val, default="FILE")


@MEMBER.rule("gr/requirement")
def commit_order_off(m: Member, out: Out) -> None:
    """replica_preserve_commit_order not ON (8.0.23+; OFF by default before 8.0.27)."""
    v = m.version
    pco = replication_name(v, "replica_preserve_commit_order")
    val = m.flag(pco)
    if val is None and not m.live:
        val = m.flag("slave_preserve_commit_order")
    if _voting(m) and v >= (8, 0, 23) and (
            val is False or (val is None and (m.live or v < (8, 0, 27)))):
        _need(m, out, pco, "ON", m.text(pco), restart=False, default="OFF")


@MEMBER.rule("gr/requirement")
def parallel_type_not_logical_clock(m: Member, out: Out) -> None:
    """replica_parallel_type not LOGICAL_CLOCK (8.0.23 to 8.3; DATABASE by default before
    8.0.27)."""
    v = m.version
    if not _voting(m) or not (8, 0, 23) <= v < (8, 3, 0):
        return
    ptype = replication_name(v, "replica_parallel_type")
    cur = m.text(ptype) or (None if m.live else m.text("slave_parallel_type"))
    if (cur is not None and cur.upper() != "LOGICAL_CLOCK") or (cur is None and v < (8, 0, 27)):
        _need(m, out, ptype, "LOGICAL_CLOCK", cur, restart=False, default="DATABASE")


@MEMBER.rule("gr/requirement")
def dependency_tracking_not_writeset(m: Member, out: Out) -> None:
    """binlog_transaction_dependency_tracking not WRITESET (8.0.23 to 8.4)."""
    key = "binlog_transaction_dependency_tracking"
    cur = m.text(key)
    if _voting(m) and (8, 0, 23) <= m.version < (8, 4, 0) and \
            (cur or "COMMIT_ORDER").upper() != "WRITESET":
        _need(m, out, key, "WRITESET", cur, restart=False, default="COMMIT_ORDER")


@MEMBER.rule("gr/requirement")
def performance_schema_off(m: Member, out: Out) -> None:
    """performance_schema OFF."""
    if _voting(m) and m.flag("performance_schema") is False:
        _need(m, out, "performance_schema", "ON", m.text("performance_schema"))


@MEMBER.rule("gr/recommendation", "Recommended setting for InnoDB Cluster")
def engines_not_disabled(m: Member, out: Out) -> None:
    """disabled_storage_engines not blocking the non-transactional engines (warning)."""
    raw = m.text("disabled_storage_engines")
    have = {e.strip().lower() for e in (raw or "").strip("'\"").split(",") if e.strip()}
    missing = [e for e in DISABLED_ENGINES_RECOMMENDED if e not in have]
    if _voting(m) and missing:
        want = ",".join(e.upper() if e != "myisam" else "MyISAM"
                        for e in DISABLED_ENGINES_RECOMMENDED)
        out.about(m, Severity.WARNING, "disabled_storage_engines",
                  f"disabled_storage_engines does not block {', '.join(missing)}: tables in "
                  "non-transactional engines cannot be replicated by Group Replication",
                  f'disabled_storage_engines = "{want}"')
