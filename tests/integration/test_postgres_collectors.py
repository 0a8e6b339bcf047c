"""postgres_replication, postgres_locks and postgres_database against the real sandbox.

Every collector runs as the monitoring role `dbgauge`, which has pg_monitor and nothing
else: the least privilege the README documents. Server state is changed with the
sandbox's admin account (replay pause/resume, writes, locks) and always restored.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from typing import Any

import pytest

from dbgauge.app import load_config
from dbgauge.toolkit.db import Connection, connect
from dbgauge.toolkit.sql import load_sql
from tests.helpers import DBGAUGE, REPO, Metrics, val, wait_for
from tests.helpers.daemon import collect_direct
from tests.helpers.servers import Sandbox, lock_wait, pg_admin

pytestmark = pytest.mark.integration











def promtool_clean(sandbox: Sandbox, target: str) -> None:
    out = subprocess.run([*DBGAUGE, "collect", "--config", str(sandbox.config), target],
                         capture_output=True, text=True, timeout=60, cwd=REPO, check=True).stdout
    check = subprocess.run(["promtool", "check", "metrics"], input=out, capture_output=True,
                           text=True, timeout=30, check=False)
    assert check.returncode == 0 and not (check.stdout + check.stderr).strip(), \
        check.stdout + check.stderr


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
    return (val(s, "dbgauge_postgres_replication_receive_replay_lag_bytes") == 0
            and val(s, "dbgauge_postgres_replication_lag_seconds") == 0
            and val(p, "dbgauge_postgres_replication_standby_replay_lag_bytes",
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
    assert val(p, r + "configured") == 1 and val(p, r + "in_recovery") == 0
    assert val(s, r + "configured") == 1 and val(s, r + "in_recovery") == 1
    assert val(p, r + "standbys") == 2  # pg-standby, and pg-subscriber's logical walsender
    assert val(p, r + "standby_state", application_name="pg-standby", state="streaming") == 1
    assert val(p, r + "slot_active", slot_name="pg_standby", slot_type="physical") == 1
    assert val(p, r + "slot_wal_status", slot_name="pg_standby", slot_type="physical",
               wal_status="reserved") == 1
    assert val(s, r + "wal_receiver_status", status="streaming") == 1
    assert (val(s, r + "wal_receiver_last_message_age_seconds") or 0) < 60


def test_paused_replay_shows_lag_on_both_sides_then_returns_to_zero(sandbox: Sandbox) -> None:
    r = "dbgauge_postgres_replication_"
    wait_for(lambda: _caught_up(sandbox), what="the standby to be caught up first")
    with pg_admin(sandbox, "pg-primary") as primary:
        primary.execute("DROP TABLE IF EXISTS dbgauge_test_lag")
        primary.execute("CREATE TABLE dbgauge_test_lag (id int, pad text)")
        try:
            with replay_paused(sandbox):
                wait_for(lambda: val(collect_direct(sandbox, "pg-standby", "postgres_replication"),
                                     r + "replay_paused") == 1, what="replay to pause")
                primary.execute("INSERT INTO dbgauge_test_lag "
                                "SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g")

                def standby_behind() -> Metrics | None:
                    s = collect_direct(sandbox, "pg-standby", "postgres_replication")
                    behind = (val(s, r + "receive_replay_lag_bytes") or 0) > 0
                    return s if behind else None

                s = wait_for(standby_behind, what="receive-vs-replay bytes to rise")
                assert (val(s, r + "lag_seconds") or 0) > 0
                def primary_sees_lag() -> bool:
                    m = collect_direct(sandbox, "pg-primary", "postgres_replication")
                    lag = val(m, r + "standby_replay_lag_bytes", application_name="pg-standby")
                    return (lag or 0) > 0

                wait_for(primary_sees_lag, what="the primary's replay lag bytes to rise")
                # the replay lag is what the paused standby has received but not applied
                p = collect_direct(sandbox, "pg-primary", "postgres_replication")
                assert val(p, r + "standby_sent_lag_bytes", application_name="pg-standby") == 0
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
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        s = collect_direct(sandbox, "pg-standby", "postgres_replication")
        samples.append((time.time(), val(s, r + "lag_seconds") or 0.0,
                        val(s, r + "receive_replay_lag_bytes"),
                        val(s, r + "last_replay_timestamp_seconds")))
        time.sleep(1)
    assert len(samples) >= 25
    for when, lag, pending, _ in samples:
        assert lag == 0 or (pending or 0) > 0, \
            f"lag {lag} s at {when} with everything received already replayed"
    zero = sum(1 for _, lag, _, _ in samples if lag == 0)
    assert zero >= len(samples) - 1, samples
    # the naive measure (now - last replayed commit) kept growing meanwhile when no commit
    # arrived; dbgauge still exposes the raw timestamp for whoever wants it
    last = samples[-1][3]
    if last is not None and all(s[3] == last for s in samples):
        assert samples[-1][0] - last >= 29


# ----------------------------------------------------------------- locks




def test_lock_wait_one_waiter_one_blocker_then_zero(sandbox: Sandbox) -> None:
    p = "dbgauge_postgres_"
    with lock_wait(sandbox) as waiting:
        def waited_a_second() -> Metrics | None:
            m = collect_direct(sandbox, "pg-primary", "postgres_locks")
            return m if (val(m, p + "lock_oldest_wait_seconds") or 0) >= 1 else None

        m = wait_for(waited_a_second, what="a lock wait of a second")
        assert val(m, p + "lock_waiting_backends") == 1
        assert val(m, p + "lock_blocked_backends") == 1
        assert val(m, p + "lock_blocking_backends") == 1
        assert val(m, p + "lock_root_blockers") == 1
        assert (val(m, p + "lock_oldest_wait_seconds") or 0) >= 1
        assert val(m, p + "lock_waits", locktype="relation", mode="AccessShareLock") == 1
        assert [k for k in m if k[0] == p + "lock_waits"] == \
            [(p + "lock_waits", frozenset({("locktype", "relation"),
                                           ("mode", "AccessShareLock")}))]
        # the holder is idle in its transaction, the oldest transaction
        assert val(m, p + "idle_in_transaction_sessions") == 1
        assert (val(m, p + "idle_in_transaction_oldest_seconds") or 0) >= 1
        assert (val(m, p + "oldest_transaction_age_seconds") or 0) >= 1
        db = collect_direct(sandbox, "pg-primary", "postgres_database")
        assert (val(db, p + "connections", state="idle_in_transaction") or 0) >= 1
        assert (val(db, p + "connections", state="active") or 0) >= 2  # waiter + dbgauge
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
        assert val(m, p + name) == 0, name
    assert not [k for k in m if k[0] == p + "lock_waits"]


def _run(conn: Connection, sql: str) -> dict[str, Any]:
    return conn.execute_sql(sql)[0]


# ----------------------------------------------------------------- database


def test_database_counters_and_connection_limits(sandbox: Sandbox) -> None:
    p = "dbgauge_postgres_"
    before = collect_direct(sandbox, "pg-primary", "postgres_database")
    with pg_admin(sandbox, "pg-primary") as conn:
        conn.execute("SELECT 1")
        with conn.transaction(force_rollback=True):
            conn.execute("SELECT 1")
    after = collect_direct(sandbox, "pg-primary", "postgres_database")
    app = {"database": "app"}
    assert (val(after, p + "database_xact_commits_total", **app) or 0) > \
        (val(before, p + "database_xact_commits_total", **app) or 0)
    assert (val(after, p + "database_xact_rollbacks_total", **app) or 0) > \
        (val(before, p + "database_xact_rollbacks_total", **app) or 0)
    for name in ("blocks_read_total", "blocks_hit_total", "temp_bytes_total", "deadlocks_total",
                 "conflicts_total"):
        assert val(after, p + "database_" + name, **app) is not None, name
    assert val(after, p + "max_connections") == 300  # the sandbox leaves room for bench/fleet
    assert val(after, p + "superuser_reserved_connections") == 3
    states = {dict(k[1])["state"] for k in after if k[0] == p + "connections"}
    assert states == {"active", "idle", "idle_in_transaction", "idle_in_transaction_aborted",
                      "fastpath_function_call", "disabled"}
    assert (val(after, p + "connections", state="active") or 0) >= 1  # dbgauge itself
