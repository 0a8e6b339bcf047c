"""Local sandbox of real database servers for dbgauge's tests and demos.

dbgauge's tests check database behaviour against real servers, never mocks (DESIGN.md,
"Real servers, not mocks"). `up` builds and starts, on 127.0.0.1 only and from the locally
installed Debian binaries, a MariaDB primary + GTID replica, a PostgreSQL 15 primary +
streaming standby and PgBouncer in front of the primary. Everything (data, sockets, pid
files, logs, passwords) lives in one directory, so sandboxes with different base ports can
coexist, and `down` stops exactly the processes it started and nothing else.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import quote

import psycopg
import pymysql  # type: ignore[import-untyped,unused-ignore]
import pymysql.cursors  # type: ignore[import-untyped,unused-ignore]
from psycopg import sql

from toolkit.errors import MissingBinaryError, SandboxError

DEFAULT_DIR = Path(".sandbox")
DEFAULT_BASE_PORT = 20000
INSTANCES = ("mariadb-primary", "mariadb-replica", "pg-primary", "pg-standby", "pgbouncer",
             "pg-subscriber")
PORT_OFFSETS: Mapping[str, int] = MappingProxyType(
    {
        "mariadb-primary": 3306,
        "mariadb-replica": 3307,
        "pg-primary": 5432,
        "pg-standby": 5433,
        "pgbouncer": 6432,
        "pg-subscriber": 5434,
    }
)
DAEMON_LISTEN = "127.0.0.1:9860"

ADMIN_USER = "sandbox_admin"
REPL_USER = "repl"
MONITOR_USER = "dbgauge"
PGBOUNCER_ADMIN = "pgb_admin"
APP_DATABASE = "app"
# pg-subscriber subscribes to a publication FOR ALL TABLES of this pg-primary database (its
# own database, so tables other tests create in `app` are not published).
DRIFT_DATABASE = "drift"
PUBLICATION = "drift_pub"
SUBSCRIPTION = "drift_sub"
STANDBY_SLOT = "pg_standby"
# A PgBouncer alias of `app` with a tiny pool, so a test can exhaust it (cl_waiting)
# without starving the pools other tests use.
TINY_POOL_DATABASE = "app_tiny"
TINY_POOL_SIZE = 2

_MARIADBD = Path("/usr/sbin/mariadbd")
_INSTALL_DB = Path("/usr/bin/mariadb-install-db")
_PG_BIN = Path("/usr/lib/postgresql/15/bin")
_PGTAP_CONTROL = Path("/usr/share/postgresql/15/extension/pgtap.control")
_PGBOUNCER = Path("/usr/sbin/pgbouncer")
_REQUIREMENTS: tuple[tuple[Path, str], ...] = (
    (_MARIADBD, "mariadb-server"),
    (_INSTALL_DB, "mariadb-server"),
    (_PG_BIN / "initdb", "postgresql-15"),
    (_PG_BIN / "pg_ctl", "postgresql-15"),
    (_PG_BIN / "pg_basebackup", "postgresql-15"),
    (_PG_BIN / "postgres", "postgresql-15"),
    (_PGTAP_CONTROL, "postgresql-15-pgtap"),
    (_PGBOUNCER, "pgbouncer"),
)
# Options shared by mariadb-install-db and mariadbd: small redo log, no buffer-pool dumps,
# relaxed flushing. It is a sandbox: start and stop speed beat durability.
_INNODB_OPTS = (
    "--innodb-log-file-size=16M",
    "--innodb-buffer-pool-size=128M",
    "--innodb-flush-log-at-trx-commit=2",
    "--innodb-buffer-pool-dump-at-shutdown=OFF",
    "--innodb-buffer-pool-load-at-startup=OFF",
)
_SECRET_NAMES = (
    "dbgauge",
    "mariadb-admin",
    "mariadb-repl",
    "pg-admin",
    "pg-postgres",
    "pg-repl",
    "pgbouncer-admin",
)
_PG_CONF_MARK = "# --- dbgauge sandbox settings (rewritten by `dbgauge sandbox up`) ---"
_SETUP_MARK = "setup.done"
_HEARTBEAT = {"mariadb-primary": "write", "mariadb-replica": "read"}
_MAX_SOCKET_PATH = 100
_START_TIMEOUT = 60.0
_REPLICATION_TIMEOUT = 30.0

_T = TypeVar("_T")


@dataclass(frozen=True)
class InstanceStatus:
    """One line of `status`: whether the instance runs and what it is doing."""

    name: str
    port: int
    running: bool
    pid: int | None
    detail: str


@dataclass(frozen=True)
class InstanceInfo:
    """Where an instance lives: tests connect by port (TCP) or socket."""

    name: str
    port: int
    socket: Path
    datadir: Path
    log: Path


@dataclass(frozen=True)
class MariaDBAccess:
    admin_user: str
    admin_password: str
    repl_user: str
    repl_password: str


@dataclass(frozen=True)
class PostgresAccess:
    admin_user: str
    admin_password: str
    database: str


@dataclass(frozen=True)
class PgBouncerAccess:
    admin_user: str
    admin_password: str


@dataclass(frozen=True)
class SandboxState:
    """Contents of DIR/sandbox.json: everything tests need to reach the sandbox."""

    directory: Path
    base_port: int
    instances: Mapping[str, InstanceInfo]
    mariadb: MariaDBAccess
    postgres: PostgresAccess
    pgbouncer: PgBouncerAccess
    dbgauge_password: str
    dbgauge_password_file: Path
    config_path: Path

    def instance(self, name: str) -> InstanceInfo:
        try:
            return self.instances[name]
        except KeyError:
            raise SandboxError(
                f"unknown sandbox instance {name!r}: expected one of {', '.join(INSTANCES)}"
            ) from None

    def port(self, name: str) -> int:
        return self.instance(name).port

    def admin_dsn(self, name: str, database: str | None = None) -> str:
        """DSN of the all-privileges test account.

        For `pgbouncer` it is pgb_admin on the admin console, or sandbox_admin when another
        database (e.g. "app") is asked for through the pooler.
        """
        port = self.port(name)
        if name.startswith("mariadb"):
            user, password = self.mariadb.admin_user, self.mariadb.admin_password
            scheme, default_db = "mysql", APP_DATABASE
        elif name == "pgbouncer" and database in (None, "pgbouncer"):
            user, password = self.pgbouncer.admin_user, self.pgbouncer.admin_password
            scheme, default_db = "postgresql", "pgbouncer"
        else:
            user, password = self.postgres.admin_user, self.postgres.admin_password
            scheme, default_db = "postgresql", self.postgres.database
        db = default_db if database is None else database
        return f"{scheme}://{quote(user, safe='')}:{quote(password, safe='')}@127.0.0.1:{port}/{db}"

    def dbgauge_dsn(self, name: str) -> str:
        """DSN of the monitoring account as written to dbgauge.yaml (password in a file)."""
        port = self.port(name)
        if name.startswith("mariadb"):
            return f"mysql://{MONITOR_USER}@127.0.0.1:{port}/"
        db = "pgbouncer" if name == "pgbouncer" else self.postgres.database
        if name == "pg-subscriber":
            db = DRIFT_DATABASE
        return f"postgresql://{MONITOR_USER}@127.0.0.1:{port}/{db}"


# --------------------------------------------------------------------------- helpers


def _is_root() -> bool:
    return os.geteuid() == 0


def _kind(name: str) -> str:
    if name.startswith("mariadb"):
        return "mariadb"
    if name.startswith("pg-"):
        return "pg"
    return "pgbouncer"


def _check_name(name: str) -> None:
    if name not in INSTANCES:
        raise SandboxError(
            f"unknown sandbox instance {name!r}: expected one of {', '.join(INSTANCES)}"
        )


def _check_binaries() -> None:
    missing: dict[str, list[str]] = {}
    for path, package in _REQUIREMENTS:
        if not path.exists():
            missing.setdefault(package, []).append(str(path))
    if missing:
        packages = " ".join(missing)
        files = ", ".join(f for fs in missing.values() for f in fs)
        raise MissingBinaryError(
            f"missing {files}: install the Debian package(s) {packages} "
            f"(`sudo apt-get install {packages}` or deploy/install-deps); "
            "the sandbox never installs packages itself"
        )


def _check_base_port(base_port: int) -> None:
    if not 1 <= base_port <= 65535 - max(PORT_OFFSETS.values()):
        raise SandboxError(
            f"--base-port {base_port} is out of range: ports are base + 3306..6432, so use "
            f"1..{65535 - max(PORT_OFFSETS.values())} (default {DEFAULT_BASE_PORT})"
        )


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_bytes()[-16384:].decode("utf-8", "replace")
    except OSError:
        return "(log file does not exist)"
    return "\n".join(text.splitlines()[-lines:]) or "(log file is empty)"


def _text_tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _service_user(kind: str) -> str:
    return "mysql" if kind == "mariadb" else "postgres"


def _chown(path: Path, user: str, *, recursive: bool = False) -> None:
    """As root, hand a directory to the account the server drops to; no-op otherwise."""
    if not _is_root():
        return
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    if recursive:
        for parent, dirs, files in os.walk(path):
            for child in (*dirs, *files):
                os.lchown(os.path.join(parent, child), entry.pw_uid, entry.pw_gid)


def _as_postgres(args: list[str]) -> list[str]:
    """PostgreSQL and PgBouncer refuse to run as root: as root, run them as `postgres`."""
    return ["runuser", "-u", "postgres", "--", *args] if _is_root() else args


def _pg_env(password: str | None = None) -> dict[str, str]:
    """Environment without the caller's PG* variables, which would redirect our tools."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if password is not None:
        env["PGPASSWORD"] = password
    return env


