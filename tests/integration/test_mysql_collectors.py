"""The MySQL-family collectors against the real MariaDB sandbox, scraping as the
least-privilege `dbgauge` monitoring user (PROCESS, REPLICATION CLIENT, SLAVE MONITOR,
SELECT on *.*; see docs/mysql.md). The admin account only creates load, locks and users.
Every test restores what it changes (locks released, threads joined, instruments reset).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pymysql  # type: ignore[import-untyped,unused-ignore]
import pymysql.cursors  # type: ignore[import-untyped,unused-ignore]
import pytest

from dbgauge.collectors.mysql_innodb import parse_innodb_status
from dbgauge.toolkit.db import connect
from tests.helpers import value, wait_for
from tests.helpers.daemon import Daemon, config_file, scraper, target_config, target_entry
from tests.helpers.servers import Sandbox, admin, documented_grants, replica_caught_up, run

pytestmark = pytest.mark.integration

T = TypeVar("T")
Metrics = dict[tuple[str, frozenset[tuple[str, str]]], float]
MYSQL_COLLECTORS = ("mysql_innodb", "mysql_replication", "mysql_heartbeat", "mysql_lock_waits")
# The documented-grants test's own heartbeat table: the session daemon (tests/conftest.py),
# when it runs, writes the sandbox's default one and would create it first.
DOCS_TABLE = "dbgauge.heartbeat_documented"


# --------------------------------------------------------------------------- helpers


# --------------------------------------------------------------------------- innodb

def test_innodb_counters_are_monotonic_under_a_write_load(sandbox: Sandbox) -> None:
    run(sandbox, "mariadb-primary",
        "CREATE TABLE IF NOT EXISTS app.dbgauge_load (id INT AUTO_INCREMENT PRIMARY KEY, "
        "v VARCHAR(64)) ENGINE=InnoDB")
    stop = threading.Event()
    written = [0]

    def load() -> None:
        conn = admin(sandbox, "mariadb-primary")
        try:
            cur = conn.cursor()
            while not stop.is_set():
                cur.execute("INSERT INTO app.dbgauge_load (v) VALUES (REPEAT('x', 64))")
                written[0] += 1
        finally:
            conn.close()

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    try:
        with scraper(sandbox, "mariadb-primary") as scrape:
            wait_for(lambda: True if written[0] > 20 else None)
            first = scrape({"mysql_innodb"})
            # 200 more commits after the first scrape, and over a second: the sandbox runs
            # innodb_flush_log_at_trx_commit=2, so the redo log is written once a second.
            mark, since = written[0], time.monotonic()
            wait_for(lambda: True if written[0] > mark + 200
                     and time.monotonic() - since > 1.2 else None)
            second = scrape({"mysql_innodb"})
    finally:
        stop.set()
        worker.join(10)
    counters = [key for key in first if key[0].endswith("_total")]
    assert len(counters) > 30
    for key in counters:
        assert key in second, key
        assert second[key] >= first[key], f"{key} went down: {first[key]} -> {second[key]}"
    for grew in ("dbgauge_mysql_innodb_log_written_bytes_total",
                 "dbgauge_mysql_innodb_buffer_pool_write_requests_total"):
        assert value(second, grew) > value(first, grew), grew  # type: ignore[operator]
    assert sum(second[key] > first[key] for key in counters) >= 5
    # the buffer pool states add up to the pool, and the hit ratio is one division away
    pages = sum(v for (n, _), v in second.items()
                if n == "dbgauge_mysql_innodb_buffer_pool_pages")
    assert pages == value(second, "dbgauge_mysql_innodb_metrics_value",
                          metric="buffer_pool_pages_total")
    assert 0 < value(second, "dbgauge_mysql_innodb_buffer_pool_disk_reads_total") \
        < value(second, "dbgauge_mysql_innodb_buffer_pool_read_requests_total")  # type: ignore[operator]
    assert value(second, "dbgauge_mysql_innodb_checkpoint_age_bytes") is not None
    assert value(second, "dbgauge_mysql_innodb_history_list_length") is not None


def test_innodb_status_parser_reads_the_live_monitor_output(sandbox: Sandbox) -> None:
    """The fallback parser on what this MariaDB prints right now, as the monitoring user."""
    conn = connect(target_config(sandbox, "mariadb-primary"))
    try:
        before = {r["Variable_name"]: int(r["Value"]) for r in conn.execute_sql(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_lsn_current', "
            "'Innodb_lsn_last_checkpoint')")}
        text = conn.query("engine_innodb_status")[0]["Status"]
    finally:
        conn.close()
    parsed = parse_innodb_status(text)
    assert parsed.log_sequence_number is not None and parsed.last_checkpoint is not None
    assert parsed.log_sequence_number >= before["Innodb_lsn_current"]
    assert parsed.last_checkpoint >= before["Innodb_lsn_last_checkpoint"]
    assert parsed.checkpoint_age is not None and parsed.checkpoint_age >= 0
    assert parsed.history_list_length is not None


# --------------------------------------------------------------------------- replication

def test_replication_on_replica_and_primary(sandbox: Sandbox) -> None:
    replica_caught_up(sandbox)
    with scraper(sandbox, "mariadb-replica") as scrape:
        m = scrape({"mysql_replication"})
    assert value(m, "dbgauge_mysql_replication_configured") == 1
    channel = {"channel": ""}
    assert value(m, "dbgauge_mysql_replica_io_running", **channel) == 1
    assert value(m, "dbgauge_mysql_replica_sql_running", **channel) == 1
    assert value(m, "dbgauge_mysql_replica_seconds_behind_source_unknown", **channel) == 0
    assert value(m, "dbgauge_mysql_replica_seconds_behind_source", **channel) is not None
    assert value(m, "dbgauge_mysql_replica_source_server_id", **channel) == 1
    assert value(m, "dbgauge_mysql_replica_gtid_pending_transactions", **channel) == 0
    assert value(m, "dbgauge_mysql_replica_last_sql_errno", **channel) == 0
    assert (value(m, "dbgauge_mysql_replica_relay_log_space_bytes", **channel) or 0) > 0
    assert value(m, "dbgauge_mysql_read_only") == 1
    assert value(m, "dbgauge_mysql_super_read_only") is None  # MariaDB has none

    with scraper(sandbox, "mariadb-primary") as scrape:
        m = scrape({"mysql_replication"})
    assert value(m, "dbgauge_mysql_replication_configured") == 0
    assert not [k for k in m if k[0].startswith("dbgauge_mysql_replica_")]
    assert value(m, "dbgauge_mysql_read_only") == 0
    assert value(m, "dbgauge_mysql_connected_replicas") == 1


def test_heartbeat_collector_says_unconfigured_without_settings(sandbox: Sandbox) -> None:
    with scraper(sandbox, "mariadb-replica", heartbeat=None) as scrape:
        m = scrape({"mysql_heartbeat"})
    assert value(m, "dbgauge_mysql_heartbeat_configured") == 0
    assert value(m, "dbgauge_mysql_heartbeat_lag_seconds") is None


# --------------------------------------------------------------------------- locks

@pytest.fixture()
def lock_table(sandbox: Sandbox) -> None:
    run(sandbox, "mariadb-primary",
        "CREATE TABLE IF NOT EXISTS app.dbgauge_locks (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
        "INSERT IGNORE INTO app.dbgauge_locks VALUES (1, 0)")


LOCK_ROW = "SELECT v FROM app.dbgauge_locks WHERE id = 1 FOR UPDATE"


@pytest.mark.usefixtures("lock_table")
def test_row_lock_wait_is_seen_and_clears(sandbox: Sandbox) -> None:
    holder = admin(sandbox, "mariadb-primary")
    waiter = admin(sandbox, "mariadb-primary")
    outcome: list[str] = []

    def wait_for_row() -> None:
        cur = waiter.cursor()
        cur.execute("SET SESSION innodb_lock_wait_timeout = 30")
        cur.execute("BEGIN")
        cur.execute(LOCK_ROW)
        cur.execute("COMMIT")
        outcome.append("got the row")

    blocked = threading.Thread(target=wait_for_row, daemon=True)
    try:
        with scraper(sandbox, "mariadb-primary") as scrape:
            idle = scrape({"mysql_lock_waits"})
            assert value(idle, "dbgauge_mysql_lock_waiting_transactions") == 0
            assert value(idle, "dbgauge_mysql_lock_blocking_transactions") == 0
            cur = holder.cursor()
            cur.execute("BEGIN")
            cur.execute(LOCK_ROW)
            started = time.monotonic()
            blocked.start()

            def waited_a_second() -> tuple[Metrics, float] | None:
                m = scrape({"mysql_lock_waits"})
                wait = value(m, "dbgauge_mysql_lock_oldest_wait_seconds") or 0
                return (m, time.monotonic() - started) if wait >= 1 else None

            m, elapsed = wait_for(waited_a_second)
            # never more than the real wait, give or take INNODB_TRX's whole seconds
            wait = value(m, "dbgauge_mysql_lock_oldest_wait_seconds") or 0
            assert wait <= elapsed + 0.5, (wait, elapsed)
            assert value(m, "dbgauge_mysql_lock_waiting_transactions") == 1
            assert value(m, "dbgauge_mysql_lock_blocking_transactions") == 1
            assert value(m, "dbgauge_mysql_lock_root_blocking_transactions") == 1
            assert value(m, "dbgauge_mysql_lock_max_waiters_per_blocker") == 1
            assert value(m, "dbgauge_mysql_lock_idle_blocking_transactions") == 1  # holder sleeps
            assert (value(m, "dbgauge_mysql_lock_oldest_blocker_seconds") or 0) >= 1
            assert value(m, "dbgauge_mysql_innodb_transactions", state="lock_wait") == 1
            assert (value(m, "dbgauge_mysql_innodb_oldest_transaction_seconds") or 0) >= 1
            assert not [k for k in m if any(label in dict(k[1]) for label in
                                             ("thread", "query", "trx_id", "user"))]

            holder.commit()
            blocked.join(10)
            assert outcome == ["got the row"]

            def cleared() -> Metrics | None:
                m = scrape({"mysql_lock_waits"})
                return m if value(m, "dbgauge_mysql_lock_waiting_transactions") == 0 else None

            # InnoDB refreshes its INNODB_TRX/lock-wait snapshot only after 0.1 s without a
            # reader: poll slower than that (any real scrape interval is)
            m = wait_for(cleared, timeout=5, interval=0.25)
            assert value(m, "dbgauge_mysql_lock_blocking_transactions") == 0
            assert value(m, "dbgauge_mysql_lock_oldest_wait_seconds") == 0
    finally:
        with contextlib.suppress(pymysql.err.Error):
            holder.rollback()
        if blocked.is_alive():
            blocked.join(35)
        holder.close()
        waiter.close()


MDL_INSTRUMENT = "wait/lock/metadata/sql/mdl"


def set_instrument(sandbox: Sandbox, enabled: str) -> None:
    run(sandbox, "mariadb-primary", (
        "UPDATE performance_schema.setup_instruments SET ENABLED = %s, TIMED = %s "
        "WHERE NAME = %s", (enabled, enabled, MDL_INSTRUMENT)))


@pytest.mark.usefixtures("lock_table")
def test_metadata_lock_wait_from_performance_schema_and_processlist(sandbox: Sandbox) -> None:
    before = run(sandbox, "mariadb-primary", (
        "SELECT ENABLED FROM performance_schema.setup_instruments WHERE NAME = %s",
        (MDL_INSTRUMENT,)))[0]["ENABLED"]
    holder = admin(sandbox, "mariadb-primary")
    ddl = admin(sandbox, "mariadb-primary")
    done: list[str] = []

    def alter() -> None:
        cur = ddl.cursor()
        cur.execute("SET SESSION lock_wait_timeout = 30")
        cur.execute("ALTER TABLE app.dbgauge_locks COMMENT = 'dbgauge metadata lock test'")
        done.append("altered")

    blocked = threading.Thread(target=alter, daemon=True)
    try:
        set_instrument(sandbox, "YES")
        with scraper(sandbox, "mariadb-primary") as scrape:
            cur = holder.cursor()
            cur.execute("BEGIN")
            cur.execute("SELECT COUNT(*) FROM app.dbgauge_locks")  # holds a shared metadata lock
            blocked.start()

            def ddl_waits(instrumented: float) -> Callable[[], Metrics | None]:
                def check() -> Metrics | None:
                    m = scrape({"mysql_lock_waits"})
                    waiting = value(m, "dbgauge_mysql_metadata_lock_waiting_threads") or 0
                    oldest = value(m, "dbgauge_mysql_metadata_lock_oldest_wait_seconds") or 0
                    same = value(m, "dbgauge_mysql_metadata_lock_instrumented") == instrumented
                    return m if same and waiting >= 1 and oldest >= 1 else None
                return check

            wait_for(ddl_waits(1.0))
            set_instrument(sandbox, "NO")
            wait_for(ddl_waits(0.0))  # the same wait, seen in the processlist instead
            # MySQL's separate fallback statement (MariaDB gets it in the same round trip)
            monitor = connect(target_config(sandbox, "mariadb-primary"))
            try:
                row = monitor.query("metadata_lock_waits_processlist")[0]
            finally:
                monitor.close()
            assert row["waiting"] >= 1 and row["oldest_wait_seconds"] >= 1
            holder.commit()
            blocked.join(15)
            assert done == ["altered"]
            m = scrape({"mysql_lock_waits"})
            assert value(m, "dbgauge_mysql_metadata_lock_waiting_threads") == 0
    finally:
        with contextlib.suppress(pymysql.err.Error):
            holder.rollback()
        if blocked.is_alive():
            blocked.join(35)
        set_instrument(sandbox, before)
        holder.close()
        ddl.close()


# --------------------------------------------------------------------------- privileges

LOWPRIV = "dbgauge_lowpriv"


def test_missing_privilege_fails_only_that_collector_and_names_it(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """A user with SELECT only: status still works; the collectors needing PROCESS and
    SLAVE MONITOR report success 0 and the log says which privilege to grant."""
    password = "Low-priv-9x"
    (tmp_path / "pw").write_text(password)
    run(sandbox, "mariadb-primary", ("DROP USER IF EXISTS %s@'%%'", (LOWPRIV,)),
        ("CREATE USER %s@'%%' IDENTIFIED BY %s", (LOWPRIV, password)),
        ("GRANT SELECT ON *.* TO %s@'%%'", (LOWPRIV,)))
    try:
        replica_caught_up(sandbox)  # the user replicates to the replica
        targets = []
        for name in ("mariadb-primary", "mariadb-replica"):
            entry = target_entry(sandbox, name)
            entry["dsn"] = str(entry["dsn"]).replace("//dbgauge@", f"//{LOWPRIV}@")
            entry["password_file"] = str(tmp_path / "pw")
            entry.pop("heartbeat", None)
            targets.append(entry)
        d = Daemon(config_file(sandbox, tmp_path / "c.yaml", targets), tmp_path / "log")
        try:
            m = d.metrics()
        finally:
            d.stop()
        for name in ("mariadb-primary", "mariadb-replica"):
            def ok(collector: str, target: str = name) -> float | None:
                return value(m, "dbgauge_collector_success", target=target, collector=collector)

            assert value(m, "dbgauge_up", target=name) == 1
            assert ok("mysql_status") == 1
            assert ok("mysql_heartbeat") == 1  # no heartbeat settings: nothing to read
            assert ok("mysql_innodb") == 0
            assert ok("mysql_lock_waits") == 0
            assert ok("mysql_replication") == 0
        log = d.log_text()
        assert "collector mysql_innodb failed on mariadb-primary: innodb_metrics needs the " \
               "PROCESS privilege" in log, log
        assert "collector mysql_lock_waits failed on mariadb-replica: innodb_trx_summary needs " \
               "the PROCESS privilege" in log, log
        assert "replica_status needs the SLAVE MONITOR privilege" in log, log
        assert password not in log
    finally:
        run(sandbox, "mariadb-primary", ("DROP USER IF EXISTS %s@'%%'", (LOWPRIV,)))
        replica_caught_up(sandbox)


def test_documented_mariadb_grants_are_enough_for_every_collector(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """Exactly the MariaDB grants of docs/mysql.md: every collector succeeds on both servers,
    the heartbeat writer writes on the primary and the replica reads its row."""
    user, password = "dbgauge_documented", "Docs-grants-7y"
    (tmp_path / "pw").write_text(password)
    statements = documented_grants("mariadb", user, password)
    assert statements[0].startswith("CREATE USER") and len(statements) == 3
    # the writer has to create its table itself (CREATE on dbgauge.*)
    run(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS {DOCS_TABLE}",
        ("DROP USER IF EXISTS %s@'%%'", (user,)), *statements)
    try:
        replica_caught_up(sandbox)
        targets = []
        for name, heartbeat in (("mariadb-primary",
                                 {"mode": "write", "interval": 0.25, "table": DOCS_TABLE}),
                                ("mariadb-replica", {"mode": "read", "table": DOCS_TABLE})):
            entry = target_entry(sandbox, name)
            entry["dsn"] = str(entry["dsn"]).replace("//dbgauge@", f"//{user}@")
            entry["password_file"] = str(tmp_path / "pw")
            entry["heartbeat"] = heartbeat
            targets.append(entry)
        d = Daemon(config_file(sandbox, tmp_path / "c.yaml", targets), tmp_path / "log")
        try:
            def complete() -> Metrics | None:
                m = d.metrics()
                ok = [value(m, "dbgauge_collector_success", target=t, collector=c)
                      for t in ("mariadb-primary", "mariadb-replica") for c in
                      ("mysql_status", *MYSQL_COLLECTORS)]
                return m if ok == [1.0] * len(ok) else None

            m = wait_for(complete)
        finally:
            d.stop()
        assert value(m, "dbgauge_mysql_heartbeat_configured", target="mariadb-replica") == 1
        assert (value(m, "dbgauge_mysql_heartbeat_lag_seconds", target="mariadb-replica")
                or 99) < 5
        assert value(m, "dbgauge_mysql_replication_configured", target="mariadb-replica") == 1
        assert value(m, "dbgauge_mysql_connected_replicas", target="mariadb-primary") == 1
        log = d.log_text()
        assert f"created heartbeat table {DOCS_TABLE} on mariadb-primary" in log, log
        assert "heartbeat writer for mariadb-primary cannot write" not in log, log
    finally:
        run(sandbox, "mariadb-primary", ("DROP USER IF EXISTS %s@'%%'", (user,)),
            f"DROP TABLE IF EXISTS {DOCS_TABLE}")
        replica_caught_up(sandbox)
