"""Rules on how the pooler will serve: pooling modes, TLS, connection sizing and paths.

Transaction and statement pooling break session state that clients may rely on; TLS
files that are missing stop PgBouncer at startup (client side; server TLS files
only fail the server connections); pools that add up to more than
PostgreSQL's max_connections, or clients plus servers above the open-files limit, fail
under load; relative paths depend on PgBouncer's working directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from dbgauge.checks.pgbouncer.connstr import parse_connstr
from dbgauge.checks.pgbouncer.model import PATH_KEYS, Check, Out, split_list, strtol
from dbgauge.checks.pgbouncer.rules import POOLING
from dbgauge.toolkit.db.version import version_text
from dbgauge.toolkit.result import Severity

# Session pooling: a client holds its server connection until it disconnects, so
# max_client_conn this many times the servers' total means nearly everyone queues.
SESSION_QUEUE_RATIO = 100
TRANSACTION_BREAKS = ("SET/RESET", "LISTEN/NOTIFY", "WITH HOLD cursors", "SQL-level PREPARE",
                      "session advisory locks", "temporary tables")
TLS_SIDES = ("client", "server")


def _modes_in_use(c: Check) -> set[str]:
    """The pool modes of the global setting, the databases and the users."""
    modes = {(c.value("pool_mode") or "session").lower()}
    modes |= {db.pool_mode for db in c.dbs if db.pool_mode}
    for e in c.cfg.users.values():
        mode = parse_connstr(e.value).get("pool_mode")
        if mode:
            modes.add(mode.lower())
    return modes


def _pooled(c: Check) -> set[str]:
    """The modes in use that hand server connections over between transactions."""
    return _modes_in_use(c) & {"transaction", "statement"}


def _reset_always(c: Check) -> int:
    return strtol(c.value("server_reset_query_always") or "0") or 0


# ------------------------------------------------------------------------- pooling


@POOLING.rule("pgbouncer/pool-mode", "Pooling mode caveat")
def transaction_pooling(c: Check, out: Out) -> None:
    """Transaction or statement pooling: the session state clients must not rely on (info)."""
    pooled = _pooled(c)
    if pooled:
        out.at(Severity.INFO, "pool_mode",
               f"{'/'.join(sorted(pooled))} pooling: clients must not rely on "
               f"{', '.join(TRANSACTION_BREAKS)} across transactions")


@POOLING.rule("pgbouncer/pool-mode")
def reset_query_ignored(c: Check, out: Out) -> None:
    """A server_reset_query other than DISCARD ALL that transaction pooling never runs."""
    reset = c.cfg.settings.get("server_reset_query")
    if _pooled(c) and reset is not None and reset.value and not _reset_always(c) and \
            "session" not in _modes_in_use(c) and \
            reset.value.strip().upper() != "DISCARD ALL":  # the default: no surprise
        out.at(Severity.WARNING, "server_reset_query",
               "server_reset_query runs only in session pooling (unless "
               "server_reset_query_always = 1); with transaction pooling it is ignored",
               "remove it, or set server_reset_query_always = 1 if you need it")


@POOLING.rule("pgbouncer/pool-mode")
def reset_query_always(c: Check, out: Out) -> None:
    """server_reset_query_always with pooling: the reset runs after every transaction (info)."""
    reset = c.cfg.settings.get("server_reset_query")
    if _pooled(c) and _reset_always(c) and reset is not None and reset.value:
        out.at(Severity.INFO, "server_reset_query_always",
               f"server_reset_query ({reset.value}) runs after every transaction")


@POOLING.rule("pgbouncer/prepared-statements", "Protocol-level prepared statements")
def prepared_statements_off(c: Check, out: Out) -> None:
    """max_prepared_statements = 0 with transaction pooling on 1.21+ (warning)."""
    if _pooled(c) and c.v >= (1, 21) and \
            strtol(c.value("max_prepared_statements") or "0") == 0:
        out.at(Severity.WARNING, "max_prepared_statements",
               "max_prepared_statements = 0 with transaction pooling: protocol-level "
               "prepared statements (most drivers' default) fail with 'prepared "
               "statement does not exist'", "set max_prepared_statements = 200")


@POOLING.rule("pgbouncer/prepared-statements")
def prepared_statements_untracked(c: Check, out: Out) -> None:
    """Transaction pooling before 1.21, which cannot track prepared statements (info)."""
    if _pooled(c) and c.v < (1, 21):
        out.at(Severity.INFO, "pool_mode",
               f"PgBouncer {version_text(c.v)} cannot track protocol-level prepared "
               "statements (1.21+ can): disable them in the client drivers")


@POOLING.rule("pgbouncer/pool-mode")
def statement_pooling(c: Check, out: Out) -> None:
    """Statement pooling refuses multi-statement transactions (info)."""
    if "statement" in _modes_in_use(c):
        out.at(Severity.INFO, "pool_mode",
               "statement pooling refuses multi-statement transactions")


@POOLING.rule("pgbouncer/pool-mode")
def startup_parameters_dropped(c: Check, out: Out) -> None:
    """ignore_startup_parameters dropping options or search_path (warning)."""
    ignored = {p.lower() for p in split_list(c.value("ignore_startup_parameters"))}
    dropped = sorted(ignored & {"options", "search_path"})
    if dropped:
        out.at(Severity.WARNING, "ignore_startup_parameters",
               f"ignore_startup_parameters drops {', '.join(dropped)} silently: session "
               "settings clients pass at connect (e.g. options=-c statement_timeout=...) "
               "never reach the server",
               "set those settings per role/database on the server (ALTER ROLE ... SET)")


# ----------------------------------------------------------------------------- TLS


def _tls_mode(c: Check, side: str) -> str:
    return (c.value(f"{side}_tls_sslmode") or "disable").lower()


@POOLING.rule("pgbouncer/tls", "TLS setup that cannot work")
def tls_file_missing(c: Check, out: Out) -> None:
    """A TLS key, certificate or CA file that does not exist while TLS is on: the client
    side stops PgBouncer at startup, the server side only its TLS connections (warning)."""
    not_here = dict(c.env.not_here)
    for side in TLS_SIDES:
        mode = _tls_mode(c, side)
        for k in (f"{side}_tls_key_file", f"{side}_tls_cert_file", f"{side}_tls_ca_file"):
            path = c.value(k)
            if mode == "disable" or not path or k in not_here or \
                    c.env.resolve(path) in c.env.existing_paths:
                continue
            if side == "client":
                out.at(Severity.ERROR, k,
                       f"{path} does not exist (or is not readable): with client_tls_sslmode "
                       f"{mode} TLS setup fails and PgBouncer does not start", "fix the path")
            else:  # PgBouncer 1.18 starts without its server TLS files (tested)
                out.at(Severity.WARNING, k,
                       f"{path} does not exist (or is not readable): PgBouncer starts, but "
                       f"with server_tls_sslmode {mode} its TLS connections to PostgreSQL "
                       "cannot use it", "fix the path")


@POOLING.rule("pgbouncer/tls")
def client_tls_without_key_pair(c: Check, out: Out) -> None:
    """Client TLS on without client_tls_key_file or client_tls_cert_file."""
    mode = _tls_mode(c, "client")
    for k in ("client_tls_key_file", "client_tls_cert_file"):
        if mode != "disable" and not c.value(k):
            out.at(Severity.ERROR, k,
                   f"client_tls_sslmode {mode} needs {k}: PgBouncer fails TLS setup", f"set {k}")


@POOLING.rule("pgbouncer/tls")
def verify_without_ca(c: Check, out: Out) -> None:
    """verify-ca or verify-full without a CA file (client: error, server: warning)."""
    for side in TLS_SIDES:
        mode, ca_k = _tls_mode(c, side), f"{side}_tls_ca_file"
        if mode in ("verify-ca", "verify-full") and not c.value(ca_k):
            out.at(Severity.ERROR if side == "client" else Severity.WARNING, ca_k,
                   f"{side}_tls_sslmode {mode} needs {ca_k} to verify certificates",
                   f"set {ca_k}")


@POOLING.rule("pgbouncer/tls")
def server_key_without_cert(c: Check, out: Out) -> None:
    """server_tls_key_file without server_tls_cert_file, or the other way round."""
    key, cert = c.value("server_tls_key_file"), c.value("server_tls_cert_file")
    if bool(key) != bool(cert):
        out.at(Severity.ERROR, "server_tls_key_file" if key else "server_tls_cert_file",
               "server_tls_key_file and server_tls_cert_file must be set together")


@POOLING.rule("pgbouncer/tls")
def weak_tls_protocols(c: Check, out: Out) -> None:
    """TLS 1.0 or 1.1 allowed while TLS is on (warning)."""
    for side in TLS_SIDES:
        protocols = (c.value(f"{side}_tls_protocols") or "").lower()
        weak = [p for p in ("tlsv1.0", "tlsv1.1", "all", "legacy") if p in protocols]
        if weak and _tls_mode(c, side) != "disable":
            out.at(Severity.WARNING, f"{side}_tls_protocols",
                   f"{side}_tls_protocols allows {', '.join(weak)} (deprecated, insecure)",
                   "use secure (TLS 1.2 and 1.3)")


# -------------------------------------------------------------------------- sizing


@dataclass(frozen=True)
class Sizing:
    """Worst-case server connections, as the sizing rules count them.

    The `*` fallback counts as one database (each database name a client asks for gets
    its own pools, so it is a lower bound), at default_pool_size unless it says otherwise.
    """

    by_backend: dict[str, int]  # host:port -> worst-case server connections
    pool_total: int  # pool sizes without reserves (file descriptors)
    session_served: int  # clients session pooling serves at once
    users: int  # pools per database without a forced user
    wildcard: bool  # a `*` fallback was counted


def sizing(c: Check) -> Sizing:
    """The sum of (pool size + reserve) * pools per backend, capped by max_db_connections."""
    default_pool = c.number("default_pool_size", "20")
    reserve_default = c.number("reserve_pool_size", "0")
    global_max_db = c.number("max_db_connections", "0")
    global_mode = (c.value("pool_mode") or "session").lower()
    auth = c.auth_file
    n_users = max(1, len(({u.name for u in auth.users} if auth else set()) | set(c.cfg.users)))
    by_backend: dict[str, int] = {}
    pool_total = session_served = 0
    for db in c.dbs:
        size = db.pool_size if db.pool_size is not None else default_pool
        reserve = db.reserve if db.reserve is not None else reserve_default
        pools = 1 if db.forced_user else n_users
        cap = db.max_db_connections if db.max_db_connections else global_max_db
        worst = min(pools * (size + reserve), cap) if cap else pools * (size + reserve)
        pool_total += pools * size
        if (db.pool_mode or global_mode) == "session":
            session_served += worst
        backend = f"{db.host or 'unix socket'}:{db.port}"
        by_backend[backend] = by_backend.get(backend, 0) + worst
    return Sizing(by_backend, pool_total, session_served, n_users,
                  any(db.name == "*" for db in c.dbs))


@POOLING.rule("pgbouncer/sizing", "Connection and file-descriptor sizing")
def pools_exceed_max_connections(c: Check, out: Out) -> None:
    """A backend's worst-case server connections above PostgreSQL's max_connections
    minus the reserved slots."""
    if c.env.max_connections is None:
        return
    s = sizing(c)
    at_least = " at least" if s.wildcard else ""
    limit = c.env.max_connections - c.env.reserved_connections
    for backend, worst in sorted(s.by_backend.items()):
        if worst > limit:
            out.add(Severity.ERROR,
                    f"up to{at_least} {worst} server connections to {backend} (pool size "
                    f"+ reserve per pool, {s.users} user(s) per database without a forced "
                    "user" + (", the '*' fallback counted as one database" if s.wildcard
                              else "") +
                    f"), but PostgreSQL allows {c.env.max_connections} - "
                    f"{c.env.reserved_connections} reserved = {limit}: clients will get "
                    "'too many clients'", line=None,
                    fix="lower default_pool_size / reserve_pool_size, cap with "
                        "max_db_connections, or raise max_connections")


@POOLING.rule("pgbouncer/sizing")
def file_descriptors(c: Check, out: Out) -> None:
    """max_client_conn plus server connections above the open-files limit (warning)."""
    max_client, pool_total = c.number("max_client_conn", "100"), sizing(c).pool_total
    need = max_client + pool_total + 10
    if c.env.fd_limit is not None and need > c.env.fd_limit:
        out.at(Severity.WARNING, "max_client_conn",
               f"max_client_conn {max_client} + {pool_total} server connections need about "
               f"{need} file descriptors, above the limit {c.env.fd_limit} "
               f"({c.env.fd_limit_source}): connections fail with 'Too many open files'",
               "raise LimitNOFILE (systemd) / ulimit -n, or lower max_client_conn")


@POOLING.rule("pgbouncer/sizing")
def session_pools_too_small(c: Check, out: Out) -> None:
    """Session pooling that serves under 1/100 of max_client_conn: clients queue (warning)."""
    max_client, served = c.number("max_client_conn", "100"), sizing(c).session_served
    if served and max_client >= SESSION_QUEUE_RATIO * served and \
            (c.value("pool_mode") or "session").lower() == "session":
        out.at(Severity.WARNING, "max_client_conn",
               f"session pooling serves at most {served} clients at once (one server "
               f"connection each for the whole session), but max_client_conn admits "
               f"{max_client}: the rest wait, and fail after query_wait_timeout",
               "use transaction pooling, raise the pool sizes, or lower max_client_conn")


# --------------------------------------------------------------------------- paths


@POOLING.rule("pgbouncer/files",
              "Files the config names: which were read, which are not available here")
def files_read(c: Check, out: Out) -> None:
    """Which file was read for each auth_file, HBA or TLS setting (info)."""
    where = f" (under --root {c.env.root})" if c.env.root else " on this host"
    for key, target in c.env.read_from:
        out.at(Severity.INFO, key, f"{key}: read {target}{where}")


@POOLING.rule("pgbouncer/files")
def files_not_here(c: Check, out: Out) -> None:
    """Absolute paths absent on this host (or under --root): not judged, one note (info)."""
    if c.env.not_here:
        listed = ", ".join(f"{k} {p}" for k, p in c.env.not_here)
        where = f"under --root {c.env.root}" if c.env.root else "on this host"
        out.add(Severity.INFO, f"not available here: {listed}; absent {where}, so not checked",
                line=None, fix="copy the pooler host's files under a directory and pass "
                               "--root DIR")


@POOLING.rule("pgbouncer/path", "Relative path")
def relative_path(c: Check, out: Out) -> None:
    """A relative path setting: PgBouncer resolves it against its working directory (info)."""
    for key in PATH_KEYS:
        e = c.cfg.settings.get(key)
        if e and e.value and not e.value.startswith(("/", "@", "~")):
            out.add(Severity.INFO, f"relative path {e.value!r}: PgBouncer resolves it against "
                    "its working directory (dbgauge checked it next to the config file)",
                    file=e.source, line=e.line, key=key, fix="use an absolute path")


@POOLING.rule("pgbouncer/path")
def relative_include(c: Check, out: Out) -> None:
    """A relative %include: PgBouncer resolves it against its working directory (info)."""
    for inc in c.cfg.flat.includes:
        if not os.path.isabs(inc.path):
            out.add(Severity.INFO, f"relative %include {inc.path}: PgBouncer resolves it "
                    "against its working directory (dbgauge: next to the including file)",
                    file=inc.source, line=inc.line, fix="use an absolute path")
