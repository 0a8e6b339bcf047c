"""Rules on authentication: auth_type, auth_file and the admin console.

These catch setups that load fine but let nobody in (a password auth_type without
auth_file or auth_query, a user missing from auth_file under trust, an md5 hash under
scram-sha-256) or let everybody in (trust or any on a non-loopback listener). The parsed
auth_file comes from `Environment`; the HBA file has its own rules (`rules_hba`).
"""

from __future__ import annotations

from dbgauge.checks.pgbouncer.authfile import AuthFile
from dbgauge.checks.pgbouncer.model import Check, Db, Out, split_list
from dbgauge.checks.pgbouncer.rules import AUTH
from dbgauge.toolkit.result import Severity

PASSWORD_AUTH = ("plain", "md5", "scram-sha-256")
HBA_PASSWORD_METHODS = ("md5", "password", "scram-sha-256")
# auth_types that look users up in auth_file (any and pam do not)
FILE_AUTH = ("trust", "plain", "md5", "cert", "hba", "scram-sha-256")


def _db_auth_users(c: Check) -> list[Db]:
    return [db for db in c.dbs if db.auth_user]


def _password_methods(c: Check) -> bool:
    """Whether logins are checked against passwords (directly or by an HBA rule)."""
    return c.auth_type in PASSWORD_AUTH or (
        c.auth_type == "hba" and c.hba is not None and
        any(r.method in HBA_PASSWORD_METHODS for r in c.hba.rules))


def _file_users(c: Check) -> AuthFile | None:
    """The auth_file PgBouncer looks users up in, when this auth_type uses one and it
    was read."""
    if c.auth_type in FILE_AUTH and c.value("auth_file"):
        return c.auth_file
    return None


@AUTH.rule("pgbouncer/auth-open", "Anyone who can reach the listener can log in")
def open_listener(c: Check, out: Out) -> None:
    """auth_type trust or any with a non-loopback listen_addr."""
    listeners = c.listeners
    if c.auth_type in ("trust", "any") and listeners:
        console = (", and every client is admin on the console" if c.auth_type == "any"
                   else "")
        out.at(Severity.ERROR, "auth_type",
               f"auth_type {c.auth_type} with listen_addr {', '.join(listeners)}: anyone who "
               f"can reach the port logs in without a password{console}",
               "listen on 127.0.0.1 / a Unix socket only, or use scram-sha-256")


@AUTH.rule("pgbouncer/auth", "Authentication setup that cannot work")
def no_authentication(c: Check, out: Out) -> None:
    """auth_type any on loopback only (warning; on an open listener it is auth-open)."""
    if c.auth_type == "any" and not c.listeners:
        out.at(Severity.WARNING, "auth_type",
               "auth_type any: no authentication at all, and every client is admin on the "
               "console", "use scram-sha-256 (or hba with peer for local users)")


@AUTH.rule("pgbouncer/auth")
def any_without_forced_user(c: Check, out: Out) -> None:
    """auth_type any and a database without user=: PgBouncer cannot log into the server."""
    if c.auth_type != "any":
        return
    for db in c.dbs:
        if not db.forced_user:
            out.add(Severity.ERROR,
                    f"auth_type any needs a forced user: database {db.name!r} has no "
                    "user=, so PgBouncer cannot log into the server for its clients",
                    file=db.entry.source, line=db.entry.line, key=db.name,
                    fix="add user=NAME (and password=) to the connection string")


@AUTH.rule("pgbouncer/auth")
def pam_with_auth_user(c: Check, out: Out) -> None:
    """auth_type pam with auth_user: PAM users are not looked up with auth_query."""
    auth_user, db_auth_users = c.value("auth_user"), _db_auth_users(c)
    if c.auth_type == "pam" and (auth_user or db_auth_users):
        where = "auth_user" if auth_user else f"auth_user of {db_auth_users[0].name!r}"
        out.at(Severity.ERROR, "auth_type",
               f"auth_type pam cannot be combined with {where}: PAM users are not looked "
               "up with auth_query", "remove auth_user or use another auth_type")


