"""Local sandbox of real database servers for dbgauge's tests and demos.

dbgauge's tests check database behaviour against real servers, never mocks (CONTRIBUTING.md:
no mocks, no skips). `up` builds and starts, on 127.0.0.1 only and from the locally
installed binaries, a MariaDB primary + GTID replica, a PostgreSQL primary + streaming
standby + logical subscriber (15 from Debian, or another major from 13 to 18: `binaries`)
and PgBouncer in front of the primary. Everything
(data, sockets, pid files, logs, passwords) lives in one directory, so sandboxes with
different base ports can coexist, and `down` stops exactly the processes it started and
nothing else. `dbgauge sandbox` is the command line over this API.

The package: `model` (names, ports, accounts, and `SandboxState`: where each instance
listens and the passwords, what tests read), `process` (OS helpers), `binaries` (the
server programs it needs), `layout` (paths, stopping), `state` (secrets, sandbox.json,
dbgauge.yaml), `core` (one sandbox directory, SQL through toolkit.db), one module per
engine (`mariadb`, `postgres` with `postgres_setup`, `pgbouncer`) and `engines` (all
three together).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from dbgauge.toolkit.errors import MissingBinaryError, SandboxError
from dbgauge.toolkit.sandbox.binaries import DEFAULT_PG_VERSION, PG_VERSIONS, check_binaries
from dbgauge.toolkit.sandbox.core import Sandbox
from dbgauge.toolkit.sandbox.engines import SETUP_ERRORS, build, describe, start
from dbgauge.toolkit.sandbox.layout import Layout
from dbgauge.toolkit.sandbox.model import (
    ADMIN_USER,
    APP_DATABASE,
    DAEMON_LISTEN,
    DAEMON_OFFSET,
    DEFAULT_BASE_PORT,
    DEFAULT_DIR,
    DRIFT_DATABASE,
    INSTANCES,
    MONITOR_USER,
    PGBOUNCER_ADMIN,
    PORT_OFFSETS,
    PUBLICATION,
    REPL_USER,
    STANDBY_SLOT,
    SUBSCRIPTION,
    TINY_POOL_DATABASE,
    TINY_POOL_SIZE,
    InstanceInfo,
    InstanceStatus,
    MariaDBAccess,
    PgBouncerAccess,
    PostgresAccess,
    SandboxState,
    check_name,
)
from dbgauge.toolkit.sandbox.postgres import Postgres
from dbgauge.toolkit.sandbox.process import locked, port_in_use, prepare_dir
from dbgauge.toolkit.sandbox.state import (
    load_secrets,
    load_state,
    pg_version_of,
    read_state_json,
)

__all__ = [
    "ADMIN_USER", "APP_DATABASE", "DAEMON_LISTEN", "DEFAULT_BASE_PORT", "DEFAULT_DIR",
    "DEFAULT_PG_VERSION", "DRIFT_DATABASE", "INSTANCES", "MONITOR_USER", "PGBOUNCER_ADMIN",
    "PG_VERSIONS", "PORT_OFFSETS",
    "PUBLICATION", "REPL_USER", "STANDBY_SLOT", "SUBSCRIPTION", "TINY_POOL_DATABASE",
    "TINY_POOL_SIZE", "InstanceInfo", "InstanceStatus", "MariaDBAccess", "MissingBinaryError",
    "PgBouncerAccess", "PostgresAccess", "SandboxError", "SandboxState", "down", "load_state",
    "rebuild_instance", "reset", "start_instance", "status", "stop_instance", "up",
]


def _check_base_port(base_port: int) -> None:
    if not 1 <= base_port <= 65535 - DAEMON_OFFSET:
        raise SandboxError(
            f"--base-port {base_port} is out of range: ports are base + 3306..6432 and the "
            f"daemon's base + {DAEMON_OFFSET}, so use 1..{65535 - DAEMON_OFFSET} (default "
            f"{DEFAULT_BASE_PORT})"
        )


def up(directory: Path = DEFAULT_DIR, base_port: int | None = None,
       say: Callable[[str], None] | None = None, pg_version: int | None = None,
       *, mariadb: bool = True) -> Path:
    """Create/start whatever is missing or stopped, verify replication; return dbgauge.yaml.

    The pg-* members run PostgreSQL `pg_version`; `mariadb=False` leaves the MariaDB
    members alone (a PostgreSQL-only sandbox, as the matrix tests use). A member that
    diverged from its primary (a promoted standby, a replica with errant transactions, a
    lost slot, ...) is rebuilt from it; `say` is told which and why (default: a log
    warning). `base_port` and `pg_version` None: the existing sandbox's, else the defaults.
    """
    check_binaries(pg_version if pg_version is not None else _recorded_major(Path(directory)))
    if base_port is not None:
        _check_base_port(base_port)
    root = prepare_dir(Path(directory))
    with locked(root):
        base_port, pg_version = _settled(root, base_port, pg_version)
        pg = check_binaries(pg_version)
        sandbox = Sandbox(root, base_port, load_secrets(root, create=True), say, pg)
        sandbox.check_paths()
        sandbox.write_state()
        sandbox.check_ports()
        build(sandbox, root, mariadb=mariadb)
        return sandbox.write_config()


def _recorded_major(root: Path) -> int:
    """The PostgreSQL major of the sandbox in `root`, else the default."""
    return pg_version_of(read_state_json(root)) if (root / "sandbox.json").is_file() \
        else DEFAULT_PG_VERSION


def _settled(root: Path, base_port: int | None, pg_version: int | None) -> tuple[int, int]:
    """The ports and PostgreSQL major of the sandbox in `root`: the ones it was made with
    (a different one asked for is an error), the asked ones, or the defaults."""
    if not (root / "sandbox.json").exists():
        return (DEFAULT_BASE_PORT if base_port is None else base_port,
                DEFAULT_PG_VERSION if pg_version is None else pg_version)
    doc = read_state_json(root)
    previous, major = int(doc["base_port"]), pg_version_of(doc)
    if base_port is not None and previous != base_port:
        raise SandboxError(
            f"the sandbox in {root} was created with --base-port {previous}: pass "
            f"--base-port {previous}, or `down` it and remove {root} to change ports"
        )
    if pg_version is not None and major != pg_version:
        raise SandboxError(
            f"the sandbox in {root} runs PostgreSQL {major}, not {pg_version}: pass "
            f"--pg-version {major}, or `down` it and remove {root} (or use another --dir) "
            "to change majors"
        )
    return previous, major


def down(directory: Path = DEFAULT_DIR) -> list[str]:
    """Stop the sandbox's own processes (verified by pid file + cmdline), dependants first."""
    root = Path(directory).resolve()
    if not root.is_dir():
        return []
    layout = Layout(root)
    stopped: list[str] = []
    with locked(root):
        for name in reversed(INSTANCES):
            if layout.stop(name):
                stopped.append(name)
    return stopped


