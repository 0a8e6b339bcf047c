"""Reaching the sandbox's servers as their administrator, to make the conditions a test
needs (load, locks, waiting clients, replication states) and to wait for them to settle.

Never used to scrape: collectors and checks run as the monitoring user `dbgauge`, through
dbgauge's own code. Drivers are used directly here on purpose: this is the test's side.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pymysql  # type: ignore[import-untyped,unused-ignore]
import pymysql.cursors  # type: ignore[import-untyped,unused-ignore]

from dbgauge.toolkit import sandbox as sb
from dbgauge.toolkit.sandbox.layout import Layout
from tests.helpers import REPO, wait_for


@dataclass(frozen=True)
class Sandbox:
    """The session's sandbox: its directory, the dbgauge config it wrote, its state."""

    directory: Path
    config: Path
    state: sb.SandboxState

    def admin_dsn(self, name: str, database: str | None = None) -> str:
        return admin_dsn(self.state, name, database)


def admin_dsn(state: sb.SandboxState, name: str, database: str | None = None) -> str:
    """DSN of the sandbox's all-privileges account on instance `name`, for the test's side
    (dbgauge itself reaches these servers as the monitoring user of dbgauge.yaml).

    For `pgbouncer` it is pgb_admin on the admin console, or sandbox_admin when another
    database (e.g. "app") is asked for through the pooler.
    """
    port = state.port(name)
    if name.startswith("mariadb"):
        user, password = state.mariadb.admin_user, state.mariadb.admin_password
        scheme, default_db = "mysql", sb.APP_DATABASE
    elif name == "pgbouncer" and database in (None, "pgbouncer"):
        user, password = state.pgbouncer.admin_user, state.pgbouncer.admin_password
        scheme, default_db = "postgresql", "pgbouncer"
    else:
        user, password = state.postgres.admin_user, state.postgres.admin_password
        scheme, default_db = "postgresql", state.postgres.database
    db = default_db if database is None else database
    return f"{scheme}://{quote(user, safe='')}:{quote(password, safe='')}@127.0.0.1:{port}/{db}"


# ----------------------------------------------------------------- MariaDB


def admin(sandbox: Sandbox, name: str, database: str | None = "app") -> Any:
    """An autocommit admin session (for load, locks and users, never for scraping).

    Without TLS: PyMySQL's default (TLS when the server offers it) loads the system CA
    store for every connection, which was a fifth of the test workers' CPU."""
    return pymysql.connect(host="127.0.0.1", port=sandbox.state.port(name),
                           user=sandbox.state.mariadb.admin_user,
                           password=sandbox.state.mariadb.admin_password,
                           autocommit=True, connect_timeout=5, database=database,
                           ssl_disabled=True)


def run(sandbox: Sandbox, name: str, *statements: str | tuple[str, tuple[Any, ...]]
        ) -> list[Any]:
    """Run statements (text, or (text, params)) as admin; the last one's rows."""
    conn = admin(sandbox, name)
    try:
        cur = conn.cursor(pymysql.cursors.DictCursor)
        out: list[Any] = []
        for statement in statements:
            sql, params = statement if isinstance(statement, tuple) else (statement, None)
            cur.execute(sql, params)
            out = list(cur.fetchall())
        return out
    finally:
        conn.close()


def execute(sandbox: Sandbox, name: str, *statements: str, log_bin: bool = True) -> None:
    with closing(admin(sandbox, name, database=None)) as conn:
        cur = conn.cursor()
        if not log_bin:
            cur.execute("SET SESSION sql_log_bin = 0")
        for statement in statements:
            cur.execute(statement)


def one(sandbox: Sandbox, name: str, query: str) -> Any:
    with closing(admin(sandbox, name, database=None)) as conn:
        cur = conn.cursor()
        cur.execute(query)
        return cur.fetchone()


def admin_cnf(sandbox: Sandbox, directory: Path) -> Path:
    """A MySQL option file ([client] user, password) of the MariaDB admin, mode 0600: for
    pt-heartbeat and other tools that read credentials from --defaults-file."""
    path = directory / "admin.cnf"
    path.write_text(f"[client]\nuser={sandbox.state.mariadb.admin_user}\n"
                    f"password={sandbox.state.mariadb.admin_password}\n")
    path.chmod(0o600)
    return path


