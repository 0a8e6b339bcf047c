"""Rules on how the pooler will serve: pooling modes, TLS, connection sizing and paths.

Transaction and statement pooling break session state that clients may rely on; TLS
files that are missing stop PgBouncer at startup (client side; server TLS files
only fail the server connections); pools that add up to more than
PostgreSQL's max_connections, or clients plus servers above the open-files limit, fail
under load; relative paths depend on PgBouncer's working directory.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from dbgauge.checks.pgbouncer.authfile import AuthFile
from dbgauge.checks.pgbouncer.connstr import parse_connstr
from dbgauge.checks.pgbouncer.model import (
    PATH_KEYS,
    Db,
    Environment,
    Out,
    PgbConfig,
    split_list,
    strtol,
)
from dbgauge.toolkit.db.version import Version, version_text
from dbgauge.toolkit.result import Severity

# Session pooling: a client holds its server connection until it disconnects, so
# max_client_conn this many times the servers' total means nearly everyone queues.
SESSION_QUEUE_RATIO = 100
TRANSACTION_BREAKS = ("SET/RESET", "LISTEN/NOTIFY", "WITH HOLD cursors", "SQL-level PREPARE",
                      "session advisory locks", "temporary tables")


def _modes_in_use(cfg: PgbConfig, v: Version, dbs: Sequence[Db]) -> set[str]:
    """The pool modes of the global setting, the databases and the users."""
    modes = {(cfg.value("pool_mode", v) or "session").lower()}
    modes |= {db.pool_mode for db in dbs if db.pool_mode}
    for e in cfg.users.values():
        mode = parse_connstr(e.value).get("pool_mode")
        if mode:
            modes.add(mode.lower())
    return modes


def check_pooling(cfg: PgbConfig, out: Out, v: Version, dbs: Sequence[Db]) -> None:
    """What transaction/statement pooling breaks, and settings it ignores."""
    modes = _modes_in_use(cfg, v, dbs)
    pooled = modes & {"transaction", "statement"}
    always = strtol(cfg.value("server_reset_query_always", v) or "0") or 0
    if pooled:
        out.at(Severity.INFO, "pgbouncer/pool-mode", "pool_mode",
               f"{'/'.join(sorted(pooled))} pooling: clients must not rely on "
               f"{', '.join(TRANSACTION_BREAKS)} across transactions")
        reset = cfg.settings.get("server_reset_query")
        if reset is not None and reset.value and not always and "session" not in modes \
                and reset.value.strip().upper() != "DISCARD ALL":  # the default: no surprise
            out.at(Severity.WARNING, "pgbouncer/pool-mode", "server_reset_query",
                   "server_reset_query runs only in session pooling (unless "
                   "server_reset_query_always = 1); with transaction pooling it is ignored",
                   "remove it, or set server_reset_query_always = 1 if you need it")
        elif always and reset is not None and reset.value:
            out.at(Severity.INFO, "pgbouncer/pool-mode", "server_reset_query_always",
                   f"server_reset_query ({reset.value}) runs after every transaction")
        if v >= (1, 21):
            mps = strtol(cfg.value("max_prepared_statements", v) or "0")
            if mps == 0:
                out.at(Severity.WARNING, "pgbouncer/prepared-statements",
                       "max_prepared_statements",
                       "max_prepared_statements = 0 with transaction pooling: protocol-level "
                       "prepared statements (most drivers' default) fail with 'prepared "
                       "statement does not exist'", "set max_prepared_statements = 200")
        else:
            out.at(Severity.INFO, "pgbouncer/prepared-statements", "pool_mode",
                   f"PgBouncer {version_text(v)} cannot track protocol-level prepared "
                   "statements (1.21+ can): disable them in the client drivers")
    if "statement" in modes:
        out.at(Severity.INFO, "pgbouncer/pool-mode", "pool_mode",
               "statement pooling refuses multi-statement transactions")
    ignored = {p.lower() for p in split_list(cfg.value("ignore_startup_parameters", v))}
    dropped = sorted(ignored & {"options", "search_path"})
    if dropped:
        out.at(Severity.WARNING, "pgbouncer/pool-mode", "ignore_startup_parameters",
               f"ignore_startup_parameters drops {', '.join(dropped)} silently: session "
               "settings clients pass at connect (e.g. options=-c statement_timeout=...) "
               "never reach the server",
               "set those settings per role/database on the server (ALTER ROLE ... SET)")


def check_tls(cfg: PgbConfig, env: Environment, out: Out) -> None:
    """Client and server TLS: files exist, the ones an sslmode needs are set, no weak protocols."""
    v = env.version
    for side in ("client", "server"):
        mode = (cfg.value(f"{side}_tls_sslmode", v) or "disable").lower()
        key_k, cert_k, ca_k = (f"{side}_tls_key_file", f"{side}_tls_cert_file",
                               f"{side}_tls_ca_file")
        key, cert, ca = (cfg.value(key_k, v), cfg.value(cert_k, v), cfg.value(ca_k, v))
        not_here = dict(env.not_here)
        for k, path in ((key_k, key), (cert_k, cert), (ca_k, ca)):
            if not path or k in not_here or env.resolve(path) in env.existing_paths:
                continue
            if side == "client" and mode != "disable":
                out.at(Severity.ERROR, "pgbouncer/tls", k,
                       f"{path} does not exist (or is not readable): with client_tls_sslmode "
                       f"{mode} TLS setup fails and PgBouncer does not start", "fix the path")
            elif side == "server" and mode != "disable":
                # PgBouncer 1.18 starts without its server TLS files (tested): only the
                # TLS connections to PostgreSQL fail.
                out.at(Severity.WARNING, "pgbouncer/tls", k,
                       f"{path} does not exist (or is not readable): PgBouncer starts, but "
                       f"with server_tls_sslmode {mode} its TLS connections to PostgreSQL "
                       "cannot use it", "fix the path")
        if side == "client" and mode != "disable":
            for k, path in ((key_k, key), (cert_k, cert)):
                if not path:
                    out.at(Severity.ERROR, "pgbouncer/tls", k,
                           f"client_tls_sslmode {mode} needs {k}: PgBouncer fails TLS setup",
                           f"set {k}")
        if mode in ("verify-ca", "verify-full") and not ca:
            out.at(Severity.ERROR if side == "client" else Severity.WARNING, "pgbouncer/tls",
                   ca_k, f"{side}_tls_sslmode {mode} needs {ca_k} to verify certificates",
                   f"set {ca_k}")
        if side == "server" and bool(key) != bool(cert):
            out.at(Severity.ERROR, "pgbouncer/tls", key_k if key else cert_k,
                   "server_tls_key_file and server_tls_cert_file must be set together")
        protocols = (cfg.value(f"{side}_tls_protocols", v) or "").lower()
        weak = [p for p in ("tlsv1.0", "tlsv1.1", "all", "legacy") if p in protocols]
        if weak and mode != "disable":
            out.at(Severity.WARNING, "pgbouncer/tls", f"{side}_tls_protocols",
                   f"{side}_tls_protocols allows {', '.join(weak)} (deprecated, insecure)",
                   "use secure (TLS 1.2 and 1.3)")


def check_sizing(cfg: PgbConfig, env: Environment, out: Out, dbs: Sequence[Db]) -> None:
    """Worst-case server connections per backend vs max_connections; descriptors vs the
    limit; session pools far smaller than the clients allowed in.

    The `*` fallback counts as one database (each database name a client asks for gets
    its own pools, so it is a lower bound), at default_pool_size unless it says otherwise.
    """
    v = env.version
    default_pool = strtol(cfg.value("default_pool_size", v) or "20") or 0
    reserve_default = strtol(cfg.value("reserve_pool_size", v) or "0") or 0
    global_max_db = strtol(cfg.value("max_db_connections", v) or "0") or 0
    global_mode = (cfg.value("pool_mode", v) or "session").lower()
    auth = env.auth_file if isinstance(env.auth_file, AuthFile) else None
    known_users = ({u.name for u in auth.users} if auth else set()) | set(cfg.users)
    n_users = max(1, len(known_users))
    by_backend: dict[str, int] = {}
    pool_total = 0
    session_served = 0
    wildcard = False
    for db in dbs:
        wildcard = wildcard or db.name == "*"
        size = db.pool_size if db.pool_size is not None else default_pool
        reserve = db.reserve if db.reserve is not None else reserve_default
        pools = 1 if db.forced_user else n_users
        worst = pools * (size + reserve)
        cap = db.max_db_connections if db.max_db_connections else global_max_db
        if cap:
            worst = min(worst, cap)
        pool_total += pools * size
        if (db.pool_mode or global_mode) == "session":
            session_served += worst
        backend = f"{db.host or 'unix socket'}:{db.port}"
        by_backend[backend] = by_backend.get(backend, 0) + worst
    at_least = " at least" if wildcard else ""
    if env.max_connections is not None:
        limit = env.max_connections - env.reserved_connections
        for backend, worst in sorted(by_backend.items()):
            if worst > limit:
                out.add(Severity.ERROR, "pgbouncer/sizing",
                        f"up to{at_least} {worst} server connections to {backend} (pool size "
                        f"+ reserve per pool, {n_users} user(s) per database without a forced "
                        "user" + (", the '*' fallback counted as one database" if wildcard
                                  else "") +
                        f"), but PostgreSQL allows {env.max_connections} - "
                        f"{env.reserved_connections} reserved = {limit}: clients will get "
                        "'too many clients'", line=None,
                        fix="lower default_pool_size / reserve_pool_size, cap with "
                            "max_db_connections, or raise max_connections")
    max_client = strtol(cfg.value("max_client_conn", v) or "100") or 0
    need = max_client + pool_total + 10
    if env.fd_limit is not None and need > env.fd_limit:
        out.at(Severity.WARNING, "pgbouncer/sizing", "max_client_conn",
               f"max_client_conn {max_client} + {pool_total} server connections need about "
               f"{need} file descriptors, above the limit {env.fd_limit} "
               f"({env.fd_limit_source}): connections fail with 'Too many open files'",
               "raise LimitNOFILE (systemd) / ulimit -n, or lower max_client_conn")
    if session_served and max_client >= SESSION_QUEUE_RATIO * session_served and \
            global_mode == "session":
        out.at(Severity.WARNING, "pgbouncer/sizing", "max_client_conn",
               f"session pooling serves at most {session_served} clients at once (one server "
               f"connection each for the whole session), but max_client_conn admits "
               f"{max_client}: the rest wait, and fail after query_wait_timeout",
               "use transaction pooling, raise the pool sizes, or lower max_client_conn")


def check_paths(cfg: PgbConfig, env: Environment, out: Out) -> None:
    """Relative paths and includes, which depend on PgBouncer's working directory; which
    named files were read, and which are not available on this host."""
    for key, target in env.read_from:
        where = f" (under --root {env.root})" if env.root else " on this host"
        out.at(Severity.INFO, "pgbouncer/files", key,
               f"{key}: read {target}{where}")
    if env.not_here:
        listed = ", ".join(f"{k} {p}" for k, p in env.not_here)
        where = f"under --root {env.root}" if env.root else "on this host"
        out.add(Severity.INFO, "pgbouncer/files",
                f"not available here: {listed}; absent {where}, so not checked",
                line=None, fix="copy the pooler host's files under a directory and pass "
                               "--root DIR")
    for key in PATH_KEYS:
        e = cfg.settings.get(key)
        if e and e.value and not e.value.startswith(("/", "@", "~")):
            out.add(Severity.INFO, "pgbouncer/path",
                    f"relative path {e.value!r}: PgBouncer resolves it against its working "
                    "directory (dbgauge checked it next to the config file)",
                    file=e.source, line=e.line, key=key, fix="use an absolute path")
    for inc in cfg.flat.includes:
        if not os.path.isabs(inc.path):
            out.add(Severity.INFO, "pgbouncer/path",
                    f"relative %include {inc.path}: PgBouncer resolves it against its working "
                    "directory (dbgauge: next to the including file)", file=inc.source,
                    line=inc.line, fix="use an absolute path")