@AUTH.rule("pgbouncer/auth")
def cert_without_verification(c: Check, out: Out) -> None:
    """auth_type cert without client_tls_sslmode verify-ca or verify-full."""
    mode = (c.value("client_tls_sslmode") or "disable").lower()
    if c.auth_type == "cert" and mode not in ("verify-ca", "verify-full"):
        out.at(Severity.ERROR, "client_tls_sslmode",
               f"auth_type cert needs client certificates, but client_tls_sslmode is "
               f"{mode}", "set client_tls_sslmode = verify-full and client_tls_ca_file")


@AUTH.rule("pgbouncer/client-tls", "Password logins from other hosts without client TLS")
def passwords_without_client_tls(c: Check, out: Out) -> None:
    """Password authentication on a non-loopback listener with client TLS not required."""
    listeners = c.listeners
    tls_mode = (c.value("client_tls_sslmode") or "disable").lower()
    if not (_password_methods(c) and listeners and tls_mode in ("disable", "allow", "prefer")):
        return
    what = ("passwords in clear text" if c.auth_type == "plain" else
            "password hashes (md5 is open to offline cracking)" if c.auth_type == "md5"
            else "logins")
    optional = "" if tls_mode == "disable" else " (TLS is offered, not required)"
    out.at(Severity.WARNING, "client_tls_sslmode",
           f"listen_addr {', '.join(listeners)} with {c.auth_type} authentication and "
           f"client_tls_sslmode {tls_mode}{optional}: {what} and all query data cross "
           "the network unencrypted", "set client_tls_sslmode = require with "
           "client_tls_key_file/client_tls_cert_file, or listen on 127.0.0.1 only")


@AUTH.rule("pgbouncer/auth")
def passwords_without_source(c: Check, out: Out) -> None:
    """A password auth_type with neither auth_file nor auth_user: nobody can log in."""
    if _password_methods(c) and not c.value("auth_file") and not c.value("auth_user") and \
            not _db_auth_users(c):
        out.at(Severity.ERROR, "auth_type",
               f"auth_type {c.auth_type} needs passwords, but neither auth_file nor "
               "auth_user (with auth_query) is set: nobody can log in",
               "set auth_file, or auth_user plus auth_query")


@AUTH.rule("pgbouncer/auth")
def trust_without_auth_file(c: Check, out: Out) -> None:
    """auth_type trust without auth_file: trust still looks every user up there."""
    if c.auth_type == "trust" and not c.value("auth_file"):
        out.at(Severity.ERROR, "auth_type",
               "auth_type trust still requires each user to be listed in auth_file, and "
               "no auth_file is set: nobody can log in", "set auth_file")


# ----------------------------------------------------------------------- auth_file


@AUTH.rule("pgbouncer/auth-file", "auth_file problem")
def auth_file_unreadable(c: Check, out: Out) -> None:
    """An auth_file that does not exist or cannot be read: nobody from it logs in."""
    path = c.value("auth_file")
    if c.auth_type in FILE_AUTH and path and isinstance(c.env.auth_file, str):
        out.at(Severity.ERROR, "auth_file",
               f"cannot read auth_file {path}: {c.env.auth_file}",
               "create it or fix the path; without it no user from the file can log in")


@AUTH.rule("pgbouncer/auth-file")
def broken_auth_file(c: Check, out: Out) -> None:
    """Lines PgBouncer's auth_file reader stops at or misreads (a '#' comment, an
    unterminated or over-long field)."""
    auth = _file_users(c)
    if auth is None:
        return
    for p in auth.problems:
        out.add(Severity.ERROR, p.message, file=auth.source, line=p.line,
                fix="each line is \"user\" \"password\"; comments start with ';'")


@AUTH.rule("pgbouncer/auth-file")
def user_listed_again(c: Check, out: Out) -> None:
    """A user listed twice: the last entry wins (warning)."""
    auth = _file_users(c)
    if auth is None:
        return
    seen: dict[str, int] = {}
    for u in auth.users:
        if u.name in seen:
            out.add(Severity.WARNING, f"user {u.name!r} is listed again (first at line "
                    f"{seen[u.name]}); the last entry wins", file=auth.source, line=u.line,
                    key=u.name)
        seen.setdefault(u.name, u.line)


