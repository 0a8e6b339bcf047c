"""dbgauge's own PostgreSQL schema (sql/schema/postgres/) under its pgTAP suites
(sql/tests/), run by `dbgauge pgtap run` as part of `make test`: in a fresh database
without pgTAP, which --install-pgtap creates for the run and drops again."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest

from dbgauge.toolkit.db import connect_dsn
from dbgauge.toolkit.sql import quote_ident
from tests.helpers import REPO
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration


@pytest.fixture()
def fresh_dsn(sandbox: Sandbox) -> Iterator[str]:
    admin = sandbox.admin_dsn("pg-primary")
    name = f"dbgauge_pgtap_own_{uuid.uuid4().hex[:10]}"
    conn = connect_dsn(admin)
    try:
        conn.execute_sql(f"CREATE DATABASE {quote_ident(name, 'postgres')}")
    finally:
        conn.close()
    try:
        yield sandbox.admin_dsn("pg-primary", database=name)
    finally:
        conn = connect_dsn(admin)
        try:
            conn.execute_sql(f"DROP DATABASE IF EXISTS {quote_ident(name, 'postgres')} "
                             "WITH (FORCE)")
        finally:
            conn.close()


def test_own_schema_suites_pass(fresh_dsn: str) -> None:
    suites = sorted(p.name for p in (REPO / "sql" / "tests").glob("*.sql"))
    assert suites == ["checksums.sql", "heartbeat.sql"]
    run = subprocess.run(
        [sys.executable, "-m", "dbgauge", "pgtap", "run", "sql/tests", "--install-pgtap",
         "-j", "2"],
        cwd=REPO, env={**os.environ, "DBGAUGE_PGTAP_DSN": fresh_dsn}, capture_output=True,
        text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    counts = dict(re.findall(r"^sql/tests/(\S+) \.+ ok\s+(\d+) tests", run.stdout, re.MULTILINE))
    assert counts == {"checksums.sql": "39", "heartbeat.sql": "26"}, run.stdout
    assert "dropped extension pgtap again" in run.stderr
    conn = connect_dsn(fresh_dsn)
    try:
        left = conn.execute_sql(
            "SELECT (SELECT count(*) FROM pg_namespace WHERE nspname = 'dbgauge') AS schemas, "
            "(SELECT count(*) FROM pg_extension WHERE extname = 'pgtap') AS pgtap")
    finally:
        conn.close()
    assert left == [{"schemas": 0, "pgtap": 0}]  # the suites roll their DDL back
