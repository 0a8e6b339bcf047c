"""PostgreSQL connections as libpq takes them, against the sandbox's primary: the PG*
environment alone, key=value strings, service= with a pg_service.conf, pg_prove's
-h -p -U -d. Every command runs as a subprocess with an environment that holds nothing
but PATH, HOME and what the test sets, so nothing else can supply the connection."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dbgauge.toolkit.sandbox.model import APP_DATABASE, MONITOR_USER
from tests.helpers import DBGAUGE, REPO
from tests.helpers.drift import pg_caught_up, replicated_tables
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

# Plain TAP from psql: runs without the pgtap extension.
TAP_FILE = "SELECT '1..2';\nSELECT 'ok 1 - connected as ' || current_user;\n" \
           "SELECT 'ok 2 - in ' || current_database();\n"


def dbgauge(home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": str(REPO), **env}
    return subprocess.run([*DBGAUGE, *args], env=clean, cwd=home, capture_output=True,
                          text=True, timeout=120, check=False)


def pg_env(sandbox: Sandbox, **extra: str) -> dict[str, str]:
    return {"PGHOST": "127.0.0.1", "PGPORT": str(sandbox.state.port("pg-primary")),
            "PGUSER": MONITOR_USER, "PGDATABASE": APP_DATABASE,
            "PGPASSWORD": sandbox.state.dbgauge_password, **extra}


@pytest.fixture
def tap(tmp_path: Path) -> Path:
    path = tmp_path / "t" / "conn.sql"
    path.parent.mkdir()
    path.write_text(TAP_FILE)
    return path


def test_pgtap_run_and_a_check_with_only_pg_variables(sandbox: Sandbox, tmp_path: Path,
                                                      tap: Path) -> None:
    env = pg_env(sandbox)
    run = dbgauge(tmp_path, env, "pgtap", "run", str(tap))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "conn.sql .. ok     2 tests" in run.stdout, run.stdout
    assert "Result: PASS" in run.stdout, run.stdout

    port = sandbox.state.port("pg-primary")
    check = dbgauge(tmp_path, env, "check", "connections", "--node", "postgresql://")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("CONNECTIONS OK - "), check.stdout
    assert f"127.0.0.1:{port}" in check.stdout  # named by the address libpq resolved
    assert sandbox.state.dbgauge_password not in check.stdout + check.stderr

    # PGSSLMODE too: the sandbox's server has no TLS, so "require" cannot connect.
    tls = dbgauge(tmp_path, pg_env(sandbox, PGSSLMODE="require"), "check", "connections",
                  "--node", "postgresql://")
    assert tls.returncode == 2, tls.stdout  # no connection: CRITICAL
    assert "server does not support SSL, but SSL was required" in tls.stdout, tls.stdout

    # A wrong PGPASSWORD: the server refuses: an authentication failure, password unshown.
    wrong = dbgauge(tmp_path, pg_env(sandbox, PGPASSWORD="not-the-password-4711"),
                    "check", "connections", "--node", "postgresql://")
    assert wrong.returncode == 2, wrong.stdout
    assert "authentication failed" in wrong.stdout
    assert "not-the-password-4711" not in wrong.stdout + wrong.stderr


def test_pg_prove_flags_and_a_key_value_dsn(sandbox: Sandbox, tmp_path: Path,
                                            tap: Path) -> None:
    port = str(sandbox.state.port("pg-primary"))
    password = {"PGPASSWORD": sandbox.state.dbgauge_password}
    run = dbgauge(tmp_path, password, "pgtap", "run", "-h", "127.0.0.1", "-p", port,
                  "-U", MONITOR_USER, "-d", APP_DATABASE, str(tap))
    assert run.returncode == 0, run.stdout + run.stderr

    # -d over a --dsn: the flag wins, as in pg_prove; a missing database fails naming it.
    other = dbgauge(tmp_path, password, "pgtap", "run", "--dsn",
                    f"host=127.0.0.1 port={port} user={MONITOR_USER} dbname={APP_DATABASE}",
                    "-d", "no_such_db", str(tap))
    assert other.returncode == 2, other.stdout + other.stderr
    assert 'database "no_such_db" does not exist' in other.stderr

    kv = f"host=127.0.0.1 port={port} user={MONITOR_USER} dbname={APP_DATABASE} " \
         "sslmode=disable"
    check = dbgauge(tmp_path, {}, "check", "connections", "--node", f"pg={kv}",
                    "--password-file", str(sandbox.state.dbgauge_password_file))
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("CONNECTIONS OK - pg: "), check.stdout

    secret = "kv-secret-0815"
    bad = dbgauge(tmp_path, {}, "check", "connections", "--node", f"{kv} password={secret}")
    assert bad.returncode == 2, bad.stdout
    assert "authentication failed" in bad.stdout
    assert secret not in bad.stdout + bad.stderr

    # checksum's --source/--replica take key=value DSNs too (no config needed); a table to
    # compare, or nothing compared is not OK (exit 2)
    sub = sandbox.state.port("pg-subscriber")
    with replicated_tables(sandbox, {"kv_t": "CREATE TABLE kv_t (id int PRIMARY KEY)"}) \
            as (primary, subscriber):
        primary.execute("INSERT INTO kv_t SELECT generate_series(1, 10)")
        pg_caught_up(primary, subscriber)
        drift = dbgauge(tmp_path, password, "checksum", "--method", "direct", "-q",
                        "--source",
                        f"src=host=127.0.0.1 port={port} user={MONITOR_USER} dbname=drift",
                        "--replica",
                        f"sub=host=127.0.0.1 port={sub} user={MONITOR_USER} dbname=drift",
                        "--tables", "public.kv_t", "--state-file", str(tmp_path / "state.json"))
    assert drift.returncode == 0, drift.stdout + drift.stderr
    assert drift.stdout.startswith("checksum of sub against src (method direct)"), drift.stdout
    assert "public.kv_t" in drift.stdout, drift.stdout

    typo = dbgauge(tmp_path, {}, "check", "connections", "--node",
                   f"{kv} sslmod=require password={secret}")
    assert typo.returncode == 3, typo.stdout
    assert 'invalid connection option "sslmod"' in typo.stdout
    assert secret not in typo.stdout + typo.stderr


def test_a_service_file(sandbox: Sandbox, tmp_path: Path, tap: Path) -> None:
    port = sandbox.state.port("pg-primary")
    service = (f"[sbx]\nhost=127.0.0.1\nport={port}\nuser={MONITOR_USER}\n"
               f"dbname={APP_DATABASE}\n")
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{port}:*:{MONITOR_USER}:{sandbox.state.dbgauge_password}\n")
    passfile.chmod(0o600)
    # PGSERVICEFILE names the file; PGPASSFILE holds the password.
    named = tmp_path / "services.conf"
    named.write_text(service)
    env = {"PGSERVICEFILE": str(named), "PGPASSFILE": str(passfile)}
    run = dbgauge(tmp_path, env, "pgtap", "run", "--dsn", "service=sbx", str(tap))
    assert run.returncode == 0, run.stdout + run.stderr
    check = dbgauge(tmp_path, env, "check", "connections", "--node", "service=sbx")
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("CONNECTIONS OK - service_sbx: "), check.stdout

    # ~/.pg_service.conf, as libpq looks for it, and PGSERVICE instead of service=.
    (tmp_path / ".pg_service.conf").write_text(service)
    home = {"PGPASSFILE": str(passfile), "PGSERVICE": "sbx"}
    check = dbgauge(tmp_path, home, "check", "connections", "--node", "postgresql://")
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"127.0.0.1:{port}" in check.stdout, check.stdout

    missing = dbgauge(tmp_path, env, "check", "connections", "--node", "service=nosuch")
    assert missing.returncode == 3
    assert '"nosuch" not found' in missing.stdout, missing.stdout
