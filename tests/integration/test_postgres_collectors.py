"""postgres_replication, postgres_locks, postgres_database, postgres_server,
postgres_checkpoints (archiver included) and postgres_settings against the real sandbox.

Every collector runs as the monitoring role `dbgauge`, which has pg_monitor and nothing
else: the least privilege the README documents. Server state is changed with the
sandbox's admin account (replay pause/resume, writes, locks, transaction IDs consumed, a
CHECKPOINT, WAL switched, archiving made to fail by creating pg-primary's archive_fail
file, which its archive_command tests for) and always restored.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from dbgauge.app import load_config
from dbgauge.toolkit.db import Connection, connect
from dbgauge.toolkit.sandbox.model import SUBSCRIPTION
from dbgauge.toolkit.sandbox.postgres import ARCHIVE_DIR, ARCHIVE_FAIL_FLAG
from dbgauge.toolkit.sql import load_sql
from tests.helpers import DBGAUGE, REPO, Metrics, parse_metrics, value, wait_for
from tests.helpers.daemon import collect_direct
from tests.helpers.majors import on_major
from tests.helpers.pgstats import flush
from tests.helpers.servers import Sandbox, lock_wait, pg_admin

pytestmark = pytest.mark.integration











def promtool_clean(sandbox: Sandbox, target: str) -> str:
    """`dbgauge collect` of `target`, which promtool finds nothing to say about."""
    out = subprocess.run([*DBGAUGE, "collect", "--config", str(sandbox.config), target],
                         capture_output=True, text=True, timeout=60, cwd=REPO, check=True).stdout
    check = subprocess.run(["promtool", "check", "metrics"], input=out, capture_output=True,
                           text=True, timeout=30, check=False)
    assert check.returncode == 0 and not (check.stdout + check.stderr).strip(), \
        check.stdout + check.stderr
    return out


# ----------------------------------------------------------------- least privilege


def test_monitoring_role_is_least_privilege(sandbox: Sandbox) -> None:
    with closing(connect(load_config(sandbox.config).target("pg-primary"))) as conn:
        row = conn.execute_sql(
            "SELECT r.rolsuper, r.rolreplication, r.rolcreaterole, "
            "pg_has_role(current_user, 'pg_monitor', 'MEMBER') AS monitor "
            "FROM pg_roles r WHERE r.rolname = current_user")[0]
    assert row == {"rolsuper": False, "rolreplication": False, "rolcreaterole": False,
                   "monitor": True}
    for target in ("pg-primary", "pg-standby"):
        for name in ("postgres_replication", "postgres_locks", "postgres_database"):
            assert collect_direct(sandbox, target, name), (target, name)


# ----------------------------------------------------------------- replication


def _caught_up(sandbox: Sandbox) -> bool:
    s = collect_direct(sandbox, "pg-standby", "postgres_replication")
    p = collect_direct(sandbox, "pg-primary", "postgres_replication")
    return (value(s, "dbgauge_postgres_replication_receive_replay_lag_bytes") == 0
            and value(s, "dbgauge_postgres_replication_lag_seconds") == 0
            and value(p, "dbgauge_postgres_replication_standby_replay_lag_bytes",
                      application_name="pg-standby") == 0)


@contextmanager
def replay_paused(sandbox: Sandbox) -> Iterator[None]:
    with pg_admin(sandbox, "pg-standby") as standby:
        standby.execute("SELECT pg_wal_replay_pause()")
        try:
            yield
        finally:
            standby.execute("SELECT pg_wal_replay_resume()")


def test_both_sides_report_their_role(sandbox: Sandbox) -> None:
    p = collect_direct(sandbox, "pg-primary", "postgres_replication")
    s = collect_direct(sandbox, "pg-standby", "postgres_replication")
    r = "dbgauge_postgres_replication_"
    assert value(p, r + "configured") == 1 and value(p, r + "in_recovery") == 0
    assert value(s, r + "configured") == 1 and value(s, r + "in_recovery") == 1
    assert value(p, r + "standbys") == 1  # pg-standby; pg-subscriber's walsender is logical
    assert value(p, r + "logical_walsenders") == 1
    assert value(p, r + "standby_state", application_name="pg-standby", state="streaming") == 1
    assert value(p, r + "logical_walsender_state", application_name=SUBSCRIPTION,
                 state="streaming") == 1
    assert value(p, r + "standby_state", application_name=SUBSCRIPTION,
                 state="streaming") is None
    assert value(p, r + "slot_active", slot_name="pg_standby", slot_type="physical") == 1
    assert value(p, r + "slot_wal_status", slot_name="pg_standby", slot_type="physical",
                 wal_status="reserved") == 1
    assert value(s, r + "wal_receiver_status", status="streaming") == 1
    assert (value(s, r + "wal_receiver_last_message_age_seconds") or 0) < 60


def test_paused_replay_shows_lag_on_both_sides_then_returns_to_zero(sandbox: Sandbox) -> None:
    r = "dbgauge_postgres_replication_"
    wait_for(lambda: _caught_up(sandbox), what="the standby to be caught up first")
    with pg_admin(sandbox, "pg-primary") as primary:
        primary.execute("DROP TABLE IF EXISTS dbgauge_test_lag")
        primary.execute("CREATE TABLE dbgauge_test_lag (id int, pad text)")
        # Replayed before the pause: on a standby that has replayed no transaction since it
        # started (a fresh sandbox), pg_last_xact_replay_timestamp() is NULL and lag_seconds
        # reads 0 although bytes wait (GREATEST ignores the NULL; see the notes of issue 26).
        with pg_admin(sandbox, "pg-standby") as standby:
            wait_for(lambda: standby.execute(
                "SELECT to_regclass('dbgauge_test_lag') IS NOT NULL "
                "AND pg_last_xact_replay_timestamp() IS NOT NULL").fetchone() == (True,),
                what="the CREATE TABLE to be replayed")
        try:
            with replay_paused(sandbox):
                wait_for(lambda: value(collect_direct(sandbox, "pg-standby",
                                                      "postgres_replication"),
                                       r + "replay_paused") == 1, what="replay to pause")
                primary.execute("INSERT INTO dbgauge_test_lag "
                                "SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g")

                def standby_behind() -> Metrics | None:
                    s = collect_direct(sandbox, "pg-standby", "postgres_replication")
                    behind = (value(s, r + "receive_replay_lag_bytes") or 0) > 0
                    return s if behind else None

                s = wait_for(standby_behind, what="receive-vs-replay bytes to rise")
                assert (value(s, r + "lag_seconds") or 0) > 0
                def primary_sees_lag() -> bool:
                    m = collect_direct(sandbox, "pg-primary", "postgres_replication")
                    lag = value(m, r + "standby_replay_lag_bytes", application_name="pg-standby")
                    return (lag or 0) > 0

                wait_for(primary_sees_lag, what="the primary's replay lag bytes to rise")
                # the replay lag is what the paused standby has received but not applied:
                # everything was sent (a record the primary writes meanwhile -- 112 bytes
                # once on 17 -- is sent a moment later; waited for, not read once)
                wait_for(lambda: value(collect_direct(sandbox, "pg-primary",
                                                      "postgres_replication"),
                                       r + "standby_sent_lag_bytes",
                                       application_name="pg-standby") == 0,
                         what="the primary to have sent the standby everything")
                promtool_clean(sandbox, "pg-standby")
            # resumed: both sides go back to 0 (the primary hears within
            # wal_receiver_status_interval, 10 s by default)
            wait_for(lambda: _caught_up(sandbox), timeout=45,
                     what="both sides to report 0 lag after resume")
        finally:
            primary.execute("DROP TABLE IF EXISTS dbgauge_test_lag")


@pytest.mark.slow
def test_idle_caught_up_standby_keeps_zero_lag_seconds(sandbox: Sandbox) -> None:
    """postgres_exporter's lag grows on an idle primary (#385, #907); dbgauge's stays 0.

    Every sample comes from one statement, so a non-zero lag can be told apart from WAL
    that really arrived at that instant (received-but-not-replayed bytes > 0): only the
    latter may ever make it non-zero.
    """
    r = "dbgauge_postgres_replication_"
    wait_for(lambda: _caught_up(sandbox), what="the standby to be caught up first")
    samples: list[tuple[float, float, float | None, float | None]] = []

    def idle_long_enough() -> bool:
        """Sampled (10 times at least) until the last replayed commit is 8 s old: the
        naive measure (now - that commit) then says 8 s of lag on a standby with nothing
        to replay. A commit meanwhile starts the wait again."""
        s = collect_direct(sandbox, "pg-standby", "postgres_replication")
        samples.append((time.time(), value(s, r + "lag_seconds") or 0.0,
                        value(s, r + "receive_replay_lag_bytes"),
                        value(s, r + "last_replay_timestamp_seconds")))
        last = samples[-1][3]
        return len(samples) >= 10 and last is not None and samples[-1][0] - last >= 8

    wait_for(idle_long_enough, timeout=60, interval=0.25,
             what="the primary to stay idle for 8 s")
    for when, lag, pending, _ in samples:
        assert lag == 0 or (pending or 0) > 0, \
            f"lag {lag} s at {when} with everything received already replayed"
    zero = sum(1 for _, lag, _, _ in samples if lag == 0)
    assert zero >= len(samples) - 1, samples
    # the naive measure kept growing meanwhile; dbgauge still exposes the raw timestamp
    # for whoever wants it
    assert samples[-1][0] - (samples[-1][3] or 0) >= 8


# ----------------------------------------------------------------- locks




def test_lock_wait_one_waiter_one_blocker_then_zero(sandbox: Sandbox) -> None:
    p = "dbgauge_postgres_"
    with lock_wait(sandbox) as waiting:
        def waited_a_second() -> Metrics | None:
            m = collect_direct(sandbox, "pg-primary", "postgres_locks")
            return m if (value(m, p + "lock_oldest_wait_seconds") or 0) >= 1 else None

        m = wait_for(waited_a_second, what="a lock wait of a second")
        assert value(m, p + "lock_waiting_backends") == 1
        assert value(m, p + "lock_blocked_backends") == 1
        assert value(m, p + "lock_blocking_backends") == 1
        assert value(m, p + "lock_root_blockers") == 1
        assert (value(m, p + "lock_oldest_wait_seconds") or 0) >= 1
        assert value(m, p + "lock_waits", locktype="relation", mode="AccessShareLock") == 1
        assert [k for k in m if k[0] == p + "lock_waits"] == \
            [(p + "lock_waits", frozenset({("locktype", "relation"),
                                           ("mode", "AccessShareLock")}))]
        # the holder is idle in its transaction, the oldest transaction
        assert value(m, p + "idle_in_transaction_sessions") == 1
        assert (value(m, p + "idle_in_transaction_oldest_seconds") or 0) >= 1
        assert (value(m, p + "oldest_transaction_age_seconds") or 0) >= 1
        db = collect_direct(sandbox, "pg-primary", "postgres_database")
        assert (value(db, p + "connections", state="idle_in_transaction") or 0) >= 1
        assert (value(db, p + "connections", state="active") or 0) >= 2  # waiter + dbgauge
        promtool_clean(sandbox, "pg-primary")
        # PostgreSQL 13's statement (no pg_locks.waitstart) also runs and agrees
        with closing(connect(load_config(sandbox.config).target("pg-primary"))) as conn:
            pg13 = _run(conn, load_sql("postgres", "lock_summary", (13,)))
        assert pg13["waiting_backends"] == 1 and float(pg13["oldest_wait_seconds"]) >= 1
        assert waiting.is_alive()
    m = collect_direct(sandbox, "pg-primary", "postgres_locks")
    for name in ("lock_waiting_backends", "lock_blocked_backends", "lock_blocking_backends",
                 "lock_root_blockers", "lock_oldest_wait_seconds",
                 "idle_in_transaction_sessions"):
        assert value(m, p + name) == 0, name
    assert not [k for k in m if k[0] == p + "lock_waits"]


def _run(conn: Connection, sql: str) -> dict[str, Any]:
    return conn.execute_sql(sql)[0]


# ----------------------------------------------------------------- database


def test_database_counters_and_connection_limits(sandbox: Sandbox) -> None:
    p = "dbgauge_postgres_"
    app = {"database": "app"}

    def counts(m: Metrics) -> tuple[float, float]:
        return (value(m, p + "database_xact_commits_total", **app) or 0,
                value(m, p + "database_xact_rollbacks_total", **app) or 0)

    commits, rollbacks = counts(collect_direct(sandbox, "pg-primary", "postgres_database"))
    with pg_admin(sandbox, "pg-primary") as conn:
        conn.execute("SELECT 1")
        with conn.transaction(force_rollback=True):
            conn.execute("SELECT 1")
        flush(conn)

    def counted() -> Metrics | None:  # once the backend has sent its statistics
        m = collect_direct(sandbox, "pg-primary", "postgres_database")
        now_commits, now_rollbacks = counts(m)
        return m if now_commits > commits and now_rollbacks > rollbacks else None

    after = wait_for(counted, timeout=30, what="the session's commit and rollback to count")
    for name in ("blocks_read_total", "blocks_hit_total", "temp_bytes_total", "deadlocks_total",
                 "conflicts_total"):
        assert value(after, p + "database_" + name, **app) is not None, name
    assert value(after, p + "max_connections") == 300  # the sandbox leaves room for bench/fleet
    assert value(after, p + "superuser_reserved_connections") == 3
    reserved = value(after, p + "reserved_connections")  # the setting is 16+ (default 0)
    assert reserved == 0 if on_major(p + "reserved_connections", sandbox.state.pg_version) \
        else reserved is None
    states = {dict(k[1])["state"] for k in after if k[0] == p + "connections"}
    assert states == {"active", "idle", "idle_in_transaction", "idle_in_transaction_aborted",
                      "fastpath_function_call", "disabled"}
    assert (value(after, p + "connections", state="active") or 0) >= 1  # dbgauge itself


# ----------------------------------------------------------------- every member

# Collectors that read per-database or per-server state: each must work on a standby and
# a subscriber too.
EVERY_MEMBER = ("postgres_server", "postgres_checkpoints", "postgres_statements", "postgres_tables",
       "postgres_sequences", "postgres_settings")
P = "dbgauge_postgres_"


def server(sandbox: Sandbox) -> Metrics:
    return collect_direct(sandbox, "pg-primary", "postgres_server")


def checkpoints(sandbox: Sandbox) -> Metrics:
    return collect_direct(sandbox, "pg-primary", "postgres_checkpoints")


def test_collectors_run_as_the_monitoring_role_on_every_member(
        sandbox: Sandbox) -> None:
    for target in ("pg-primary", "pg-standby", "pg-subscriber"):
        for name in EVERY_MEMBER:
            assert collect_direct(sandbox, target, name), (target, name)
    scraped = parse_metrics(promtool_clean(sandbox, "pg-primary"))
    for name in EVERY_MEMBER:  # on by default, and successful through the daemon's own scrape path
        assert value(scraped, "dbgauge_collector_success", collector=name, sandbox="true",
                     target="pg-primary") == 1, name


def test_pg_stat_io_is_absent_on_15_and_not_a_failure(sandbox: Sandbox) -> None:
    """postgres_io needs pg_stat_io (PostgreSQL 16+): on the sandbox's 15 it does not run,
    so no series and no failed collector, while the others succeed (on 16+, under `make
    test-matrix`, it runs and succeeds)."""
    scraped = parse_metrics(promtool_clean(sandbox, "pg-primary"))
    has_io = on_major("dbgauge_postgres_io_reads_total", sandbox.state.pg_version)
    assert bool([name for name, _ in scraped if name.startswith("dbgauge_postgres_io_")]) \
        == has_io
    ran = {dict(labels)["collector"]: v for (name, labels), v in scraped.items()
           if name == "dbgauge_collector_success"}
    assert ("postgres_io" in ran) == has_io
    assert ran and all(v == 1 for v in ran.values()), ran
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        view = conn.execute("SELECT to_regclass('pg_catalog.pg_stat_io')").fetchone()
    assert (view != (None,)) == has_io


# ----------------------------------------------------------------- postgres_server


def test_sizes_ages_limits_and_start_time_match_the_server(sandbox: Sandbox) -> None:
    m = server(sandbox)
    with pg_admin(sandbox, "pg-primary") as admin:
        start = admin.execute(
            "SELECT EXTRACT(EPOCH FROM pg_postmaster_start_time())::float8").fetchone()[0]
        freeze = int(admin.execute("SHOW autovacuum_freeze_max_age").fetchone()[0])
        size = admin.execute("SELECT pg_database_size('app')").fetchone()[0]
    assert value(m, P + "start_time_seconds") == pytest.approx(start, abs=1e-3)
    assert value(m, P + "autovacuum_freeze_max_age") == freeze == 200_000_000
    assert value(m, P + "autovacuum_multixact_freeze_max_age") == 400_000_000
    # a size within 10% of what the admin measured a moment later (writes go on)
    assert value(m, P + "database_size_bytes", database="app") == pytest.approx(size, rel=0.1)
    # template0 refuses connections, but measuring it needs none (CONNECT is PUBLIC's)
    assert (value(m, P + "database_size_bytes", database="template0") or 0) > 0
    assert value(m, P + "database_xid_age", database="template0") is not None
    assert value(m, P + "database_mxid_age", database="template0") is not None


def test_xid_age_grows_as_transaction_ids_are_consumed(sandbox: Sandbox) -> None:
    before = value(server(sandbox), P + "database_xid_age", database="app")
    assert before is not None
    with pg_admin(sandbox, "pg-primary") as admin:
        for _ in range(40):
            admin.execute("SELECT txid_current()")  # each autocommit statement takes an xid
    wait_for(lambda: (value(server(sandbox), P + "database_xid_age", database="app") or 0)
             >= before + 40, what="app's xid age to grow by the 40 transactions")


# ----------------------------------------------------------------- postgres_checkpoints


def test_checkpoint_and_wal_counters_grow(sandbox: Sandbox) -> None:
    m = checkpoints(sandbox)
    major = sandbox.state.pg_version
    requested = value(m, P + "checkpoints_requested_total")
    wal_bytes, wal_records = value(m, P + "wal_bytes_total"), value(m, P + "wal_records_total")
    assert requested is not None
    assert (wal_bytes is not None and wal_records is not None) == on_major(
        P + "wal_bytes_total", major)  # pg_stat_wal: 14+
    for name in ("checkpoints_timed_total", "checkpoint_write_seconds_total",
                 "checkpoint_sync_seconds_total", "checkpoint_buffers_written_total",
                 "bgwriter_buffers_clean_total", "bgwriter_maxwritten_clean_total",
                 "buffers_backend_total", "buffers_backend_fsync_total",
                 "buffers_alloc_total", "wal_fpi_total", "wal_buffers_full_total"):
        # PostgreSQL 15 has every one of them; tests/helpers/majors.py says where not
        assert (value(m, P + name) is not None) == on_major(P + name, major), name
    with pg_admin(sandbox, "pg-primary") as admin:
        admin.execute("SELECT pg_logical_emit_message(false, 'dbgauge-test', repeat('x', 5000))")
        admin.execute("CHECKPOINT")

    def grown() -> bool:
        now = checkpoints(sandbox)
        if (value(now, P + "checkpoints_requested_total") or 0) <= requested:
            return False
        return wal_bytes is None or wal_records is None or (
            (value(now, P + "wal_bytes_total") or 0) >= wal_bytes + 5000
            and (value(now, P + "wal_records_total") or 0) > wal_records)

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
    assert value(m, P + "archiver_enabled") == 1
    archived = value(m, P + "archiver_archived_total")
    failed = value(m, P + "archiver_failed_total")
    assert archived is not None and failed is not None
    switch_wal(sandbox)
    m = wait_for(lambda: (lambda c: c if (value(c, P + "archiver_archived_total") or 0)
                          > archived else None)(checkpoints(sandbox)),
                 what="archived_total to grow after pg_switch_wal")
    archived_age = value(m, P + "archiver_last_archived_age_seconds")
    assert archived_age is not None and archived_age < 60  # 0.0 (just archived) counts
    archive = Path(sandbox.directory) / "pg-primary" / ARCHIVE_DIR
    assert any(archive.iterdir())  # the copies landed where the sandbox keeps them
    try:
        with archiving_fails(sandbox):
            switch_wal(sandbox)
            m = wait_for(lambda: (lambda c: c if (value(c, P + "archiver_failed_total") or 0)
                                  > failed else None)(checkpoints(sandbox)),
                         what="failed_total to grow while archive_command fails")
            failed_age = value(m, P + "archiver_last_failed_age_seconds")
            assert failed_age is not None and failed_age < 60
        now_archived = value(checkpoints(sandbox), P + "archiver_archived_total") or 0
    finally:
        switch_wal(sandbox)  # wakes the archiver, which retries the failed segment
    wait_for(lambda: (value(checkpoints(sandbox), P + "archiver_archived_total") or 0)
             > now_archived, timeout=90, what="archiving to recover once the flag is gone")


def test_archiver_is_off_and_ages_absent_where_archiving_is_off(sandbox: Sandbox) -> None:
    m = collect_direct(sandbox, "pg-subscriber", "postgres_checkpoints")
    assert value(m, P + "archiver_enabled") == 0
    assert value(m, P + "archiver_archived_total") == 0
    assert value(m, P + "archiver_last_archived_age_seconds") is None
    assert value(m, P + "archiver_last_failed_age_seconds") is None


# ----------------------------------------------------------------- postgres_settings


def test_settings_in_base_units(sandbox: Sandbox) -> None:
    m = collect_direct(sandbox, "pg-primary", "postgres_settings")
    s = P + "settings_"
    assert value(m, s + "shared_buffers_bytes") == 32 * 1024 * 1024  # sandbox: 32MB
    assert value(m, s + "max_connections") == 300  # sandbox: room for bench/fleet
    assert value(m, s + "wal_segment_size_bytes") == 16 * 1024 * 1024
    assert value(m, s + "work_mem_bytes") == 4 * 1024 * 1024  # default 4MB, unit kB
    assert value(m, s + "checkpoint_timeout_seconds") == 300  # default 5min, unit s
    assert value(m, s + "autovacuum_naptime_seconds") == 60
    assert value(m, s + "deadlock_timeout_seconds") == 1  # default 1s, unit ms
    assert value(m, s + "max_wal_size_bytes") == 1024 ** 3  # default 1GB, unit MB
    assert value(m, s + "track_io_timing") == 1 and value(m, s + "hot_standby_feedback") == 0
    assert value(m, s + "log_min_duration_statement_seconds") == -1  # disabled stays -1
    default = 0.9 if sandbox.state.pg_version >= 14 else 0.5  # 14 raised the default
    assert value(m, s + "checkpoint_completion_target") == pytest.approx(default)
    # dbgauge's own session timeouts are not the server's settings
    assert not any("statement_timeout" in name for name, _ in m)
    assert all(name.startswith(s) for name, _ in m) and len(m) > 50