def caught_up(sandbox: Sandbox) -> None:
    pos = one(sandbox, "mariadb-primary", "SELECT @@gtid_binlog_pos")[0]
    assert one(sandbox, "mariadb-replica", f"SELECT MASTER_GTID_WAIT('{pos}', 30)")[0] == 0


def _gtid_seqs(pos: str) -> dict[str, int]:
    """MariaDB GTID position 'D-S-N,...' -> {domain: seq}."""
    out: dict[str, int] = {}
    for gtid in filter(None, (g.strip() for g in pos.split(","))):
        domain, _server, seq = gtid.split("-")
        out[domain] = max(out.get(domain, 0), int(seq))
    return out


def replica_caught_up(sandbox: Sandbox, timeout: float = 30.0) -> None:
    """Until the replica has applied all the primary had binlogged when this was called.

    Compares sequence numbers, not positions for equality: a heartbeat writer keeps the
    primary moving, and a replica applying a backlog jumps past any one position.
    """
    target = _gtid_seqs(run(sandbox, "mariadb-primary",
                            "SELECT @@gtid_binlog_pos AS pos")[0]["pos"])

    def caught_up() -> bool:
        pos = run(sandbox, "mariadb-replica", "SELECT @@gtid_slave_pos AS pos")[0]["pos"]
        have = _gtid_seqs(pos)
        return all(have.get(d, 0) >= seq for d, seq in target.items())

    wait_for(caught_up, timeout=timeout, what="the replica to catch up")


def documented_grants(flavor: str, user: str, password: str) -> list[str]:
    """The grant statements docs/mysql.md gives for `flavor`, for `user` and `password`."""
    text = (REPO / "docs" / "mysql.md").read_text(encoding="utf-8")
    block = text.split(f"<!-- grants:{flavor} -->", 1)[1].split("```sql", 1)[1]
    statements = [s.strip() for s in block.split("```", 1)[0].split(";") if s.strip()]
    return [s.replace("'dbgauge'@", f"'{user}'@").replace("'choose-a-password'", f"'{password}'")
            for s in statements]


# ----------------------------------------------------------------- PostgreSQL and PgBouncer


def pg_admin(sandbox: Sandbox, name: str, **kwargs: Any) -> psycopg.Connection[Any]:
    """An autocommit admin session on a PostgreSQL instance."""
    return psycopg.connect(sandbox.admin_dsn(name), autocommit=True, **kwargs)


@contextmanager
def sleeping(sandbox: Sandbox) -> Iterator[int]:
    """A pg_sleep(60) running in a thread on pg-primary; its pid; cancelled afterwards."""
    conn = pg_admin(sandbox, "pg-primary")
    pid = conn.info.backend_pid
    thread = threading.Thread(target=lambda: _ignore_cancel(conn), daemon=True)
    thread.start()
    try:
        yield pid
    finally:
        with closing(pg_admin(sandbox, "pg-primary")) as other:
            other.execute("SELECT pg_cancel_backend(%s)", (pid,))
        thread.join(15)
        conn.close()


def _ignore_cancel(conn: psycopg.Connection[Any]) -> None:
    try:
        conn.execute("SELECT pg_sleep(60)")
    except psycopg.errors.QueryCanceled:
        pass


@contextmanager
def mariadb_account(sandbox: Sandbox, user: str, password: str, global_privileges: str,
                    *databases: str) -> Iterator[None]:
    """A temporary account on the MariaDB primary (replicated to the replica) with
    `global_privileges` ON *.* and ALL on each of `databases`; dropped afterwards."""
    execute(sandbox, "mariadb-primary",
            f"CREATE OR REPLACE USER {user}@'%' IDENTIFIED BY '{password}'",
            f"GRANT {global_privileges} ON *.* TO {user}@'%'",
            *(f"GRANT ALL PRIVILEGES ON {db}.* TO {user}@'%'" for db in databases))
    try:
        yield
    finally:
        execute(sandbox, "mariadb-primary", f"DROP USER IF EXISTS {user}@'%'")


@contextmanager
def lock_wait(sandbox: Sandbox) -> Iterator[threading.Thread]:
    """One session holds ACCESS EXCLUSIVE on a table; another waits to read it."""
    with pg_admin(sandbox, "pg-primary") as setup:
        setup.execute("CREATE TABLE IF NOT EXISTS dbgauge_test_lock (id int)")
    holder = psycopg.connect(sandbox.admin_dsn("pg-primary"))
    waiter = psycopg.connect(sandbox.admin_dsn("pg-primary"), autocommit=True,
                             options="-c statement_timeout=60000")
    thread = threading.Thread(
        target=lambda: waiter.execute("SELECT count(*) FROM dbgauge_test_lock"), daemon=True)
    try:
        holder.execute("LOCK TABLE dbgauge_test_lock IN ACCESS EXCLUSIVE MODE")
        thread.start()
        yield thread
    finally:
        holder.rollback()
        thread.join(30)
        holder.close()
        waiter.close()


