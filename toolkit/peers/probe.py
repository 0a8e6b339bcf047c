"""The peers' multi-target mode: `/probe?target=ADDRESS&auth_module=NAME`, answered with a
transient target made from the peer's credentials source.

- mysqld_exporter: `target` is host:port (or unix:///path) and the credentials are the
  my.cnf section named by `auth_module` (`client` by default; `client.servers`, or
  `servers` for it); a [client.NAME] section takes what it leaves out from [client].
- postgres_exporter: `target` is a DSN (a URI, key=value, or host:port/db?params) and
  `auth_module` names an entry of `auth_modules:` in its config file (`--config.file`):
  `type: userpass` with `userpass: {username, password}` and libpq `options:`; without
  `auth_module` the target is used as given.

What the peer answers 400 to (an unknown auth module, a module without a username or a
password, an address it cannot read) is a `ProbeRefused` with the peer's message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, field_validator

from dbgauge.toolkit.config import TargetConfig, parse_yaml_model, read_config_file
from dbgauge.toolkit.dsn import is_libpq_keyword, libpq_dsn, looks_like_conninfo, parse_dsn
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.mycnf import client_dsn
from dbgauge.toolkit.peers.env import PeerStartup, mysqld_address
from dbgauge.toolkit.peers.targets import (
    Defaults,
    Entry,
    Parse,
    dialect,
    mysql_extras,
    mysql_sections,
    postgres_extras,
)
from dbgauge.toolkit.redact import redact, redact_dsn, register_secret
from dbgauge.toolkit.targets import dsn_name


class ProbeRefused(ConfigError):
    """A /probe the peer would answer 400: the message says why (no secret in it)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UserPass(_Model):
    username: str = ""
    password: str = ""


class AuthModule(_Model):
    """One entry of postgres_exporter.yml's `auth_modules:`."""

    type: Literal["userpass"]
    userpass: UserPass = UserPass()
    options: dict[str, str] = {}

    @field_validator("options", mode="before")
    @classmethod
    def _scalars(cls, value: object) -> object:
        """`connect_timeout: 10` is a string to postgres_exporter's YAML decoder too."""
        if not isinstance(value, dict):
            return value
        return {k: (str(v).lower() if isinstance(v, bool) else str(v))
                if isinstance(v, int | float) else v for k, v in value.items()}

    @field_validator("options")
    @classmethod
    def _libpq_keywords(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = [k for k in value if not is_libpq_keyword(k)]
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: not a libpq connection keyword "
                             "(sslmode, sslrootcert, connect_timeout, ...)")
        return value


class AuthFile(_Model):
    """postgres_exporter.yml (`--config.file`)."""

    auth_modules: dict[str, AuthModule] = {}


def address(entry: Entry) -> str:
    """A name for the target of `entry`: its server's address (host:port, or the socket),
    never anything else the probe's `target` held (a DSN's password)."""
    return dsn_name(parse_dsn(str(entry["dsn"])))


def read_auth_modules(path: Path) -> dict[str, AuthModule]:
    """The auth modules of a postgres_exporter.yml, checked (unknown keys are refused, as
    postgres_exporter refuses them); passwords registered for redaction."""
    model = parse_yaml_model(AuthFile, read_config_file(path, "postgres_exporter config"),
                             str(path), "the top level must be a mapping with auth_modules",
                             empty={})
    for module in model.auth_modules.values():
        register_secret(module.userpass.password)
    return dict(model.auth_modules)


