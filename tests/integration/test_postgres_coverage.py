"""postgres_server, postgres_checkpoints (archiver included) and postgres_settings against
the real sandbox.

Collectors run as the monitoring role `dbgauge` (pg_monitor only); the admin account
makes the conditions: transaction IDs consumed, a CHECKPOINT, WAL switched, archiving
made to fail by creating pg-primary's archive_fail file (its archive_command tests for
it), and always repaired in a `finally`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dbgauge.toolkit.sandbox.postgres import ARCHIVE_DIR, ARCHIVE_FAIL_FLAG
from tests.helpers import DBGAUGE, REPO, Metrics, parse_metrics, val, wait_for
from tests.helpers.daemon import collect_direct
from tests.helpers.servers import Sandbox, pg_admin

pytestmark = pytest.mark.integration

NEW = ("postgres_server", "postgres_checkpoints", "postgres_statements", "postgres_tables",
       "postgres_sequences", "postgres_settings")
P = "dbgauge_postgres_"


def server(sandbox: Sandbox) -> Metrics:
    return collect_direct(sandbox, "pg-primary", "postgres_server")


def checkpoints(sandbox: Sandbox) -> Metrics:
    return collect_direct(sandbox, "pg-primary", "postgres_checkpoints")


def test_every_new_collector_runs_as_the_monitoring_role_on_every_member(
        sandbox: Sandbox) -> None:
    for target in ("pg-primary", "pg-standby", "pg-subscriber"):
        for name in NEW:
            assert collect_direct(sandbox, target, name), (target, name)
    out = subprocess.run([*DBGAUGE, "collect", "--config", str(sandbox.config), "pg-primary"],
                         capture_output=True, text=True, timeout=60, cwd=REPO,
                         check=True).stdout
    scraped = parse_metrics(out)
    for name in NEW:  # on by default, and successful through the daemon's own scrape path
        assert val(scraped, "dbgauge_collector_success", collector=name, sandbox="true",
                   target="pg-primary") == 1, name
    check = subprocess.run(["promtool", "check", "metrics"], input=out, capture_output=True,
                           text=True, timeout=30, check=False)
    assert check.returncode == 0 and not (check.stdout + check.stderr).strip(), \
        check.stdout + check.stderr


# ----------------------------------------------------------------- postgres_server


def test_sizes_ages_limits_and_start_time_match_the_server(sandbox: Sandbox) -> None:
    m = server(sandbox)
    with pg_admin(sandbox, "pg-primary") as admin:
        start = admin.execute(
            "SELECT EXTRACT(EPOCH FROM pg_postmaster_start_time())::float8").fetchone()[0]
        freeze = int(admin.execute("SHOW autovacuum_freeze_max_age").fetchone()[0])
        size = admin.execute("SELECT pg_database_size('app')").fetchone()[0]
    assert val(m, P + "start_time_seconds") == pytest.approx(start, abs=1e-3)
    assert val(m, P + "autovacuum_freeze_max_age") == freeze == 200_000_000
    assert val(m, P + "autovacuum_multixact_freeze_max_age") == 400_000_000
    # a size within 10% of what the admin measured a moment later (writes go on)
    assert val(m, P + "database_size_bytes", database="app") == pytest.approx(size, rel=0.1)
    # template0 refuses connections: no size, but its wraparound age is there
    assert val(m, P + "database_size_bytes", database="template0") is None
    assert val(m, P + "database_xid_age", database="template0") is not None
    assert val(m, P + "database_mxid_age", database="template0") is not None


def test_xid_age_grows_as_transaction_ids_are_consumed(sandbox: Sandbox) -> None:
    before = val(server(sandbox), P + "database_xid_age", database="app")
    assert before is not None
    with pg_admin(sandbox, "pg-primary") as admin:
        for _ in range(40):
            admin.execute("SELECT txid_current()")  # each autocommit statement takes an xid
    wait_for(lambda: (val(server(sandbox), P + "database_xid_age", database="app") or 0)
             >= before + 40, what="app's xid age to grow by the 40 transactions")


# ----------------------------------------------------------------- postgres_checkpoints


def test_checkpoint_and_wal_counters_grow(sandbox: Sandbox) -> None:
    m = checkpoints(sandbox)
    requested = val(m, P + "checkpoints_requested_total")
    wal_bytes, wal_records = val(m, P + "wal_bytes_total"), val(m, P + "wal_records_total")
    assert requested is not None and wal_bytes is not None and wal_records is not None
    for name in ("checkpoints_timed_total", "checkpoint_write_seconds_total",
                 "checkpoint_sync_seconds_total", "checkpoint_buffers_written_total",
                 "bgwriter_buffers_clean_total", "bgwriter_maxwritten_clean_total",
                 "buffers_backend_total", "buffers_backend_fsync_total",
                 "buffers_alloc_total", "wal_fpi_total", "wal_buffers_full_total"):
        assert val(m, P + name) is not None, name  # PostgreSQL 15 has every one of them
    with pg_admin(sandbox, "pg-primary") as admin:
        admin.execute("SELECT pg_logical_emit_message(false, 'dbgauge-test', repeat('x', 5000))")
        admin.execute("CHECKPOINT")

    def grown() -> bool:
        now = checkpoints(sandbox)
        return ((val(now, P + "checkpoints_requested_total") or 0) > requested
                and (val(now, P + "wal_bytes_total") or 0) >= wal_bytes + 5000
                and (val(now, P + "wal_records_total") or 0) > wal_records)

    wait_for(grown, what="requested checkpoints and WAL bytes to grow")


@contextmanager
def archiving_fails(sandbox: Sandbox) -> Iterator[None]:
    """pg-primary's archive_command fails while the flag file exists; removed afterwards,
    and a WAL switch wakes the archiver so it catches up."""
    flag = sandbox.directory / "pg-primary" / ARCHIVE_FAIL_FLAG
    flag.touch()
    try:
        yield
    finally:
        flag.unlink(missing_ok=True)


def switch_wal(sandbox: Sandbox) -> None:
    """Close the current WAL segment (after writing to it: an empty one is not switched)."""
    with pg_admin(sandbox, "pg-primary") as admin:
        admin.execute("SELECT pg_logical_emit_message(false, 'dbgauge-test', 'switch')")
        admin.execute("SELECT pg_switch_wal()")


def test_archiver_counts_archived_then_failed_wal(sandbox: Sandbox) -> None:
    m = checkpoints(sandbox)
    assert val(m, P + "archiver_enabled") == 1
    archived = val(m, P + "archiver_archived_total")
    failed = val(m, P + "archiver_failed_total")
    assert archived is not None and failed is not None
    switch_wal(sandbox)
    m = wait_for(lambda: (lambda c: c if (val(c, P + "archiver_archived_total") or 0)
                          > archived else None)(checkpoints(sandbox)),
                 what="archived_total to grow after pg_switch_wal")
    archived_age = val(m, P + "archiver_last_archived_age_seconds")
    assert archived_age is not None and archived_age < 60  # 0.0 (just archived) counts
    archive = Path(sandbox.directory) / "pg-primary" / ARCHIVE_DIR
    assert any(archive.iterdir())  # the copies landed where the sandbox keeps them
    try:
        with archiving_fails(sandbox):
            switch_wal(sandbox)
            m = wait_for(lambda: (lambda c: c if (val(c, P + "archiver_failed_total") or 0)
                                  > failed else None)(checkpoints(sandbox)),
                         what="failed_total to grow while archive_command fails")
            failed_age = val(m, P + "archiver_last_failed_age_seconds")
            assert failed_age is not None and failed_age < 60
        now_archived = val(checkpoints(sandbox), P + "archiver_archived_total") or 0
    finally:
        switch_wal(sandbox)  # wakes the archiver, which retries the failed segment
    wait_for(lambda: (val(checkpoints(sandbox), P + "archiver_archived_total") or 0)
             > now_archived, timeout=90, what="archiving to recover once the flag is gone")


def test_archiver_is_off_and_ages_absent_where_archiving_is_off(sandbox: Sandbox) -> None:
    m = collect_direct(sandbox, "pg-subscriber", "postgres_checkpoints")
    assert val(m, P + "archiver_enabled") == 0
    assert val(m, P + "archiver_archived_total") == 0
    assert val(m, P + "archiver_last_archived_age_seconds") is None
    assert val(m, P + "archiver_last_failed_age_seconds") is None


# ----------------------------------------------------------------- postgres_settings


def test_settings_in_base_units(sandbox: Sandbox) -> None:
    m = collect_direct(sandbox, "pg-primary", "postgres_settings")
    s = P + "settings_"
    assert val(m, s + "shared_buffers_bytes") == 32 * 1024 * 1024  # sandbox: 32MB
    assert val(m, s + "max_connections") == 300  # sandbox: room for bench/fleet
    assert val(m, s + "wal_segment_size_bytes") == 16 * 1024 * 1024
    assert val(m, s + "work_mem_bytes") == 4 * 1024 * 1024  # default 4MB, unit kB
    assert val(m, s + "checkpoint_timeout_seconds") == 300  # default 5min, unit s
    assert val(m, s + "autovacuum_naptime_seconds") == 60
    assert val(m, s + "deadlock_timeout_seconds") == 1  # default 1s, unit ms
    assert val(m, s + "max_wal_size_bytes") == 1024 ** 3  # default 1GB, unit MB
    assert val(m, s + "track_io_timing") == 1 and val(m, s + "hot_standby_feedback") == 0
    assert val(m, s + "log_min_duration_statement_seconds") == -1  # disabled stays -1
    assert val(m, s + "checkpoint_completion_target") == pytest.approx(0.9)
    # dbgauge's own session timeouts are not the server's settings
    assert not any("statement_timeout" in name for name, _ in m)
    assert all(name.startswith(s) for name, _ in m) and len(m) > 50
