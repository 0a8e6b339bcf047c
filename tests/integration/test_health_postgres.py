"""The PostgreSQL checks people run daily (check_postgres' set), each against the real
sandbox with the condition it looks for created by the test: transaction IDs consumed,
tables vacuumed then left to age, a sequence burnt with setval, archive_command pointed
at `false`, a pg_sleep running, a transaction held open, a subscription disabled. Every
test restores what it changed in a `finally` block."""

from __future__ import annotations

from contextlib import closing
from typing import Any

import psycopg
import pytest

from dbgauge.toolkit.sandbox.model import PUBLICATION, SUBSCRIPTION
from tests.helpers import value, wait_for
from tests.helpers.daemon import Outcome, cfg, check, collect_direct
from tests.helpers.servers import Sandbox, pg_admin, sleeping

pytestmark = pytest.mark.integration

PRIMARY = ("--target", "pg-primary")


def perf(got: Outcome, label: str) -> float:
    doc: Any = got.json()
    return float(doc["perfdata"][label]["value"])


def when(name: str, code: int, *args: str, what: str = "", timeout: float = 30) -> Outcome:
    """Poll `dbgauge check NAME ARGS` until it exits `code`."""
    return wait_for(lambda: (lambda got: got if got.code == code else None)(check(name, *args)),
                    timeout=timeout, what=what or f"check {name} to exit {code}")


def test_txn_wraparound_per_database_and_against_freeze_max_age(sandbox: Sandbox) -> None:
    target = cfg(sandbox, *PRIMARY, "--format", "json")
    got = check("txn-wraparound", *target)
    assert got.code == 0, got.out
    before = perf(got, "pg-primary:xid_wraparound_percent")
    doc: Any = got.json()
    databases = {label.split(":")[1] for label in doc["perfdata"] if label.count(":") == 2}
    assert {"app", "postgres", "template0", "template1"} <= databases  # every database
    with closing(pg_admin(sandbox, "pg-primary")) as conn:  # consume 3000 transaction IDs
        for _ in range(3000):
            conn.execute("SELECT txid_current()")
    got = check("txn-wraparound", *target)
    after = perf(got, "pg-primary:xid_wraparound_percent")
    assert after - before >= 100 * 3000 / 2 ** 31 * 0.99, (before, after)
    freeze = perf(got, "pg-primary:xid_freeze_max_age_percent")  # default 200 million
    assert freeze == pytest.approx(after * 2 ** 31 / 200_000_000, rel=0.01)
    level = f"{after / 2:.7f}%"  # half the current percentage: crossed
    got = check("txn-wraparound", *cfg(sandbox, *PRIMARY, "-w", level, "-c", "50%"))
    assert got.code == 1 and "WARNING pg-primary [xid-wraparound] database " in got.out
    assert "of the wraparound limit 2^31" in got.first and "autovacuum_freeze_max_age" in got.first
    got = check("txn-wraparound", *cfg(sandbox, *PRIMARY, "-c", level))
    assert got.code == 2, got.out


def test_last_vacuum_and_analyze_age(sandbox: Sandbox) -> None:
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS public.hc_maintenance (i int)")
        conn.execute("INSERT INTO public.hc_maintenance SELECT generate_series(1, 100)")
        try:
            conn.execute("VACUUM ANALYZE")  # every table of the database: all ages restart
            for name, metric, kind in (("last-vacuum", "vacuum_age_seconds", "vacuum-age"),
                                       ("last-analyze", "analyze_age_seconds", "analyze-age")):
                got = when(name, 0, *cfg(sandbox, *PRIMARY, "--format", "json"))
                assert perf(got, f"pg-primary:{metric}") < 60
                got = when(name, 1, *cfg(sandbox, *PRIMARY, "-w", "1"),
                           what=f"the oldest {name} to pass 1 s")
                assert f"WARNING pg-primary [{kind}] " in got.out and " ago" in got.first
                # the age went past -w 1 just now: wait for it to pass -c 1.5 too (asking at
                # once found it between the two, a WARNING, now and then)
                got = when(name, 2, *cfg(sandbox, *PRIMARY, "-w", "1", "-c", "1.5"),
                           what=f"the oldest {name} to pass 1.5 s")
                assert f"CRITICAL pg-primary [{kind}] " in got.out, got.out
        finally:
            conn.execute("DROP TABLE IF EXISTS public.hc_maintenance")


