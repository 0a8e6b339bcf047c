"""One object the monitoring role cannot see, or cannot read now, costs that object, never
the whole collector (or checksum): a sequence in a schema without USAGE, a sequence another
session is altering, a table (or its index) another session holds or waits for ACCESS
EXCLUSIVE on, a table in a schema without USAGE in a checksum.
Each condition is made by the sandbox's admin in its own session in a database of the
test's own (nothing else in it to blur the counts), the state waited for in pg_locks, and
undone in a `finally` block."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from dbgauge.toolkit.targets import Target
from tests.helpers import DBGAUGE, REPO, Metrics, value, wait_for
from tests.helpers.daemon import check, collect_direct, target_config
from tests.helpers.servers import Sandbox, pg_admin

pytestmark = pytest.mark.integration

P = "dbgauge_postgres_"
DB = "inv_objects"


@pytest.fixture(scope="module")
def db(sandbox: Sandbox) -> Iterator[Target]:
    """A database of this module's own on pg-primary, and the monitoring target on it."""
    with closing(pg_admin(sandbox, "pg-primary")) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DB}")
        try:
            yield target_config(sandbox, "pg-primary", dsn=dsn(sandbox))
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")


def dsn(sandbox: Sandbox) -> str:
    return f"postgresql://dbgauge@127.0.0.1:{sandbox.state.port('pg-primary')}/{DB}"


def node(sandbox: Sandbox) -> list[str]:
    """`dbgauge check` arguments for the module's database."""
    return ["--node", f"pg-primary={dsn(sandbox)}",
            "--password-file", str(sandbox.state.dbgauge_password_file)]


def admin_on(sandbox: Sandbox, **kwargs: Any) -> psycopg.Connection[Any]:
    return psycopg.connect(sandbox.admin_dsn("pg-primary", DB), **kwargs)


def held(admin: psycopg.Connection[Any], relation: str, mode: str, granted: bool) -> bool:
    """Whether some session holds (or waits for, `granted` False) `mode` on `relation`."""
    row = admin.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'relation' AND relation = %s::regclass "
        "AND mode = %s AND granted = %s", (relation, mode, granted)).fetchone()
    return bool(row and row[0])


@contextmanager
def sequences(sandbox: Sandbox) -> Iterator[psycopg.Connection[Any]]:
    """public.inv_seen at 10 of 1..100, readable by dbgauge; inv_priv.hidden, used, in a
    schema dbgauge has no USAGE on."""
    with closing(admin_on(sandbox, autocommit=True)) as admin:
        admin.execute("DROP SCHEMA IF EXISTS inv_priv CASCADE")
        admin.execute("DROP SEQUENCE IF EXISTS public.inv_seen")
        try:
            admin.execute("CREATE SCHEMA inv_priv")
            admin.execute("CREATE SEQUENCE inv_priv.hidden")
            admin.execute("SELECT nextval('inv_priv.hidden')")
            admin.execute("CREATE SEQUENCE public.inv_seen MAXVALUE 100")
            admin.execute("SELECT setval('public.inv_seen', 10)")
            admin.execute("GRANT SELECT ON SEQUENCE public.inv_seen TO dbgauge")
            row = admin.execute("SELECT has_schema_privilege('dbgauge', 'inv_priv', 'USAGE')"
                                ).fetchone()
            assert row is not None and row[0] is False  # the condition the test is about
            yield admin
        finally:
            admin.execute("DROP SCHEMA IF EXISTS inv_priv CASCADE")
            admin.execute("DROP SEQUENCE IF EXISTS public.inv_seen")