def _run(
    args: list[str],
    what: str,
    *,
    as_postgres: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> str:
    cmd = _as_postgres(args) if as_postgres else args
    try:
        proc = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=None if env is None else dict(env),
            cwd=cwd,
            timeout=_START_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise SandboxError(f"{what}: {args[0]} did not finish in {_START_TIMEOUT:.0f} s") from exc
    except OSError as exc:
        raise SandboxError(f"{what}: cannot run {cmd[0]}: {exc}") from exc
    if proc.returncode != 0:
        output = _text_tail(proc.stdout + "\n" + proc.stderr)
        raise SandboxError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{output}")
    return proc.stdout


def _port_in_use(port: int) -> bool:
    """True if something listens on 127.0.0.1:port (SO_REUSEADDR ignores TIME_WAIT)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


# Servers we spawned directly (mariadbd): polling reaps them, so a stopped one never
# lingers as a zombie that would still look alive in /proc.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _alive(pid: int) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None and child.poll() is not None:
        del _CHILDREN[pid]
        return False
    try:
        proc_stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = proc_stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] not in ("Z", "X")


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def _read_pid(path: Path) -> int | None:
    try:
        first = path.read_text().split("\n", 1)[0].strip()
    except OSError:
        return None
    return int(first) if first.isdigit() else None


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _poll(check: Callable[[], _T | None], timeout: float, interval: float = 0.1) -> _T | None:
    """Call `check` until it returns non-None or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result is not None or time.monotonic() > deadline:
            return result
        time.sleep(interval)


def _write_private(path: Path, text: str) -> None:
    """Atomically write a file readable only by its owner (it holds passwords)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _write_public(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _traversal_blocker(path: Path, user: str) -> Path | None:
    """First directory on `path` that `user` cannot search, or None if all are fine."""
    entry = pwd.getpwnam(user)
    groups = set(os.getgrouplist(user, entry.pw_gid))
    for part in [*reversed(path.parents), path]:
        st = part.stat()
        if st.st_uid == entry.pw_uid:
            bit = stat.S_IXUSR
        elif st.st_gid in groups:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return part
    return None


def _prepare_dir(directory: Path) -> Path:
    root = directory.resolve()
    if root.exists() and not root.is_dir():
        raise SandboxError(f"{root} exists and is not a directory: pass another --dir")
    missing = [p for p in [root, *root.parents] if not p.exists()]
    for part in reversed(missing):
        part.mkdir()
        part.chmod(0o755)
    if _is_root():
        for user in ("postgres", "mysql"):
            blocker = _traversal_blocker(root, user)
            if blocker is not None:
                raise SandboxError(
                    f"{root} is not traversable by the {user!r} OS user ({blocker} lacks the x "
                    f"permission for it), and the servers run as {user}: pass another --dir, "
                    "e.g. --dir /tmp/dbgauge-sandbox, or `chmod o+x` the blocking directory"
                )
    return root


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """Serialise sandbox commands on one directory (two `up`s would race on init)."""
    with open(root / ".lock", "a") as handle:
        deadline = time.monotonic() + 120
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SandboxError(
                        f"another dbgauge sandbox command holds {root / '.lock'}: wait for it"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _load_secrets(root: Path, *, create: bool) -> dict[str, str]:
    """Passwords are generated once and kept in DIR/secrets (0600) so `up` is repeatable."""
    folder = root / "secrets"
    if create:
        folder.mkdir(mode=0o700, exist_ok=True)
        folder.chmod(0o700)
    passwords: dict[str, str] = {}
    for name in _SECRET_NAMES:
        path = folder / f"{name}.password"
        if path.exists():
            passwords[name] = path.read_text().strip()
        elif create:
            passwords[name] = secrets.token_urlsafe(24)
            _write_private(path, passwords[name] + "\n")
        else:
            raise SandboxError(f"{path} is missing: run `dbgauge sandbox up --dir {root}`")
    return passwords


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class _Layout:
    """Paths that do not depend on ports, so `down` works from the directory alone."""

    root: Path

    def home(self, name: str) -> Path:
        return self.root / name

    def datadir(self, name: str) -> Path:
        return self.home(name) if name == "pgbouncer" else self.home(name) / "data"

    def log(self, name: str) -> Path:
        kind = _kind(name)
        if kind == "mariadb":
            return self.home(name) / "error.log"
        if kind == "pg":
            return self.home(name) / "postgresql.log"
        return self.home(name) / "pgbouncer.log"

    def pidfile(self, name: str) -> Path:
        kind = _kind(name)
        if kind == "mariadb":
            return self.home(name) / "mariadbd.pid"
        if kind == "pg":
            return self.datadir(name) / "postmaster.pid"
        return self.home(name) / "pgbouncer.pid"

    def ini(self) -> Path:
        return self.home("pgbouncer") / "pgbouncer.ini"

    def initialised(self, name: str) -> bool:
        kind = _kind(name)
        if kind == "mariadb":
            return (self.datadir(name) / "mysql").is_dir()
        if kind == "pg":
            return (self.datadir(name) / "PG_VERSION").exists()
        return self.ini().exists()

    def running_pid(self, name: str) -> int | None:
        """Pid of the instance if it runs and is ours (its cmdline names our data/config)."""
        pid = _read_pid(self.pidfile(name))
        if pid is None or not _alive(pid):
            return None
        kind = _kind(name)
        if kind == "mariadb":
            marker = f"--datadir={self.datadir(name)}"
        elif kind == "pg":
            marker = str(self.datadir(name))
        else:
            marker = str(self.ini())
        return pid if marker in _cmdline(pid) else None

    def stop(self, name: str) -> bool:
        """Stop our process for `name`: polite signal, then harder ones, then SIGKILL."""
        pid = self.running_pid(name)
        if pid is None:
            return False
        kind = _kind(name)
        # Postgres: SIGINT is "fast" shutdown, SIGQUIT "immediate"; SIGTERM would wait for
        # clients. MariaDB and PgBouncer 1.18 shut down promptly on SIGTERM.
        steps = (
            [(signal.SIGINT, 30.0), (signal.SIGQUIT, 5.0)]
            if kind == "pg"
            else [(signal.SIGTERM, 30.0)]
        )
        for sig, timeout in [*steps, (signal.SIGKILL, 10.0)]:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            if _wait_gone(pid, timeout):
                break
        else:
            raise SandboxError(f"{name} (pid {pid}) survived SIGKILL; look at {self.log(name)}")
        if kind != "pg":  # a killed mariadbd/pgbouncer leaves its pid file behind
            with contextlib.suppress(FileNotFoundError):
                if _read_pid(self.pidfile(name)) == pid:
                    self.pidfile(name).unlink()
        return True


# --------------------------------------------------------------------------- sandbox


class _Sandbox:
    """One sandbox directory with its ports and passwords: knows how to build each part."""

    def __init__(self, root: Path, base_port: int, passwords: Mapping[str, str]) -> None:
        self.layout = _Layout(root)
        self.root = root
        self.base_port = base_port
        self.pw = passwords

    @classmethod
    def open(cls, root: Path) -> _Sandbox:
        state = _read_state_json(root)
        return cls(root, int(state["base_port"]), _load_secrets(root, create=False))

    # -- paths and state

    def port(self, name: str) -> int:
        return self.base_port + PORT_OFFSETS[name]

    def socket(self, name: str) -> Path:
        if _kind(name) == "mariadb":
            return self.layout.home(name) / "mariadbd.sock"
        return self.layout.home(name) / f".s.PGSQL.{self.port(name)}"

    def state(self) -> SandboxState:
        instances = {
            name: InstanceInfo(
                name=name,
                port=self.port(name),
                socket=self.socket(name),
                datadir=self.layout.datadir(name),
                log=self.layout.log(name),
            )
            for name in INSTANCES
        }
        return SandboxState(
            directory=self.root,
            base_port=self.base_port,
            instances=MappingProxyType(instances),
            mariadb=MariaDBAccess(
                ADMIN_USER, self.pw["mariadb-admin"], REPL_USER, self.pw["mariadb-repl"]
            ),
            postgres=PostgresAccess(ADMIN_USER, self.pw["pg-admin"], APP_DATABASE),
            pgbouncer=PgBouncerAccess(PGBOUNCER_ADMIN, self.pw["pgbouncer-admin"]),
            dbgauge_password=self.pw["dbgauge"],
            dbgauge_password_file=self.root / "secrets" / "dbgauge.password",
            config_path=self.root / "dbgauge.yaml",
        )

    def write_state(self) -> None:
        st = self.state()
        doc = {
            "base_port": st.base_port,
            "dir": str(st.directory),
            "config": str(st.config_path),
            "instances": {
                i.name: {
                    "port": i.port,
                    "socket": str(i.socket),
                    "datadir": str(i.datadir),
                    "log": str(i.log),
                }
                for i in st.instances.values()
            },
            "mariadb": {
                "admin_user": st.mariadb.admin_user,
                "admin_password": st.mariadb.admin_password,
                "repl_user": st.mariadb.repl_user,
                "repl_password": st.mariadb.repl_password,
            },
            "postgres": {
                "admin_user": st.postgres.admin_user,
                "admin_password": st.postgres.admin_password,
                "database": st.postgres.database,
            },
            "pgbouncer": {
                "admin_user": st.pgbouncer.admin_user,
                "admin_password": st.pgbouncer.admin_password,
            },
            "dbgauge_password": st.dbgauge_password,
            "dbgauge_password_file": str(st.dbgauge_password_file),
        }
        _write_private(self.root / "sandbox.json", json.dumps(doc, indent=2) + "\n")

    def write_config(self) -> Path:
        """Write DIR/dbgauge.yaml, the targets dbgauge's config loader reads."""
        st = self.state()
        kinds = {"mariadb": "mysql", "pg": "postgres", "pgbouncer": "pgbouncer"}
        password_file = str(st.dbgauge_password_file)
        if not re.fullmatch(r"/[\w./-]*", password_file):
            password_file = json.dumps(password_file)  # a JSON string is a YAML scalar
        lines = [
            "# Written by `dbgauge sandbox up`: targets for the local sandbox.",
            "daemon:",
            f"  listen: {DAEMON_LISTEN}",
            "targets:",
        ]
        for name in INSTANCES:
            lines += [
                f"  - name: {name}",
                f"    kind: {kinds[_kind(name)]}",
                f"    dsn: {st.dbgauge_dsn(name)}",
                f"    password_file: {password_file}",
                '    labels: {sandbox: "true"}',
            ]
            if name in _HEARTBEAT:  # pt-heartbeat-style lag: the primary writes, the replica reads
                lines.append(f"    heartbeat: {{mode: {_HEARTBEAT[name]}}}")
        _write_public(st.config_path, "\n".join(lines) + "\n")
        return st.config_path

    def check_paths(self) -> None:
        for name in INSTANCES:
            sock = str(self.socket(name))
            if len(sock) > _MAX_SOCKET_PATH:
                raise SandboxError(
                    f"socket path {sock} is {len(sock)} characters; unix sockets allow about "
                    f"{_MAX_SOCKET_PATH}: pass a shorter --dir"
                )

    def check_ports(self, names: tuple[str, ...] = INSTANCES) -> None:
        for name in names:
            if self.layout.running_pid(name) is None and _port_in_use(self.port(name)):
                raise SandboxError(
                    f"port {self.port(name)} (for {name}) is already in use by another "
                    "process: stop it, or choose other ports with --base-port "
                    f"(ports are base + {'/'.join(str(v) for v in PORT_OFFSETS.values())})"
                )

    def make_home(self, name: str) -> Path:
        home = self.layout.home(name)
        home.mkdir(exist_ok=True)
        home.chmod(0o755)
        _chown(home, _service_user(_kind(name)))
        return home

    def start_failed(self, name: str, reason: str) -> SandboxError:
        log = self.layout.log(name)
        return SandboxError(
            f"{name} did not start ({reason}); look at {log}, which ends with:\n{_tail(log)}"
        )

    # -- generic start

    def start(self, name: str) -> None:
        """Start one stopped, initialised instance and wait until it does its job."""
        kind = _kind(name)
        if kind == "mariadb":
            self.start_mariadb(name)
            if name == "mariadb-replica" and self.layout.running_pid("mariadb-primary"):
                self.wait_replicating()
        elif kind == "pg":
            self.start_pg(name)
            if name == "pg-standby" and self.layout.running_pid("pg-primary"):
                self.wait_streaming()
            subscribed = (self.layout.home(name) / _SETUP_MARK).exists()
            if name == "pg-subscriber" and subscribed and self.layout.running_pid("pg-primary"):
                self.wait_subscribed()
        else:
            self.write_pgbouncer_files()
            self.start_pgbouncer()

    def ensure_running(self, name: str) -> None:
        if self.layout.running_pid(name) is None:
            self.start(name)

    # -- MariaDB

    def _socket_user(self) -> str:
        return "root" if _is_root() else pwd.getpwuid(os.geteuid()).pw_name

    def mysql_root(self, name: str) -> Any:
        """Connection as the OS user over the socket (unix_socket auth, no password)."""
        return pymysql.connect(
            unix_socket=str(self.socket(name)),
            user=self._socket_user(),
            connect_timeout=2,
            autocommit=True,
        )

    def install_mariadb(self, name: str) -> None:
        home = self.layout.home(name)
        tmp = home / "data.init"
        shutil.rmtree(tmp, ignore_errors=True)
        args = [
            str(_INSTALL_DB),
            "--no-defaults",
            f"--datadir={tmp}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
            "--skip-name-resolve",
            *_INNODB_OPTS,
        ]
        if _is_root():
            args.insert(2, "--user=mysql")
        else:
            args.insert(2, f"--auth-root-socket-user={self._socket_user()}")
        _run(args, f"mariadb-install-db for {name}", cwd=home)
        tmp.rename(self.layout.datadir(name))

    def copy_mariadb(self, source: str, name: str) -> None:
        """Clone a never-started data dir: both servers then begin with empty GTID state."""
        tmp = self.layout.home(name) / "data.init"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(self.layout.datadir(source), tmp, symlinks=True)
        _chown(tmp, "mysql", recursive=True)
        tmp.rename(self.layout.datadir(name))

    def mariadb_args(self, name: str) -> list[str]:
        replica = name == "mariadb-replica"
        args = [str(_MARIADBD), "--no-defaults"]
        if _is_root():
            args.append("--user=mysql")
        args += [
            f"--datadir={self.layout.datadir(name)}",
            f"--socket={self.socket(name)}",
            f"--pid-file={self.layout.pidfile(name)}",
            f"--port={self.port(name)}",
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
            f"--report-port={self.port(name)}",
            "--skip-name-resolve",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
            "--performance-schema=ON",
            "--max-connections=100",
            *_INNODB_OPTS,
        ]
        return args

    def start_mariadb(self, name: str) -> None:
        home = self.layout.home(name)
        with open(home / "mariadbd.out", "ab") as out:
            child = subprocess.Popen(
                self.mariadb_args(name),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=home,
                start_new_session=True,  # not killed by the caller's Ctrl-C
            )
        _CHILDREN[child.pid] = child

        def ready() -> bool | None:
            if child.poll() is not None:
                raise self.start_failed(name, f"mariadbd exited with status {child.returncode}")
            try:
                self.mysql_root(name).close()
            except pymysql.err.MySQLError:
                return None
            return True

        if _poll(ready, _START_TIMEOUT) is None:
            raise self.start_failed(name, f"not accepting connections after {_START_TIMEOUT:.0f} s")

    def setup_mariadb(self, name: str) -> None:
        """Accounts, identical on both servers and kept out of the binlog (no errant GTIDs)."""
        mark = self.layout.home(name) / _SETUP_MARK
        if mark.exists():
            return
        accounts = [
            (ADMIN_USER, self.pw["mariadb-admin"], ["ALL PRIVILEGES ON *.* {} WITH GRANT OPTION"]),
            (REPL_USER, self.pw["mariadb-repl"], ["REPLICATION SLAVE ON *.* {}"]),
            (
                MONITOR_USER,
                self.pw["dbgauge"],
                [
                    "PROCESS, REPLICATION CLIENT, SLAVE MONITOR, SELECT ON *.* {}",
                    "ALL PRIVILEGES ON `dbgauge`.* {}",
                ],
            ),
        ]
        conn = self.mysql_root(name)
        try:
            cur = conn.cursor()
            cur.execute("SET SESSION sql_log_bin = 0")
            cur.execute("SELECT user, host FROM mysql.user WHERE user = ''")
            for user, host in cur.fetchall():  # anonymous users shadow user@% from 127.0.0.1
                cur.execute("DROP USER %s@%s", (user, host))
            cur.execute("DROP DATABASE IF EXISTS test")
            cur.execute("DELETE FROM mysql.db WHERE Db IN ('test', 'test\\\\_%')")
            cur.execute("FLUSH PRIVILEGES")
            for user, password, grants in accounts:
                cur.execute("CREATE USER IF NOT EXISTS %s@'%%' IDENTIFIED BY %s", (user, password))
                cur.execute("ALTER USER %s@'%%' IDENTIFIED BY %s", (user, password))
                for grant in grants:
                    cur.execute("GRANT " + grant.format("TO %s@'%%'"), (user,))
            if name == "mariadb-primary":
                cur.execute("SET SESSION sql_log_bin = 1")  # replicated on purpose
                cur.execute(f"CREATE DATABASE IF NOT EXISTS `{APP_DATABASE}`")
                cur.execute("CREATE DATABASE IF NOT EXISTS `dbgauge`")
            else:
                cur.execute("STOP SLAVE")
                cur.execute(
                    "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%s, "
                    "MASTER_USER=%s, MASTER_PASSWORD=%s, MASTER_USE_GTID=slave_pos, "
                    "MASTER_CONNECT_RETRY=1",
                    (self.port("mariadb-primary"), REPL_USER, self.pw["mariadb-repl"]),
                )
                cur.execute("START SLAVE")
        finally:
            conn.close()
        mark.write_text("")

    def slave_status(self) -> dict[str, Any] | None:
        conn = self.mysql_root("mariadb-replica")
        try:
            cur = conn.cursor(pymysql.cursors.DictCursor)
            cur.execute("SHOW SLAVE STATUS")
            row: dict[str, Any] | None = cur.fetchone()
            return row
        finally:
            conn.close()

    def wait_replicating(self) -> None:
        started = False

        def check() -> dict[str, Any] | None:
            nonlocal started
            st = self.slave_status()
            if st is None:
                raise SandboxError(
                    "mariadb-replica has no replication configured: remove "
                    f"{self.layout.home('mariadb-replica')} (after `down`) and run `up` again"
                )
            if st["Slave_IO_Running"] == "Yes" and st["Slave_SQL_Running"] == "Yes":
                return st
            if st["Last_SQL_Errno"]:
                raise SandboxError(
                    f"mariadb-replica SQL thread stopped: {st['Last_SQL_Error']}; look at "
                    f"{self.layout.log('mariadb-replica')}"
                )
            if st["Slave_IO_Running"] == "No" and st["Slave_SQL_Running"] == "No" and not started:
                with contextlib.closing(self.mysql_root("mariadb-replica")) as conn:
                    conn.cursor().execute("START SLAVE")
                started = True
            return None

        if _poll(check, _REPLICATION_TIMEOUT, 0.1) is None:
            st = self.slave_status() or {}
            raise SandboxError(
                "mariadb-replica is not replicating after "
                f"{_REPLICATION_TIMEOUT:.0f} s (IO={st.get('Slave_IO_Running')}, "
                f"SQL={st.get('Slave_SQL_Running')}, last IO error: {st.get('Last_IO_Error')}); "
                f"look at {self.layout.log('mariadb-replica')}:\n"
                f"{_tail(self.layout.log('mariadb-replica'))}"
            )

    def up_mariadb(self) -> None:
        primary, replica = "mariadb-primary", "mariadb-replica"
        for name in (primary, replica):
            self.make_home(name)
        if not self.layout.initialised(primary):
            self.install_mariadb(primary)
        if not self.layout.initialised(replica):
            never_started = not (self.layout.datadir(primary) / "mariadb-bin.index").exists()
            if never_started and self.layout.running_pid(primary) is None:
                self.copy_mariadb(primary, replica)
            else:
                self.install_mariadb(replica)
        self.ensure_running(primary)
        self.setup_mariadb(primary)
        if self.layout.running_pid(replica) is None:
            self.start_mariadb(replica)
        self.setup_mariadb(replica)
        self.wait_replicating()

    # -- PostgreSQL

    def pg_conf_block(self, name: str) -> str:
        def q(value: str) -> str:
            return "'" + value.replace("'", "''") + "'"

        settings = [
            ("listen_addresses", q("127.0.0.1")),
            ("port", str(self.port(name))),
            ("unix_socket_directories", q(str(self.layout.home(name)))),
            ("cluster_name", q(name)),
            ("wal_level", "logical"),  # pg-subscriber's logical replication needs it
            ("max_wal_senders", "10"),
            ("max_replication_slots", "10"),
            ("max_slot_wal_keep_size", "1GB"),
            ("wal_log_hints", "on"),
            ("hot_standby", "on"),
            ("max_connections", "50"),
            ("shared_buffers", "32MB"),
            ("shared_preload_libraries", q("pg_stat_statements")),
            ("track_io_timing", "on"),
        ]
        return "\n".join([_PG_CONF_MARK, *(f"{k} = {v}" for k, v in settings)]) + "\n"

    def write_pg_conf(self, name: str, datadir: Path) -> None:
        """Our settings go last in postgresql.conf (last wins), replacing earlier ones."""
        conf = datadir / "postgresql.conf"
        text = conf.read_text()
        new = text.split(_PG_CONF_MARK, 1)[0].rstrip("\n") + "\n\n" + self.pg_conf_block(name)
        if new != text:
            conf.write_text(new)  # rewriting in place keeps the postgres ownership

    def init_pg_primary(self, name: str = "pg-primary") -> None:
        home = self.layout.home(name)
        tmp = home / "data.init"
        shutil.rmtree(tmp, ignore_errors=True)
        _run(
            [
                str(_PG_BIN / "initdb"),
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
            as_postgres=True,
            env=_pg_env(),
            cwd=home,
        )
        self.write_pg_conf(name, tmp)
        tmp.rename(self.layout.datadir(name))

    def init_pg_standby(self) -> None:
        name = "pg-standby"
        home = self.layout.home(name)
        tmp = home / "data.init"
        shutil.rmtree(tmp, ignore_errors=True)
        conninfo = (
            f"host=127.0.0.1 port={self.port('pg-primary')} user={REPL_USER} "
            "application_name=pg-standby"
        )
        _run(
            [
                str(_PG_BIN / "pg_basebackup"),
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
            as_postgres=True,
            env=_pg_env(self.pw["pg-repl"]),
            cwd=home,
        )
        self.write_pg_conf(name, tmp)
        tmp.rename(self.layout.datadir(name))

    def start_pg(self, name: str) -> None:
        datadir = self.layout.datadir(name)
        self.write_pg_conf(name, datadir)
        try:
            _run(
                [
                    str(_PG_BIN / "pg_ctl"),
                    "-D",
                    str(datadir),
                    "-l",
                    str(self.layout.log(name)),
                    "-w",
                    "-t",
                    str(int(_START_TIMEOUT)),
                    "start",
                ],
                f"pg_ctl start for {name}",
                as_postgres=True,
                env=_pg_env(),
                cwd=self.layout.home(name),
            )
        except SandboxError as exc:
            raise self.start_failed(name, str(exc).splitlines()[0]) from exc

    def pg_local(self, name: str, dbname: str = "postgres") -> psycopg.Connection[Any]:
        """Superuser connection over the unix socket (trust), needing no password."""
        return psycopg.connect(
            host=str(self.layout.home(name)),
            port=self.port(name),
            user="postgres",
            dbname=dbname,
            autocommit=True,
            connect_timeout=5,
            application_name="dbgauge-sandbox",
        )

    def create_pg_roles(self, conn: psycopg.Connection[Any], subscriber: bool = False) -> None:
        """The sandbox's roles, with their passwords (the replication role on pg-primary)."""
        roles = [
            ("postgres", self.pw["pg-postgres"], "SUPERUSER LOGIN"),
            (ADMIN_USER, self.pw["pg-admin"], "SUPERUSER LOGIN"),
            (MONITOR_USER, self.pw["dbgauge"], "LOGIN"),
        ]
        if not subscriber:
            roles.insert(2, (REPL_USER, self.pw["pg-repl"], "LOGIN REPLICATION"))
        for role, password, attrs in roles:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
            verb = "ALTER" if exists.fetchone() else "CREATE"
            conn.execute(
                sql.SQL("{} ROLE {} WITH {} PASSWORD {}").format(
                    sql.SQL(verb), sql.Identifier(role), sql.SQL(attrs), sql.Literal(password)
                )
            )
        conn.execute(sql.SQL("GRANT pg_monitor TO {}").format(sql.Identifier(MONITOR_USER)))

    def setup_pg_primary(self) -> None:
        mark = self.layout.home("pg-primary") / _SETUP_MARK
        if mark.exists():
            return
        with self.pg_local("pg-primary") as conn:
            self.create_pg_roles(conn)
            self.create_pg_database(conn, APP_DATABASE)
            slot = conn.execute(
                "SELECT 1 FROM pg_replication_slots WHERE slot_name = %s", (STANDBY_SLOT,)
            )
            if not slot.fetchone():
                conn.execute("SELECT pg_create_physical_replication_slot(%s)", (STANDBY_SLOT,))
        with self.pg_local("pg-primary", APP_DATABASE) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pgtap")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS dbgauge AUTHORIZATION {}").format(
                    sql.Identifier(MONITOR_USER)
                )
            )
        mark.write_text("")

    def ensure_logical_wal(self) -> None:
        """pg-subscriber needs wal_level=logical on pg-primary: a primary started before
        pg-subscriber existed is restarted once, with the rewritten settings."""
        with self.pg_local("pg-primary") as conn:
            row = conn.execute("SHOW wal_level").fetchone()
        if row is not None and row[0] != "logical":
            self.layout.stop("pg-primary")
            self.start_pg("pg-primary")  # rewrites the settings block first

    def setup_pg_publication(self) -> None:
        """The `drift` database on pg-primary and its publication FOR ALL TABLES."""
        mark = self.layout.home("pg-primary") / "publication.done"
        if mark.exists():
            return
        with self.pg_local("pg-primary") as conn:
            self.create_pg_database(conn, DRIFT_DATABASE)
        with self.pg_local("pg-primary", DRIFT_DATABASE) as conn:
            found = conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (PUBLICATION,))
            if not found.fetchone():
                conn.execute(
                    sql.SQL("CREATE PUBLICATION {} FOR ALL TABLES").format(
                        sql.Identifier(PUBLICATION)
                    )
                )
        mark.write_text("")

    def create_pg_database(self, conn: psycopg.Connection[Any], name: str) -> None:
        """Create database `name` owned by the admin account; dbgauge may connect."""
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if not found.fetchone():
            conn.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(name), sql.Identifier(ADMIN_USER)
                )
            )
        conn.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                sql.Identifier(name), sql.Identifier(MONITOR_USER)
            )
        )

    def setup_pg_subscriber(self) -> None:
        """Roles, databases and the subscription to pg-primary's `drift` publication.

        Logical replication copies rows, not DDL: a test creates a table on both sides, then
        runs ALTER SUBSCRIPTION drift_sub REFRESH PUBLICATION on the subscriber.
        """
        name = "pg-subscriber"
        mark = self.layout.home(name) / _SETUP_MARK
        if mark.exists():
            return
        with self.pg_local(name) as conn:
            self.create_pg_roles(conn, subscriber=True)
            for database in (APP_DATABASE, DRIFT_DATABASE):
                self.create_pg_database(conn, database)
        conninfo = (
            f"host=127.0.0.1 port={self.port('pg-primary')} dbname={DRIFT_DATABASE} "
            f"user={ADMIN_USER} password={self.pw['pg-admin']} application_name={SUBSCRIPTION}"
        )
        with self.pg_local(name, DRIFT_DATABASE) as conn:
            found = conn.execute(
                "SELECT 1 FROM pg_subscription WHERE subname = %s", (SUBSCRIPTION,)
            )
            if not found.fetchone():
                conn.execute(
                    sql.SQL("CREATE SUBSCRIPTION {} CONNECTION {} PUBLICATION {}").format(
                        sql.Identifier(SUBSCRIPTION),
                        sql.Literal(conninfo),
                        sql.Identifier(PUBLICATION),
                    )
                )
        mark.write_text("")

    def wait_subscribed(self) -> None:
        """Until pg-subscriber's apply worker runs (it starts a moment after the server)."""

        def check() -> bool | None:
            with self.pg_local("pg-subscriber", DRIFT_DATABASE) as conn:
                row = conn.execute(
                    "SELECT count(pid) FROM pg_stat_subscription WHERE relid IS NULL"
                ).fetchone()
            return True if row and row[0] else None

        if _poll(check, _REPLICATION_TIMEOUT, 0.1) is None:
            log = self.layout.log("pg-subscriber")
            raise SandboxError(
                f"pg-subscriber's apply worker for {SUBSCRIPTION} is not running after "
                f"{_REPLICATION_TIMEOUT:.0f} s; look at {log}:\n{_tail(log)}"
            )

    def standby_state(self) -> str | None:
        with self.pg_local("pg-primary") as conn:
            row = conn.execute(
                "SELECT state FROM pg_stat_replication WHERE application_name = 'pg-standby'"
            ).fetchone()
        return None if row is None else str(row[0])

    def wait_streaming(self) -> None:
        def check() -> str | None:
            return "ok" if self.standby_state() == "streaming" else None

        if _poll(check, _REPLICATION_TIMEOUT, 0.1) is None:
            log = self.layout.log("pg-standby")
            raise SandboxError(
                f"pg-standby is not streaming from pg-primary after {_REPLICATION_TIMEOUT:.0f} s "
                f"(state: {self.standby_state()}); look at {log}:\n{_tail(log)}"
            )

    # -- PgBouncer

    def pgbouncer_files(self) -> dict[Path, str]:
        home = self.layout.home("pgbouncer")
        primary = self.port("pg-primary")
        tiny = TINY_POOL_SIZE
        ini = f"""\
;; Written by `dbgauge sandbox up`; rewritten on every run.
[databases]
{APP_DATABASE} = host=127.0.0.1 port={primary} dbname={APP_DATABASE}
postgres = host=127.0.0.1 port={primary} dbname=postgres
{TINY_POOL_DATABASE} = host=127.0.0.1 port={primary} dbname={APP_DATABASE} pool_size={tiny}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port("pgbouncer")}
unix_socket_dir = {home}
auth_type = scram-sha-256
auth_file = {home / "userlist.txt"}
admin_users = {PGBOUNCER_ADMIN}
stats_users = {MONITOR_USER}
pool_mode = transaction
ignore_startup_parameters = extra_float_digits,options
max_client_conn = 200
default_pool_size = 10
pidfile = {self.layout.pidfile("pgbouncer")}
logfile = {self.layout.log("pgbouncer")}
"""

        def entry(user: str, password: str) -> str:
            return '"{}" "{}"'.format(user.replace('"', '""'), password.replace('"', '""'))

        # Plain passwords: PgBouncer needs them to do SCRAM towards the backend too.
        userlist = "\n".join(
            [
                entry(PGBOUNCER_ADMIN, self.pw["pgbouncer-admin"]),
                entry(MONITOR_USER, self.pw["dbgauge"]),
                entry(ADMIN_USER, self.pw["pg-admin"]),
            ]
        )
        return {self.layout.ini(): ini, home / "userlist.txt": userlist + "\n"}

    def write_pgbouncer_files(self) -> bool:
        changed = False
        for path, text in self.pgbouncer_files().items():
            if path.exists() and path.read_text() == text:
                continue
            _write_private(path, text)
            _chown(path, "postgres")
            changed = True
        return changed

    def pgbouncer_admin(self) -> psycopg.Connection[Any]:
        # The admin console speaks only the simple query protocol: ClientCursor + autocommit.
        return psycopg.connect(
            host="127.0.0.1",
            port=self.port("pgbouncer"),
            user=PGBOUNCER_ADMIN,
            password=self.pw["pgbouncer-admin"],
            dbname="pgbouncer",
            autocommit=True,
            connect_timeout=2,
            cursor_factory=psycopg.ClientCursor,
        )

    def start_pgbouncer(self) -> None:
        try:
            _run(
                [str(_PGBOUNCER), "-d", str(self.layout.ini())],
                "pgbouncer",
                as_postgres=True,
                env=_pg_env(),
                cwd=self.layout.home("pgbouncer"),
            )
        except SandboxError as exc:
            raise self.start_failed("pgbouncer", str(exc).splitlines()[0]) from exc

        def ready() -> bool | None:
            try:
                with self.pgbouncer_admin() as conn:
                    conn.execute("SHOW VERSION")
            except psycopg.Error:
                return None
            return True

        if _poll(ready, 15.0) is None:
            raise self.start_failed("pgbouncer", "admin console not answering after 15 s")

    def up_postgres(self) -> None:
        for name in ("pg-primary", "pg-standby", "pgbouncer", "pg-subscriber"):
            self.make_home(name)
        if not self.layout.initialised("pg-primary"):
            self.init_pg_primary()
        self.ensure_running("pg-primary")
        self.ensure_logical_wal()
        self.setup_pg_primary()
        self.setup_pg_publication()
        if not self.layout.initialised("pg-standby"):
            self.init_pg_standby()
        if self.layout.running_pid("pg-standby") is None:
            self.start_pg("pg-standby")
        self.wait_streaming()
        if not self.layout.initialised("pg-subscriber"):
            self.init_pg_primary("pg-subscriber")
        self.ensure_running("pg-subscriber")
        self.setup_pg_subscriber()
        self.wait_subscribed()
        changed = self.write_pgbouncer_files()
        pid = self.layout.running_pid("pgbouncer")
        if pid is None:
            self.start_pgbouncer()
        elif changed:
            os.kill(pid, signal.SIGHUP)  # reload the new ini/userlist

    # -- status

    def describe(self, name: str) -> str:
        """One-line account of what a running instance is doing."""
        if name == "mariadb-primary":
            with contextlib.closing(self.mysql_root(name)) as conn:
                cur = conn.cursor()
                cur.execute("SELECT @@gtid_binlog_pos")
                return f"primary, gtid_binlog_pos {cur.fetchone()[0] or '(empty)'}"
        if name == "mariadb-replica":
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
        if name == "pg-primary":
            with self.pg_local(name) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
                ).fetchone()
            return f"primary, {row[0] if row else 0} standby streaming"
        if name == "pg-subscriber":
            with self.pg_local(name, DRIFT_DATABASE) as conn:
                row = conn.execute(
                    "SELECT count(pid) FROM pg_stat_subscription WHERE relid IS NULL"
                ).fetchone()
            worker = "running" if row and row[0] else "not running"
            return f"subscribed to pg-primary ({SUBSCRIPTION}: apply worker {worker})"
        if name == "pg-standby":
            with self.pg_local(name) as conn:
                row = conn.execute("SELECT status FROM pg_stat_wal_receiver").fetchone()
            return (
                "streaming from pg-primary"
                if row and row[0] == "streaming"
                else (f"in recovery, WAL receiver {row[0] if row else 'not running'}")
            )
        with self.pgbouncer_admin() as conn:
            row = conn.execute("SHOW VERSION").fetchone()
        return f"transaction pooling in front of pg-primary ({row[0] if row else 'PgBouncer'})"