@AUTH.rule("pgbouncer/auth-file")
def unusable_secret(c: Check, out: Out) -> None:
    """A malformed SCRAM secret, or an md5 hash under auth_type scram-sha-256."""
    auth = _file_users(c)
    if auth is None:
        return
    for u in auth.users:
        if u.secret_kind == "bad-scram":
            out.add(Severity.ERROR, f"user {u.name!r}: malformed SCRAM secret",
                    file=auth.source, line=u.line, key=u.name,
                    fix="copy rolpassword from pg_authid verbatim")
        elif u.secret_kind == "md5" and c.auth_type == "scram-sha-256":
            out.add(Severity.ERROR, f"user {u.name!r} has an md5 hash, which cannot verify a "
                    "SCRAM login (auth_type scram-sha-256)", file=auth.source, line=u.line,
                    key=u.name, fix="store the SCRAM secret or the plain password")


@AUTH.rule("pgbouncer/auth-file")
def empty_password(c: Check, out: Out) -> None:
    """A user with an empty password under a password auth_type (warning)."""
    auth = _file_users(c)
    if auth is None or c.auth_type not in PASSWORD_AUTH:
        return
    for u in auth.users:
        if u.secret_kind == "empty":
            out.add(Severity.WARNING, f"user {u.name!r} has an empty password and cannot log "
                    f"in with {c.auth_type}", file=auth.source, line=u.line, key=u.name)


def _referenced_users(c: Check) -> dict[str, tuple[str, str, int | None]]:
    """User name -> (why PgBouncer needs it, file, line where it is referenced)."""
    users: dict[str, tuple[str, str, int | None]] = {}
    for key in ("admin_users", "stats_users"):
        for u in split_list(c.value(key)):
            users.setdefault(u, (key, c.cfg.source_of(key), c.cfg.line_of(key)))
    for name, e in c.cfg.users.items():
        users.setdefault(name, ("[users]", e.source, e.line))
    for db in c.dbs:
        if db.forced_user:
            users.setdefault(db.forced_user, (f"user= of database {db.name!r}",
                                              db.entry.source, db.entry.line))
    return users


@AUTH.rule("pgbouncer/auth-file")
def trust_user_not_listed(c: Check, out: Out) -> None:
    """Under trust, a user the config names (admin/stats, [users], user=) missing from
    auth_file: PgBouncer rejects users it does not find there."""
    auth = _file_users(c)
    if auth is None or c.auth_type != "trust":
        return
    names = {u.name for u in auth.users}
    for user, (why, src, line) in _referenced_users(c).items():
        if user not in names:
            out.add(Severity.ERROR, f"user {user!r} ({why}) is not in auth_file {auth.source}: "
                    "under auth_type trust PgBouncer rejects users it does not find there",
                    file=src, line=line, key=user, fix=f'add a line "{user}" "" to {auth.source}')


# ------------------------------------------------------------------- admin console


@AUTH.rule("pgbouncer/admin", "Admin console access")
def no_admin_users(c: Check, out: Out) -> None:
    """No admin_users: only the OS user, over the Unix socket, reaches the console (info)."""
    if not split_list(c.value("admin_users")) and c.auth_type != "any":
        # Works as designed (the OS user still has the Unix socket): worth knowing only.
        out.at(Severity.INFO, "admin_users",
               "no admin_users: nobody can run RELOAD, PAUSE or SHOW on the admin console "
               "over TCP (only the OS user running PgBouncer, via the Unix socket)",
               "list the operators' database users in admin_users")


@AUTH.rule("pgbouncer/admin")
def console_user_not_in_auth_file(c: Check, out: Out) -> None:
    """An admin or stats user missing from auth_file without auth_dbname (warning)."""
    auth = _file_users(c)
    if auth is None or c.auth_type in ("trust", "any") or c.value("auth_dbname"):
        return
    names = {u.name for u in auth.users}
    for key in ("admin_users", "stats_users"):
        for user in split_list(c.value(key)):
            if user not in names:
                out.at(Severity.WARNING, key,
                       f"{user!r} is not in auth_file, and without auth_dbname the console "
                       "does not use auth_query: this user cannot log into the console",
                       "add the user to auth_file or set auth_dbname")
