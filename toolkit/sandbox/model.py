"""What a sandbox is made of: instance names, ports, accounts, and the state tests read.

Every other sandbox module builds on these names; tests, benchmarks and the CLI import
them through `toolkit.sandbox`. `SandboxState` is DIR/sandbox.json as read back: where
each instance listens and the accounts to reach it with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from dbgauge.toolkit.errors import SandboxError

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
DAEMON_LISTEN = "127.0.0.1:9860"  # the demo's exporter, at the default base port
DAEMON_OFFSET = 7000  # any other base: the generated config's daemon listens on base + 7000


def daemon_listen(base_port: int) -> str:
    """Where the generated config's daemon listens: dbgauge's 9860 for the default sandbox
    (the demo's URL), base + 7000 for any other, so two sandboxes' daemons never meet."""
    if base_port == DEFAULT_BASE_PORT:
        return DAEMON_LISTEN
    return f"127.0.0.1:{base_port + DAEMON_OFFSET}"

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


def kind(name: str) -> str:
    """The engine behind an instance name: mariadb, pg or pgbouncer."""
    if name.startswith("mariadb"):
        return "mariadb"
    if name.startswith("pg-"):
        return "pg"
    return "pgbouncer"


def check_name(name: str) -> None:
    if name not in INSTANCES:
        raise SandboxError(
            f"unknown sandbox instance {name!r}: expected one of {', '.join(INSTANCES)}"
        )


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
    pg_version: int = 15  # the PostgreSQL major of pg-primary, pg-standby, pg-subscriber

    def instance(self, name: str) -> InstanceInfo:
        try:
            return self.instances[name]
        except KeyError:
            raise SandboxError(
                f"unknown sandbox instance {name!r}: expected one of {', '.join(INSTANCES)}"
            ) from None

    def port(self, name: str) -> int:
        return self.instance(name).port

    def dbgauge_dsn(self, name: str) -> str:
        """DSN of the monitoring account as written to dbgauge.yaml (password in a file)."""
        port = self.port(name)
        if name.startswith("mariadb"):
            return f"mysql://{MONITOR_USER}@127.0.0.1:{port}/"
        db = "pgbouncer" if name == "pgbouncer" else self.postgres.database
        if name == "pg-subscriber":
            db = DRIFT_DATABASE
        return f"postgresql://{MONITOR_USER}@127.0.0.1:{port}/{db}"