@dataclass(frozen=True)
class ProbeSource:
    """The credentials the daemon was started with, for /probe of an address: the my.cnf
    sections (None: no mysqld_exporter spelling) and postgres_exporter's auth modules
    (None: no --config.file), and what each kind's transient targets get besides their
    DSN (collectors, options, dialect), as the peer-made targets get it."""

    mysql: Mapping[str, Mapping[str, str]] | None = field(default=None, repr=False)
    postgres: Mapping[str, AuthModule] | None = field(default=None, repr=False)
    mysql_extra: Entry = field(default_factory=dict)
    postgres_extra: Entry = field(default_factory=dict)
    parse: Parse | None = None

    def target_config(self, name: str, entry: Entry) -> TargetConfig:
        """The checked target `name` of an `entry` this source made (ProbeRefused: a 400)."""
        return self._checked({"name": name, **entry}, "/probe")

    def _checked(self, entry: Entry, where: str) -> TargetConfig:
        if self.parse is None:
            raise RuntimeError("a ProbeSource needs the config parser to make targets")
        try:
            return self.parse(yaml.safe_dump({"targets": [entry]}), where).targets[0]
        except ConfigError as exc:
            raise ProbeRefused(redact(str(exc))) from None

    def check(self) -> None:
        """What every transient target of a kind gets (collectors, options) is checked
        once, when the source is read: a bad --extend.query-path fails at start."""
        for kind, dsn, more in (("mysql", "mysql://probe:x@localhost:3306/", self.mysql_extra),
                                ("postgres", "postgresql://probe:x@localhost/",
                                 self.postgres_extra)):
            if (self.mysql if kind == "mysql" else self.postgres) is not None:
                self._checked({"name": "probe", "kind": kind, "dsn": dsn, **more},
                              "the peers' /probe settings")

    def entry(self, target: str, auth_module: str | None) -> Entry:
        """The `targets:` entry (without a name: `address` gives one) for a /probe of
        `target`; ProbeRefused with the peer's message for what the peer answers 400 to."""
        if self._kind(target, auth_module) == "mysql":
            return {"kind": "mysql", "dsn": self._mysql_dsn(target, auth_module),
                    **self.mysql_extra}
        return {"kind": "postgres", "dsn": self._postgres_dsn(target, auth_module),
                **self.postgres_extra}

    def _kind(self, target: str, auth_module: str | None) -> str:
        if self.postgres is None:
            return "mysql"
        if self.mysql is None:
            return "postgres"
        if target.startswith("unix://"):
            return "mysql"
        if "://" in target or "=" in target or "/" in target or "?" in target:
            return "postgres"
        mine = auth_module is not None and self._section(auth_module) is not None
        theirs = auth_module is not None and auth_module in self.postgres
        if mine != theirs:
            return "mysql" if mine else "postgres"
        raise ProbeRefused(f"target {redact_dsn(target, 80)!r} may be MySQL or PostgreSQL: name an "
                           "auth_module of the my.cnf or of the postgres_exporter config")

    def _section(self, auth_module: str) -> Mapping[str, str] | None:
        sections = self.mysql or {}
        name = auth_module.lower()
        found = sections.get(name) or sections.get(f"client.{name}")
        return found if found is not None and found.get("user") else None

    def _mysql_dsn(self, target: str, auth_module: str | None) -> str:
        name = auth_module or "client"
        section = self._section(name)
        if section is None:
            raise ProbeRefused(f"Could not find config section [{name[:80]}] (with a user)")
        try:
            host, port, socket = mysqld_address(target, "target")
        except ConfigError as exc:
            raise ProbeRefused(exc.detail) from None
        return client_dsn(section, host, port, socket)

    def _postgres_dsn(self, target: str, auth_module: str | None) -> str:
        keywords: dict[str, str] = {}
        if auth_module:
            module = (self.postgres or {}).get(auth_module)
            if module is None:
                raise ProbeRefused(f"auth_module {auth_module[:80]} not found")
            if not (module.userpass.username and module.userpass.password):
                raise ProbeRefused(f"auth_module {auth_module} has no username or password")
            keywords = {**module.options, "user": module.userpass.username,
                        "password": module.userpass.password}
        uri = target.startswith(("postgresql://", "postgres://"))
        base = target if uri or looks_like_conninfo(target) else f"postgresql://{target}"
        try:
            dsn = libpq_dsn(base, **keywords) if keywords else base
            if parse_dsn(dsn).family != "postgres":
                raise ConfigError("not a PostgreSQL DSN")
        except ConfigError as exc:
            raise ProbeRefused(f"could not configure dsn for target: {redact(exc.detail)}"
                               ) from None
        return dsn


def probe_source(startup: PeerStartup, defaults: Defaults, parse: Parse,
                 compat: bool) -> ProbeSource | None:
    """The credentials for /probe of an address, read now: the my.cnf's client sections
    when mysqld_exporter's spellings are used, postgres_exporter's auth modules when
    --config.file is given; None when neither is (/probe takes configured names only)."""
    my, pg = startup.mysql, startup.postgres
    source = ProbeSource(
        mysql=mysql_sections(my) if my is not None else None,
        postgres=read_auth_modules(pg.auth_file)
        if pg is not None and pg.auth_file is not None else None,
        mysql_extra=mysql_extras(my, defaults("mysql"), dialect("mysqld_exporter", compat))
        if my is not None else {},
        postgres_extra=postgres_extras(pg, defaults("postgres"),
                                       dialect("postgres_exporter", compat))
        if pg is not None else {},
        parse=parse)
    if source.mysql is None and source.postgres is None:
        return None
    source.check()
    return source