def _read_state_json(root: Path) -> dict[str, Any]:
    path = root / "sandbox.json"
    try:
        doc: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        raise SandboxError(
            f"no sandbox in {root} ({path.name} missing): run `dbgauge sandbox up --dir {root}`"
        ) from None
    except (OSError, ValueError) as exc:
        raise SandboxError(f"cannot read {path}: {exc}; run `dbgauge sandbox up` again") from exc
    return doc


# --------------------------------------------------------------------------- public API


def up(directory: Path = DEFAULT_DIR, base_port: int = DEFAULT_BASE_PORT) -> Path:
    """Create/start whatever is missing or stopped, verify replication; return dbgauge.yaml."""
    _check_binaries()
    _check_base_port(base_port)
    root = _prepare_dir(Path(directory))
    with _locked(root):
        if (root / "sandbox.json").exists():
            previous = int(_read_state_json(root)["base_port"])
            if previous != base_port:
                raise SandboxError(
                    f"the sandbox in {root} was created with --base-port {previous}: pass "
                    f"--base-port {previous}, or `down` it and remove {root} to change ports"
                )
        sandbox = _Sandbox(root, base_port, _load_secrets(root, create=True))
        sandbox.check_paths()
        sandbox.write_state()
        sandbox.check_ports()

        def guarded(step: Callable[[], None], what: str) -> None:
            try:
                step()
            except (psycopg.Error, pymysql.err.MySQLError, OSError) as exc:
                raise SandboxError(f"setting up {what} in {root} failed: {exc}") from exc

        # MariaDB and PostgreSQL are independent: build them side by side.
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="sandbox") as pool:
            futures = [
                pool.submit(guarded, sandbox.up_mariadb, "MariaDB"),
                pool.submit(guarded, sandbox.up_postgres, "PostgreSQL/PgBouncer"),
            ]
        errors = [exc for exc in (f.exception() for f in futures) if exc is not None]
        if errors:
            if len(errors) == 1:
                raise errors[0]
            raise SandboxError("\n\n".join(str(e) for e in errors)) from errors[0]
        return sandbox.write_config()


