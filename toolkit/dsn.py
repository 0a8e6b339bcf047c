"""Parse connection strings into driver-neutral parameters (pure, no I/O).

Accepted forms: ``mysql://user[:pass]@host[:port][/db][?unix_socket=...]`` (``mariadb://``
too) and ``postgresql://user[:pass]@host[:port][/db][?sslmode=...]`` (``postgres://``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from toolkit.errors import ConfigError
from toolkit.redact import redact, register_secret

MYSQL_SCHEMES = frozenset({"mysql", "mariadb"})
POSTGRES_SCHEMES = frozenset({"postgresql", "postgres"})
DEFAULT_PORTS = {"mysql": 3306, "postgres": 5432}


@dataclass(frozen=True)
class ConnParams:
    """Where and as whom to connect; `password` is never part of repr()."""

    family: str  # "mysql" or "postgres" (the wire protocol)
    host: str
    port: int
    user: str
    dbname: str | None
    password: str | None = field(default=None, repr=False)
    options: tuple[tuple[str, str], ...] = ()

    def with_password(self, password: str | None) -> ConnParams:
        return replace(self, password=password)

    def or_password(self, password: str | None) -> ConnParams:
        """These parameters with `password` if the DSN carries none: on every command
        line a password written in the DSN wins over --password-file/--password-env."""
        return self if self.password is not None else self.with_password(password)

    @property
    def address(self) -> str:
        """host:port (or socket path) for messages: never includes credentials."""
        return self.host if self.host.startswith("/") else f"{self.host}:{self.port}"

    @property
    def kind(self) -> str:
        """The target kind a DSN implies: a postgresql:// DSN to the database `pgbouncer`
        is PgBouncer's admin console."""
        if self.family == "mysql":
            return "mysql"
        return "pgbouncer" if self.dbname == "pgbouncer" else "postgres"

    def option(self, key: str) -> str | None:
        for k, v in self.options:
            if k == key:
                return v
        return None


def parse_dsn(dsn: str) -> ConnParams:
    """Parse a DSN, raising ConfigError (password redacted) when it is not usable."""
    shown = redact(dsn)
    if "://" not in dsn:
        raise ConfigError(
            f"DSN {shown!r} has no scheme: use mysql://user@host:port/db or "
            "postgresql://user@host:port/db"
        )
    try:
        parts = urlsplit(dsn)
        port_value = parts.port
    except ValueError as exc:
        raise ConfigError(f"DSN {shown!r} is malformed: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme in MYSQL_SCHEMES:
        family = "mysql"
    elif scheme in POSTGRES_SCHEMES:
        family = "postgres"
    else:
        raise ConfigError(
            f"DSN {shown!r} has unsupported scheme {scheme!r}: use mysql:// (MySQL, MariaDB) "
            "or postgresql:// (PostgreSQL, PgBouncer)"
        )
    options = tuple(parse_qsl(parts.query, keep_blank_values=True))
    host = unquote(parts.hostname or "")
    socket = dict(options).get("unix_socket" if family == "mysql" else "host", "")
    if socket:  # an explicit socket wins over the (often "localhost") host part
        host = socket
    if not host:
        raise ConfigError(f"DSN {shown!r} names no host")
    user = unquote(parts.username or "")
    if not user:
        raise ConfigError(f"DSN {shown!r} names no user: add user@ before the host")
    dbname = unquote(parts.path.lstrip("/")) or None
    password = unquote(parts.password) if parts.password is not None else None
    return ConnParams(
        family=family,
        host=host,
        port=port_value or DEFAULT_PORTS[family],
        user=user,
        dbname=dbname,
        password=password,
        options=tuple((k, v) for k, v in options if k not in {"unix_socket", "host"}),
    )


def resolve_password(params: ConnParams, owner: str, password_env: str | None,
                     password_file: Path | None) -> ConnParams:
    """`params` with the password from the environment variable or file, if one is named
    (else the DSN's own). Read at connect time, so a rotated secret file is picked up on
    reconnect; registered for redaction before anything can echo it."""
    password = params.password
    if password_env:
        password = os.environ.get(password_env)
        if password is None:
            raise ConfigError(f"{owner}: environment variable {password_env} is not set")
    elif password_file:
        try:
            password = password_file.read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise ConfigError(f"{owner}: cannot read password_file {password_file}: "
                              f"{exc.strerror}") from None
    register_secret(password)
    return params.with_password(password)
