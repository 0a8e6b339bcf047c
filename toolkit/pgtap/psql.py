"""psql itself: which binary to run, how it connects, and the pre-flight session.

Driving psql (rather than sending the file over a driver) is what makes suites behave as
they do under pg_prove. The password travels in PGPASSWORD, never on a command line; on
Debian the real binary behind pg_wrapper is run directly (it saves ~20 ms per file).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dbgauge.toolkit.db.version import parse_version
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import ConfigError, ConnectError
from dbgauge.toolkit.redact import redact, register_secret
from dbgauge.toolkit.sql import load_sql

PSQL_FLAGS = ("--no-psqlrc", "--no-align", "--quiet", "--pset", "pager=off",
              "--pset", "tuples_only=true", "--set", "ON_ERROR_STOP=1")
DEBIAN_CLIENTS = Path("/usr/lib/postgresql")  # postgresql-client-<major>: <major>/bin/psql
DEBIAN_SYSCONFDIR = "/etc/postgresql-common"  # where pg_wrapper points libpq's pg_service.conf


@dataclass(frozen=True)
class PsqlTarget:
    """Where psql connects: a libpq conninfo without the password, plus the password."""

    conninfo: str
    password: str | None
    address: str
    dbname: str


def _conninfo_value(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def psql_target(dsn: str) -> PsqlTarget:
    """Turn a PostgreSQL DSN (URI, key=value, service=) into psql's conninfo (password
    kept apart, registered for redaction so it can never show up in a message); what
    libpq decides itself (a service's settings) is left to psql's libpq."""
    params = parse_dsn(dsn)
    if params.family != "postgres":
        raise ConfigError("pgtap needs a PostgreSQL DSN (postgresql://..., host=... or "
                          "service=NAME), got a MySQL-family one")
    register_secret(params.password)
    dbname = params.dbname or params.user
    pairs = [(k, v) for k, v in (("host", params.host), ("port", str(params.port or "")),
                                 ("user", params.user), ("dbname", dbname)) if v]
    pairs += list(params.options)
    if "application_name" not in {k for k, _ in pairs}:
        pairs.append(("application_name", "dbgauge-pgtap"))
    conninfo = " ".join(f"{k}={_conninfo_value(v)}" for k, v in pairs)
    return PsqlTarget(conninfo, params.password, params.address, dbname)


def find_psql(psql: str | None, debian_root: Path = DEBIAN_CLIENTS) -> str:
    """The psql to run: --psql as given, else psql on PATH, looking through Debian's
    pg_wrapper to the binary it would run."""
    found = shutil.which(psql or "psql")
    if found is None:
        raise ConfigError(f"psql not found ({psql or 'psql'} is not on PATH): install the "
                          "PostgreSQL client (Debian: postgresql-client) or pass --psql PATH")
    return found if psql is not None else unwrap_psql(found, debian_root)


def unwrap_psql(path: str, debian_root: Path = DEBIAN_CLIENTS) -> str:
    """On Debian and Ubuntu, psql on PATH is postgresql-common's pg_wrapper: a Perl script
    that picks a client version and execs it, which costs about 20 ms per file (as much
    as psql itself on a small test file). For psql, pg_wrapper always runs the newest
    installed client (pg_wrapper(1)), so run that binary directly; `psql_env` sets the one
    variable pg_wrapper would (PGSYSCONFDIR)."""
    if Path(path).resolve().name != "pg_wrapper":
        return path
    versions: list[tuple[tuple[int, ...], Path]] = []
    try:
        for entry in debian_root.iterdir():
            binary = entry / "bin" / "psql"
            if re.fullmatch(r"\d+(?:\.\d+)?", entry.name) and os.access(binary, os.X_OK):
                versions.append((parse_version(entry.name), binary))
    except OSError:
        return path
    return str(max(versions)[1]) if versions else path


def psql_env(target: PsqlTarget, psql: str) -> dict[str, str]:
    env = dict(os.environ)
    if target.password is not None:
        env["PGPASSWORD"] = target.password
    if Path(psql).is_relative_to(DEBIAN_CLIENTS):
        env.setdefault("PGSYSCONFDIR", DEBIAN_SYSCONFDIR)  # as pg_wrapper does
    return env


@dataclass(frozen=True)
class ServerFacts:
    """What the pre-flight learnt: proof that psql can connect, and versions."""

    server_version: str
    pgtap_version: str | None


def preflight(target: PsqlTarget, psql: str) -> ServerFacts:
    """One short psql session before the run, so a wrong DSN, password or psql is one
    clear error (exit 2) instead of every file failing the same way."""
    argv = [psql, "--no-psqlrc", "--no-align", "--tuples-only", "--quiet",
            "--set", "ON_ERROR_STOP=1", "--dbname", target.conninfo,
            "--command", load_sql("postgres", "pgtap_preflight")]
    try:
        proc = subprocess.run(argv, capture_output=True, env=psql_env(target, psql), timeout=60,
                              stdin=subprocess.DEVNULL, check=False)
    except OSError as exc:
        raise ConfigError(f"could not start psql ({psql}): {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise ConnectError(f"psql did not connect to {target.address} within 60s") from None
    out = proc.stdout.decode("utf-8", errors="replace").strip()
    if proc.returncode != 0:
        text = redact(proc.stderr.decode("utf-8", errors="replace"))
        why = " ".join(ln.strip() for ln in text.splitlines() if ln.strip())
        why = why.removeprefix("psql: error: ")
        raise ConnectError(f"psql cannot run against {target.address}/{target.dbname}: "
                           f"{why or f'exit status {proc.returncode}'}")
    version, _, pgtap = out.partition("|")
    return ServerFacts(version.strip(), pgtap.strip() or None)
