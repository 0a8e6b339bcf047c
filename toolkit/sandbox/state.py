"""The sandbox's memory on disk: generated passwords, sandbox.json and dbgauge.yaml.

Passwords are generated once and kept in DIR/secrets (0600), so `up` is repeatable and a
later process (`status`, a test session) reaches the same servers. sandbox.json holds
what tests need (`load_state`); dbgauge.yaml is the config the exporter and checks read.
Every password is registered for redaction as soon as it is read or made.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from dbgauge.toolkit.errors import SandboxError
from dbgauge.toolkit.redact import register_secret
from dbgauge.toolkit.sandbox.binaries import DEFAULT_PG_VERSION
from dbgauge.toolkit.sandbox.layout import Layout
from dbgauge.toolkit.sandbox.model import (
    ADMIN_USER,
    APP_DATABASE,
    INSTANCES,
    PGBOUNCER_ADMIN,
    PORT_OFFSETS,
    REPL_USER,
    InstanceInfo,
    MariaDBAccess,
    PgBouncerAccess,
    PostgresAccess,
    SandboxState,
    daemon_listen,
    kind,
)
from dbgauge.toolkit.sandbox.process import write_private, write_public

SECRET_NAMES = (
    "dbgauge",
    "mariadb-admin",
    "mariadb-repl",
    "pg-admin",
    "pg-postgres",
    "pg-repl",
    "pgbouncer-admin",
)
# pt-heartbeat-style lag: the primary writes, the replica reads.
_HEARTBEAT = {"mariadb-primary": "write", "mariadb-replica": "read"}
_TARGET_KINDS = {"mariadb": "mysql", "pg": "postgres", "pgbouncer": "pgbouncer"}


def load_secrets(root: Path, *, create: bool) -> dict[str, str]:
    """Passwords are generated once and kept in DIR/secrets (0600) so `up` is repeatable."""
    folder = root / "secrets"
    if create:
        folder.mkdir(mode=0o700, exist_ok=True)
        folder.chmod(0o700)
    passwords: dict[str, str] = {}
    for name in SECRET_NAMES:
        path = folder / f"{name}.password"
        if path.exists():
            passwords[name] = path.read_text().strip()
        elif create:
            passwords[name] = secrets.token_urlsafe(24)
            write_private(path, passwords[name] + "\n")
        else:
            raise SandboxError(f"{path} is missing: run `dbgauge sandbox up --dir {root}`")
        register_secret(passwords[name])
    return passwords


def socket_path(layout: Layout, name: str, port: int) -> Path:
    if kind(name) == "mariadb":
        return layout.home(name) / "mariadbd.sock"
    return layout.home(name) / f".s.PGSQL.{port}"


def build_state(root: Path, base_port: int, pw: Mapping[str, str],
                pg_version: int) -> SandboxState:
    """The state of a sandbox in `root` with this base port, passwords and PostgreSQL."""
    layout = Layout(root)
    instances = {
        name: InstanceInfo(
            name=name,
            port=base_port + PORT_OFFSETS[name],
            socket=socket_path(layout, name, base_port + PORT_OFFSETS[name]),
            datadir=layout.datadir(name),
            log=layout.log(name),
        )
        for name in INSTANCES
    }
    return SandboxState(
        directory=root,
        base_port=base_port,
        instances=MappingProxyType(instances),
        mariadb=MariaDBAccess(ADMIN_USER, pw["mariadb-admin"], REPL_USER, pw["mariadb-repl"]),
        postgres=PostgresAccess(ADMIN_USER, pw["pg-admin"], APP_DATABASE),
        pgbouncer=PgBouncerAccess(PGBOUNCER_ADMIN, pw["pgbouncer-admin"]),
        dbgauge_password=pw["dbgauge"],
        dbgauge_password_file=root / "secrets" / "dbgauge.password",
        config_path=root / "dbgauge.yaml",
        pg_version=pg_version,
    )


def write_state(st: SandboxState) -> None:
    """DIR/sandbox.json (0600: it holds the passwords), read back by `load_state`."""
    doc = {
        "base_port": st.base_port,
        "pg_version": st.pg_version,
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
    write_private(st.directory / "sandbox.json", json.dumps(doc, indent=2) + "\n")


def write_config(st: SandboxState) -> Path:
    """Write DIR/dbgauge.yaml, the targets dbgauge's config loader reads."""
    password_file = str(st.dbgauge_password_file)
    if not re.fullmatch(r"/[\w./-]*", password_file):
        password_file = json.dumps(password_file)  # a JSON string is a YAML scalar
    lines = [
        "# Written by `dbgauge sandbox up`: targets for the local sandbox.",
        "daemon:",
        f"  listen: {daemon_listen(st.base_port)}",
        "targets:",
    ]
    for name in INSTANCES:
        lines += [
            f"  - name: {name}",
            f"    kind: {_TARGET_KINDS[kind(name)]}",
            f"    dsn: {st.dbgauge_dsn(name)}",
            f"    password_file: {password_file}",
            '    labels: {sandbox: "true"}',
        ]
        if name in _HEARTBEAT:
            lines.append(f"    heartbeat: {{mode: {_HEARTBEAT[name]}}}")
    write_public(st.config_path, "\n".join(lines) + "\n")
    return st.config_path


def read_state_json(root: Path) -> dict[str, Any]:
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


def pg_version_of(doc: Mapping[str, Any]) -> int:
    """The PostgreSQL major a sandbox.json records (15 for one made before it did)."""
    return int(doc.get("pg_version", DEFAULT_PG_VERSION))


def load_state(directory: Path) -> SandboxState:
    """Read DIR/sandbox.json (written by `up`) into a SandboxState."""
    root = Path(directory).resolve()
    doc = read_state_json(root)
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
            pg_version=pg_version_of(doc),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SandboxError(
            f"{root / 'sandbox.json'} is malformed ({exc!r}): run `dbgauge sandbox up` again"
        ) from exc
