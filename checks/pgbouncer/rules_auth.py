"""Rules on authentication: auth_type, auth_file, the admin console and the HBA file.

These catch setups that load fine but let nobody in (a password auth_type without
auth_file or auth_query, a user missing from auth_file under trust, an md5 hash under
scram-sha-256) or let everybody in (trust or any on a non-loopback listener, a trust
HBA rule for a remote network). The parsed auth_file and HBA file come from `Environment`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from dbgauge.checks.pgbouncer.authfile import AuthFile
from dbgauge.checks.pgbouncer.hba import HbaFile, HbaRule
from dbgauge.checks.pgbouncer.model import (
    Db,
    Environment,
    Out,
    PgbConfig,
    non_loopback_listeners,
    split_list,
)
from dbgauge.checks.pgbouncer.params import HBA_METHODS, HBA_OPTIONS_SINCE
from dbgauge.checks.validation import did_you_mean
from dbgauge.toolkit.db.version import Version, version_text
from dbgauge.toolkit.result import Severity

PASSWORD_AUTH = ("plain", "md5", "scram-sha-256")
HBA_PASSWORD_METHODS = ("md5", "password", "scram-sha-256")


def _referenced_users(cfg: PgbConfig, v: Version,
                      dbs: Sequence[Db]) -> dict[str, tuple[str, str, int | None]]:
    """User name -> (why PgBouncer needs it, file, line where it is referenced)."""
    users: dict[str, tuple[str, str, int | None]] = {}
    for key in ("admin_users", "stats_users"):
        for u in split_list(cfg.value(key, v)):
            users.setdefault(u, (key, cfg.source_of(key), cfg.line_of(key)))
    for name, e in cfg.users.items():
        users.setdefault(name, ("[users]", e.source, e.line))
    for db in dbs:
        if db.forced_user:
            users.setdefault(db.forced_user, (f"user= of database {db.name!r}",
                                              db.entry.source, db.entry.line))
    return users


def check_auth(cfg: PgbConfig, env: Environment, out: Out, dbs: Sequence[Db]) -> None:
    """Setups where nobody, or everybody, can log in; then auth_file, admin and HBA rules."""
    v = env.version
    auth_type = (cfg.value("auth_type", v) or "md5").lower()
    auth_file_path = cfg.value("auth_file", v)
    auth_user = cfg.value("auth_user", v)
    db_auth_users = [db for db in dbs if db.auth_user]
    listeners = non_loopback_listeners(cfg.value("listen_addr", v))
    auth = env.auth_file if isinstance(env.auth_file, AuthFile) else None
    hba = env.hba_file if isinstance(env.hba_file, HbaFile) else None
    uses_file = auth_type in ("trust", "plain", "md5", "cert", "hba", "scram-sha-256")

    if auth_type in ("trust", "any") and listeners:
        console = (", and every client is admin on the console" if auth_type == "any"
                   else "")
        out.at(Severity.ERROR, "pgbouncer/auth-open", "auth_type",
               f"auth_type {auth_type} with listen_addr {', '.join(listeners)}: anyone who "
               f"can reach the port logs in without a password{console}",
               "listen on 127.0.0.1 / a Unix socket only, or use scram-sha-256")
    elif auth_type == "any":
        out.at(Severity.WARNING, "pgbouncer/auth", "auth_type",
               "auth_type any: no authentication at all, and every client is admin on the "
               "console", "use scram-sha-256 (or hba with peer for local users)")
    if auth_type == "any":
        for db in dbs:
            if not db.forced_user:
                out.add(Severity.ERROR, "pgbouncer/auth",
                        f"auth_type any needs a forced user: database {db.name!r} has no "
                        "user=, so PgBouncer cannot log into the server for its clients",
                        file=db.entry.source, line=db.entry.line, key=db.name,
                        fix="add user=NAME (and password=) to the connection string")
    if auth_type == "pam" and (auth_user or db_auth_users):
        where = "auth_user" if auth_user else f"auth_user of {db_auth_users[0].name!r}"
        out.at(Severity.ERROR, "pgbouncer/auth", "auth_type",
               f"auth_type pam cannot be combined with {where}: PAM users are not looked "
               "up with auth_query", "remove auth_user or use another auth_type")
    if auth_type == "cert":
        mode = (cfg.value("client_tls_sslmode", v) or "disable").lower()
        if mode not in ("verify-ca", "verify-full"):
            out.at(Severity.ERROR, "pgbouncer/auth", "client_tls_sslmode",
                   f"auth_type cert needs client certificates, but client_tls_sslmode is "
                   f"{mode}", "set client_tls_sslmode = verify-full and client_tls_ca_file")
    if auth_type == "hba":
        _check_hba(cfg, env, out, hba, listeners)
    password_methods = auth_type in PASSWORD_AUTH or (
        auth_type == "hba" and hba is not None and
        any(r.method in HBA_PASSWORD_METHODS for r in hba.rules))
    tls_mode = (cfg.value("client_tls_sslmode", v) or "disable").lower()
    if password_methods and listeners and tls_mode in ("disable", "allow", "prefer"):
        what = ("passwords in clear text" if auth_type == "plain" else
                "password hashes (md5 is open to offline cracking)" if auth_type == "md5"
                else "logins")
        optional = "" if tls_mode == "disable" else " (TLS is offered, not required)"
        out.at(Severity.WARNING, "pgbouncer/client-tls", "client_tls_sslmode",
               f"listen_addr {', '.join(listeners)} with {auth_type} authentication and "
               f"client_tls_sslmode {tls_mode}{optional}: {what} and all query data cross "
               "the network unencrypted", "set client_tls_sslmode = require with "
               "client_tls_key_file/client_tls_cert_file, or listen on 127.0.0.1 only")
    if password_methods and not auth_file_path and not auth_user and not db_auth_users:
        out.at(Severity.ERROR, "pgbouncer/auth", "auth_type",
               f"auth_type {auth_type} needs passwords, but neither auth_file nor auth_user "
               "(with auth_query) is set: nobody can log in",
               "set auth_file, or auth_user plus auth_query")
    if auth_type == "trust" and not auth_file_path:
        out.at(Severity.ERROR, "pgbouncer/auth", "auth_type",
               "auth_type trust still requires each user to be listed in auth_file, and "
               "no auth_file is set: nobody can log in", "set auth_file")
    if not uses_file or not auth_file_path:
        _check_admin(cfg, out, v, auth_type, None)
        return
    if isinstance(env.auth_file, str):
        out.at(Severity.ERROR, "pgbouncer/auth-file", "auth_file",
               f"cannot read auth_file {auth_file_path}: {env.auth_file}",
               "create it or fix the path; without it no user from the file can log in")
        _check_admin(cfg, out, v, auth_type, None)
        return
    if auth is None:
        _check_admin(cfg, out, v, auth_type, None)
        return
    for p in auth.problems:
        out.add(Severity.ERROR, "pgbouncer/auth-file", p.message, file=auth.source,
                line=p.line, fix="each line is \"user\" \"password\"; comments start with ';'")
    seen: dict[str, int] = {}
    for u in auth.users:
        if u.name in seen:
            out.add(Severity.WARNING, "pgbouncer/auth-file",
                    f"user {u.name!r} is listed again (first at line {seen[u.name]}); the "
                    "last entry wins", file=auth.source, line=u.line, key=u.name)
        seen.setdefault(u.name, u.line)
        if u.secret_kind == "bad-scram":
            out.add(Severity.ERROR, "pgbouncer/auth-file",
                    f"user {u.name!r}: malformed SCRAM secret", file=auth.source, line=u.line,
                    key=u.name, fix="copy rolpassword from pg_authid verbatim")
        elif u.secret_kind == "md5" and auth_type == "scram-sha-256":
            out.add(Severity.ERROR, "pgbouncer/auth-file",
                    f"user {u.name!r} has an md5 hash, which cannot verify a SCRAM login "
                    "(auth_type scram-sha-256)", file=auth.source, line=u.line, key=u.name,
                    fix="store the SCRAM secret or the plain password")
        elif u.secret_kind == "empty" and auth_type in PASSWORD_AUTH:
            out.add(Severity.WARNING, "pgbouncer/auth-file",
                    f"user {u.name!r} has an empty password and cannot log in with "
                    f"{auth_type}", file=auth.source, line=u.line, key=u.name)
    names = {u.name for u in auth.users}
    if auth_type == "trust":
        for user, (why, src, line) in _referenced_users(cfg, v, dbs).items():
            if user not in names:
                out.add(Severity.ERROR, "pgbouncer/auth-file",
                        f"user {user!r} ({why}) is not in auth_file {auth.source}: under "
                        "auth_type trust PgBouncer rejects users it does not find there",
                        file=src, line=line, key=user,
                        fix=f'add a line "{user}" "" to {auth.source}')
    _check_admin(cfg, out, v, auth_type, names)


def _check_admin(cfg: PgbConfig, out: Out, v: Version, auth_type: str,
                 file_users: set[str] | None) -> None:
    """Who can reach the admin console: admin_users set, and (with an auth_file) listed in it."""
    admins = split_list(cfg.value("admin_users", v))
    if not admins and auth_type != "any":
        # Works as designed (the OS user still has the Unix socket): worth knowing only.
        out.at(Severity.INFO, "pgbouncer/admin", "admin_users",
               "no admin_users: nobody can run RELOAD, PAUSE or SHOW on the admin console "
               "over TCP (only the OS user running PgBouncer, via the Unix socket)",
               "list the operators' database users in admin_users")
    if file_users is None or auth_type in ("trust", "any") or cfg.value("auth_dbname", v):
        return
    for key in ("admin_users", "stats_users"):
        for user in split_list(cfg.value(key, v)):
            if user not in file_users:
                out.at(Severity.WARNING, "pgbouncer/admin", key,
                       f"{user!r} is not in auth_file, and without auth_dbname the console "
                       "does not use auth_query: this user cannot log into the console",
                       "add the user to auth_file or set auth_dbname")


def _check_hba(cfg: PgbConfig, env: Environment, out: Out, hba: HbaFile | None,
               listeners: list[str]) -> None:
    """auth_type hba: the HBA file is set, readable, and has rules PgBouncer accepts."""
    v = env.version
    path = cfg.value("auth_hba_file", v)
    if not path:
        out.at(Severity.ERROR, "pgbouncer/hba", "auth_hba_file",
               "auth_type hba without auth_hba_file: PgBouncer rejects every login",
               "set auth_hba_file to a pg_hba.conf-style file")
        return
    if isinstance(env.hba_file, str):
        out.at(Severity.ERROR, "pgbouncer/hba", "auth_hba_file",
               f"cannot read auth_hba_file {path}: {env.hba_file}; PgBouncer rejects every "
               "login")
        return
    if hba is None:
        return
    for p in hba.problems:
        out.add(Severity.ERROR if p.fatal else Severity.WARNING, "pgbouncer/hba", p.message,
                file=hba.source, line=p.line)
    if not hba.rules:
        out.add(Severity.ERROR, "pgbouncer/hba", "no valid rule: PgBouncer rejects every login",
                file=hba.source, line=1)
    for rule in hba.rules:
        _check_hba_rule(rule, hba.source, v, out, listeners)


def _check_hba_rule(rule: HbaRule, source: str, v: Version, out: Out,
                    listeners: list[str]) -> None:
    """One HBA rule: a method and options this version supports, on a fitting connection type."""
    since = HBA_METHODS.get(rule.method)
    if rule.method in ("pam", "any"):
        out.add(Severity.ERROR, "pgbouncer/hba",
                f"method {rule.method} only works as a global auth_type, not in the HBA "
                "file; PgBouncer skips this line", file=source, line=rule.line)
        return
    if since is None:
        near = did_you_mean(rule.method, HBA_METHODS)
        out.add(Severity.ERROR, "pgbouncer/hba",
                f"unsupported method {rule.method!r}; PgBouncer skips this line",
                file=source, line=rule.line, fix=f"did you mean {near!r}?" if near else None)
        return
    if v < since:
        out.add(Severity.ERROR, "pgbouncer/version",
                f"method {rule.method} needs PgBouncer {version_text(since)}+; this line "
                "is skipped", file=source, line=rule.line)
    for opt in rule.options:
        name = opt.split("=", 1)[0]
        if v < HBA_OPTIONS_SINCE:
            out.add(Severity.ERROR, "pgbouncer/hba",
                    f"option {opt!r} needs PgBouncer {version_text(HBA_OPTIONS_SINCE)}+; "
                    "older versions skip the whole line", file=source, line=rule.line)
        elif name != "map" and not (rule.method == "ldap" and name.startswith("ldap")):
            out.add(Severity.ERROR, "pgbouncer/hba", f"unsupported option {opt!r}",
                    file=source, line=rule.line)
    if rule.method == "peer" and rule.type != "local":
        out.add(Severity.WARNING, "pgbouncer/hba",
                f"peer works only on Unix sockets; this {rule.type} rule never "
                "authenticates anyone", file=source, line=rule.line, fix="use local")
    if rule.method == "cert" and rule.type in ("host", "hostnossl"):
        out.add(Severity.WARNING, "pgbouncer/hba",
                f"cert needs a TLS connection; on a {rule.type} rule plain connections fail",
                file=source, line=rule.line, fix="use hostssl")
    if rule.method == "trust" and rule.network and listeners:
        net = ipaddress.ip_network(rule.network)
        if not net.is_loopback:
            out.add(Severity.ERROR, "pgbouncer/auth-open",
                    f"trust for {rule.network} while listening on {', '.join(listeners)}: "
                    "anyone from that network logs in without a password", file=source,
                    line=rule.line, fix="restrict to 127.0.0.1/32 or use scram-sha-256")