def down(directory: Path = DEFAULT_DIR) -> list[str]:
    """Stop the sandbox's own processes (verified by pid file + cmdline), dependants first."""
    root = Path(directory).resolve()
    if not root.is_dir():
        return []
    layout = _Layout(root)
    stopped: list[str] = []
    with _locked(root):
        for name in reversed(INSTANCES):
            if layout.stop(name):
                stopped.append(name)
    return stopped


def status(directory: Path = DEFAULT_DIR) -> list[InstanceStatus]:
    """Running state, pid, port and a one-line detail for each instance."""
    root = Path(directory).resolve()
    layout = _Layout(root)
    try:
        sandbox: _Sandbox | None = _Sandbox.open(root)
    except SandboxError:
        sandbox = None
    result = []
    for name in INSTANCES:
        base = sandbox.base_port if sandbox else DEFAULT_BASE_PORT
        port = base + PORT_OFFSETS[name]
        pid = layout.running_pid(name) if root.is_dir() else None
        if pid is None:
            detail = "stopped" if layout.initialised(name) else "not initialised"
            if _port_in_use(port):
                detail += f"; port {port} is in use by another process"
        elif sandbox is None:
            detail = "running, but sandbox.json is missing"
        else:
            try:
                detail = sandbox.describe(name)
            except (psycopg.Error, pymysql.err.MySQLError, OSError) as exc:
                detail = f"running, but not answering: {exc}".splitlines()[0]
        result.append(InstanceStatus(name, port, pid is not None, pid, detail))
    return result


