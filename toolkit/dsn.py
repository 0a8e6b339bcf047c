"""Parse connection strings into driver-neutral parameters.

Accepted forms: ``mysql://user[:pass]@host[:port][/db][?unix_socket=...]`` (``mariadb://``
too), pt's ``h=host,P=3306,u=user,p=pass,S=socket,D=db,F=file`` (read as the mysql:// DSN
it means: `pt_as_mysql`), and, for PostgreSQL and PgBouncer, whatever libpq takes: a
``postgresql://`` URI (``postgres://``), ``key=value`` pairs (``host=db1 dbname=app
sslmode=require``), ``service=NAME`` (pg_service.conf), with what they leave out taken from the PG*
environment as libpq does. libpq reads those (`toolkit.db.conninfo`); MySQL DSNs are
parsed here, without I/O.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.redact import MASK, redact_dsn, redact_fragments, register_secret

MYSQL_SCHEMES = frozenset({"mysql", "mariadb"})
POSTGRES_SCHEMES = frozenset({"postgresql", "postgres"})
DEFAULT_PORTS = {"mysql": 3306, "postgres": 5432}


@dataclass(frozen=True)
class ConnParams:
    """Where and as whom to connect; `password` is never part of repr()."""

    family: str  # "mysql" or "postgres" (the wire protocol)
    host: str  # PostgreSQL: "" when libpq decides (service=, default socket)
    port: int  # PostgreSQL: 0 when libpq decides
    user: str  # PostgreSQL: "" when the service names it
    dbname: str | None
    password: str | None = field(default=None, repr=False)
    options: tuple[tuple[str, str], ...] = ()
    # MySQL: the password of the client option files, used when neither the DSN nor
    # --password-file/--password-env gives one.
    fallback_password: str | None = field(default=None, repr=False)

    @property
    def login_password(self) -> str | None:
        """The password to send: the given one, else the option files'."""
        return self.password if self.password is not None else self.fallback_password

    def with_password(self, password: str | None) -> ConnParams:
        return replace(self, password=password)

    def or_password(self, password: str | None) -> ConnParams:
        """These parameters with `password` if the DSN carries none: on every command
        line a password written in the DSN wins over --password-file/--password-env."""
        return self if self.password is not None else self.with_password(password)

    @property
    def address(self) -> str:
        """host:port (or socket path, or the libpq service) for messages: never includes
        credentials."""
        if not self.host:  # PostgreSQL: libpq decides (a service, or its default socket)
            service = self.option("service")
            return f"service {service}" if service else "the default socket"
        if self.host.startswith("/") or not self.port:
            return self.host
        return f"{self.host}:{self.port}"

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


