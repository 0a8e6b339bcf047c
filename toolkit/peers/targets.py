"""The targets the peers' start-up spellings make (`toolkit.peers.env`), read when the
config loads: on start and on every SIGHUP, so a rotated DATA_SOURCE_PASS_FILE or an edited
my.cnf is picked up as the peers pick it up on restart.

- postgres_exporter's DSNs make kind postgres targets named `postgres`, then `postgres-2`,
  `postgres-3`... in DATA_SOURCE_NAME's order; DATA_SOURCE_URI makes `postgres`.
- mysqld_exporter's my.cnf [client], with what --mysqld.address, --mysqld.username and
  MYSQLD_EXPORTER_PASSWORD give where it gives nothing, makes `mysql`.

Each speaks its peer's dialect (`compat:`) unless `serve --compat` says otherwise, and gets
what the peer's other flags ask for (`--extend.query-path`, the collector switches). Files
are read with `toolkit.files` (bounded, regular files only). Passwords stay in memory,
registered for redaction.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

import yaml

from dbgauge.toolkit.config import Config, DaemonConfig, TargetConfig, read_config_file
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.files import read_text
from dbgauge.toolkit.mycnf import MY_CNF_TARGET, client_dsn, is_port, read_sections
from dbgauge.toolkit.peers import env
from dbgauge.toolkit.peers.collectors import Switches
from dbgauge.toolkit.peers.env import (
    MysqlStartup,
    PeerStartup,
    PostgresStartup,
    Setting,
)
from dbgauge.toolkit.redact import redact_dsn, register_secret

log = logging.getLogger("dbgauge.serve")
POSTGRES_TARGET = "postgres"
MAX_SECRET_BYTES = 64 * 1024  # a user, password or URI file: anything larger is a mistake
Entry = dict[str, Any]  # a `targets:` entry, as YAML would give it


def read_setting(setting: Setting | None) -> str | None:
    """A VAR / VAR_FILE pair's value: the file's trimmed text when a file is named (read
    bounded: /dev/zero or a FIFO is refused, not read), else the variable's."""
    if setting is None:
        return None
    if setting.file is None:
        return setting.value
    return read_text(setting.file, f"{setting.var}_FILE", MAX_SECRET_BYTES).strip()


def extras(switches: Switches | None, defaults: list[str], compat: str | None,
           options: Mapping[str, Mapping[str, object]] | None = None) -> Entry:
    """What a peer-made target (or a /probe of an address) gets besides its DSN: the
    collectors its switches leave on, their options, the heartbeat table, the dialect."""
    out: Entry = {}
    merged: dict[str, dict[str, object]] = {k: dict(v) for k, v in (options or {}).items()}
    if switches is not None:
        collectors = switches.collectors(defaults)
        if collectors is not None:
            out["collectors"] = collectors
        for name, values in switches.options().items():
            merged.setdefault(name, {}).update(values)
        heartbeat = switches.heartbeat()
        if heartbeat is not None:
            out["heartbeat"] = heartbeat
    if merged:
        out["collector_options"] = merged
    if compat is not None:
        out["compat"] = [compat]
    return out


# ------------------------------------------------------------------ postgres_exporter


def postgres_dsns(pg: PostgresStartup) -> list[str]:
    """The DSNs of DATA_SOURCE_NAME, or the one DATA_SOURCE_URI and its user and password
    make (none: /probe only), each checked."""
    if pg.dsns:
        return [_checked(dsn, f"DATA_SOURCE_NAME (DSN {i} of {len(pg.dsns)})")
                for i, dsn in enumerate(pg.dsns, start=1)]
    if pg.uri is None:
        return []
    return [_checked(uri_dsn(read_setting(pg.uri) or "", read_setting(pg.user) or "",
                             read_setting(pg.password) or ""), "DATA_SOURCE_URI")]


def uri_dsn(uri: str, user: str, password: str) -> str:
    """postgres_exporter's "postgresql://" + user:password + "@" + DATA_SOURCE_URI."""
    register_secret(password)
    if "://" in uri:
        raise ConfigError("DATA_SOURCE_URI is host:port/database?params, without a scheme "
                          "(postgres_exporter adds postgresql://)")
    authority = re.split(r"[/?]", uri, maxsplit=1)[0]
    if not authority:
        raise ConfigError("DATA_SOURCE_URI names no host: host:port/database?params")
    if "@" in authority:
        raise ConfigError("DATA_SOURCE_URI names a user (user@host): set DATA_SOURCE_USER "
                          "(and DATA_SOURCE_PASS) instead")
    for host in authority.split(","):
        port = host.rsplit("]", 1)[-1].rpartition(":")[2] if ":" in host else ""
        if ":" in host.rsplit("]", 1)[-1] and not is_port(port):
            raise ConfigError(f"DATA_SOURCE_URI: port {port[:20]!r} is not a TCP port")
    auth = quote(user, safe="") + (":" + quote(password, safe="") if password else "")
    return f"postgresql://{auth}@{uri}" if auth else f"postgresql://{uri}"


