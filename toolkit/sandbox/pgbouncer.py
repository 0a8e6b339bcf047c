"""The sandbox's PgBouncer, in transaction pooling mode in front of pg-primary.

Its pgbouncer.ini and userlist.txt are config files, written here from templates and
rewritten on every `up` (a running PgBouncer reloads them on SIGHUP). The sandbox talks to
it only through the admin console, via `toolkit.db`'s PgBouncer connection.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from dbgauge.toolkit.db import Connection, connect_dsn
from dbgauge.toolkit.errors import SandboxError
from dbgauge.toolkit.sandbox.binaries import PGBOUNCER
from dbgauge.toolkit.sandbox.core import DB_ERRORS, Sandbox
from dbgauge.toolkit.sandbox.model import (
    ADMIN_USER,
    APP_DATABASE,
    MONITOR_USER,
    PGBOUNCER_ADMIN,
    TINY_POOL_DATABASE,
    TINY_POOL_SIZE,
)
from dbgauge.toolkit.sandbox.process import chown, pg_env, poll, run, write_private

NAME = "pgbouncer"


class PgBouncer:
    """Writes the config of, starts and inspects the sandbox's PgBouncer."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sb = sandbox
        self.layout = sandbox.layout

    def files(self) -> dict[Path, str]:
        home = self.layout.home(NAME)
        primary = self.sb.port("pg-primary")
        tiny = TINY_POOL_SIZE
        ini = f"""\
;; Written by `dbgauge sandbox up`; rewritten on every run.
[databases]
{APP_DATABASE} = host=127.0.0.1 port={primary} dbname={APP_DATABASE}
postgres = host=127.0.0.1 port={primary} dbname=postgres
{TINY_POOL_DATABASE} = host=127.0.0.1 port={primary} dbname={APP_DATABASE} pool_size={tiny}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.sb.port(NAME)}
unix_socket_dir = {home}
auth_type = scram-sha-256
auth_file = {home / "userlist.txt"}
admin_users = {PGBOUNCER_ADMIN}
stats_users = {MONITOR_USER}
pool_mode = transaction
ignore_startup_parameters = extra_float_digits,options
max_client_conn = 1000
default_pool_size = 10
pidfile = {self.layout.pidfile(NAME)}
logfile = {self.layout.log(NAME)}
"""

        def entry(user: str, password: str) -> str:
            return '"{}" "{}"'.format(user.replace('"', '""'), password.replace('"', '""'))

        # Plain passwords: PgBouncer needs them to do SCRAM towards the backend too.
        userlist = "\n".join(
            [
                entry(PGBOUNCER_ADMIN, self.sb.pw["pgbouncer-admin"]),
                entry(MONITOR_USER, self.sb.pw["dbgauge"]),
                entry(ADMIN_USER, self.sb.pw["pg-admin"]),
            ]
        )
        return {self.layout.ini(): ini, home / "userlist.txt": userlist + "\n"}

    def write_files(self) -> bool:
        """Write the files that changed (0600, owned by postgres); True if any did."""
        changed = False
        for path, text in self.files().items():
            if path.exists() and path.read_text() == text:
                continue
            write_private(path, text)
            chown(path, "postgres")
            changed = True
        return changed

    def admin_conn(self) -> Connection:
        """The admin console (simple query protocol: toolkit.db binds on the client)."""
        return connect_dsn(
            f"postgresql://{PGBOUNCER_ADMIN}@127.0.0.1:{self.sb.port(NAME)}/pgbouncer",
            password=self.sb.pw["pgbouncer-admin"],
            kind="pgbouncer",
            connect_timeout=2,
        )

    def start_server(self) -> None:
        try:
            run(
                [str(PGBOUNCER), "-d", str(self.layout.ini())],
                "pgbouncer",
                postgres_user=True,
                env=pg_env(),
                cwd=self.layout.home(NAME),
            )
        except SandboxError as exc:
            raise self.sb.start_failed(NAME, str(exc).splitlines()[0]) from exc

        def ready() -> bool | None:
            try:
                self.admin_conn().close()  # connecting runs SHOW VERSION
            except DB_ERRORS:
                return None
            return True

        if poll(ready, 15.0) is None:
            raise self.sb.start_failed(NAME, "admin console not answering after 15 s")

    def start(self) -> None:
        """Start a stopped PgBouncer with freshly written files."""
        self.write_files()
        self.start_server()

    def up(self) -> None:
        """Write the files; start PgBouncer, or have a running one reload what changed."""
        self.sb.make_home(NAME)
        changed = self.write_files()
        pid = self.layout.running_pid(NAME)
        if pid is None:
            self.start_server()
        elif changed:
            os.kill(pid, signal.SIGHUP)  # reload the new ini/userlist

    def describe(self) -> str:
        with contextlib.closing(self.admin_conn()) as conn:
            version = conn.server.version_string or "PgBouncer"
        return f"transaction pooling in front of pg-primary ({version})"