def start_instance(directory: Path, name: str) -> None:
    """(Re)start one stopped instance and wait until it replicates/streams again."""
    _check_name(name)
    root = Path(directory).resolve()
    sandbox = _Sandbox.open(root)
    with _locked(root):
        if sandbox.layout.running_pid(name) is not None:
            return
        if not sandbox.layout.initialised(name):
            raise SandboxError(f"{name} in {root} is not initialised: run `dbgauge sandbox up`")
        sandbox.check_ports((name,))
        try:
            sandbox.start(name)
        except (psycopg.Error, pymysql.err.MySQLError, OSError) as exc:
            raise SandboxError(f"starting {name} in {root} failed: {exc}") from exc


def stop_instance(directory: Path, name: str) -> None:
    """Stop one instance of the sandbox (no-op if it is not running)."""
    _check_name(name)
    root = Path(directory).resolve()
    if not root.is_dir():
        return
    with _locked(root):
        _Layout(root).stop(name)


def rebuild_instance(directory: Path, name: str) -> None:
    """Re-clone pg-standby from pg-primary with pg_basebackup and wait until it streams.

    For tests that break the standby on purpose (e.g. promote it with pg_promote() to
    create two primaries): its data directory is discarded, and its replication slot on
    the primary, left inactive and holding WAL from before, is dropped and created anew.
    """
    if name != "pg-standby":
        raise SandboxError(f"only pg-standby can be rebuilt (from pg-primary), not {name!r}")
    root = Path(directory).resolve()
    sandbox = _Sandbox.open(root)
    with _locked(root):
        sandbox.layout.stop(name)
        try:
            with sandbox.pg_local("pg-primary") as conn:

                def slot_free() -> bool | None:
                    row = conn.execute(
                        "SELECT active FROM pg_replication_slots WHERE slot_name = %s",
                        (STANDBY_SLOT,),
                    ).fetchone()
                    return True if row is None or not row[0] else None

                if _poll(slot_free, _REPLICATION_TIMEOUT) is None:
                    raise SandboxError(f"slot {STANDBY_SLOT} on pg-primary is still in use")
                conn.execute(
                    "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                    "WHERE slot_name = %s",
                    (STANDBY_SLOT,),
                )
                conn.execute("SELECT pg_create_physical_replication_slot(%s)", (STANDBY_SLOT,))
            shutil.rmtree(sandbox.layout.datadir(name), ignore_errors=True)
            sandbox.init_pg_standby()
            sandbox.start_pg(name)
            sandbox.wait_streaming()
        except (psycopg.Error, OSError) as exc:
            raise SandboxError(f"rebuilding {name} in {root} failed: {exc}") from exc