def _checked(dsn: str, what: str) -> str:
    try:
        params = parse_dsn(dsn)
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc}") from None
    if params.family != "postgres":
        raise ConfigError(f"{what}: {redact_dsn(dsn)!r} is not a PostgreSQL DSN "
                          "(postgresql://... or host=... dbname=...)")
    return dsn


def postgres_options(pg: PostgresStartup) -> dict[str, dict[str, object]]:
    """collector_options of --extend.query-path and --auto-discover-databases (with
    --exclude-databases; --include-databases is per DSN, `postgres_entry`)."""
    options: dict[str, dict[str, object]] = {}
    if pg.query_path:
        options["postgres_queries"] = {"file": pg.query_path}
    if pg.auto_discover:
        for name, values in env.AUTO_DISCOVER_DATABASES.items():
            options.setdefault(name, {}).update(values)
            if pg.exclude_databases:
                options[name]["exclude_databases"] = ",".join(pg.exclude_databases)
    return options


# What --disable-default-metrics leaves out: the collectors of postgres_exporter's
# built-in queries (pg_stat_database, pg_stat_activity, pg_locks, pg_stat_replication,
# pg_replication_slots). Its collector package's families stay, as for the peer: database
# sizes, pg_static (postgres_server) and bgwriter/archiver (postgres_checkpoints).
BUILT_IN = ("postgres_database", "postgres_locks", "postgres_replication")
# ... and the built-in families of the collectors that stay (Debian's 0.11).
BUILT_IN_FAMILIES = ("pg_static", "pg_stat_archiver_*")


def postgres_extras(pg: PostgresStartup, defaults: list[str], compat: str | None) -> Entry:
    """What every postgres target of these spellings gets (DATA_SOURCE_*'s and /probe's)."""
    more = extras(pg.switches, defaults, compat, postgres_options(pg))
    dropped = (*(BUILT_IN if pg.disable_default else ()),
               *(("postgres_settings",) if pg.disable_settings else ()))
    if dropped:
        more["collectors"] = [c for c in more.get("collectors", defaults) if c not in dropped]
    if pg.disable_default:
        more["compat_exclude"] = list(BUILT_IN_FAMILIES)
    if pg.labels:
        more["labels"] = dict(pg.labels)
    return more


def postgres_entry(pg: PostgresStartup, dsn: str, more: Entry) -> Entry:
    """`more` for one DSN: --include-databases names the discovered databases to read,
    the DSN's own always among them (as postgres_exporter reads it)."""
    if not (pg.auto_discover and pg.include_databases):
        return more
    own = parse_dsn(dsn).dbname or ""
    names = ",".join(dict.fromkeys(n for n in (own, *pg.include_databases) if n))
    options = {k: dict(v) for k, v in more.get("collector_options", {}).items()}
    for name in env.AUTO_DISCOVER_DATABASES:
        options.setdefault(name, {})["databases"] = names
    return {**more, "collector_options": options}


def postgres_entries(pg: PostgresStartup, defaults: list[str],
                     compat: str | None) -> list[Entry]:
    more = postgres_extras(pg, defaults, compat)
    return [{"name": POSTGRES_TARGET if i == 1 else f"{POSTGRES_TARGET}-{i}",
             "kind": "postgres", "dsn": dsn, **postgres_entry(pg, dsn, more)}
            for i, dsn in enumerate(postgres_dsns(pg), start=1)]


# ------------------------------------------------------------------ mysqld_exporter


def mysql_sections(my: MysqlStartup) -> dict[str, dict[str, str]]:
    """The my.cnf's [client] and [client.NAME] sections as mysqld_exporter reads them:
    [client] takes host and port (or socket) from --mysqld.address, the user from
    --mysqld.username and the password from MYSQLD_EXPORTER_PASSWORD where the file gives
    none, and each [client.NAME] takes what it leaves out from [client]."""
    found: dict[str, dict[str, str]] = {}
    if my.my_cnf is not None:
        text = read_config_file(my.my_cnf, "my.cnf")
        found = read_sections(text, str(my.my_cnf))
    sections = {n: s for n, s in found.items() if n == "client" or n.startswith("client.")}
    client = {k: v for k, v in sections.get("client", {}).items() if v}
    given = {"socket": my.socket} if my.socket else {"host": my.host, "port": my.port}
    given.update(user=my.username or "", password=my.password or "")
    for key, value in given.items():
        if value and not client.get(key):
            client[key] = value
    children = {name: {**client, **s} for name, s in sections.items() if name != "client"}
    return mysql_session({"client": client, **children}, my)


# mysqld_exporter's --exporter.log_slow_filter: only statements that write temporary
# tables or sort on disk reach the slow log (MariaDB, Percona Server).
LOG_SLOW_FILTER = "tmp_table_on_disk,filesort_on_disk"


def mysql_session(sections: dict[str, dict[str, str]], my: MysqlStartup
                  ) -> dict[str, dict[str, str]]:
    """`sections` with what mysqld_exporter's session flags add to each connection.
    --tls.insecure-skip-verify is taken where it changes nothing (without ssl-ca dbgauge's
    TLS is unverified already); with ssl-ca it is refused, not silently ignored."""
    if my.skip_verify and any(s.get("ssl_ca") for s in sections.values()):
        raise ConfigError("--tls.insecure-skip-verify: dbgauge always verifies the server's "
                          "certificate against ssl-ca; drop the flag, or fix the certificate "
                          "(or drop ssl-ca: TLS is then used, unverified, when offered)")
    if not my.log_slow_filter:
        return sections
    return {n: {**s, "log_slow_filter": LOG_SLOW_FILTER} for n, s in sections.items()}


