"""The PostgreSQL matrix: one PostgreSQL-only sandbox per major, and the conditions the
battery (tests/helpers/matrix_battery.py) makes on it.

Each major's sandbox (pg-primary, pg-standby cloned through the backup API, pg-subscriber,
PgBouncer; no MariaDB) has its own directory and base port, so the five majors' test files
can run side by side on pytest-xdist workers (a file per worker) beside the main suite's
sandboxes: base B + 55 + 10 * (major - 13), B the checkout's test base (tests/helpers/ports.py);
ending in 5, it is 5 away from every worker's base (B + 10 * N, of any checkout), which no
two port offsets are. It is built once per test file (a few
seconds: two initdb, a backup copy) and stopped after it, unless DBGAUGE_KEEP_SANDBOX is set.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, closing, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import psycopg
import yaml

from dbgauge.app import registry
from dbgauge.toolkit import sandbox as sb
from dbgauge.toolkit.sandbox.model import SUBSCRIPTION
from tests.helpers import wait_for
from tests.helpers.pgstats import flush
from tests.helpers.ports import ROOT_PORT
from tests.helpers.servers import Sandbox, lock_wait, pg_admin, sleeping

MATRIX_MAJORS = (13, 14, 16, 17, 18)
PG_TARGETS = ("pg-primary", "pg-standby", "pg-subscriber", "pgbouncer")
WORKLOAD_TABLE = "matrix_t"
WORKLOAD_SEQUENCE = "matrix_seq"
Condition = Callable[[Sandbox], AbstractContextManager[Any]]


def matrix_port(major: int) -> int:
    return ROOT_PORT + 55 + 10 * (major - 13)


def matrix_dir(major: int) -> Path:
    return Path(f"/tmp/dbgauge-test-{os.getuid()}-pg{major}-{matrix_port(major)}")


@contextmanager
def matrix_sandbox(major: int) -> Iterator[Sandbox]:
    """PostgreSQL `major`'s sandbox, up, with a config of its PostgreSQL targets only."""
    directory = matrix_dir(major)
    try:
        config = sb.up(directory, matrix_port(major), pg_version=major, mariadb=False)
    except sb.SandboxError as exc:
        raise AssertionError(f"PostgreSQL {major}'s sandbox could not start: {exc}") from exc
    data = yaml.safe_load(config.read_text())
    data["targets"] = [t for t in data["targets"] if t["name"] in PG_TARGETS]
    everything = [c.name for c in registry().for_kind("postgres")]  # opt-in ones too
    for target in data["targets"]:
        if target["kind"] == "postgres":
            target["collectors"] = everything
    pg_config = directory / "dbgauge-pg.yaml"
    pg_config.write_text(yaml.safe_dump(data))
    try:
        yield Sandbox(directory, pg_config, sb.load_state(directory))
    finally:
        if not os.environ.get("DBGAUGE_KEEP_SANDBOX"):
            sb.down(directory)


def server_version_num(sandbox: Sandbox, name: str = "pg-primary") -> int:
    with closing(pg_admin(sandbox, name)) as conn:
        row = conn.execute("SELECT current_setting('server_version_num')::int").fetchone()
    assert row is not None
    return int(row[0])


