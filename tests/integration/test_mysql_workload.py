"""mysql_global_status, mysql_global_variables, mysql_statements, mysql_tables,
mysql_processlist, mysql_binlog and mariadb_query_response_time against the real MariaDB
sandbox, scraping as the monitoring user `dbgauge`: each test creates the condition a
series reports (a burst of statements, a table with rows, an idle connection, binlog
writes, timed queries) with the admin account and waits for it in the samples. Anything
changed is restored in `finally`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.mysql_global_status import status_spec
from dbgauge.collectors.mysql_status import status_value
from dbgauge.toolkit.db import connect
from dbgauge.toolkit.errors import QueryError
from tests.helpers import Metrics, parse_metrics, value, wait_for
from tests.helpers.daemon import Daemon, collect_direct, target_config, target_entry
from tests.helpers.servers import Sandbox, admin, documented_grants, replica_caught_up, run

pytestmark = pytest.mark.integration

PRIMARY = "mariadb-primary"
TABLE = "dbgauge_workload"
COLLECTORS = ("mysql_global_status", "mysql_global_variables", "mysql_statements",
              "mysql_tables", "mysql_processlist", "mysql_binlog", "mariadb_query_response_time")


def collect(sandbox: Sandbox, collector: str, target: str = PRIMARY,
            **options: int) -> Metrics:
    """One run of `collector` (with `options`) as the monitoring user (collect_direct)."""
    return collect_direct(sandbox, target, collector, options={collector: options})


@pytest.fixture()
def workload_table(sandbox: Sandbox) -> Iterator[str]:
    run(sandbox, PRIMARY, f"DROP TABLE IF EXISTS app.{TABLE}",
        f"CREATE TABLE app.{TABLE} (id INT PRIMARY KEY, v VARCHAR(200)) ENGINE=InnoDB")
    try:
        yield TABLE
    finally:
        run(sandbox, PRIMARY, f"DROP TABLE IF EXISTS app.{TABLE}")


# --------------------------------------------------------------------------- global status

def test_every_numeric_status_variable_is_exported_and_typed(sandbox: Sandbox) -> None:
    m = collect(sandbox, "mysql_global_status")
    server = run(sandbox, PRIMARY, "SHOW GLOBAL STATUS")
    expected = {status_spec(r["Variable_name"]).name: status_spec(r["Variable_name"]).type
                for r in server if status_value(r["Value"]) is not None}
    assert len(expected) > 450
    exported = {name for name, _ in m}
    assert exported == set(expected), (set(expected) ^ exported)
    for name, kind in expected.items():
        assert name.endswith("_total") == (kind == "counter"), name
    for name in ("dbgauge_mysql_global_status_innodb_log_waits_total",
                 "dbgauge_mysql_global_status_slow_queries_total",
                 "dbgauge_mysql_global_status_threads_connected",
                 "dbgauge_mysql_global_status_uptime"):
        assert value(m, name) is not None, name
    assert (value(m, "dbgauge_mysql_global_status_threads_connected") or 0) >= 1


def test_a_status_counter_grows(sandbox: Sandbox) -> None:
    name = "dbgauge_mysql_global_status_com_select_total"
    before = value(collect(sandbox, "mysql_global_status"), name) or 0
    run(sandbox, PRIMARY, *(["SELECT 1"] * 20))
    wait_for(lambda: (value(collect(sandbox, "mysql_global_status"), name) or 0)
             >= before + 20, what="Com_select to count 20 SELECTs")


def test_global_variables_report_the_sandbox_settings(sandbox: Sandbox) -> None:
    m = collect(sandbox, "mysql_global_variables")
    p = "dbgauge_mysql_global_variables_"
    assert value(m, p + "max_connections") == 1000  # --max-connections=1000
    assert value(m, p + "innodb_buffer_pool_size") == 128 * 2**20
    assert value(m, p + "innodb_log_file_size") == 16 * 2**20
    assert value(m, p + "performance_schema") == 1
    assert value(m, p + "log_bin") == 1
    long_query_time = run(sandbox, PRIMARY, "SELECT @@long_query_time AS v")[0]["v"]
    assert value(m, p + "long_query_time") == float(long_query_time)


# --------------------------------------------------------------------------- statements

def digest_of(sandbox: Sandbox, start: str, marker: str) -> str:
    """The digest hash of the one statement whose normalised text starts with `start` and
    names `marker`."""
    rows = run(sandbox, PRIMARY, (
        "SELECT DIGEST, DIGEST_TEXT FROM performance_schema.events_statements_summary_by_digest "
        "WHERE DIGEST_TEXT LIKE %s", (f"%{marker}%",)))
    found = [r for r in rows if str(r["DIGEST_TEXT"]).startswith(start)
             and marker in str(r["DIGEST_TEXT"])]
    assert len(found) == 1, rows
    return str(found[0]["DIGEST"])


@pytest.mark.usefixtures("workload_table")
def test_a_statement_burst_is_counted_under_its_digest(sandbox: Sandbox) -> None:
    burst = 30
    query = "SELECT COUNT(*) FROM app.dbgauge_workload WHERE id > %s"
    run(sandbox, PRIMARY, (query, (0,)))
    digest = digest_of(sandbox, "SELECT COUNT", "`dbgauge_workload` WHERE ID >")
    labels = {"schema": "app", "digest": digest}
    calls = "dbgauge_mysql_statements_calls_total"
    before = collect(sandbox, "mysql_statements", limit=1000)
    assert value(before, "dbgauge_mysql_performance_schema_enabled") == 1
    start = value(before, calls, **labels) or 0
    assert start >= 1
    run(sandbox, PRIMARY, *((query, (i,)) for i in range(burst)))

    def counted() -> Metrics | None:
        m = collect(sandbox, "mysql_statements", limit=1000)
        return m if (value(m, calls, **labels) or 0) >= start + burst else None

    m = wait_for(counted, what="the burst in the digest's calls")
    assert (value(m, "dbgauge_mysql_statements_seconds_total", **labels) or 0) > 0
    assert value(m, "dbgauge_mysql_statements_errors_total", **labels) == 0
    assert (value(m, "dbgauge_mysql_statements_rows_sent_total", **labels) or 0) \
        >= start + burst
    assert value(m, "dbgauge_mysql_statements_no_index_used_total", **labels) is not None
    assert not any("SELECT" in v or "COUNT" in v for _, ls in m for _, v in ls)
    # the top-N limit holds on the live table: two rows, a (schema, digest) each (one
    # digest can top the list under two schemas)
    small = collect(sandbox, "mysql_statements", limit=2)
    assert len({(dict(ls)["schema"], dict(ls)["digest"])
                for name, ls in small if name == calls}) == 2


# --------------------------------------------------------------------------- tables

@pytest.mark.usefixtures("workload_table")
def test_a_table_with_rows_shows_its_size_rows_and_io(sandbox: Sandbox) -> None:
    rows = 2000
    conn = admin(sandbox, PRIMARY)
    try:
        cur = conn.cursor()
        cur.executemany("INSERT INTO app.dbgauge_workload VALUES (%s, REPEAT('x', 150))",
                        [(i,) for i in range(rows)])
        cur.execute("SELECT COUNT(*) FROM app.dbgauge_workload WHERE v <> ''")  # fetches every row
        cur.execute(f"ANALYZE TABLE app.{TABLE}")
        cur.fetchall()
    finally:
        conn.close()
    table = {"schema": "app", "table": TABLE}

    def sized() -> Metrics | None:
        m = collect(sandbox, "mysql_tables", limit=1000, size_limit=1000)
        estimate = value(m, "dbgauge_mysql_table_rows", **table) or 0
        return m if estimate >= rows / 2 else None

    m = wait_for(sized, what="the row estimate after ANALYZE TABLE")
    assert (value(m, "dbgauge_mysql_table_rows", **table) or 0) <= rows * 2
    assert (value(m, "dbgauge_mysql_table_data_bytes", **table) or 0) >= rows * 150
    assert value(m, "dbgauge_mysql_table_index_bytes", **table) is not None
    assert value(m, "dbgauge_mysql_table_free_bytes", **table) is not None
    waits = "dbgauge_mysql_table_io_waits_total"
    assert (value(m, waits, operation="insert", **table) or 0) >= rows
    assert (value(m, waits, operation="fetch", **table) or 0) >= rows
    assert (value(m, "dbgauge_mysql_table_io_wait_seconds_total", operation="insert",
                  **table) or 0) > 0
    assert not [ls for _, ls in m if dict(ls).get("schema") in
                ("mysql", "performance_schema", "information_schema", "sys")]
    small = collect(sandbox, "mysql_tables", limit=1, size_limit=1)
    assert len({dict(ls)["table"] for n, ls in small if n == waits}) <= 1
    assert len({dict(ls)["table"] for n, ls in small
                if n == "dbgauge_mysql_table_data_bytes"}) == 1


# --------------------------------------------------------------------------- processlist

def test_sleeping_connections_are_counted(sandbox: Sandbox) -> None:
    sleeping = {"command": "sleep", "state": "idle"}
    threads = "dbgauge_mysql_processlist_threads"
    before = value(collect(sandbox, "mysql_processlist"), threads, **sleeping) or 0
    idle: list[Any] = []
    try:
        idle = [admin(sandbox, PRIMARY) for _ in range(3)]

        def counted() -> Metrics | None:
            m = collect(sandbox, "mysql_processlist")
            return m if (value(m, threads, **sleeping) or 0) >= before + 3 \
                and (value(m, "dbgauge_mysql_processlist_longest_seconds",
                           command="sleep") or 0) >= 1 else None

        m = wait_for(counted, what="three idle connections, one second asleep")
        # the replica's binlog dump thread, normalised
        assert value(m, threads, command="binlog_dump", state="replication_source") == 1
        assert {dict(ls)["state"] for n, ls in m if n == threads} <= {
            "idle", "replication_source", "executing", "other", "init", "end",
            "waiting_for_lock", "sending_data", "opening_tables", "statistics", "preparing",
            "closing_tables", "freeing_items", "cleaning_up"}
    finally:
        for conn in idle:
            conn.close()


# --------------------------------------------------------------------------- binlog

@pytest.mark.usefixtures("workload_table")
def test_binlog_bytes_grow_after_writes(sandbox: Sandbox) -> None:
    first = collect(sandbox, "mysql_binlog")
    assert value(first, "dbgauge_mysql_binlog_enabled") == 1
    assert (value(first, "dbgauge_mysql_binlog_files") or 0) >= 1
    before = value(first, "dbgauge_mysql_binlog_bytes") or 0
    server = sum(int(r["File_size"]) for r in run(sandbox, PRIMARY, "SHOW BINARY LOGS"))
    assert before <= server
    run(sandbox, PRIMARY, ("INSERT INTO app.dbgauge_workload VALUES (1, REPEAT('y', 200))", ()))
    wait_for(lambda: (value(collect(sandbox, "mysql_binlog"), "dbgauge_mysql_binlog_bytes")
                      or 0) > before + 200, what="the binlog to grow by the row")


# --------------------------------------------------------------------------- response time

BUCKETS = "dbgauge_mysql_query_response_time_total"


def buckets(m: Metrics) -> list[tuple[float, float]]:
    return sorted((float(dict(ls)["le"]), v) for (n, ls), v in m.items() if n == BUCKETS)


def test_query_response_time_counts_grow_and_stay_cumulative(sandbox: Sandbox) -> None:
    first = collect(sandbox, "mariadb_query_response_time")
    assert value(first, "dbgauge_mysql_query_response_time_configured") == 1
    before = value(first, BUCKETS, le="+Inf") or 0
    spent = value(first, "dbgauge_mysql_query_response_time_seconds_total") or 0
    run(sandbox, PRIMARY, *(["SELECT SLEEP(0.001)"] * 25))

    def grown() -> Metrics | None:
        m = collect(sandbox, "mariadb_query_response_time")
        return m if (value(m, BUCKETS, le="+Inf") or 0) >= before + 25 else None

    m = wait_for(grown, what="25 queries in the +Inf bucket")
    counts = [v for _, v in buckets(m)]
    assert counts == sorted(counts) and buckets(m)[-1][0] == float("inf")
    assert (value(m, BUCKETS, le="0.01") or 0) >= 25  # each slept 1 ms
    assert (value(m, "dbgauge_mysql_query_response_time_seconds_total") or 0) >= spent + 0.025


def test_query_response_time_stats_off_is_configured_zero(sandbox: Sandbox) -> None:
    try:
        run(sandbox, PRIMARY, "SET GLOBAL query_response_time_stats = OFF")
        m = collect(sandbox, "mariadb_query_response_time")
        assert value(m, "dbgauge_mysql_query_response_time_configured") == 0
        assert not buckets(m)
    finally:
        run(sandbox, PRIMARY, "SET GLOBAL query_response_time_stats = ON")
    m = collect(sandbox, "mariadb_query_response_time")
    assert value(m, "dbgauge_mysql_query_response_time_configured") == 1


def test_query_response_time_without_the_plugin_is_configured_zero(sandbox: Sandbox) -> None:
    """The sandbox replica runs without the plugin: not configured, no buckets."""
    m = collect(sandbox, "mariadb_query_response_time", target="mariadb-replica")
    assert value(m, "dbgauge_mysql_query_response_time_configured") == 0
    assert not buckets(m)


# --------------------------------------------------------------------------- exposition

def test_new_families_are_lint_clean_in_a_probe(daemon: Daemon) -> None:
    status, body = daemon.get(f"/probe?target={PRIMARY}")
    assert status == 200
    m = parse_metrics(body)
    for collector in COLLECTORS:
        assert value(m, "dbgauge_collector_success", collector=collector) == 1, collector
    assert value(m, "dbgauge_collector_success", collector="mysql_group_replication") is None
    assert f"# TYPE {BUCKETS} untyped" in body
    assert "# TYPE dbgauge_mysql_global_status_questions_total counter" in body
    assert "# TYPE dbgauge_mysql_global_status_uptime gauge" in body
    proc = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True,
                          text=True, timeout=30, check=False)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout + proc.stderr


# --------------------------------------------------------------------------- grants

def test_documented_grants_are_enough_for_the_new_collectors(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """docs/mysql.md's minimal MariaDB grants (BINLOG MONITOR included, for mysql_binlog,
    on by default): every new collector succeeds with them; without BINLOG MONITOR,
    mysql_binlog fails naming that grant."""
    user, password = "dbgauge_cov_docs", "Docs-cov-5z"
    (tmp_path / "pw").write_text(password)
    run(sandbox, PRIMARY, ("DROP USER IF EXISTS %s@'%%'", (user,)),
        *documented_grants("mariadb", user, password))
    try:
        dsn = str(target_entry(sandbox, PRIMARY)["dsn"]).replace("//dbgauge@", f"//{user}@")
        monitor = connect(target_config(sandbox, PRIMARY, dsn=dsn,
                                        password_file=str(tmp_path / "pw")))
        try:
            for name in COLLECTORS:
                samples = list(registry()[name].collect(monitor))
                assert samples, name
            got = {s.name: s.value for s in registry()["mysql_binlog"].collect(monitor)}
            assert got["dbgauge_mysql_binlog_enabled"] == 1
            assert got["dbgauge_mysql_binlog_bytes"] > 0
        finally:
            monitor.close()
        run(sandbox, PRIMARY, ("REVOKE BINLOG MONITOR ON *.* FROM %s@'%%'", (user,)))
        monitor = connect(target_config(sandbox, PRIMARY, dsn=dsn,
                                        password_file=str(tmp_path / "pw")))
        try:
            with pytest.raises(QueryError, match=r"binary_logs needs the BINLOG "
                               r"MONITOR privilege \(GRANT BINLOG MONITOR ON"):
                list(registry()["mysql_binlog"].collect(monitor))
        finally:
            monitor.close()
    finally:
        run(sandbox, PRIMARY, ("DROP USER IF EXISTS %s@'%%'", (user,)))
        replica_caught_up(sandbox)