_CONNINFO = re.compile(r"^\s*[A-Za-z_]+\s*=")
_URI_VALUE = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.-]*://")  # NAME=URI, not key=value
# pt's h=host,P=port,u=user,p=password (one-letter keys) and Go's user:pw@tcp(host:port)/db,
# told apart to say how to write them: they reach dbgauge from pt tools and mysqld_exporter.
_PT_FORM = re.compile(r"^\s*[A-Za-z]=[^,\s]*(,|$)")
_GO_FORM = re.compile(r"@(?:tcp|unix)?\(|^[^=@\s]*@/")
_ONE_SLASH = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]*):(?!//)")
_ENCODE = ("holds an unencoded @, /, ? or #: percent-encode them in the user and password "
           "(%40, %2F, %3F, %23)")


def is_dsn(text: str) -> bool:
    """Whether a command-line argument is a DSN rather than a target name (names have
    neither '://' nor '=' nor '@')."""
    return "://" in text or "=" in text or "@" in text


def looks_like_conninfo(text: str) -> bool:
    """A libpq key=value string (host=db1 dbname=app, service=NAME)."""
    m = _CONNINFO.match(text)
    return m is not None and not _URI_VALUE.match(text, m.end())


def is_libpq_keyword(word: str) -> bool:
    """host, port, service...: a word that cannot be a target's NAME in NAME=DSN."""
    from dbgauge.toolkit.db.conninfo import is_keyword

    return is_keyword(word)


PT_KEYS = {"h": "host", "P": "port", "u": "user", "p": "password", "S": "socket",
           "D": "database", "F": "defaults file", "A": "charset", "t": "table"}


def is_pt_dsn(text: str) -> bool:
    """pt's `h=host,P=3306,...` form (one-letter keys, commas between parts). A URI's
    scheme cannot hold `=` and libpq has no one-letter keyword, so a `://` further on (in a
    password) does not make it another form."""
    return bool(_PT_FORM.match(text))


def parse_pt_dsn(spec: str, where: str) -> dict[str, str]:
    """pt's `h=host,P=3306,u=user` DSN as a dict (key case matters: P port, p password);
    ConfigError naming `where` for a part pt does not have."""
    out: dict[str, str] = {}
    previous = ""
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        key, eq, value = part.partition("=")
        if (not eq or key not in PT_KEYS) and previous == "p":  # never echo a piece of it
            raise ConfigError(f"{where}: the password (p=) holds a comma, which a pt DSN "
                              "cannot carry: use mysql://user:PASSWORD@host:port/ "
                              "(percent-encoded) or --password-file")
        previous = key
        if not eq or key not in PT_KEYS:
            raise ConfigError(f"{where}: {key[:20]!r} is not a pt DSN part "
                              "(h=host,P=port,u=user,p=password,S=socket,D=db,F=file,t=table)")
        out[key] = value
    register_secret(out.get("p"))
    return out


def pt_as_mysql(dsn: str) -> str:
    """A pt DSN as the mysql:// DSN it means, with pt's defaults: what it leaves out comes
    from F= (pt's mysql_read_default_file) or the client option files, the user last from
    the OS login (as the mysql client, DBD::mysql and so pt do); A= (charset) is accepted and
    left to dbgauge's utf8mb4. t= names a table, not a server: `pt_table` reads it where a
    command takes one."""
    shown = redact_dsn(dsn)
    parts = parse_pt_dsn(dsn, f"DSN {shown!r}")
    if "t" in parts:
        raise ConfigError(f"DSN {shown!r}: t= names a table, not a server: give the table "
                          "with the command's own option (--table, --tables)")
    port = parts.get("P", "")
    if port and not (port.isdigit() and len(port) <= 5 and 0 < int(port) < 65536):
        raise ConfigError(f"DSN {shown!r}: P={port[:20]!r} is not a TCP port")
    user = parts.get("u", "")
    if not user:
        from dbgauge.toolkit.clientcnf import client_settings

        user = client_settings(_expand(parts.get("F"))).get("user", "") or _os_user()
    host = parts.get("h", "")
    shown_host = f"[{host}]" if ":" in host else quote(host, safe="")
    userinfo = quote(user, safe="") + (":" + quote(parts["p"], safe="") if "p" in parts else "")
    query = [(k, v) for k, v in (("unix_socket", parts.get("S")),
                                 ("read_default_file", _expand(parts.get("F")))) if v]
    return (f"mysql://{userinfo}@{shown_host}{':' + port if port else ''}/"
            f"{quote(parts.get('D', ''), safe='')}"
            + ("?" + "&".join(f"{k}={quote(v, safe='/')}" for k, v in query) if query else ""))


def pt_table(dsn: str) -> tuple[str | None, str | None, str]:
    """A pt DSN's D= and t= (None when absent) and the DSN without t=, for a command that
    takes a table (heartbeat's --database/--table); other DSNs unchanged."""
    if not is_pt_dsn(dsn):
        return None, None, dsn
    parts = parse_pt_dsn(dsn, f"DSN {redact_dsn(dsn)!r}")
    rest = ",".join(p for p in dsn.split(",") if not p.strip().startswith("t="))
    return parts.get("D"), parts.get("t"), rest


def _expand(path: str | None) -> str | None:
    return os.path.expanduser(path) if path else None


def _os_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def parse_dsn(dsn: str) -> ConnParams:
    """Parse a DSN, raising ConfigError (password redacted, a huge DSN shortened) when it
    is not usable."""
    shown = redact_dsn(dsn)
    if is_pt_dsn(dsn):
        return _parse_mysql(pt_as_mysql(dsn), shown)
    if "://" not in dsn and not looks_like_conninfo(dsn) and _GO_FORM.search(dsn):
        raise ConfigError(f"DSN {shown!r} is a Go MySQL DSN: write it as "
                          "mysql://user@host:port/db (a password after the user and a colon, "
                          "percent-encoded), or pt's h=host,P=3306,u=user")
    if looks_like_conninfo(dsn):
        return _parse_libpq(dsn, shown)
    typo = _ONE_SLASH.match(dsn)
    if typo and typo.group(1).lower() in MYSQL_SCHEMES | POSTGRES_SCHEMES:
        raise ConfigError(f"DSN {shown!r}: write {typo.group(1)}:// (two slashes)")
    if "://" not in dsn:
        raise ConfigError(
            f"DSN {shown!r} has no scheme: use mysql://user@host:port/db, "
            "postgresql://user@host:port/db or libpq's host=... dbname=... / service=NAME"
        )
    scheme = dsn.split("://", 1)[0].strip().lower()
    if scheme in POSTGRES_SCHEMES:
        return _parse_libpq(dsn, shown)
    if scheme not in MYSQL_SCHEMES:
        named = f" {scheme!r}" if re.fullmatch(r"[a-z][a-z0-9+.-]{0,19}", scheme) and \
            scheme in shown.lower() else ""
        raise ConfigError(
            f"DSN {shown!r} has unsupported scheme{named}: use mysql:// (MySQL, MariaDB) "
            "or postgresql:// (PostgreSQL, PgBouncer)"
        )
    return _parse_mysql(dsn, shown)


MYSQL_PARAMETERS = ("read_default_file", "read_default_group", "ssl_ca", "unix_socket",
                    "log_slow_filter")


def _parse_mysql(dsn: str, shown: str) -> ConnParams:
    """A MySQL-family DSN; what it leaves out (user, password, host or socket, port,
    database, ssl-ca) comes from the client option files, as for the mysql client:
    `read_default_file=` names the one file to read, else the global files and ~/.my.cnf;
    `read_default_group=` a group read beside [client] (check_mysql's -g). A password from
    a file is only a fallback: --password-file and --password-env win over it."""
    try:
        parts = urlsplit(dsn)
        if "@" in parts.path or "@" in parts.fragment or ("@" in dsn and "@" not in parts.netloc):
            raise ConfigError(f"DSN {shown!r} {_ENCODE}")  # else a piece of it is the host
        port_value = parts.port
    except ValueError as exc:
        raise ConfigError(f"DSN {shown!r} is malformed: {redact_fragments(str(exc), dsn)}"
                          ) from None
    query = parse_qsl(parts.query, keep_blank_values=True)
    unknown = sorted({k if k.isidentifier() else MASK for k, _ in query}
                     - set(MYSQL_PARAMETERS))
    if unknown:
        raise ConfigError(f"DSN {shown!r}: unknown parameter{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(unknown)}: a mysql:// DSN takes "
                          f"{', '.join(MYSQL_PARAMETERS)}")
    options = dict(query)
    host = unquote(parts.hostname or "")
    user = unquote(parts.username or "")
    password = unquote(parts.password) if parts.password is not None else None
    dbname = unquote(parts.path.lstrip("/")) or None
    cnf: dict[str, str] = {}
    if {"read_default_file", "read_default_group"} & set(options) or not (
            user and host and password is not None):
        from dbgauge.toolkit.clientcnf import client_settings

        cnf = client_settings(options.get("read_default_file"),
                              options.get("read_default_group") or None)
    socket = options.get("unix_socket", "")
    if not socket and not host:  # the option files' host, or their socket for localhost
        host = cnf.get("host", "")
        if host in ("", "localhost"):
            socket = cnf.get("socket", "")
    if socket:  # an explicit socket wins over the (often "localhost") host part
        host = socket
    user = user or cnf.get("user", "")
    if not user:
        raise ConfigError(f"DSN {shown!r} names no user: add user@ before the host, or "
                          "user= under [client] in ~/.my.cnf (or the read_default_file)")
    port_text = cnf.get("port", "") if port_value is None else str(port_value)
    if port_text and (not port_text.isdigit() or len(port_text) > 5
                      or not 0 < int(port_text) < 65536):
        raise ConfigError(f"DSN {shown!r}: port {port_text[:20]!r} from the option file is not a "
                          "TCP port")
    return ConnParams(
        family="mysql",
        host=host or "localhost",
        port=int(port_text) if port_text else DEFAULT_PORTS["mysql"],
        user=user,
        dbname=dbname or cnf.get("database") or None,
        password=password,
        options=_connection_options(options, cnf, shown),
        fallback_password=cnf.get("password") if password is None else None,
    )


def _connection_options(options: dict[str, str], cnf: dict[str, str], shown: str
                        ) -> tuple[tuple[str, str], ...]:
    """What a connection needs beyond the address: ssl_ca (the DSN's, else the option
    files'), and the log_slow_filter each session sets, checked: filter names."""
    ssl_ca = options.get("ssl_ca") or cnf.get("ssl_ca")
    session = options.get("log_slow_filter", "")
    if not re.fullmatch(r"[a-z_]{0,40}(,[a-z_]{1,40}){0,20}", session):
        raise ConfigError(f"DSN {shown!r}: log_slow_filter {session[:40]!r} is not a list of "
                          "MariaDB slow-log filter names (tmp_table_on_disk,filesort_on_disk)")
    return (*((("ssl_ca", ssl_ca),) if ssl_ca else ()),
            *((("log_slow_filter", session),) if session else ()))


_LIBPQ_FIELDS = ("host", "port", "user", "dbname", "password")


def _parse_libpq(dsn: str, shown: str) -> ConnParams:
    """A PostgreSQL DSN as libpq reads it. Without service=, what the string leaves out
    comes from libpq's defaults (PG* variables, PGSERVICE, the OS user) and is written
    into the parameters, so messages name the real address; with service=, libpq reads
    pg_service.conf when it connects, and the message names the service."""
    from dbgauge.toolkit.db.conninfo import libpq_defaults, parse_conninfo

    try:
        given = parse_conninfo(dsn)
    except ValueError as exc:
        raise ConfigError(f"DSN {shown!r} is not a libpq connection string: "
                          f"{redact_fragments(str(exc), dsn)}") from None
    if any("@" in given.get(key, "") for key in ("host", "hostaddr", "port", "dbname")):
        raise ConfigError(f"DSN {shown!r} {_ENCODE}")  # libpq took a piece of it as the host
    password = given.pop("password", None)
    register_secret(password)
    register_secret(os.environ.get("PGPASSWORD"))
    values = dict(given) if "service" in given else {**libpq_defaults(), **given}
    port_text = values.get("port", "") or "0"  # 0: libpq decides (the service's port)
    if not port_text.isdigit() or len(port_text) > 5 or not 0 <= int(port_text) < 65536:
        raise ConfigError(f"DSN {shown!r}: port {port_text[:20]!r} is not a TCP port "
                          "(one server per DSN)")
    return ConnParams(
        family="postgres",
        host=values.get("host", ""),
        port=int(port_text),
        user=values.get("user", ""),
        dbname=values.get("dbname") or None,
        password=password,
        options=tuple((k, v) for k, v in given.items() if k not in _LIBPQ_FIELDS),
    )


def libpq_dsn(dsn: str | None, **keywords: str | None) -> str:
    """A PostgreSQL DSN with libpq keywords set over it (pg_prove's -h -p -U -d over
    --dsn); without either, "postgresql://": everything from the PG* environment."""
    from dbgauge.toolkit.db.conninfo import merge_conninfo

    chosen = {k: v for k, v in keywords.items() if v is not None}
    base = dsn if dsn is not None else "postgresql://"
    if not chosen:
        return base
    if base and not looks_like_conninfo(base) and \
            base.split("://", 1)[0].lower() not in POSTGRES_SCHEMES:
        raise ConfigError(f"DSN {redact_dsn(base)!r} is not a PostgreSQL DSN: "
                          "-h, -p, -U and -d are libpq's")
    try:
        return merge_conninfo(base, **chosen)
    except ValueError as exc:
        raise ConfigError(f"DSN {redact_dsn(base)!r}: {redact_fragments(str(exc), base)}"
                          ) from None


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