def make_workload(sandbox: Sandbox) -> None:
    """A user table with dead tuples, analyzed and vacuumed once, and a sequence half
    used, on pg-primary's `app`; replayed on pg-standby. Idempotent (a kept sandbox)."""
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {WORKLOAD_TABLE}")
        conn.execute(f"DROP SEQUENCE IF EXISTS {WORKLOAD_SEQUENCE}")
        conn.execute(f"CREATE TABLE {WORKLOAD_TABLE} (id int PRIMARY KEY, v text)")
        conn.execute(f"INSERT INTO {WORKLOAD_TABLE} SELECT g, 'v' || g "  # noqa: S608 - constants
                     "FROM generate_series(1, 100) g")
        conn.execute(f"VACUUM ANALYZE {WORKLOAD_TABLE}")
        conn.execute(f"DELETE FROM {WORKLOAD_TABLE} WHERE id <= 10")  # noqa: S608 - constants
        conn.execute(f"CREATE SEQUENCE {WORKLOAD_SEQUENCE} MAXVALUE 100")
        conn.execute("SELECT setval(%s, 50)", (WORKLOAD_SEQUENCE,))
        conn.execute(f"GRANT SELECT ON {WORKLOAD_TABLE}, {WORKLOAD_SEQUENCE} TO dbgauge")
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")  # postgres_buffercache
        conn.execute("SET enable_seqscan = off")  # an index scan, even of 100 rows
        conn.execute(f"SELECT count(*) FROM {WORKLOAD_TABLE} WHERE id = 50")  # noqa: S608
        lsn = conn.execute("SELECT pg_current_wal_lsn()").fetchone()
        flush(conn)  # the statistics show a moment later
        wait_for(lambda: conn.execute(
            "SELECT n_dead_tup = 10 AND last_vacuum IS NOT NULL AND last_analyze IS NOT NULL "
            "AND idx_scan > 0 FROM pg_stat_user_tables WHERE relname = %s",
            (WORKLOAD_TABLE,)).fetchone()[0], timeout=30, what="the workload's statistics")
    assert lsn is not None
    with closing(pg_admin(sandbox, "pg-standby")) as standby:
        wait_for(lambda: standby.execute(
            "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn[0],)).fetchone()[0],
            timeout=30, what="pg-standby to replay the workload")
    with closing(pg_admin(sandbox, "pg-subscriber", dbname="drift")) as subscriber:
        subscriber.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")


# ------------------------------------------------- conditions for the checks' alerting states


@contextmanager
def failing_archiver(sandbox: Sandbox) -> Iterator[None]:
    """pg-primary's archive_command fails (its flag file) on a freshly switched segment."""
    flag = sandbox.directory / "pg-primary" / "archive_fail"
    flag.write_text("")
    try:
        with closing(pg_admin(sandbox, "pg-primary")) as conn:
            conn.execute(f"INSERT INTO {WORKLOAD_TABLE} VALUES (1000, 'wal') "  # noqa: S608
                         "ON CONFLICT DO NOTHING")
            conn.execute("SELECT pg_switch_wal()")
        yield
    finally:
        flag.unlink(missing_ok=True)


@contextmanager
def idle_transaction(sandbox: Sandbox) -> Iterator[None]:
    """A session on pg-primary idle in a transaction (that holds no xid)."""
    with closing(psycopg.connect(sandbox.admin_dsn("pg-primary"))) as holder:
        holder.execute("SELECT 1")
        try:
            yield
        finally:
            holder.rollback()


@contextmanager
def disabled_subscription(sandbox: Sandbox) -> Iterator[None]:
    with closing(pg_admin(sandbox, "pg-subscriber", dbname="drift")) as conn:
        conn.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} DISABLE")
        try:
            yield
        finally:
            conn.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} ENABLE")


@contextmanager
def promoted_standby(sandbox: Sandbox) -> Iterator[None]:
    """pg-standby promoted (two primaries of one system identifier), then cloned again."""
    try:
        with closing(pg_admin(sandbox, "pg-standby")) as conn:
            conn.execute("SELECT pg_promote(true, 30)")
        yield
    finally:
        sb.rebuild_instance(sandbox.directory, "pg-standby")


@contextmanager
def waiting_lock(sandbox: Sandbox) -> Iterator[None]:
    with lock_wait(sandbox):
        yield


@contextmanager
def running_statement(sandbox: Sandbox) -> Iterator[None]:
    with sleeping(sandbox):
        yield


def no_condition(_: Sandbox) -> AbstractContextManager[None]:
    return nullcontext()