def test_sequence_exhaustion(sandbox: Sandbox) -> None:
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        conn.execute("CREATE SEQUENCE IF NOT EXISTS public.hc_seq MAXVALUE 100")
        try:
            conn.execute("SELECT setval('public.hc_seq', 97)")
            got = check("sequence", *cfg(sandbox, *PRIMARY))  # not readable by dbgauge yet:
            assert got.code == 3, got.out  # 97 % used, so not OK (it said OK before)
            assert "UNKNOWN pg-primary [insufficient-privilege] 1 sequence(s) not readable by " \
                "this role, not judged: GRANT SELECT ON ALL SEQUENCES IN SCHEMA" in got.out
            conn.execute("GRANT SELECT ON SEQUENCE public.hc_seq TO dbgauge")
            got = check("sequence", *cfg(sandbox, *PRIMARY))
            assert got.code == 2, got.out  # (97 - 1) / (100 - 1) = 97.0 % > 95
            assert "CRITICAL pg-primary [sequence-exhaustion] sequence public.hc_seq 97.0% used" \
                in got.out
            conn.execute("SELECT setval('public.hc_seq', 90)")  # 89.9 %: above 85
            got = check("sequence", *cfg(sandbox, *PRIMARY))
            assert got.code == 1 and "'pg-primary:sequence_used_percent'=89.89899%;85;95;0;100" \
                in got.first, got.out
            assert check("sequence", *cfg(sandbox, *PRIMARY, "-w", "90")).code == 0
        finally:
            conn.execute("DROP SEQUENCE IF EXISTS public.hc_seq")


def test_archiver_failing_archive_command_then_recovering(sandbox: Sandbox) -> None:
    target = cfg(sandbox, *PRIMARY)
    assert check("archiver", *target).code == 0
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        conn.execute("ALTER SYSTEM SET archive_command = 'false'")
        conn.execute("SELECT pg_reload_conf()")
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS public.hc_wal (i int)")

            def failing() -> Outcome | None:
                """A segment switched until the archiver fails on one: the reload reaches
                the archiver when it gets to it, and a segment switched before that is
                archived with the old command (seen under load)."""
                conn.execute("INSERT INTO public.hc_wal VALUES (1)")
                conn.execute("SELECT pg_switch_wal()")
                got = check("archiver", *target)
                return got if got.code == 2 else None

            got = wait_for(failing, timeout=60, interval=1,
                           what="archive_command 'false' to fail")
            assert "CRITICAL pg-primary [archive-failing] archive_command is failing" in got.out
            doc = check("archiver", *target, "--format", "json")
            assert perf(doc, "pg-primary:archive_ready_files") >= 1
            assert perf(doc, "pg-primary:archive_failed_total") >= 1
            got = check("archiver", *target, "-w", "0", "-c", "1000")
            assert "WARNING pg-primary [archive-ready] " in got.out  # the backlog, too
        finally:
            conn.execute("ALTER SYSTEM RESET archive_command")
            conn.execute("SELECT pg_reload_conf()")
            conn.execute("DROP TABLE IF EXISTS public.hc_wal")
    when("archiver", 0, *target, timeout=90, what="the archiver to catch up")


def test_longest_running_query(sandbox: Sandbox) -> None:
    target = cfg(sandbox, *PRIMARY)
    with sleeping(sandbox) as pid:
        got = when("query-time", 1, *target, "-w", "1", what="pg_sleep to run 1 s")
        assert f"(pid {pid}, user " in got.first and "WARNING pg-primary [long-query]" in got.out
        got = when("query-time", 2, *target, "-w", "1", "-c", "2")
        assert "'pg-primary:query_seconds'=" in got.first and ";1;2 " in got.first
    when("query-time", 0, *target, "-w", "1", what="the cancelled sleep to be gone")


def test_idle_in_transaction_and_transaction_time(sandbox: Sandbox) -> None:
    target = cfg(sandbox, *PRIMARY)
    with closing(psycopg.connect(sandbox.admin_dsn("pg-primary"))) as holder:
        holder.execute("SELECT 1")  # opens a transaction and leaves it idle
        try:
            got = when("txn-idle", 1, *target, "-w", "1", what="the idle transaction to age")
            assert "1 session(s) idle in transaction, the oldest for " in got.first
            assert "WARNING pg-primary [idle-in-transaction]" in got.out
            got = when("txn-time", 2, *target, "-w", "0.5", "-c", "1")
            assert "CRITICAL pg-primary [long-transaction] oldest open transaction " in got.out
        finally:
            holder.rollback()
    assert check("txn-idle", *target, "-w", "1").code == 0


