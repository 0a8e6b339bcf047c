"""check same-schema beside check_postgres' same_schema (2.25) on pairs of sandbox
databases: a reference, its exact copy, and one copy per kind of difference (a table, a
column, a column's type, an index, a constraint, a function's body, a view's
definition, a sequence, a trigger, an extension). Both say OK on the copy and CRITICAL on
every other pair; dbgauge names the object that differs. check_postgres reads pg_authid,
so it runs as the sandbox's superuser; dbgauge as its monitoring role."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

import pytest
from psycopg import sql

from tests.helpers.daemon import DBGAUGE
from tests.helpers.servers import Sandbox, pg_admin
from tests.integration.test_check_postgres_parity import CHECK_POSTGRES, _run

pytestmark = pytest.mark.integration

REFERENCE = [
    "CREATE TABLE t (id int PRIMARY KEY, v text NOT NULL DEFAULT 'x')",
    "CREATE VIEW vw AS SELECT id FROM t",
    "CREATE SEQUENCE s1",
    "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "CREATE FUNCTION trg() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$",
    "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION trg()",
]
# database suffix -> (the change, what dbgauge's finding says)
VARIANTS = {
    "same": ((), ""),
    "table": (("CREATE TABLE t2 (i int)",), "table public.t2 is on"),
    "column": (("ALTER TABLE t ADD COLUMN extra int",), "column public.t.extra is on"),
    "type": (("ALTER TABLE t ALTER COLUMN v TYPE varchar(10)",), "column public.t.v differs"),
    "index": (("CREATE INDEX t_v ON t (v)",), "index public.t_v is on"),
    "constraint": (("ALTER TABLE t ADD CONSTRAINT t_v_check CHECK (v <> '')",),
                   "constraint public.t.t_v_check is on"),
    "function": (("CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 2'",),
                 "function public.f() differs"),
    "view": (("CREATE OR REPLACE VIEW vw AS SELECT id, v FROM t",), "view public.vw differs"),
    "sequence": (("DROP SEQUENCE s1",), "sequence public.s1 is missing"),
    "trigger": (("DROP TRIGGER tr ON t",), "trigger public.t.tr is missing"),
    "extension": (("CREATE EXTENSION pg_trgm",), "extension pg_trgm is on"),
}


def _databases(sandbox: Sandbox) -> None:
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        for name in ("ss_ref", *(f"ss_{v}" for v in VARIANTS)):
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute("CREATE DATABASE ss_ref")
    with closing(pg_admin(sandbox, "pg-primary", dbname="ss_ref")) as ref:
        for statement in REFERENCE:
            ref.execute(statement)
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        for variant in VARIANTS:
            conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE ss_ref").format(
                sql.Identifier(f"ss_{variant}")))
    for variant, (changes, _) in VARIANTS.items():
        with closing(pg_admin(sandbox, "pg-primary", dbname=f"ss_{variant}")) as db:
            for statement in changes:
                db.execute(statement)


def _drop(sandbox: Sandbox) -> None:
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        for name in ("ss_ref", *(f"ss_{v}" for v in VARIANTS)):
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))


def test_same_schema_agrees_with_check_postgres(sandbox: Sandbox) -> None:
    _databases(sandbox)
    port = str(sandbox.state.port("pg-primary"))
    pg = sandbox.state.postgres
    theirs_env = {**os.environ, "PGPASSWORD": pg.admin_password, "PGCONNECT_TIMEOUT": "5"}
    ours_env = {**os.environ, "PGCONNECT_TIMEOUT": "5"}

    def theirs(variant: str) -> tuple[str, str]:
        return _run([CHECK_POSTGRES, "--action=same_schema", "-H", "127.0.0.1", "-p", port,
                     "-u", pg.admin_user, f"--dbname=ss_ref,ss_{variant}"], theirs_env)

    def ours(variant: str, *more: str) -> tuple[str, str]:
        return _run([*DBGAUGE, "check", "same-schema", "--config", str(sandbox.config),
                     "--target", "pg-primary", "--dbname", f"ss_ref,ss_{variant}", "-t", "60",
                     *more], ours_env)

    try:
        with ThreadPoolExecutor(3) as pool:
            got_theirs = dict(zip(VARIANTS, pool.map(theirs, VARIANTS), strict=True))
            got_ours = dict(zip(VARIANTS, pool.map(ours, VARIANTS), strict=True))
        wrong = []
        for variant, (_, says) in VARIANTS.items():
            state = "OK" if variant == "same" else "CRITICAL"
            (t, t_out), (o, o_out) = got_theirs[variant], got_ours[variant]
            if (t, o) != (state, state) or says not in o_out:
                wrong.append(f"{variant}: check_postgres {t} ({t_out[:300]}), dbgauge {o} "
                             f"({o_out[:300]}), expected {state} saying {says!r}")
        assert not wrong, "\n".join(wrong)
        # one finding per difference, a count per compared database
        assert "'pg-primary/ss_column:differences'=1" in got_ours["column"][1]
        assert "'pg-primary/ss_same:differences'=0" in got_ours["same"][1]
        # check_postgres' --filter: the difference left out, then OK
        assert ours("index", "--filter", "noindexes")[0] == "OK"
        assert ours("trigger", "--filter", "notrigger=^tr$")[0] == "OK"
        assert ours("function", "--filter", "nofuncbody")[0] == "OK"
        assert ours("column", "--schema", "public")[0] == "CRITICAL"
    finally:
        _drop(sandbox)