@contextmanager
def pgbouncer_clients(sandbox: Sandbox, n: int) -> Iterator[list[psycopg.Connection[Any]]]:
    """`n` client connections to the tiny-pool database through PgBouncer."""
    dsn = sandbox.admin_dsn("pgbouncer", sb.TINY_POOL_DATABASE)
    conns = [psycopg.connect(dsn, prepare_threshold=None, connect_timeout=5) for _ in range(n)]
    try:
        yield conns
    finally:
        for conn in conns:
            conn.close()


@contextmanager
def waiting_pgbouncer_client(sandbox: Sandbox) -> Iterator[threading.Thread]:
    """The tiny pool's server connections all held, one more client queued (cl_waiting 1)
    until the context ends; yields the queued client's thread."""
    with pgbouncer_clients(sandbox, sb.TINY_POOL_SIZE + 1) as conns:
        holders, queued = conns[:sb.TINY_POOL_SIZE], conns[sb.TINY_POOL_SIZE]
        for conn in holders:
            conn.execute("SELECT 1")  # each holds one of the tiny pool's server connections
        thread = threading.Thread(target=lambda: queued.execute("SELECT 1"), daemon=True)
        thread.start()
        try:
            yield thread
        finally:
            for conn in holders:
                conn.rollback()
            thread.join(15)


ERRANT_TABLE = "app.dbgauge_split_brain"
ERRANT_INSERT = f"INSERT INTO {ERRANT_TABLE} VALUES (%s, %s)"  # noqa: S608 - a constant
ERRANT_UNDO = f"DELETE FROM {ERRANT_TABLE} WHERE id = 1"  # noqa: S608


def replicating(sandbox: Sandbox) -> bool | None:
    """True once both replication threads of mariadb-replica run."""
    (row,) = run(sandbox, "mariadb-replica", "SHOW SLAVE STATUS")
    ok = row["Slave_IO_Running"] == "Yes" and row["Slave_SQL_Running"] == "Yes"
    return True if ok else None


@contextmanager
def errant_write(sandbox: Sandbox) -> Iterator[str]:
    """A write on the replica with read_only off and binlogging on; yields its GTID.

    Reconciliation (what an operator would do to keep the replica): undo the row without
    binlogging it, RESET MASTER to drop the errant GTID from the binlog state, restart
    replication (gtid_slave_pos is unchanged), read_only back on.
    """
    run(sandbox, "mariadb-primary",
        f"CREATE TABLE IF NOT EXISTS {ERRANT_TABLE} (id INT PRIMARY KEY, note VARCHAR(40))")
    replica_caught_up(sandbox)
    try:
        # A new binlog file on the replica for the errant write: split-brain reads at most
        # 20,000 events for its evidence, from the file the errant GTIDs begin in, and a
        # sandbox that already ran the drift writers holds far more in its current file.
        rows = run(sandbox, "mariadb-replica", "FLUSH NO_WRITE_TO_BINLOG BINARY LOGS",
                   "SET GLOBAL read_only = OFF",
                   (ERRANT_INSERT, (1, "written on the replica")),
                   "SELECT @@gtid_binlog_pos AS pos, @@server_id AS sid")
        pos, sid = str(rows[0]["pos"]), int(rows[0]["sid"])
        assert pos.split("-")[1] == str(sid)  # the replica's own server_id wrote it
        yield pos
    finally:
        run(sandbox, "mariadb-replica", "STOP SLAVE", "SET SESSION sql_log_bin = 0",
            ERRANT_UNDO, "RESET MASTER", "START SLAVE",
            "SET GLOBAL read_only = ON")
        wait_for(lambda: replicating(sandbox), timeout=30)
        replica_caught_up(sandbox)


@contextmanager
def stopped(sandbox: Sandbox, name: str) -> Iterator[None]:
    """The server frozen with SIGSTOP (its sockets stay open: connections hang, nothing is
    refused), always continued afterwards."""
    pid = Layout(sandbox.directory.resolve()).running_pid(name)
    assert pid is not None, f"{name} is not running"
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)