def test_a_namesake_subscription_in_another_database_is_not_counted(
        sandbox: Sandbox) -> None:
    """A subscription of the same name in another database of the subscriber (made and
    dropped without connecting: disabled, no slot, no worker) is neither counted nor taken
    for the subscription of the database dbgauge reads. On PostgreSQL 13, where
    subscriptions are matched by name, its pg_stat_subscription row doubled every series."""
    with closing(pg_admin(sandbox, "pg-subscriber", dbname="postgres")) as conn:
        drop(conn)
        conn.execute(f"CREATE SUBSCRIPTION {SUBSCRIPTION} CONNECTION "
                     f"'host=127.0.0.1 port=1 dbname=nowhere' PUBLICATION {PUBLICATION} "
                     "WITH (connect = false, slot_name = NONE)")
        try:
            got = check("replication", *cfg(sandbox, "--target", "pg-subscriber"))
            assert got.code == 0, got.out
            assert "subscriber, 1 of 1 subscription(s) streaming" in got.first, got.first
            r = "dbgauge_postgres_replication_"
            m = collect_direct(sandbox, "pg-subscriber", "postgres_replication")  # once each
            assert value(m, r + "subscriptions") == 1
            assert value(m, r + "subscription_worker_running", subscription=SUBSCRIPTION) == 1
        finally:
            drop(conn)


def drop(conn: psycopg.Connection[Any]) -> None:
    """Drop the namesake (a run cut short may have left it) without reaching a publisher."""
    if conn.execute("SELECT 1 FROM pg_subscription s JOIN pg_database d ON d.oid = s.subdbid "
                    "WHERE d.datname = current_database() AND s.subname = %s",
                    (SUBSCRIPTION,)).fetchone():
        conn.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} DISABLE")
        conn.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} SET (slot_name = NONE)")
        conn.execute(f"DROP SUBSCRIPTION {SUBSCRIPTION}")


def test_replication_on_a_logical_subscriber(sandbox: Sandbox) -> None:
    target = cfg(sandbox, "--target", "pg-subscriber")
    got = check("replication", *target)
    assert got.code == 0, got.out
    assert got.first.startswith("REPLICATION OK - pg-subscriber: subscriber, 1 of 1 "
                                "subscription(s) streaming (lag "), got.first
    assert f"'pg-subscriber:{SUBSCRIPTION}:subscription_lag_bytes'=" in got.first
    r = "dbgauge_postgres_replication_"
    m = collect_direct(sandbox, "pg-subscriber", "postgres_replication")
    assert value(m, r + "subscriptions") == 1 and value(m, r + "configured") == 1
    assert value(m, r + "subscription_enabled", subscription=SUBSCRIPTION) == 1
    assert value(m, r + "subscription_worker_running", subscription=SUBSCRIPTION) == 1
    assert (value(m, r + "subscription_lag_seconds", subscription=SUBSCRIPTION) or 0) < 60
    assert value(m, r + "subscription_lag_bytes", subscription=SUBSCRIPTION) is not None
    with closing(pg_admin(sandbox, "pg-subscriber", dbname="drift")) as conn:
        conn.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} DISABLE")
        try:
            got = when("replication", 2, *target, what="the disabled subscription")
            assert f"CRITICAL pg-subscriber [subscription-disabled] subscription " \
                   f"{SUBSCRIPTION} is disabled" in got.out
            assert f"fix (not run by dbgauge): ALTER SUBSCRIPTION {SUBSCRIPTION} ENABLE" in got.out
            m = wait_for(lambda: (lambda s: s if value(
                s, r + "subscription_worker_running", subscription=SUBSCRIPTION) == 0
                else None)(collect_direct(sandbox, "pg-subscriber", "postgres_replication")))
            assert value(m, r + "subscription_enabled", subscription=SUBSCRIPTION) == 0
            assert value(m, r + "subscription_lag_seconds", subscription=SUBSCRIPTION) is None
        finally:
            conn.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} ENABLE")
    when("replication", 0, *target, what="the subscription to stream again")