def reset(directory: Path = DEFAULT_DIR, base_port: int | None = None,
          say: Callable[[str], None] | None = None, pg_version: int | None = None) -> Path:
    """Stop the sandbox, discard every instance's data and build it afresh (the generated
    passwords stay; the ports and the PostgreSQL major too unless `base_port` and
    `pg_version` say otherwise); files of others in the directory (a demo's serve.log) are
    kept."""
    root = Path(directory).resolve()
    if (root / "sandbox.json").exists():
        doc = read_state_json(root)
        base_port = int(doc["base_port"]) if base_port is None else base_port
        pg_version = pg_version_of(doc) if pg_version is None else pg_version
    down(root)
    if root.is_dir():
        with locked(root):
            for name in INSTANCES:
                shutil.rmtree(Layout(root).home(name), ignore_errors=True)
            for leftover in ("sandbox.json", "dbgauge.yaml"):
                (root / leftover).unlink(missing_ok=True)
    return up(root, base_port, say, pg_version)


def status(directory: Path = DEFAULT_DIR) -> list[InstanceStatus]:
    """Running state, pid, port and a one-line detail for each instance."""
    root = Path(directory).resolve()
    layout = Layout(root)
    try:
        sandbox: Sandbox | None = Sandbox.open(root)
    except SandboxError:
        sandbox = None
    result = []
    for name in INSTANCES:
        base = sandbox.base_port if sandbox else DEFAULT_BASE_PORT
        port = base + PORT_OFFSETS[name]
        pid = layout.running_pid(name) if root.is_dir() else None
        if pid is None:
            detail = "stopped" if layout.initialised(name) else "not initialised"
            if port_in_use(port):
                detail += f"; port {port} is in use by another process"
        elif sandbox is None:
            detail = "running, but sandbox.json is missing"
        else:
            try:
                detail = describe(sandbox, name)
            except SETUP_ERRORS as exc:
                detail = f"running, but not answering: {exc}".splitlines()[0]
        result.append(InstanceStatus(name, port, pid is not None, pid, detail))
    return result


def start_instance(directory: Path, name: str) -> None:
    """(Re)start one stopped instance and wait until it replicates/streams again."""
    check_name(name)
    root = Path(directory).resolve()
    sandbox = Sandbox.open(root)
    with locked(root):
        if sandbox.layout.running_pid(name) is not None:
            return
        if not sandbox.layout.initialised(name):
            raise SandboxError(f"{name} in {root} is not initialised: run `dbgauge sandbox up`")
        sandbox.check_ports((name,))
        try:
            start(sandbox, name)
        except SETUP_ERRORS as exc:
            raise SandboxError(f"starting {name} in {root} failed: {exc}") from exc


def stop_instance(directory: Path, name: str) -> None:
    """Stop one instance of the sandbox (no-op if it is not running)."""
    check_name(name)
    root = Path(directory).resolve()
    if not root.is_dir():
        return
    with locked(root):
        Layout(root).stop(name)


def rebuild_instance(directory: Path, name: str) -> None:
    """Re-clone pg-standby from pg-primary (pg_basebackup, or the backup API where the
    major has no pg_basebackup) and wait until it streams.

    For tests that break the standby on purpose (e.g. promote it with pg_promote() to
    create two primaries): its data directory is discarded, and its replication slot on
    the primary, left inactive and holding WAL from before, is dropped and created anew.
    """
    if name != "pg-standby":
        raise SandboxError(f"only pg-standby can be rebuilt (from pg-primary), not {name!r}")
    root = Path(directory).resolve()
    sandbox = Sandbox.open(root)
    with locked(root):
        sandbox.layout.stop(name)
        try:
            Postgres(sandbox).rebuild_standby()
        except SETUP_ERRORS as exc:
            raise SandboxError(f"rebuilding {name} in {root} failed: {exc}") from exc
