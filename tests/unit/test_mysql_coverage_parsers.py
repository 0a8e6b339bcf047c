"""The mysqld_exporter-parity collectors' pure parts: the SHOW GLOBAL STATUS typing table and
name sanitising (on MariaDB 10.11's full list and MySQL 8.0's InnoDB rows), the variables
allow-list, statement digests on MySQL 8's wider table, table I/O and sizes, processlist
state normalisation, binlog sizes, query response time buckets and Group Replication on
captured MySQL 8.0/8.4 groups. NULL values give no sample; top-N limits hold."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from dbgauge.collectors.mariadb_query_response_time import (
    MariaDBQueryResponseTime,
    ResponseTimeFacts,
    parse_configured,
    parse_ranges,
    response_time_samples,
)
from dbgauge.collectors.mysql_binlog import MySQLBinlog
from dbgauge.collectors.mysql_global_status import (
    LINTED_PARTS,
    MySQLGlobalStatus,
    is_counter,
    sanitize,
    status_samples,
    status_spec,
)
from dbgauge.collectors.mysql_global_variables import ALLOWED, MySQLGlobalVariables
from dbgauge.collectors.mysql_group_replication import MySQLGroupReplication
from dbgauge.collectors.mysql_processlist import (
    normalise_command,
    normalise_state,
    parse_processlist,
)
from dbgauge.collectors.mysql_statements import MySQLStatements, parse_digests
from dbgauge.collectors.mysql_status import parse_status_rows
from dbgauge.collectors.mysql_tables import MySQLTables, parse_io, parse_sizes
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.metrics import Sample
from tests.helpers.captured import FIXTURES, FixtureConnection, project, tsv_rows, vertical_rows
from tests.helpers.validate import mysql_table_rows

VALID_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LIVE = FIXTURES / "validate/innodb/live"


def by_name(samples: list[Sample]) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for s in samples:
        key = (s.name, frozenset(s.labels.items()))
        assert key not in out, f"duplicate {key}"
        out[key] = s.value
    return out


def one(samples: list[Sample], name: str, **labels: str) -> float | None:
    found = [s.value for s in samples if s.name == name and dict(s.labels) == labels]
    assert len(found) <= 1
    return found[0] if found else None


# ------------------------------------------------------------------ global status

def test_every_numeric_mariadb_status_variable_is_one_typed_lint_clean_family() -> None:
    rows = tsv_rows("mariadb-10.11/show_global_status.tsv")
    assert len(rows) > 500
    values = parse_status_rows(rows)
    numeric = {r["Variable_name"] for r in rows
               if r["Value"] not in (None, "") and (r["Value"] in ("ON", "OFF")
                                                    or re.fullmatch(r"-?[0-9.]+", r["Value"]))}
    assert set(values) == numeric
    collector = MySQLGlobalStatus()
    samples = list(status_samples(values))
    assert len(samples) == len(values)  # no two variables collide after sanitising
    for sample in samples:
        spec = collector.validate_sample(sample)
        assert VALID_NAME.match(sample.name) and sample.name == sample.name.lower()
        assert spec.type in ("counter", "gauge")
        assert spec.name.endswith("_total") == (spec.type == "counter")
        stem = spec.name.removesuffix("_total") if spec.type == "counter" else spec.name
        assert not set(stem.split("_")) & LINTED_PARTS, spec.name
        if spec.type == "gauge":
            assert not spec.name.endswith(("_count", "_sum", "_bucket")), spec.name
    got = by_name(samples)
    p = "dbgauge_mysql_global_status_"
    for counter in ("com_select", "handler_read_key", "bytes_sent", "innodb_log_waits",
                    "slow_queries", "questions", "aborted_connects", "created_tmp_disk_tables",
                    "select_full_join", "sort_merge_passes", "table_locks_waited",
                    "innodb_row_lock_waits", "innodb_buffer_pool_reads"):
        assert (p + counter + "_total", frozenset()) in got, counter
    for gauge in ("threads_connected", "uptime", "open_tables", "innodb_buffer_pool_pages_free",
                  "innodb_buffer_pool_pages_total_value", "max_used_connections"):
        assert (p + gauge, frozenset()) in got, gauge
    assert got[(p + "innodb_have_punch_hole", frozenset())] == 1.0  # ON
    assert got[(p + "innodb_have_lz4", frozenset())] == 0.0  # OFF
    assert not any("max_memory_used" in name for name, _ in got)  # NULL
    assert not any("rpl_status" in name for name, _ in got)  # text (AUTH_MASTER)
    raw = {r["Variable_name"]: r["Value"] for r in rows}
    assert got[(p + "uptime", frozenset())] == float(raw["Uptime"])


def test_required_alert_rule_names_are_declared_and_emitted_without_run_time_spec() -> None:
    collector = MySQLGlobalStatus()
    declared = {spec.name: spec.type for spec in collector.metrics}
    assert declared["dbgauge_mysql_global_status_innodb_log_waits_total"] == "counter"
    assert declared["dbgauge_mysql_global_status_slow_queries_total"] == "counter"
    assert declared["dbgauge_mysql_global_status_threads_connected"] == "gauge"
    assert declared["dbgauge_mysql_global_status_uptime"] == "gauge"
    samples = {s.name: s for s in status_samples({"Uptime": 5.0, "Com_select": 3.0})}
    assert samples["dbgauge_mysql_global_status_uptime"].spec is None
    assert samples["dbgauge_mysql_global_status_com_select_total"].spec is not None


def test_mysql_8_innodb_rows_are_typed() -> None:
    values = parse_status_rows(tsv_rows("mysql-8.0/show_global_status_innodb.tsv"))
    for name in ("Innodb_rows_read", "Innodb_rows_inserted", "Innodb_os_log_fsyncs",
                 "Innodb_data_written", "Innodb_pages_read"):
        assert name in values and is_counter(name), name
    for name in ("Innodb_buffer_pool_pages_dirty", "Innodb_row_lock_current_waits",
                 "Innodb_page_size"):
        assert name in values and not is_counter(name), name


@pytest.mark.parametrize(("variable", "name"), [
    ("Threads_connected", "threads_connected"),
    ("Ssl-Session.Cache", "ssl_session_cache"),
    ("wsrep", "wsrep"),
    ("Foo__bar_", "foo_bar"),
    ("Replica_ms_lag", "replica_msx_lag"),
    ("Binlog_gauge", "binlog_gaugex"),
    ("Expire_logs_days", "expire_logs_daysx"),
    ("Wait_milliseconds", "wait_millisecondsx"),
    ("Résumé", "r_sum"),
])
def test_sanitize(variable: str, name: str) -> None:
    assert sanitize(variable) == name


def test_status_spec_types_and_reserved_suffixes() -> None:
    assert status_spec("Com_select").name.endswith("com_select_total")
    assert status_spec("Performance_schema_digest_lost").type == "counter"
    assert status_spec("Acl_cache_items_count").name.endswith("acl_cache_items_count_value")
    unknown = status_spec("Some_new_variable")
    assert (unknown.type, unknown.name) == (
        "gauge", "dbgauge_mysql_global_status_some_new_variable")
    # text values and NaN are not numbers
    assert parse_status_rows([{"Variable_name": "a", "Value": "nan"},
                            {"Variable_name": "b", "Value": b"12"},
                            {"Variable_name": "c", "Value": None}]) == {"b": 12.0}


def test_global_variables_keep_the_allow_list_only() -> None:
    conn = FixtureConnection("mariadb", (10, 11, 19), {"global_variables": [
        {"Variable_name": "max_connections", "Value": "151"},
        {"Variable_name": "innodb_buffer_pool_size", "Value": "134217728"},
        {"Variable_name": "long_query_time", "Value": "10.000000"},
        {"Variable_name": "read_only", "Value": "OFF"},
        {"Variable_name": "version_comment", "Value": "Debian 12"},
        {"Variable_name": "max_prepared_stmt_count", "Value": "16382"},
        {"Variable_name": "table_open_cache", "Value": None},
        {"Variable_name": "auto_increment_increment", "Value": "1"}]})
    collector = MySQLGlobalVariables()
    samples = list(collector.collect(conn))  # type: ignore[arg-type]
    for s in samples:
        collector.validate_sample(s)
    p = "dbgauge_mysql_global_variables_"
    assert {s.name: s.value for s in samples} == {
        p + "max_connections": 151.0, p + "innodb_buffer_pool_size": 134217728.0,
        p + "long_query_time": 10.0, p + "read_only": 0.0,
        p + "max_prepared_stmt_count_value": 16382.0}
    assert "max_connections" in ALLOWED and "auto_increment_increment" not in ALLOWED


# ------------------------------------------------------------------ statements

def test_mysql_8_digest_row_through_the_real_statement() -> None:
    captured = vertical_rows("mysql-8.0/statements_summary_by_digest.txt")
    conn = FixtureConnection("mysql", (8, 0, 31), {})
    rows = project(conn.sql("statement_digests"), captured)
    conn.answers = {"performance_schema_enabled": [{"enabled": 1}], "statement_digests": rows}
    collector = MySQLStatements()
    samples = list(collector.collect(conn))  # type: ignore[arg-type]
    for s in samples:
        collector.validate_sample(s)
    labels = {"schema": "", "digest":
              "44e35cee979ba420eb49a8471f852bbe15b403c89742704817dfbaace0d99dbb"}
    assert one(samples, "dbgauge_mysql_statements_calls_total", **labels) == 18
    assert one(samples, "dbgauge_mysql_statements_seconds_total", **labels) == \
        pytest.approx(0.059547311)
    assert one(samples, "dbgauge_mysql_statements_rows_sent_total", **labels) == 18
    assert one(samples, "dbgauge_mysql_statements_rows_examined_total", **labels) == 18
    assert one(samples, "dbgauge_mysql_statements_errors_total", **labels) == 0
    assert one(samples, "dbgauge_mysql_statements_no_index_used_total", **labels) == 0
    assert one(samples, "dbgauge_mysql_performance_schema_enabled") == 1
    assert not any("version_comment" in v for s in samples for v in s.labels.values())


def test_digests_limit_null_columns_and_the_overflow_row() -> None:
    rows: list[dict[str, Any]] = [
        {"schema_name": "app", "digest": f"d{i}", "calls": i, "timer_wait": i * 10**12,
         "rows_examined": None, "rows_sent": 1, "errors": 0, "no_index_used": 0}
        for i in range(7)]
    rows.append({"schema_name": None, "digest": None, "calls": 3, "timer_wait": None,
                 "rows_examined": 1, "rows_sent": 1, "errors": 0, "no_index_used": 0})
    assert [d.digest for d in parse_digests(rows, 5)] == ["d0", "d1", "d2", "d3", "d4"]
    overflow = parse_digests(rows[-1:], 5)[0]
    assert (overflow.schema, overflow.digest) == ("", "other")
    assert "timer_wait" not in overflow.values
    assert "rows_examined" not in parse_digests(rows, 1)[0].values
    # the limit is bound as a parameter and honoured
    conn = FixtureConnection("mariadb", (10, 11, 19), {
        "performance_schema_enabled": [{"enabled": 1}], "statement_digests": rows})
    tuned = MySQLStatements().configured({"limit": 3})
    facts = tuned.read(conn)  # type: ignore[arg-type]
    assert len(facts.digests) == 3


def test_performance_schema_off_still_succeeds_and_says_so() -> None:
    conn = FixtureConnection("mysql", (8, 4, 0), {"performance_schema_enabled": [{"enabled": 0}]})
    samples = list(MySQLStatements().collect(conn))  # type: ignore[arg-type]
    assert [(s.name, s.value) for s in samples] == [
        ("dbgauge_mysql_performance_schema_enabled", 0.0)]
    assert conn.asked == ["performance_schema_enabled"]


# ------------------------------------------------------------------ tables

def test_table_io_and_sizes_parse_with_nulls_and_limits() -> None:
    io_rows = [{"table_schema": "app", "table_name": f"t{i}", "count_fetch": 10,
                "timer_fetch": 2 * 10**12, "count_insert": 1, "timer_insert": None,
                "count_update": 0, "timer_update": 0, "count_delete": None,
                "timer_delete": None} for i in range(4)]
    size_rows = [{"table_schema": "app", "table_name": "big", "data_length": 16384,
                  "index_length": 0, "data_free": None, "table_rows": 3}]
    conn = FixtureConnection("mariadb", (10, 11, 19), {"table_io_waits": io_rows,
                                                       "table_sizes": size_rows})
    collector = MySQLTables().configured({"limit": 2, "size_limit": 5})
    samples = list(collector.collect(conn))  # type: ignore[arg-type]
    for s in samples:
        collector.validate_sample(s)
    assert {s.labels["table"] for s in samples} == {"t0", "t1", "big"}
    fetch = {"schema": "app", "table": "t0", "operation": "fetch"}
    assert one(samples, "dbgauge_mysql_table_io_waits_total", **fetch) == 10
    assert one(samples, "dbgauge_mysql_table_io_wait_seconds_total", **fetch) == 2.0
    assert one(samples, "dbgauge_mysql_table_io_wait_seconds_total", schema="app",
               table="t0", operation="insert") is None  # NULL
    assert one(samples, "dbgauge_mysql_table_io_waits_total", schema="app",
               table="t0", operation="delete") is None
    assert one(samples, "dbgauge_mysql_table_data_bytes", schema="app", table="big") == 16384
    assert one(samples, "dbgauge_mysql_table_rows", schema="app", table="big") == 3
    assert one(samples, "dbgauge_mysql_table_free_bytes", schema="app", table="big") is None
    assert len(parse_io(io_rows, 1)) == 1 and len(parse_sizes(size_rows * 3, 2)) == 2


def test_table_statements_leave_system_schemas_out_and_bind_the_limit() -> None:
    for name in ("table_io_waits", "table_sizes"):
        sql = FixtureConnection("mysql", (8, 0, 36), {}).sql(name)
        assert "'performance_schema'" in sql and "'mysql'" in sql and "'sys'" in sql
        assert sql.rstrip().endswith("LIMIT %s")


# ------------------------------------------------------------------ processlist

@pytest.mark.parametrize(("command", "state", "expected"), [
    ("Sleep", "", "idle"),
    ("Query", "Sending data", "sending_data"),
    ("Query", "Waiting for table metadata lock", "waiting_for_lock"),
    ("Query", "System lock", "waiting_for_lock"),
    ("Query", "query end", "end"),
    ("Query", "Filling schema table", "executing"),
    ("Binlog Dump", "Master has sent all binlog to slave; waiting for more updates",
     "replication_source"),
    ("Binlog Dump GTID", "Source has sent all binlog to replica", "replication_source"),
    ("Slave_SQL", "Slave has read all relay log; waiting for more updates",
     "replication_replica"),
    ("Daemon", "Waiting on empty queue", "other"),
    ("Connect", "copy to tmp table", "copying_to_tmp_table"),
])
def test_states_normalise_to_a_bounded_set(command: str, state: str, expected: str) -> None:
    assert normalise_state(command, state) == expected


def test_processlist_groups_add_up_with_bounded_commands() -> None:
    assert normalise_command("Binlog Dump GTID") == "binlog_dump_gtid"
    assert normalise_command("Something new") == "other"
    facts = parse_processlist([
        {"command": "Sleep", "state": "", "threads": 3, "longest": 40},
        {"command": "Sleep", "state": None, "threads": 1, "longest": 2},
        {"command": "Query", "state": "Sending data", "threads": 2, "longest": 5},
        {"command": "Query", "state": "Waiting for table metadata lock", "threads": 1,
         "longest": 70},
        {"command": "Query", "state": "System lock", "threads": 1, "longest": None},
    ])
    assert facts.threads == {("sleep", "idle"): 4.0, ("query", "sending_data"): 2.0,
                             ("query", "waiting_for_lock"): 2.0}
    assert facts.longest == {"sleep": 40.0, "query": 70.0}


def test_processlist_statement_by_version() -> None:
    assert "performance_schema.processlist" in FixtureConnection(
        "mysql", (8, 0, 22), {}).sql("processlist_summary")
    assert "information_schema.PROCESSLIST" in FixtureConnection(
        "mysql", (8, 0, 21), {}).sql("processlist_summary")
    assert "information_schema.PROCESSLIST" in FixtureConnection(
        "mariadb", (10, 11, 19), {}).sql("processlist_summary")


# ------------------------------------------------------------------ binlog

def test_binlog_sizes_and_log_bin_off() -> None:
    conn = FixtureConnection("mysql", (8, 4, 0), {
        "binlog_enabled": [{"log_bin": 1}],
        "binary_logs": [{"Log_name": "binlog.000001", "File_size": 180, "Encrypted": "No"},
                        {"Log_name": "binlog.000002", "File_size": 4400, "Encrypted": "No"},
                        {"Log_name": "binlog.000003", "File_size": None, "Encrypted": "No"}]})
    got = {s.name: s.value for s in MySQLBinlog().collect(conn)}  # type: ignore[arg-type]
    assert got == {"dbgauge_mysql_binlog_enabled": 1.0, "dbgauge_mysql_binlog_files": 3.0,
                   "dbgauge_mysql_binlog_bytes": 4580.0}
    off = FixtureConnection("mariadb", (10, 11, 19), {"binlog_enabled": [{"log_bin": 0}]})
    got = {s.name: s.value for s in MySQLBinlog().collect(off)}  # type: ignore[arg-type]
    assert got == {"dbgauge_mysql_binlog_enabled": 0.0}
    assert off.asked == ["binlog_enabled"]


# ------------------------------------------------------------------ query response time

def test_query_response_time_buckets_are_cumulative_with_inf_last() -> None:
    rows = tsv_rows("mariadb-10.11/query_response_time.tsv")
    facts = parse_ranges(rows)
    counts = [float(r["count"]) for r in rows]
    bounds = [b for b, _ in facts.buckets]
    assert bounds == sorted(bounds) and bounds[-1] == float("inf") and len(bounds) == len(rows)
    cumulative = [c for _, c in facts.buckets]
    assert cumulative == sorted(cumulative) and cumulative[-1] == sum(counts)
    assert cumulative[0] == counts[0]
    finite_time = sum(float(r["total"]) for r in rows if r["total"].strip() != "TOO LONG")
    assert facts.seconds == pytest.approx(finite_time)
    samples = list(response_time_samples(facts))
    collector = MariaDBQueryResponseTime()
    for s in samples:
        collector.validate_sample(s)
    les = [s.labels["le"] for s in samples if s.name == "dbgauge_mysql_query_response_time_total"]
    assert les[0] == "1e-06" and les[6] == "1.0" and les[-1] == "+Inf"
    assert one(samples, "dbgauge_mysql_query_response_time_configured") == 1


def test_query_response_time_absent_plugin() -> None:
    assert not parse_configured([])
    assert not parse_configured([{"plugin_status": "ACTIVE", "stats": "OFF"}])
    assert parse_configured([{"plugin_status": "ACTIVE", "stats": "ON"}])
    conn = FixtureConnection("mariadb", (10, 11, 19), {"query_response_time_plugin": []})
    got = [(s.name, s.value) for s in MariaDBQueryResponseTime().collect(conn)]  # type: ignore[arg-type]
    assert got == [("dbgauge_mysql_query_response_time_configured", 0.0)]
    assert list(response_time_samples(ResponseTimeFacts(True))) == [
        Sample("dbgauge_mysql_query_response_time_configured", 1.0)]
    mysql8 = ServerInfo("mysql", (8, 0, 36), "8.0.36")
    assert not collector_supports(MariaDBQueryResponseTime(), mysql8)


def collector_supports(collector: Any, server: ServerInfo) -> bool:
    return bool(collector.supports(server))


# ------------------------------------------------------------------ group replication

def group(members: Path, stats: Path | None, version: tuple[int, ...]) -> list[Sample]:
    """mysql_group_replication on captured rows, through its real statements."""
    conn = FixtureConnection("mysql", version, {})
    conn.answers = {
        "group_replication_members": project(conn.sql("group_replication_members"),
                                             mysql_table_rows(members)),  # type: ignore[arg-type]
        "group_replication_member_stats": project(
            conn.sql("group_replication_member_stats"),
            mysql_table_rows(stats)) if stats else []}  # type: ignore[arg-type]
    collector = MySQLGroupReplication()
    samples = list(collector.collect(conn))  # type: ignore[arg-type]
    for s in samples:
        collector.validate_sample(s)
    by_name(samples)
    return samples


def test_group_replication_on_a_captured_8_0_group() -> None:
    samples = group(FIXTURES / "mysql-8.0/replication_group_members_8.0.18.txt",
                    LIVE / "member_stats_8.0.18.txt", (8, 0, 18))
    assert one(samples, "dbgauge_mysql_group_replication_configured") == 1
    for member in ("mgr01:3306", "mgr02:3306", "mgr03:3306"):
        assert one(samples, "dbgauge_mysql_group_replication_member_online", member=member) == 1
        assert one(samples, "dbgauge_mysql_group_replication_member_state", member=member,
                   state="ONLINE") == 1
        assert one(samples, "dbgauge_mysql_group_replication_member_state", member=member,
                   state="UNREACHABLE") == 0
        assert one(samples, "dbgauge_mysql_group_replication_applier_queue", member=member) == 0
        assert one(samples, "dbgauge_mysql_group_replication_certifier_queue",
                   member=member) == 0
        assert one(samples, "dbgauge_mysql_group_replication_conflicts_detected_total",
                   member=member) == 0
    assert one(samples, "dbgauge_mysql_group_replication_primary", member="mgr02:3306") == 1
    assert one(samples, "dbgauge_mysql_group_replication_primary", member="mgr01:3306") == 0


def test_group_replication_8_4_and_a_degraded_group() -> None:
    samples = group(LIVE / "group_members_8.4.6.txt", None, (8, 4, 6))
    assert one(samples, "dbgauge_mysql_group_replication_primary", member="10.10.0.11:3306") == 1
    assert one(samples, "dbgauge_mysql_group_replication_applier_queue",
               member="10.10.0.11:3306") is None  # no stats row: no sample
    degraded = group(LIVE / "group_members_constructed_degraded.txt",
                     LIVE / "member_stats_8.0.18.txt", (8, 0, 27))
    assert one(degraded, "dbgauge_mysql_group_replication_member_online",
               member="example2:4420") == 0
    assert one(degraded, "dbgauge_mysql_group_replication_member_state",
               member="example2:4420", state="UNREACHABLE") == 1
    assert one(degraded, "dbgauge_mysql_group_replication_member_state",
               member="example3:4430", state="RECOVERING") == 1


def test_no_group_replication_is_no_member_series_and_no_error() -> None:
    placeholder = [{"member_id": "", "member_host": "", "member_port": None,
                    "member_state": "OFFLINE", "member_role": ""}]
    for rows in ([], placeholder):
        conn = FixtureConnection("mysql", (8, 0, 36), {"group_replication_members": rows})
        got = [(s.name, s.value) for s in MySQLGroupReplication().collect(conn)]  # type: ignore[arg-type]
        assert got == [("dbgauge_mysql_group_replication_configured", 0.0)]
        assert conn.asked == ["group_replication_members"]
    mariadb = ServerInfo("mariadb", (10, 11, 19), "10.11.19-MariaDB")
    assert not MySQLGroupReplication().supports(mariadb)
    assert MySQLGroupReplication().supports(ServerInfo("mysql", (8, 0, 18), "8.0.18"))
