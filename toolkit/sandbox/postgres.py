"""The sandbox's PostgreSQL instances: primary, streaming standby, logical subscriber.

They run one major (15, Debian's, by default; `binaries` finds the programs of each).
`initdb` makes pg-primary and pg-subscriber, `pg_basebackup` clones pg-standby from the
primary through its physical slot (where the major has none, `postgres_backup` copies the
primary's data directory inside the backup API), and `pg_ctl` starts each one. Our settings go in a
marked block at the end of postgresql.conf (rewritten before every start), which is
config, not SQL, so it is written here. What is created inside the servers lives in
`postgres_setup`.

pg-primary archives its WAL into `pg-primary/archive/` (the last hour of it) with an
archive_command that fails while the file `pg-primary/archive_fail` exists, so a test can
make archiving fail on demand (and the archiver metrics show it) without a restart.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
from pathlib import Path

from dbgauge.toolkit.errors import SandboxError
from dbgauge.toolkit.sandbox.core import Sandbox, run_sql
from dbgauge.toolkit.sandbox.model import DRIFT_DATABASE, REPL_USER, STANDBY_SLOT, SUBSCRIPTION
from dbgauge.toolkit.sandbox.postgres_backup import clone_standby
from dbgauge.toolkit.sandbox.postgres_setup import (
    PRIMARY,
    STANDBY,
    SUBSCRIBER,
    local_conn,
    setup_primary,
    setup_publication,
    setup_subscriber,
)
from dbgauge.toolkit.sandbox.process import (
    REPLICATION_TIMEOUT,
    START_TIMEOUT,
    chown,
    pg_env,
    poll,
    run,
    tail,
)

_PG_CONF_MARK = "# --- dbgauge sandbox settings (rewritten by `dbgauge sandbox up`) ---"
ARCHIVE_DIR = "archive"
ARCHIVE_FAIL_FLAG = "archive_fail"
# Settings that take effect only at server start, and what pg-primary must run with:
# a primary started by an older sandbox is restarted once to pick them up.
_RESTART_SETTINGS = {"wal_level": "logical", "archive_mode": "on"}
# How long `up` lets a standby that looks healthy try to stream before rebuilding it.
FIRST_TRY_TIMEOUT = 15.0


class Postgres:
    """Builds, starts and inspects the three PostgreSQL instances of one sandbox."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sb = sandbox
        self.layout = sandbox.layout

    # -- files and processes

    def conf_block(self, name: str) -> str:
        def q(value: str) -> str:
            return "'" + value.replace("'", "''") + "'"

        settings = [
            ("listen_addresses", q("127.0.0.1")),
            ("port", str(self.sb.port(name))),
            ("unix_socket_directories", q(str(self.layout.home(name)))),
            ("cluster_name", q(name)),
            ("wal_level", "logical"),  # pg-subscriber's logical replication needs it
            ("max_wal_senders", "10"),
            ("max_replication_slots", "10"),
            ("max_slot_wal_keep_size", "1GB"),
            ("wal_log_hints", "on"),
            ("hot_standby", "on"),
            # room for bench/fleet.py: 1,000 targets put 200 connections on each server
            ("max_connections", "300"),
            ("shared_buffers", "32MB"),
            ("shared_preload_libraries", q("pg_stat_statements")),
            ("track_io_timing", "on"),
        ]
        if name == PRIMARY:
            settings += [("archive_mode", "on"),
                         ("archive_command", q(self.archive_command()))]
        return "\n".join([_PG_CONF_MARK, *(f"{k} = {v}" for k, v in settings)]) + "\n"

    def archive_dir(self) -> Path:
        """Where pg-primary's archive_command copies WAL segments."""
        return self.layout.home(PRIMARY) / ARCHIVE_DIR

    def archive_fail_flag(self) -> Path:
        """While this file exists, pg-primary's archive_command fails."""
        return self.layout.home(PRIMARY) / ARCHIVE_FAIL_FLAG

    def archive_command(self) -> str:
        """Copy the segment unless the flag file exists; copies older than an hour go, so a
        long-lived sandbox does not fill its disk (nothing restores from them)."""
        flag, target = shlex.quote(str(self.archive_fail_flag())), shlex.quote(
            str(self.archive_dir()))
        return (f"test ! -f {flag} && cp %p {target}/%f && "
                f"find {target} -type f -mmin +60 -delete")

    def make_archive_dir(self) -> None:
        directory = self.archive_dir()
        directory.mkdir(exist_ok=True)
        chown(directory, "postgres")

    def write_conf(self, name: str, datadir: Path) -> None:
        """Our settings go last in postgresql.conf (last wins), replacing earlier ones."""
        conf = datadir / "postgresql.conf"
        text = conf.read_text()
        new = text.split(_PG_CONF_MARK, 1)[0].rstrip("\n") + "\n\n" + self.conf_block(name)
        if new != text:
            conf.write_text(new)  # rewriting in place keeps the postgres ownership

    def init_primary(self, name: str = PRIMARY) -> None:
        """initdb a new cluster (pg-primary, or pg-subscriber, which is a primary too)."""
        home = self.layout.home(name)
        tmp = home / "data.init"
        shutil.rmtree(tmp, ignore_errors=True)
        run(
            [
                str(self.sb.pg.tool("initdb")),
                "-D",
                str(tmp),
                "-U",
                "postgres",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ],
            f"initdb for {name}",
            postgres_user=True,
            env=self.sb.pg.env(pg_env()),
            cwd=home,
        )
        self.write_conf(name, tmp)
        tmp.rename(self.layout.datadir(name))

    def init_standby(self) -> None:
        """Clone pg-primary into pg-standby through its slot, set up to stream (-R)."""
        home = self.layout.home(STANDBY)
        tmp = home / "data.init"
        shutil.rmtree(tmp, ignore_errors=True)
        if not self.sb.pg.has("pg_basebackup"):
            clone_standby(self.sb, tmp)
            self.write_conf(STANDBY, tmp)
            tmp.rename(self.layout.datadir(STANDBY))
            return
        conninfo = (
            f"host=127.0.0.1 port={self.sb.port(PRIMARY)} user={REPL_USER} "
            "application_name=pg-standby"
        )
        run(
            [
                str(self.sb.pg.tool("pg_basebackup")),
                "-D",
                str(tmp),
                "-d",
                conninfo,
                "-R",
                "-X",
                "stream",
                "-S",
                STANDBY_SLOT,
                "-c",
                "fast",
                "--no-sync",
            ],
            "pg_basebackup for pg-standby",
            postgres_user=True,
            env=self.sb.pg.env(pg_env(self.sb.pw["pg-repl"])),
            cwd=home,
        )
        self.write_conf(STANDBY, tmp)
        tmp.rename(self.layout.datadir(STANDBY))

    def start_server(self, name: str) -> None:
        datadir = self.layout.datadir(name)
        self.write_conf(name, datadir)
        try:
            run(
                [
                    str(self.sb.pg.tool("pg_ctl")),
                    "-D",
                    str(datadir),
                    "-l",
                    str(self.layout.log(name)),
                    "-w",
                    "-t",
                    str(int(START_TIMEOUT)),
                    "start",
                ],
                f"pg_ctl start for {name}",
                postgres_user=True,
                env=self.sb.pg.env(pg_env()),
                cwd=self.layout.home(name),
            )
        except SandboxError as exc:
            raise self.sb.start_failed(name, str(exc).splitlines()[0]) from exc

    def start(self, name: str) -> None:
        """Start a stopped, initialised instance and wait until it streams/subscribes."""
        self.start_server(name)
        primary_runs = self.layout.running_pid(PRIMARY) is not None
        if name == STANDBY and primary_runs:
            self.wait_streaming()
        subscribed = self.layout.setup_mark(name).exists()
        if name == SUBSCRIBER and subscribed and primary_runs:
            self.wait_subscribed()

    def ensure_running(self, name: str) -> None:
        if self.layout.running_pid(name) is None:
            self.start(name)

    def ensure_restart_settings(self) -> None:
        """pg-subscriber needs wal_level=logical on pg-primary, the archiver tests need
        archive_mode=on: a primary started by an older sandbox without them is restarted
        once, with the rewritten settings."""
        with contextlib.closing(local_conn(self.sb, PRIMARY)) as conn:
            rows = run_sql(conn, "sandbox_restart_settings", (list(_RESTART_SETTINGS),))
        running = {str(r["name"]): str(r["setting"]) for r in rows}
        if any(running.get(k) != v for k, v in _RESTART_SETTINGS.items()):
            self.layout.stop(PRIMARY)
            self.start_server(PRIMARY)  # rewrites the settings block first

    # -- waiting for replication

    def apply_worker_running(self) -> bool:
        with contextlib.closing(local_conn(self.sb, SUBSCRIBER, DRIFT_DATABASE)) as conn:
            rows = run_sql(conn, "sandbox_apply_workers")
        return bool(rows and rows[0]["workers"])

    def wait_subscribed(self) -> None:
        """Until pg-subscriber's apply worker runs (it starts a moment after the server)."""
        if poll(lambda: True if self.apply_worker_running() else None,
                REPLICATION_TIMEOUT, 0.1) is None:
            log = self.layout.log(SUBSCRIBER)
            raise SandboxError(
                f"pg-subscriber's apply worker for {SUBSCRIPTION} is not running after "
                f"{REPLICATION_TIMEOUT:.0f} s; look at {log}:\n{tail(log)}"
            )

    def standby_state(self) -> str | None:
        with contextlib.closing(local_conn(self.sb, PRIMARY)) as conn:
            rows = run_sql(conn, "sandbox_standby_state", (STANDBY,))
        return None if not rows else str(rows[0]["state"])

    def wait_streaming(self, timeout: float = REPLICATION_TIMEOUT) -> None:
        def check() -> str | None:
            return "ok" if self.standby_state() == "streaming" else None

        if poll(check, timeout, 0.1) is None:
            log = self.layout.log(STANDBY)
            raise SandboxError(
                f"pg-standby is not streaming from pg-primary after {timeout:.0f} s "
                f"(state: {self.standby_state()}); look at {log}:\n{tail(log)}"
            )

    # -- the whole engine

    def up(self) -> None:
        """Create and start whatever is missing; standby streaming, subscriber subscribed.

        A member that diverged from pg-primary (a promoted standby, a standby that will not
        stream, a lost slot) is rebuilt from it, and `say` tells why: its data is disposable.
        """
        for name in (PRIMARY, STANDBY, SUBSCRIBER):
            self.sb.make_home(name)
        self.make_archive_dir()
        if not self.layout.initialised(PRIMARY):
            self.init_primary()
        self.ensure_running(PRIMARY)
        self.ensure_restart_settings()
        setup_primary(self.sb)
        setup_publication(self.sb)
        if not self.layout.initialised(STANDBY):
            self.init_standby()
        self.up_standby()
        if not self.layout.initialised(SUBSCRIBER):
            self.init_primary(SUBSCRIBER)
        reason = self.subscriber_divergence()
        if reason is not None:
            self.sb.say(f"pg-subscriber {reason}: rebuilding it from pg-primary")
            self.rebuild_subscriber()
        self.ensure_running(SUBSCRIBER)
        setup_subscriber(self.sb)
        self.wait_subscribed()

    def slot(self, name: str) -> dict[str, object] | None:
        """pg-primary's replication slot `name` (active, wal_status), None if it has none."""
        with contextlib.closing(local_conn(self.sb, PRIMARY)) as conn:
            rows = run_sql(conn, "sandbox_replication_slot", (name,))
        return dict(rows[0]) if rows else None

    def standby_divergence(self) -> str | None:
        """Why pg-standby can no longer follow pg-primary (None: it can, as far as we see)."""
        if not (self.layout.datadir(STANDBY) / "standby.signal").exists():
            return "was promoted (no standby.signal: it is a primary of its own)"
        return self.slot_trouble(STANDBY_SLOT)

    def slot_trouble(self, name: str) -> str | None:
        """Why the consumer of pg-primary's slot `name` cannot stream from it, or None."""
        slot = self.slot(name)
        if slot is None:
            return f"has no slot {name} on pg-primary any more"
        if slot["wal_status"] == "lost":
            return f"cannot catch up (slot {name} on pg-primary lost WAL it needs)"
        return None

    def up_standby(self) -> None:
        """Start pg-standby and see it stream; rebuild it if it diverged or will not."""
        reason = self.standby_divergence()
        if reason is None:
            if self.layout.running_pid(STANDBY) is None:
                self.start_server(STANDBY)
            try:
                self.wait_streaming(FIRST_TRY_TIMEOUT)
                return
            except SandboxError:
                reason = (f"does not stream from pg-primary after {FIRST_TRY_TIMEOUT:.0f} s "
                          f"(state: {self.standby_state()})")
        self.sb.say(f"pg-standby {reason}: rebuilding it from pg-primary")
        self.layout.stop(STANDBY)
        self.rebuild_standby()

    def subscriber_divergence(self) -> str | None:
        """Why pg-subscriber's subscription can no longer stream (None: it can)."""
        if not self.layout.setup_mark(SUBSCRIBER).exists():
            return None  # not subscribed yet: setup_subscriber creates the slot
        return self.slot_trouble(SUBSCRIPTION)

    def rebuild_subscriber(self) -> None:
        """Discard pg-subscriber and its slot; a fresh one subscribes again (setup_subscriber).

        Logical replication copies rows, not DDL: the new subscriber starts without the
        tables tests created on it.
        """
        self.layout.stop(SUBSCRIBER)
        self.drop_slot(SUBSCRIPTION, DRIFT_DATABASE)  # a logical slot: from its database
        shutil.rmtree(self.layout.datadir(SUBSCRIBER), ignore_errors=True)
        self.layout.setup_mark(SUBSCRIBER).unlink(missing_ok=True)
        self.init_primary(SUBSCRIBER)

    def drop_slot(self, name: str, database: str = "postgres") -> None:
        """Drop pg-primary's slot `name` once nothing uses it (no-op without one)."""
        with contextlib.closing(local_conn(self.sb, PRIMARY, database)) as conn:

            def slot_free() -> bool | None:
                rows = run_sql(conn, "sandbox_replication_slot", (name,))
                return True if not rows or not rows[0]["active"] else None

            if poll(slot_free, REPLICATION_TIMEOUT) is None:
                raise SandboxError(f"slot {name} on pg-primary is still in use")
            run_sql(conn, "sandbox_drop_slot", (name,))

    def rebuild_standby(self) -> None:
        """Discard pg-standby (stopped), renew its slot on the primary, clone it again."""
        self.drop_slot(STANDBY_SLOT)
        with contextlib.closing(local_conn(self.sb, PRIMARY)) as conn:
            run_sql(conn, "sandbox_create_slot", (STANDBY_SLOT,))
        shutil.rmtree(self.layout.datadir(STANDBY), ignore_errors=True)
        self.init_standby()
        self.start_server(STANDBY)
        self.wait_streaming()

    def describe(self, name: str) -> str:
        """One-line account of what a running instance is doing."""
        if name == PRIMARY:
            with contextlib.closing(local_conn(self.sb, name)) as conn:
                rows = run_sql(conn, "sandbox_streaming_standbys")
            standbys, logical = (rows[0]["standbys"], rows[0]["logical"]) if rows else (0, 0)
            return f"primary, {standbys} standby streaming, {logical} logical walsender"
        if name == SUBSCRIBER:
            worker = "running" if self.apply_worker_running() else "not running"
            return f"subscribed to pg-primary ({SUBSCRIPTION}: apply worker {worker})"
        with contextlib.closing(local_conn(self.sb, name)) as conn:
            rows = run_sql(conn, "sandbox_wal_receiver")
        receiver = rows[0]["status"] if rows else "not running"
        return (
            "streaming from pg-primary"
            if receiver == "streaming"
            else f"in recovery, WAL receiver {receiver}"
        )
