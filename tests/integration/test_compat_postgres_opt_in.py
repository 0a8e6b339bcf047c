"""The opt-in postgres_activity, postgres_buffercache, postgres_wal_receiver and
postgres_indexes, with postgres_exporter's names, against the real sandbox.

Debian's postgres_exporter 0.11 has none of upstream's long_running_transactions,
process_idle, buffercache_summary, stat_wal_receiver or statio_user_indexes collectors, so
the values are held against the catalog as upstream's queries (collector/*.go) read it: the
admin account holds a transaction open, leaves sessions idle and idle in transaction with
an application_name of their own, creates pg_buffercache in `app` (and drops it), reads
pg-standby's pg_stat_wal_receiver, and scans an index of a table of its own. dbgauge runs
`collect --compat postgres_exporter` as the monitoring role with the opt-in collectors
listed. Other test files may use the sandbox at the same time: assertions are about this
test's sessions and tables, or bounded by readings of the catalog before and after the
scrape.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.helpers import DBGAUGE, REPO, Metrics, value, wait_for
from tests.helpers.daemon import config_file, target_entry
from tests.helpers.peers import parse
from tests.helpers.servers import Sandbox, pg_admin

pytestmark = pytest.mark.integration

OPT_IN = ["postgres_activity", "postgres_buffercache", "postgres_wal_receiver",
          "postgres_indexes"]
IDLE_APP, TX_APP = "dbgauge_test_idle", "dbgauge_test_idle_tx"
BOUNDS = (1, 2, 5, 15, 30, 60, 90, 120, 300)
# The families this file's collectors make, ours and the peer's (for promtool).
FAMILIES = ("dbgauge_postgres_open_transactions", "dbgauge_postgres_autovacuum_worker",
            "dbgauge_postgres_idle_session_seconds", "dbgauge_postgres_shared_buffers",
            "pg_long_running_transactions", "pg_stat_activity_autovacuum",
            "pg_process_idle_seconds", "pg_buffercache_summary",
            "dbgauge_postgres_wal_receiver_", "pg_stat_wal_receiver_",
            "dbgauge_postgres_index", "pg_statio_user_indexes_")


def collect(sandbox: Sandbox, tmp: Path, target: str = "pg-primary"
            ) -> tuple[Metrics, str, str]:
    """`dbgauge collect TARGET --compat postgres_exporter` with the opt-in collectors
    listed: its samples, exposition text and log."""
    entry = {**target_entry(sandbox, target), "collectors": OPT_IN}
    config = config_file(sandbox, tmp / "dbgauge.yaml", [entry])
    proc = subprocess.run([*DBGAUGE, "collect", "--config", str(config), target,
                           "--compat", "postgres_exporter"], capture_output=True, text=True,
                          timeout=60, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    # names exactly as written (prometheus_client's parser adds _total to the peer's counters)
    metrics = {key: v for family in parse(proc.stdout).values()
               for key, v in family.samples.items()}
    return metrics, proc.stdout, proc.stderr


def catalog(admin: psycopg.Connection[Any], sql: str, *params: object) -> Any:
    return admin.execute(sql, params).fetchone()[0]  # type: ignore[index]


def promtool_findings(text: str) -> str:
    """promtool's findings on this file's families of `text` ("" when none), but those on
    upstream's own names, which it would say of the peer's output too (a renamed family
    breaks a dashboard): its WAL receiver counters lack `_total`, and
    `pg_buffercache_summary_*` hold the word `summary`."""
    lines = [ln for ln in text.splitlines()
             if any(f in ln.split(" ")[2 if ln.startswith("# ") else 0] for f in FAMILIES)
             and not ln.startswith("# EOF")]
    done = subprocess.run(["promtool", "check", "metrics"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode in (0, 3), done.stderr
    upstream = (("pg_stat_wal_receiver_", 'counter metrics should have "_total" suffix'),
                ("pg_buffercache_summary_", "metric name should not include type 'summary'"))
    return "\n".join(ln for ln in (done.stdout + done.stderr).strip().splitlines()
                     if not any(ln.startswith(p) and ln.endswith(f) for p, f in upstream))


@pytest.fixture
def sessions(sandbox: Sandbox) -> Iterator[tuple[int, int, int]]:
    """An open transaction (the holder: idle in transaction, TX_APP), an idle session
    (IDLE_APP), and the admin session that watches them: their pids."""
    dsn = sandbox.admin_dsn("pg-primary")
    with closing(psycopg.connect(dsn, application_name=TX_APP)) as holder, \
            closing(psycopg.connect(dsn, autocommit=True, application_name=IDLE_APP)) as idle, \
            closing(pg_admin(sandbox, "pg-primary")) as admin:
        holder.execute("SELECT txid_current()")
        idle.execute("SELECT 1")
        yield holder.info.backend_pid, idle.info.backend_pid, admin.info.backend_pid
        holder.rollback()


def test_an_open_transaction_and_idle_sessions(sandbox: Sandbox, tmp_path: Path,
                                               sessions: tuple[int, int, int]) -> None:
    holder, idle, _ = sessions
    with closing(pg_admin(sandbox, "pg-primary")) as admin:
        since = "EXTRACT(EPOCH FROM now() - state_change) FROM pg_stat_activity WHERE pid = %s"
        wait_for(lambda: catalog(admin, "SELECT " + since, idle) > 2.5, timeout=30,
                 what="the sessions to be idle past the 2 s bucket")
        xact_age = catalog(admin, "SELECT EXTRACT(EPOCH FROM now() - xact_start) "
                                  "FROM pg_stat_activity WHERE pid = %s", holder)
        before = {pid: float(catalog(admin, "SELECT " + since, pid)) for pid in (holder, idle)}
        m, text, log = collect(sandbox, tmp_path)
        after = {pid: float(catalog(admin, "SELECT " + since, pid)) for pid in (holder, idle)}
    assert "postgres_activity" not in log
    count = value(m, "pg_long_running_transactions")
    assert count is not None and count >= 1  # the holder, and whatever else runs now
    assert count == value(m, "dbgauge_postgres_open_transactions")
    oldest = value(m, "pg_long_running_transactions_oldest_timestamp_seconds")
    assert oldest is not None and oldest >= float(xact_age)
    assert oldest == value(m, "dbgauge_postgres_open_transactions_oldest_seconds")
    for pid, state, app in ((holder, "idle in transaction", TX_APP), (idle, "idle", IDLE_APP)):
        labels = {"state": state, "application_name": app}
        assert value(m, "pg_process_idle_seconds_count", **labels) == 1
        assert round(before[pid]) <= value(m, "pg_process_idle_seconds_sum", **labels) \
            <= round(after[pid])
        for le in BOUNDS:
            bucket = value(m, "pg_process_idle_seconds_bucket", le=str(le), **labels)
            assert bucket in ((1,) if le >= after[pid] else (0,) if le < before[pid]
                              else (0, 1)), (state, le, bucket)
        assert value(m, "pg_process_idle_seconds_bucket", le="+Inf", **labels) == 1
        assert value(m, "dbgauge_postgres_idle_session_seconds_bucket", le="2", **labels) == 0
        assert value(m, "dbgauge_postgres_idle_session_seconds_count", **labels) == 1
    assert promtool_findings(text) == ""


def test_buffercache_needs_the_extension(sandbox: Sandbox, tmp_path: Path) -> None:
    m, _, log = collect(sandbox, tmp_path)
    assert ("pg_buffercache is not installed in database app: as a superuser connected to "
            "it, run CREATE EXTENSION pg_buffercache") in log
    assert value(m, "dbgauge_collector_success", collector="postgres_buffercache") == 0
    assert value(m, "pg_scrape_collector_success", collector="buffercache_summary") == 0
    assert not [n for n, _ in m if "shared_buffers" in n or "buffercache_summary_" in n]


def test_buffercache_with_the_extension(sandbox: Sandbox, tmp_path: Path) -> None:
    with closing(pg_admin(sandbox, "pg-primary", dbname="app")) as admin:
        admin.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
        try:
            buffers = int(catalog(admin, "SELECT setting FROM pg_settings "
                                         "WHERE name = 'shared_buffers'"))
            major = int(catalog(admin, "SHOW server_version_num")) // 10000
            m, text, log = collect(sandbox, tmp_path)
        finally:
            admin.execute("DROP EXTENSION IF EXISTS pg_buffercache")
    assert "postgres_buffercache" not in log
    used = value(m, "dbgauge_postgres_shared_buffers_used")
    unused = value(m, "dbgauge_postgres_shared_buffers_unused")
    dirty = value(m, "dbgauge_postgres_shared_buffers_dirty")
    assert used is not None and unused is not None and dirty is not None
    assert used + unused == buffers and used > 0 and 0 <= dirty <= used
    average = value(m, "dbgauge_postgres_shared_buffers_usage_count_average")
    assert average is not None and 0 < average <= 5
    peer = value(m, "pg_buffercache_summary_buffers_used")
    if major >= 16:  # pg_buffercache_summary(): the peer's families, the same numbers
        assert peer == used
        assert value(m, "pg_buffercache_summary_buffers_unused") == unused
        assert value(m, "pg_buffercache_summary_usagecount_avg") == average
    else:  # the peer reports nothing before 16
        assert peer is None
    assert promtool_findings(text) == ""


def test_the_standby_s_wal_receiver(sandbox: Sandbox, tmp_path: Path) -> None:
    columns = ("receive_start_lsn - '0/0', receive_start_tli, received_tli, slot_name, "
               "status, flushed_lsn - '0/0', latest_end_lsn - '0/0', "
               "EXTRACT(EPOCH FROM last_msg_receipt_time)")
    with closing(pg_admin(sandbox, "pg-standby")) as admin:
        query = f"SELECT {columns} FROM pg_stat_wal_receiver"  # noqa: S608
        wait_for(lambda: admin.execute(query).fetchone() is not None, timeout=30,
                 what="pg-standby's WAL receiver")
        before = admin.execute(query).fetchone()
        m, text, log = collect(sandbox, tmp_path, "pg-standby")
        after = admin.execute(query).fetchone()
    assert before is not None and after is not None
    start, start_tli, tli, slot, status = before[:5]
    assert "postgres_wal_receiver" not in log and status == "streaming"
    labels = {"upstream_host": "127.0.0.1", "slot_name": slot, "status": status}
    assert value(m, "pg_stat_wal_receiver_receive_start_lsn", **labels) == float(start)
    assert value(m, "pg_stat_wal_receiver_receive_start_tli", **labels) == start_tli
    assert value(m, "pg_stat_wal_receiver_received_tli", **labels) == tli
    for name, i in (("flushed_lsn", 5), ("latest_end_lsn", 6), ("last_msg_receipt_time", 7)):
        got = value(m, f"pg_stat_wal_receiver_{name}", **labels)
        assert got is not None and float(before[i]) <= got <= float(after[i]), name
    ours = {"upstream_host": "127.0.0.1", "slot_name": slot}
    assert value(m, "dbgauge_postgres_wal_receiver_start_lsn_bytes", **ours) == float(start)
    assert value(m, "dbgauge_postgres_wal_receiver_flushed_lsn_bytes", **ours) \
        == value(m, "pg_stat_wal_receiver_flushed_lsn", **labels)
    assert promtool_findings(text) == ""


def test_a_primary_has_no_wal_receiver(sandbox: Sandbox, tmp_path: Path) -> None:
    m, _, _ = collect(sandbox, tmp_path)
    assert value(m, "dbgauge_collector_success", collector="postgres_wal_receiver") == 1
    assert not [n for n, _ in m if "wal_receiver_" in n and "collector" not in n]


def test_an_index_scanned(sandbox: Sandbox, tmp_path: Path) -> None:
    table, index = "dbgauge_test_indexed", "dbgauge_test_indexed_pkey"
    stats = ("SELECT idx_blks_read, idx_blks_hit FROM pg_statio_user_indexes "
             "WHERE indexrelname = %s")
    with closing(pg_admin(sandbox, "pg-primary", dbname="app")) as admin:
        admin.execute(f"DROP TABLE IF EXISTS {table}")
        admin.execute(f"CREATE TABLE {table} (id int PRIMARY KEY) "
                      "WITH (autovacuum_enabled = false)")  # nothing else reads the index
        try:
            admin.execute(f"INSERT INTO {table} SELECT generate_series(1, 1000)")
            admin.execute("SET enable_seqscan = off")
            admin.execute(f"SELECT id FROM {table} WHERE id = 42")  # noqa: S608
            if int(catalog(admin, "SHOW server_version_num")) >= 150000:
                admin.execute("SELECT pg_stat_force_next_flush()")  # else sent at commit
            wait_for(lambda: (catalog(admin, "SELECT idx_scan FROM pg_stat_user_indexes "
                                             "WHERE indexrelname = %s", index) or 0) >= 1,
                     timeout=30, what="the index scan to reach the statistics")
            read, hit = admin.execute(stats, (index,)).fetchone()  # type: ignore[misc]
            m, text, log = collect(sandbox, tmp_path)
        finally:
            admin.execute(f"DROP TABLE IF EXISTS {table}")
    assert "postgres_indexes" not in log
    peer = {"schemaname": "public", "relname": table, "indexrelname": index}
    assert value(m, "pg_statio_user_indexes_idx_blks_read_total", **peer) == read
    assert value(m, "pg_statio_user_indexes_idx_blks_hit_total", **peer) == hit > 0
    ours = {"database": "app", "schema": "public", "table": table, "index": index}
    assert value(m, "dbgauge_postgres_index_blocks_hit_total", **ours) == hit
    assert value(m, "dbgauge_postgres_index_scans_total", **ours) == 1
    assert value(m, "dbgauge_postgres_indexes_not_exported", database="app") == 0
    assert promtool_findings(text) == ""
