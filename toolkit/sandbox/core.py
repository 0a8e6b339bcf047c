"""One sandbox directory with its ports and passwords, shared by the engine modules.

`Sandbox` knows where things are and what to check before starting anything (socket path
lengths, free ports); the engine modules (`mariadb`, `postgres`, `pgbouncer`) build on it.
`run_sql` is how they run their statements: named files from sql/<flavor>/sandbox_*.sql
through `toolkit.db`, values bound as parameters and identifiers quoted by
`toolkit.sql.quote_ident`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.errors import ConnectError, DbgaugeError, QueryError, SandboxError
from dbgauge.toolkit.sandbox.binaries import DEFAULT_PG_VERSION, PgBinaries, pg_binaries
from dbgauge.toolkit.sandbox.layout import Layout, service_user
from dbgauge.toolkit.sandbox.model import INSTANCES, PORT_OFFSETS, SandboxState, kind
from dbgauge.toolkit.sandbox.process import chown, port_in_use, tail
from dbgauge.toolkit.sandbox.state import (
    build_state,
    load_secrets,
    pg_version_of,
    read_state_json,
    socket_path,
    write_config,
    write_state,
)
from dbgauge.toolkit.sql import load_sql, quote_ident

# What a server that is down, starting or misbehaving raises through toolkit.db.
DB_ERRORS = (ConnectError, QueryError)

_MAX_SOCKET_PATH = 100
log = logging.getLogger("dbgauge.sandbox")
_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def run_sql(conn: Connection, name: str, params: Any = None, **identifiers: str) -> list[Row]:
    """Run sql/<flavor>/<name>.sql with its {placeholders} filled by quoted identifiers."""
    flavor = conn.server.flavor
    text = load_sql(flavor, name, conn.server.version)
    for key, value in identifiers.items():
        text = text.replace("{" + key + "}", quote_ident(value, flavor))
    left = _PLACEHOLDER.search(text)
    if left:
        raise DbgaugeError(f"SQL {name!r} needs an identifier for {left.group()}")
    return conn.execute_sql(text, params)


class Sandbox:
    """One sandbox directory with its ports and passwords: where each part lives."""

    def __init__(self, root: Path, base_port: int, passwords: Mapping[str, str],
                 say: Callable[[str], None] | None = None,
                 pg: PgBinaries | None = None) -> None:
        self.layout = Layout(root)
        self.root = root
        self.base_port = base_port
        self.pw = passwords
        # The PostgreSQL major its pg-* members run, and where its programs are.
        self.pg = pg or pg_binaries(DEFAULT_PG_VERSION)
        # How a repair is announced ("pg-standby was promoted: rebuilding it"): the CLI
        # prints it; by default it is logged.
        self.say: Callable[[str], None] = say or log.warning

    @classmethod
    def open(cls, root: Path) -> Sandbox:
        """The sandbox `up` made in `root` (SandboxError if there is none)."""
        state = read_state_json(root)
        return cls(root, int(state["base_port"]), load_secrets(root, create=False),
                   pg=pg_binaries(pg_version_of(state)))

    def port(self, name: str) -> int:
        return self.base_port + PORT_OFFSETS[name]

    def socket(self, name: str) -> Path:
        return socket_path(self.layout, name, self.port(name))

    def state(self) -> SandboxState:
        return build_state(self.root, self.base_port, self.pw, self.pg.major)

    def write_state(self) -> None:
        write_state(self.state())

    def write_config(self) -> Path:
        return write_config(self.state())

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
            if self.layout.running_pid(name) is None and port_in_use(self.port(name)):
                raise SandboxError(
                    f"port {self.port(name)} (for {name}) is already in use by another "
                    "process: stop it, or choose other ports with --base-port "
                    f"(ports are base + {'/'.join(str(v) for v in PORT_OFFSETS.values())})"
                )

    def make_home(self, name: str) -> Path:
        home = self.layout.home(name)
        home.mkdir(exist_ok=True)
        home.chmod(0o755)
        chown(home, service_user(kind(name)))
        return home

    def start_failed(self, name: str, reason: str) -> SandboxError:
        log = self.layout.log(name)
        return SandboxError(
            f"{name} did not start ({reason}); look at {log}, which ends with:\n{tail(log)}"
        )
