"""The sandbox's MariaDB primary and GTID replica.

`mariadb-install-db` makes the primary's data directory; the replica's is a copy of it
taken before the primary first starts, so both begin with the same empty GTID state. The
accounts are created on both servers with sql_log_bin=0 (no errant transactions on the
replica); only the databases are created on the primary and replicated. The sandbox
reaches each server as the OS user over its unix socket (unix_socket auth, no password).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from dbgauge.toolkit.db import Connection, connect_dsn
from dbgauge.toolkit.errors import SandboxError
from dbgauge.toolkit.gtid import errant_mariadb, mariadb_state
from dbgauge.toolkit.sandbox.binaries import INSTALL_DB, MARIADBD
from dbgauge.toolkit.sandbox.core import DB_ERRORS, Sandbox, run_sql
from dbgauge.toolkit.sandbox.model import ADMIN_USER, APP_DATABASE, MONITOR_USER, REPL_USER
from dbgauge.toolkit.sandbox.process import (
    REPLICATION_TIMEOUT,
    START_TIMEOUT,
    chown,
    is_root,
    poll,
    run,
    socket_user,
    spawn,
    tail,
)

PRIMARY, REPLICA = "mariadb-primary", "mariadb-replica"
MONITOR_DATABASE = "dbgauge"
# Options shared by mariadb-install-db and mariadbd: small redo log, no buffer-pool dumps,
# relaxed flushing. It is a sandbox: start and stop speed beat durability.
_INNODB_OPTS = (
    "--innodb-log-file-size=16M",
    "--innodb-buffer-pool-size=128M",
    "--innodb-flush-log-at-trx-commit=2",
    "--innodb-buffer-pool-dump-at-shutdown=OFF",
    "--innodb-buffer-pool-load-at-startup=OFF",
)
# Each account's password (by secret name) and its grants (sql/mariadb/sandbox_grant_*).
_ACCOUNTS = (
    (ADMIN_USER, "mariadb-admin", ("sandbox_grant_all",)),
    (REPL_USER, "mariadb-repl", ("sandbox_grant_replication",)),
    (MONITOR_USER, "dbgauge", ("sandbox_grant_monitor", "sandbox_grant_database")),
)


_REPLAY_TIMEOUT = 600.0  # a rebuilt replica replays the primary's whole binlog (benchmarks: GBs)

class MariaDB:
    """Builds, starts and inspects the two MariaDB instances of one sandbox."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sb = sandbox
        self.layout = sandbox.layout

    def root_conn(self, name: str) -> Connection:
        """Connection as the OS user over the socket (unix_socket auth, no password)."""
        where = urlencode({"unix_socket": str(self.sb.socket(name))})
        return connect_dsn(
            f"mysql://{quote(socket_user(), safe='')}@localhost/?{where}",
            connect_timeout=2,
            query_timeout=START_TIMEOUT,
            lock_timeout=START_TIMEOUT,
        )

    def tmpdir(self, name: str) -> Path:
        """The instance's own temporary directory, made if missing.

        A starting mariadbd deletes every `#sql*` file in its tmpdir. With /tmp shared, a
        replica (or another sandbox's server, or the bootstrap of mariadb-install-db)
        starting deleted the Aria files of a running server's information_schema
        temporary tables: "Error on delete of '/tmp/#sql-temptable-…'" or signal 11 in
        ha_maria::drop_table.
        """
        path = self.layout.home(name) / "tmp"
        path.mkdir(exist_ok=True)
        chown(path, "mysql")
        return path

    def install(self, name: str) -> None:
        home = self.layout.home(name)
        tmp = home / "data.init"
        shutil.rmtree(tmp, ignore_errors=True)
        args = [
            str(INSTALL_DB),
            "--no-defaults",
            f"--datadir={tmp}",
            f"--tmpdir={self.tmpdir(name)}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
            "--skip-name-resolve",
            *_INNODB_OPTS,
        ]
        if is_root():
            args.insert(2, "--user=mysql")
        else:
            args.insert(2, f"--auth-root-socket-user={socket_user()}")
        run(args, f"mariadb-install-db for {name}", cwd=home)
        tmp.rename(self.layout.datadir(name))

    def copy(self, source: str, name: str) -> None:
        """Clone a never-started data dir: both servers then begin with empty GTID state."""
        tmp = self.layout.home(name) / "data.init"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(self.layout.datadir(source), tmp, symlinks=True)
        chown(tmp, "mysql", recursive=True)
        tmp.rename(self.layout.datadir(name))

    def server_args(self, name: str) -> list[str]:
        replica = name == REPLICA
        port = self.sb.port(name)
        args = [str(MARIADBD), "--no-defaults"]
        if is_root():
            args.append("--user=mysql")
        args += [
            f"--datadir={self.layout.datadir(name)}",
            f"--tmpdir={self.tmpdir(name)}",
            f"--socket={self.sb.socket(name)}",
            f"--pid-file={self.layout.pidfile(name)}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            f"--log-error={self.layout.log(name)}",
            f"--server-id={2 if replica else 1}",
            "--log-bin=mariadb-bin",
            "--relay-log=relay-bin",
            "--log-slave-updates=ON",
            "--binlog-format=ROW",
            "--gtid-strict-mode=ON",
            f"--read-only={'ON' if replica else 'OFF'}",
            "--report-host=127.0.0.1",
            f"--report-port={port}",
            "--skip-name-resolve",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
            # performance_schema feeds mysql_statements and mysql_tables.
            "--performance-schema=ON",
            # user statistics feed mysql_user_statistics (which fails while they are off)
            "--userstat=ON",
            "--max-connections=1000",  # room for bench/fleet.py: 200 targets per server
            *_INNODB_OPTS,
        ]
        if not replica:
            # The Query Response Time plugin (Debian's mariadb-server ships it) feeds
            # mariadb_query_response_time; the replica runs without it, as a server without
            # the plugin that the collector must report as not configured.
            args += ["--plugin-load-add=query_response_time", "--query-response-time-stats=ON"]
        return args

    def start_server(self, name: str) -> None:
        home = self.layout.home(name)
        child = spawn(self.server_args(name), home / "mariadbd.out", home)

        def ready() -> bool | None:
            if child.poll() is not None:
                raise self.sb.start_failed(
                    name, f"mariadbd exited with status {child.returncode}"
                )
            try:
                self.root_conn(name).close()
            except DB_ERRORS:
                return None
            return True

        if poll(ready, START_TIMEOUT) is None:
            raise self.sb.start_failed(
                name, f"not accepting connections after {START_TIMEOUT:.0f} s"
            )

    def start(self, name: str) -> None:
        """Start a stopped, initialised instance; a replica then must replicate again."""
        self.start_server(name)
        if name == REPLICA and self.layout.running_pid(PRIMARY):
            self.wait_replicating()

    def setup(self, name: str) -> None:
        """Accounts, identical on both servers and kept out of the binlog (no errant GTIDs)."""
        mark = self.layout.setup_mark(name)
        if mark.exists():
            return
        with contextlib.closing(self.root_conn(name)) as conn:
            run_sql(conn, "sandbox_sql_log_bin", (0,))
            # Anonymous users shadow user@% from 127.0.0.1.
            for row in run_sql(conn, "sandbox_anonymous_users"):
                run_sql(conn, "sandbox_drop_user", (row["user"], row["host"]))
            run_sql(conn, "sandbox_drop_test_database")
            run_sql(conn, "sandbox_drop_test_grants")
            run_sql(conn, "sandbox_flush_privileges")
            for user, secret, grants in _ACCOUNTS:
                password = self.sb.pw[secret]
                run_sql(conn, "sandbox_create_user", (user, password))
                run_sql(conn, "sandbox_alter_user", (user, password))
                for grant in grants:  # {database}, where a grant names one, is dbgauge's
                    run_sql(conn, grant, (user,), database=MONITOR_DATABASE)
            if name == PRIMARY:
                run_sql(conn, "sandbox_sql_log_bin", (1,))  # replicated on purpose
                for database in (APP_DATABASE, MONITOR_DATABASE):
                    run_sql(conn, "sandbox_create_database", database=database)
            else:
                run_sql(conn, "sandbox_stop_slave")
                run_sql(
                    conn,
                    "sandbox_change_master",
                    (self.sb.port(PRIMARY), REPL_USER, self.sb.pw["mariadb-repl"]),
                )
                run_sql(conn, "sandbox_start_slave")
        mark.write_text("")

    def slave_status(self) -> dict[str, Any] | None:
        with contextlib.closing(self.root_conn(REPLICA)) as conn:
            rows = run_sql(conn, "sandbox_slave_status")
        return rows[0] if rows else None

    def wait_replicating(self) -> None:
        started = False

        def check() -> dict[str, Any] | None:
            nonlocal started
            st = self.slave_status()
            if st is None:
                raise SandboxError(
                    "mariadb-replica has no replication configured: remove "
                    f"{self.layout.home(REPLICA)} (after `down`) and run `up` again"
                )
            if st["Slave_IO_Running"] == "Yes" and st["Slave_SQL_Running"] == "Yes":
                return st
            if st["Last_SQL_Errno"]:
                raise SandboxError(
                    f"mariadb-replica SQL thread stopped: {st['Last_SQL_Error']}; look at "
                    f"{self.layout.log(REPLICA)}"
                )
            if "No" in (st["Slave_IO_Running"], st["Slave_SQL_Running"]) and not started:
                with contextlib.closing(self.root_conn(REPLICA)) as conn:
                    run_sql(conn, "sandbox_start_slave")
                started = True
            return None

        if poll(check, REPLICATION_TIMEOUT, 0.1) is None:
            st = self.slave_status() or {}
            raise SandboxError(
                "mariadb-replica is not replicating after "
                f"{REPLICATION_TIMEOUT:.0f} s (IO={st.get('Slave_IO_Running')}, "
                f"SQL={st.get('Slave_SQL_Running')}, last IO error: {st.get('Last_IO_Error')}); "
                f"look at {self.layout.log(REPLICA)} (`dbgauge sandbox reset` starts afresh):\n"
                f"{tail(self.layout.log(REPLICA))}"
            )

    def up(self) -> None:
        """Create and start whatever is missing, then wait until the replica replicates.

        A replica that diverged (errant transactions, an SQL thread stopped by an error) is
        rebuilt from the primary, and `say` tells why: its data is disposable.
        """
        for name in (PRIMARY, REPLICA):
            self.sb.make_home(name)
        if not self.layout.initialised(PRIMARY):
            self.install(PRIMARY)
        if not self.layout.initialised(REPLICA):
            never_started = not (self.layout.datadir(PRIMARY) / "mariadb-bin.index").exists()
            if never_started and self.layout.running_pid(PRIMARY) is None:
                self.copy(PRIMARY, REPLICA)
            else:
                self.install(REPLICA)
        if self.layout.running_pid(PRIMARY) is None:
            self.start(PRIMARY)
        self.setup(PRIMARY)
        if self.layout.running_pid(REPLICA) is None:
            self.start_server(REPLICA)
        self.setup(REPLICA)
        reason = self.divergence()
        if reason is not None:
            self.sb.say(f"mariadb-replica {reason}: rebuilding it from mariadb-primary")
            self.rebuild_replica()
        self.wait_replicating()

    def binlog_state(self, name: str) -> str:
        with contextlib.closing(self.root_conn(name)) as conn:
            rows = run_sql(conn, "sandbox_gtid_binlog_state")
        return str(rows[0]["gtid_binlog_state"] or "") if rows else ""

    def divergence(self) -> str | None:
        """Why mariadb-replica can no longer follow the primary (None: it can)."""
        replica = self.binlog_state(REPLICA)  # before the primary's: the primary only grows
        errant = errant_mariadb(replica, mariadb_state(self.binlog_state(PRIMARY)))
        if errant:
            return ("has errant transactions (GTID "
                    f"{', '.join(str(e.last) for e in errant)} not from the primary)")
        st = self.slave_status()
        if st is not None and st["Slave_SQL_Running"] != "Yes" and st["Last_SQL_Errno"]:
            return f"SQL thread stopped on error {st['Last_SQL_Errno']}: {st['Last_SQL_Error']}"
        return None

    def rebuild_replica(self) -> None:
        """A fresh mariadb-replica that replays the primary's binlog from its first GTID."""
        self.layout.stop(REPLICA)
        shutil.rmtree(self.layout.datadir(REPLICA), ignore_errors=True)
        self.layout.setup_mark(REPLICA).unlink(missing_ok=True)
        self.install(REPLICA)
        self.start_server(REPLICA)
        self.setup(REPLICA)
        self.wait_replicating()
        # Once it has replayed the primary's binlog, a new binlog file: tools that read a
        # replica's binlog (split-brain's errant-event listing) start from the newest files,
        # as on a replica restored from a backup, not from a file holding the whole history.
        with contextlib.closing(self.root_conn(PRIMARY)) as conn:
            pos = str(run_sql(conn, "sandbox_gtid_binlog_pos")[0]["gtid_binlog_pos"] or "")
        with contextlib.closing(self.root_conn(REPLICA)) as conn:
            waited = run_sql(conn, "sandbox_master_gtid_wait",
                             {"pos": pos, "timeout": _REPLAY_TIMEOUT})[0]["waited"]
            if int(waited) != 0:
                raise SandboxError(
                    f"rebuilt mariadb-replica did not reach the primary's GTID {pos} within "
                    f"{_REPLAY_TIMEOUT:.0f} s; look at {self.layout.log(REPLICA)} "
                    "(`dbgauge sandbox reset` starts afresh)")
            run_sql(conn, "sandbox_flush_binary_logs")

    def describe(self, name: str) -> str:
        """One-line account of what a running instance is doing."""
        if name == PRIMARY:
            with contextlib.closing(self.root_conn(name)) as conn:
                rows = run_sql(conn, "sandbox_gtid_binlog_pos")
            return f"primary, gtid_binlog_pos {rows[0]['gtid_binlog_pos'] or '(empty)'}"
        st = self.slave_status()
        if st is None:
            return "running, replication not configured"
        if st["Slave_IO_Running"] == "Yes" and st["Slave_SQL_Running"] == "Yes":
            lag, gtid = st["Seconds_Behind_Master"], st["Gtid_IO_Pos"]
            return f"replicating from mariadb-primary ({lag} s behind, GTID {gtid})"
        error = st["Last_SQL_Error"] or st["Last_IO_Error"] or "no error"
        return (
            f"replication not running (IO={st['Slave_IO_Running']}, "
            f"SQL={st['Slave_SQL_Running']}): {error}"
        )