def load_state(directory: Path) -> SandboxState:
    """Read DIR/sandbox.json (written by `up`) into a SandboxState."""
    root = Path(directory).resolve()
    doc = _read_state_json(root)
    try:
        instances = {
            name: InstanceInfo(
                name=name,
                port=int(item["port"]),
                socket=Path(item["socket"]),
                datadir=Path(item["datadir"]),
                log=Path(item["log"]),
            )
            for name, item in doc["instances"].items()
        }
        maria, pg, pgb = doc["mariadb"], doc["postgres"], doc["pgbouncer"]
        return SandboxState(
            directory=Path(doc["dir"]),
            base_port=int(doc["base_port"]),
            instances=MappingProxyType(instances),
            mariadb=MariaDBAccess(
                maria["admin_user"],
                maria["admin_password"],
                maria["repl_user"],
                maria["repl_password"],
            ),
            postgres=PostgresAccess(pg["admin_user"], pg["admin_password"], pg["database"]),
            pgbouncer=PgBouncerAccess(pgb["admin_user"], pgb["admin_password"]),
            dbgauge_password=doc["dbgauge_password"],
            dbgauge_password_file=Path(doc["dbgauge_password_file"]),
            config_path=Path(doc["config"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SandboxError(
            f"{root / 'sandbox.json'} is malformed ({exc!r}): run `dbgauge sandbox up` again"
        ) from exc


def _main(argv: list[str] | None = None) -> int:
    """Manual-testing entry point; the real CLI is `dbgauge sandbox`."""
    parser = argparse.ArgumentParser(prog="sandbox.py", description="dbgauge sandbox (manual use)")
    parser.add_argument("command", choices=("up", "down", "status"))
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--base-port", type=int, default=DEFAULT_BASE_PORT)
    args = parser.parse_args(argv)
    try:
        if args.command == "up":
            started = time.monotonic()
            path = up(args.dir, args.base_port)
            print(f"sandbox up in {time.monotonic() - started:.1f} s; targets: {path}")
        elif args.command == "down":
            print("stopped: " + (", ".join(down(args.dir)) or "nothing was running"))
        else:
            for st in status(args.dir):
                state = f"running pid {st.pid}" if st.running else "not running"
                print(f"{st.name:16} {st.port:>5}  {state:18} {st.detail}")
    except SandboxError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, MissingBinaryError) else 1
    return 0


if __name__ == "__main__":
    sys.exit(_main())
