"""Nothing compared is not OK, on the sandbox: a checksum whose PostgreSQL sides name
different databases, or that finds no table to compare (an empty database, every schema
ignored), exits 2 saying why; `collect --collect` with a name the target does not run exits
2 with the names it runs; last-vacuum / last-analyze with no table to judge are UNKNOWN.
Databases the tests create are dropped in a `finally` block."""

from __future__ import annotations

import json
import subprocess
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from tests.helpers import DBGAUGE, REPO, wait_for
from tests.helpers.daemon import check
from tests.helpers.servers import Sandbox, pg_admin

pytestmark = pytest.mark.integration

EMPTY = "nc_empty"


def dbgauge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DBGAUGE, *args], capture_output=True, text=True, timeout=120,
                          cwd=REPO, check=False)


def dsn(sandbox: Sandbox, instance: str, database: str) -> str:
    return f"postgresql://dbgauge@127.0.0.1:{sandbox.state.port(instance)}/{database}"


def test_checksum_of_sides_on_different_databases_exits_2(sandbox: Sandbox,
                                                           tmp_path: Path) -> None:
    # the sandbox's pg-primary is database app, pg-subscriber database drift
    proc = dbgauge("checksum", "--config", str(sandbox.config), "--source", "pg-primary",
                   "--replica", "pg-subscriber", "--quiet",
                   "--state-file", str(tmp_path / "state.json"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "the sides name different databases (pg-primary is connected to database app, " \
           "pg-subscriber is connected to database drift)" in proc.stderr, proc.stderr
    assert "--different-databases" in proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr


def test_checksum_of_an_empty_database_exits_2(sandbox: Sandbox, tmp_path: Path) -> None:
    with closing(pg_admin(sandbox, "pg-primary")) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {EMPTY} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {EMPTY}")
        try:
            # the standby replays CREATE DATABASE: wait until it can be reached there
            standby = sandbox.admin_dsn("pg-standby", EMPTY)
            wait_for(lambda: _reachable(standby), timeout=30,
                     what=f"database {EMPTY} on pg-standby")
            proc = dbgauge("checksum", "--source", dsn(sandbox, "pg-primary", EMPTY),
                           "--replica", dsn(sandbox, "pg-standby", EMPTY), "--quiet",
                           "--password-file", str(sandbox.state.dbgauge_password_file),
                           "--format", "json", "--state-file", str(tmp_path / "state.json"))
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {EMPTY} WITH (FORCE)")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "error" and doc["tables"] == []
    assert any("no table was compared" in note for note in doc["notes"]), doc


def test_checksum_that_ignores_every_schema_exits_2(sandbox: Sandbox, tmp_path: Path) -> None:
    proc = dbgauge("checksum", "--config", str(sandbox.config), "--source", "mariadb-primary",
                   "--replica", "mariadb-replica", "--quiet", "--ignore-databases", "*",
                   "--state-file", str(tmp_path / "state.json"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().split("\n")[-1].startswith("NOTHING COMPARED (0 table(s)")
    assert "no table was compared" in proc.stdout


def _reachable(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=5):
            return True
    except psycopg.OperationalError:
        return False


def test_collect_of_a_collector_the_target_does_not_run_exits_2(sandbox: Sandbox) -> None:
    proc = dbgauge("collect", "--config", str(sandbox.config), "pg-primary",
                   "--collect", "postgres_foo")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "postgres_foo (no such collector)" in proc.stderr
    assert "postgres_sequences" in proc.stderr  # the names it runs
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    proc = dbgauge("collect", "--config", str(sandbox.config), "mariadb-primary",
                   "--collect", "mysql_perf_schema_waits")  # opt-in: off for this target
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "mysql_perf_schema_waits (off for this target" in proc.stderr
    proc = dbgauge("collect", "--config", str(sandbox.config), "pg-primary",
                   "--collect", "postgres_sequences")
    assert proc.returncode == 0 and "dbgauge_postgres_sequences " in proc.stdout, proc.stderr


def test_last_vacuum_and_analyze_with_nothing_to_judge_are_unknown(sandbox: Sandbox) -> None:
    fresh = "nc_fresh"
    node = ["--node", f"fresh={dsn(sandbox, 'pg-primary', fresh)}",
            "--password-file", str(sandbox.state.dbgauge_password_file)]
    with closing(pg_admin(sandbox, "pg-primary")) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {fresh} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {fresh}")
        try:
            for name in ("last-vacuum", "last-analyze"):  # no user table at all
                got = check(name, *node)
                assert got.code == 3, got.out
                assert "no user table in this database" in got.first, got.out
            with closing(psycopg.connect(sandbox.admin_dsn("pg-primary", fresh),
                                         autocommit=True)) as conn:
                # a table never vacuumed nor analyzed (autovacuum leaves an empty one alone)
                conn.execute("CREATE TABLE t (i int)")
                for name, verb in (("last-vacuum", "vacuumed"), ("last-analyze", "analyzed")):
                    got = check(name, *node)
                    assert got.code == 3, got.out
                    assert f"UNKNOWN fresh [{name.split('-')[1]}-unknown] no user table " \
                           f"{verb} yet (1 table(s))" in got.out, got.out
                conn.execute("VACUUM ANALYZE t")
                for name in ("last-vacuum", "last-analyze"):  # now there is one to judge
                    got = wait_for(lambda n=name: (lambda g: g if g.code == 0 else None)(
                        check(n, *node)), timeout=30, what=f"{name} to see the VACUUM")
                    assert " ago" in got.first, got.out
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {fresh} WITH (FORCE)")