def test_a_sequence_in_a_schema_without_usage_is_counted_not_fatal(sandbox: Sandbox,
                                                                  db: Target) -> None:
    with sequences(sandbox):
        # collect_direct raises if the collector fails ("permission denied for schema")
        m = collect_direct(sandbox, db, "postgres_sequences")
        assert value(m, P + "sequence_used_ratio", schema="public",
                     sequence="inv_seen") == pytest.approx(9 / 99)
        assert value(m, P + "sequence_used_ratio", schema="inv_priv", sequence="hidden") is None
        assert value(m, P + "sequences_unreadable") == 1
        assert value(m, P + "sequences") == 2
        assert value(m, P + "sequences_locked") == 0
        got = check("sequence", *node(sandbox))
        # judged on what it can read, and UNKNOWN for the one it cannot (it may be the one
        # running out), naming the grant: never OK for an unread sequence
        assert got.code == 3, got.out
        assert "'pg-primary:sequence_used_percent'=9.090909%" in got.out, got.out
        assert "[insufficient-privilege] 1 sequence(s) not readable by this role" in got.out


def test_a_sequence_being_altered_is_skipped_and_counted(sandbox: Sandbox, db: Target) -> None:
    with sequences(sandbox) as admin, closing(admin_on(sandbox)) as holder:
        holder.execute("ALTER SEQUENCE public.inv_seen MAXVALUE 1000")  # open transaction
        try:
            wait_for(lambda: held(admin, "public.inv_seen", "ShareRowExclusiveLock", True),
                     what="ALTER SEQUENCE to hold its lock")
            m = collect_direct(sandbox, db, "postgres_sequences")
            assert value(m, P + "sequences_locked") == 1
            assert value(m, P + "sequence_used_ratio", schema="public", sequence="inv_seen") \
                is None
            got = check("sequence", *node(sandbox))
            # nothing else to judge (inv_priv.hidden is unreadable): UNKNOWN, saying why
            assert got.code == 3, got.out
            assert "[sequence-unknown]" in got.out and "1 locked by another session" in got.out
        finally:
            holder.rollback()
        m = collect_direct(sandbox, db, "postgres_sequences")
        assert value(m, P + "sequences_locked") == 0
        assert value(m, P + "sequence_used_ratio", schema="public", sequence="inv_seen") \
            == pytest.approx(9 / 99)


@contextmanager
def tables(sandbox: Sandbox) -> Iterator[psycopg.Connection[Any]]:
    """public.inv_locked (a key, TOAST-able text) and public.inv_free, with rows."""
    with closing(admin_on(sandbox, autocommit=True)) as admin:
        admin.execute("DROP TABLE IF EXISTS public.inv_locked, public.inv_free")
        try:
            for statement in (
                    "CREATE TABLE public.inv_locked (id int PRIMARY KEY, v text)",
                    "CREATE TABLE public.inv_free (id int PRIMARY KEY, v text)",
                    "INSERT INTO public.inv_locked SELECT g, md5(g::text) "
                    "FROM generate_series(1, 100) g",
                    "INSERT INTO public.inv_free SELECT g, md5(g::text) "
                    "FROM generate_series(1, 100) g"):
                admin.execute(statement)
            yield admin
        finally:
            admin.execute("DROP TABLE IF EXISTS public.inv_locked, public.inv_free")


def sized(sandbox: Sandbox, db: Target) -> Metrics:
    """One postgres_tables run (it must succeed); inv_free is always sized."""
    m = collect_direct(sandbox, db, "postgres_tables")
    free = {"database": DB, "schema": "public", "table": "inv_free"}
    assert (value(m, P + "table_size_bytes", **free) or 0) > 0
    return m


def assert_unsized(m: Metrics) -> None:
    locked = {"database": DB, "schema": "public", "table": "inv_locked"}
    assert value(m, P + "tables_unsized", database=DB) == 1
    assert value(m, P + "tables", database=DB) == 2
    for size in ("size_bytes", "data_size_bytes", "indexes_size_bytes"):
        assert value(m, P + "table_" + size, **locked) is None, size  # never a made-up 0
    assert value(m, P + "table_dead_tuples", **locked) is not None  # its statistics stay