def mysql_extras(my: MysqlStartup, defaults: list[str], compat: str | None) -> Entry:
    """What the mysql target (and /probe's) of these spellings gets besides its DSN."""
    more = extras(my.switches, defaults, compat)
    if my.lock_wait_timeout is not None:
        more["lock_timeout"] = my.lock_wait_timeout
    return more


def mysql_entry(sections: Mapping[str, Mapping[str, str]], more: Entry,
                where: str) -> Entry | None:
    """The `mysql` target of [client]; None when [client] names no user but another
    section does (mysqld_exporter's /probe only). ConfigError (at `where`, the spelling)
    when none does."""
    client = sections["client"]
    if not client.get("user"):
        if any(s.get("user") for s in sections.values()):
            log.warning("%s: [client] names no user (nor --mysqld.username): no %r target; "
                        "/probe?auth_module=client.NAME uses the other sections",
                        where, MY_CNF_TARGET)
            return None
        hint = ("user:password@(host:port)/" if where == "DATA_SOURCE_NAME" else
                "set user= under [client] or --mysqld.username")
        raise ConfigError(f"no user: {hint} (mysqld_exporter: no configuration found)",
                          source=where)
    port = client.get("port", "3306")
    if not is_port(port):
        raise ConfigError(f"port {port[:20]!r} is not a TCP port", source=where,
                          path="client.port")
    dsn = client_dsn(client, client.get("host", "localhost"), port, client.get("socket", ""))
    return {"name": MY_CNF_TARGET, "kind": "mysql", "dsn": dsn, **more}


# ------------------------------------------------------------------ the whole start-up

Defaults = Callable[[str], list[str]]  # kind -> the collectors it runs by default
Parse = Callable[[str, str], Config]  # YAML text, source -> a checked config


def dialect(peer: str, compat: bool) -> str | None:
    """The dialect peer-made targets speak: their peer's, unless `serve --compat` chose."""
    return peer if compat else None


def peer_entries(startup: PeerStartup, defaults: Defaults,
                 compat: bool) -> list[tuple[str, list[Entry]]]:
    """(the spelling, its targets' entries) per peer, files read now."""
    out: list[tuple[str, list[Entry]]] = []
    my = startup.mysql
    if my is not None:
        more = mysql_extras(my, defaults("mysql"), dialect("mysqld_exporter", compat))
        where = str(my.my_cnf) if my.my_cnf is not None else "--mysqld.*"
        if my.dsn is not None:  # mysqld_exporter 0.14's DATA_SOURCE_NAME wins over the my.cnf
            where = "DATA_SOURCE_NAME"
        sections = mysql_session({"client": dict(my.dsn)}, my) if my.dsn is not None \
            else mysql_sections(my)
        entry = mysql_entry(sections, more, where)
        out.append((where, [entry] if entry is not None else []))
    pg = startup.postgres
    if pg is not None:
        where = "DATA_SOURCE_NAME" if pg.dsns else "DATA_SOURCE_URI"
        out.append((where, postgres_entries(pg, defaults("postgres"),
                                            dialect("postgres_exporter", compat))))
    return out


def peer_targets(startup: PeerStartup, defaults: Defaults, parse: Parse,
                 compat: bool) -> list[TargetConfig]:
    """The targets the spellings make, each peer's checked as a config of its own (so an
    error names the spelling); none when only /probe is meant."""
    made: list[TargetConfig] = []
    for where, entries in peer_entries(startup, defaults, compat):
        if entries:
            made += parse(yaml.safe_dump({"targets": entries}), where).targets
    return made


def with_targets(config: Config | None, made: list[TargetConfig], source: str | None
                 ) -> Config:
    """`config` (--config's; None: there is none) with the peer-made targets after its
    own; a name on both sides is refused. Without a config, a daemon of the peer-made
    targets alone (possibly none: /probe of addresses only)."""
    if config is None:
        return Config.model_construct(daemon=DaemonConfig(), targets=made, checks=[],
                                      checksums=[])
    for target in made:
        if any(t.name == target.name for t in config.targets):
            raise ConfigError(f"the peer exporter's start-up flags make a target named "
                              f"{target.name!r}, and {source} has one too: rename that one",
                              source=source)
    return config.model_copy(update={"targets": [*config.targets, *made]})


def daemon_overrides(config: Config, startup: PeerStartup) -> Config:
    """`config` with --log.level, --log.format and --timeout-offset applied."""
    update = {k: v for k, v in (("log_level", startup.log_level),
                                ("log_format", startup.log_format),
                                ("scrape_timeout_offset", startup.timeout_offset))
              if v is not None}
    if not update:
        return config
    return config.model_copy(update={"daemon": config.daemon.model_copy(update=update)})