def test_a_table_held_access_exclusive_is_not_sized_and_counted(sandbox: Sandbox,
                                                                db: Target) -> None:
    with tables(sandbox) as admin, closing(admin_on(sandbox)) as holder:
        assert value(sized(sandbox, db), P + "tables_unsized", database=DB) == 0
        holder.execute("LOCK TABLE public.inv_locked IN ACCESS EXCLUSIVE MODE")
        try:
            wait_for(lambda: held(admin, "public.inv_locked", "AccessExclusiveLock", True),
                     what="the ACCESS EXCLUSIVE lock to be held")
            assert_unsized(sized(sandbox, db))
        finally:
            holder.rollback()
        # REINDEX INDEX in an open transaction: ACCESS EXCLUSIVE on the index alone
        holder.execute("REINDEX INDEX public.inv_locked_pkey")
        try:
            wait_for(lambda: held(admin, "public.inv_locked_pkey", "AccessExclusiveLock", True),
                     what="REINDEX to hold the index")
            assert_unsized(sized(sandbox, db))
        finally:
            holder.rollback()
        assert value(sized(sandbox, db), P + "tables_unsized", database=DB) == 0


def test_a_table_someone_waits_to_lock_is_not_sized_either(sandbox: Sandbox, db: Target) -> None:
    """The ALTER TABLE pile-up: a reader holds the table, an ACCESS EXCLUSIVE request waits
    behind it, and every later reader (pg_table_size too) would queue behind that."""
    with tables(sandbox) as admin, closing(admin_on(sandbox)) as reader, \
            closing(admin_on(sandbox, options="-c lock_timeout=60000")) as locker:
        reader.execute("SELECT count(*) FROM public.inv_locked")  # ACCESS SHARE, held
        waiting = threading.Thread(target=lambda: locker.execute(
            "LOCK TABLE public.inv_locked IN ACCESS EXCLUSIVE MODE"), daemon=True)
        waiting.start()
        try:
            wait_for(lambda: held(admin, "public.inv_locked", "AccessExclusiveLock", False),
                     what="the ACCESS EXCLUSIVE request to wait")
            assert_unsized(sized(sandbox, db))
        finally:
            reader.rollback()
            waiting.join(30)
            locker.rollback()
        assert not waiting.is_alive()


def test_checksum_of_a_table_in_a_schema_without_usage_costs_that_table(
        sandbox: Sandbox, db: Target, tmp_path: Path) -> None:
    with closing(admin_on(sandbox, autocommit=True)) as admin:
        for statement in ("CREATE SCHEMA inv_s", "CREATE TABLE inv_s.t (id int PRIMARY KEY)",
                          "INSERT INTO inv_s.t VALUES (1)",
                          "GRANT SELECT ON inv_s.t TO dbgauge",  # but no USAGE on inv_s
                          "CREATE TABLE public.inv_ok (id int PRIMARY KEY)",
                          "INSERT INTO public.inv_ok VALUES (1)",
                          "GRANT SELECT ON public.inv_ok TO dbgauge"):
            admin.execute(statement)
        try:
            standby = sandbox.admin_dsn("pg-standby", DB)
            wait_for(lambda: _replayed(standby), timeout=30, what="the standby to replay")
            proc = subprocess.run(
                [*DBGAUGE, "checksum", "--source", dsn(sandbox),
                 "--replica", dsn(sandbox).replace(str(sandbox.state.port("pg-primary")),
                                                   str(sandbox.state.port("pg-standby"))),
                 "--password-file", str(sandbox.state.dbgauge_password_file), "--quiet",
                 "--format", "json", "--state-file", str(tmp_path / "state.json")],
                capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
        finally:
            admin.execute("DROP SCHEMA IF EXISTS inv_s CASCADE")
            admin.execute("DROP TABLE IF EXISTS public.inv_ok")
    assert proc.returncode == 2, proc.stdout + proc.stderr  # one table could not be checked
    tables = {t["table"]: t for t in json.loads(proc.stdout)["tables"]}
    assert tables["public.inv_ok"]["status"] == "ok"  # the rest was compared
    assert tables["inv_s.t"]["status"] == "unchecked"
    assert "USAGE ON SCHEMA inv_s" in tables["inv_s.t"]["reason"]


def _replayed(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            row = conn.execute("SELECT to_regclass('public.inv_ok') IS NOT NULL "
                               "AND to_regclass('inv_s.t') IS NOT NULL").fetchone()
            return bool(row and row[0])
    except psycopg.OperationalError:
        return False
