"""`dbgauge pgtap generate` on a real schema: the file passes on the schema it came from
(under dbgauge and pg_prove) and fails, naming the change, after ADD COLUMN, a dropped
index and a changed column type; and passes again once each change is undone. It leaves
extension members out and compares view definitions as the running server prints them, so
a file made on another major passes here (PostgreSQL 16's view text, captured)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from dbgauge.toolkit.db import connect_dsn
from dbgauge.toolkit.sql import quote_ident
from tests.helpers import REPO
from tests.helpers.captured import json_rows
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

SCHEMA = """
CREATE SCHEMA shop;
CREATE TYPE shop.mood AS ENUM ('happy', 'sad');
CREATE TYPE shop."Odd Type" AS ENUM ('x');
CREATE TABLE shop.customers (
    id bigserial PRIMARY KEY,
    email varchar(200) NOT NULL UNIQUE,
    status text NOT NULL DEFAULT 'active',
    score numeric(10,2) DEFAULT 0,
    tags text[] DEFAULT '{}',
    meta jsonb DEFAULT '{}'::jsonb,
    doc json DEFAULT '{}',
    mood shop.mood DEFAULT 'happy',
    odd shop."Odd Type",
    created timestamptz NOT NULL DEFAULT now(),
    updated timestamptz DEFAULT CURRENT_TIMESTAMP,
    neg int DEFAULT -1,
    ident int GENERATED ALWAYS AS IDENTITY,
    doubled int GENERATED ALWAYS AS (neg * 2) STORED,
    "Mixed Case" int
);
CREATE TABLE shop.orders (
    order_id int NOT NULL,
    line int NOT NULL,
    customer_id bigint REFERENCES shop.customers (id),
    amount numeric,
    PRIMARY KEY (order_id, line)
);
CREATE TABLE shop.nopk (a int);
CREATE INDEX orders_amount_idx ON shop.orders (amount) WHERE amount > 0;
CREATE INDEX customers_lower_email ON shop.customers (lower(email));
CREATE FUNCTION shop.touch() RETURNS trigger LANGUAGE plpgsql
    AS $$BEGIN NEW.updated := now(); RETURN NEW; END$$;
CREATE FUNCTION shop.total(c bigint, since timestamptz DEFAULT NULL) RETURNS numeric
    LANGUAGE sql AS 'SELECT sum(amount) FROM shop.orders WHERE customer_id = c';
CREATE FUNCTION shop.total(c int) RETURNS SETOF numeric
    LANGUAGE sql AS 'SELECT amount FROM shop.orders';
CREATE TRIGGER customers_touch BEFORE UPDATE ON shop.customers
    FOR EACH ROW EXECUTE FUNCTION shop.touch();
CREATE VIEW shop.big_orders AS SELECT * FROM shop.orders WHERE amount > 100;
CREATE MATERIALIZED VIEW shop.totals AS
    SELECT customer_id, sum(amount) AS s FROM shop.orders GROUP BY 1;
CREATE TABLE public.plain (id int PRIMARY KEY, note text DEFAULT 'it''s');
"""


class Database:
    def __init__(self, sandbox: Sandbox) -> None:
        self.admin = sandbox.admin_dsn("pg-primary")
        self.name = f"dbgauge_pgtap_gen_{uuid.uuid4().hex[:10]}"
        self.dsn = sandbox.admin_dsn("pg-primary", database=self.name)
        self.password = sandbox.state.postgres.admin_password
        self._admin(f"CREATE DATABASE {quote_ident(self.name, 'postgres')}")

    def _admin(self, statement: str) -> None:
        conn = connect_dsn(self.admin)
        try:
            conn.execute_sql(statement)
        finally:
            conn.close()

    def sql(self, statement: str) -> None:
        conn = connect_dsn(self.dsn)
        try:
            conn.execute_sql(statement)
        finally:
            conn.close()

    def drop(self) -> None:
        self._admin(f"DROP DATABASE IF EXISTS {quote_ident(self.name, 'postgres')} WITH (FORCE)")


@pytest.fixture(scope="module")
def db(sandbox: Sandbox) -> Iterator[Database]:
    database = Database(sandbox)
    try:
        database.sql("CREATE EXTENSION pgtap")
        # an extension whose members differ between its versions (so between majors)
        database.sql("CREATE EXTENSION pg_stat_statements")
        database.sql(SCHEMA)
        yield database
    finally:
        database.drop()


def cli(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dbgauge", "pgtap", *args], cwd=REPO,
                          env={**os.environ, "DBGAUGE_PGTAP_DSN": dsn}, capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.fixture(scope="module")
def snapshot_file(db: Database, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generate") / "schema_test.sql"
    gen = cli(db.dsn, "generate", "--schema", "shop", "--schema", "public", "-o", str(out))
    assert gen.returncode == 0, gen.stderr
    return out


def test_passes_on_its_own_schema_under_dbgauge_and_pg_prove(db: Database,
                                                             snapshot_file: Path) -> None:
    text = snapshot_file.read_text()
    for needle in ("tables_are(", "columns_are(", "col_type_is(", "col_not_null(",
                   "col_is_null(", "col_default_is(", "has_pk(", "col_is_pk(", "hasnt_pk(",
                   "fk_ok(", "indexes_are(", "functions_are(", "triggers_are(",
                   "trigger_is(", "views_are(", "materialized_views_are(", "has_function("):
        assert needle in text, needle
    run = cli(db.dsn, "run", str(snapshot_file))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Result: PASS" in run.stdout
    url = urlsplit(db.dsn)
    prove = subprocess.run(
        ["pg_prove", "--host", str(url.hostname), "--port", str(url.port),
         "--username", "sandbox_admin", "--dbname", db.name, str(snapshot_file)],
        env={**os.environ, "PGPASSWORD": db.password}, capture_output=True, text=True,
        timeout=60, check=False)
    assert prove.returncode == 0, prove.stdout + prove.stderr


@pytest.mark.parametrize(("change", "undo", "expected"), [
    ("ALTER TABLE shop.orders ADD COLUMN note text",
     "ALTER TABLE shop.orders DROP COLUMN note",
     ["Table shop.orders should have the correct columns", "Extra columns:", "note"]),
    ("DROP INDEX shop.orders_amount_idx",
     "CREATE INDEX orders_amount_idx ON shop.orders (amount) WHERE amount > 0",
     ["Table shop.orders should have the correct indexes", "Missing indexes:",
      "orders_amount_idx"]),
    ("ALTER TABLE shop.nopk ALTER COLUMN a TYPE bigint",
     "ALTER TABLE shop.nopk ALTER COLUMN a TYPE integer",
     ["Column shop.nopk.a should be type integer", "have: bigint", "want: integer"]),
])
def test_fails_naming_the_drift(db: Database, snapshot_file: Path, change: str, undo: str,
                                expected: list[str]) -> None:
    db.sql(change)
    try:
        run = cli(db.dsn, "run", str(snapshot_file))
    finally:
        db.sql(undo)
    assert run.returncode == 1, run.stdout
    for needle in expected:
        assert needle in run.stdout, (needle, run.stdout)
    assert cli(db.dsn, "run", str(snapshot_file)).returncode == 0


def test_generate_errors(db: Database) -> None:
    missing = cli(db.dsn, "generate", "--schema", "nope")
    assert missing.returncode == 2
    assert "schema 'nope' not found" in missing.stderr and "shop" in missing.stderr
    assert db.password not in missing.stderr
    default = cli(db.dsn, "generate")
    assert default.returncode == 0
    assert "-- Schemas: public, shop." in default.stdout


def test_extension_members_are_left_out(db: Database, snapshot_file: Path) -> None:
    text = snapshot_file.read_text()
    assert "pg_stat_statements" not in text  # its views differ between its versions
    assert "views_are('public'" not in text  # would count them: names compared instead
    assert "Schema public should have the correct views (extension members aside)" in text


def test_a_view_printed_by_another_major_passes(db: Database, snapshot_file: Path,
                                                tmp_path: Path) -> None:
    """The file as another major would have written it: 16 prints the view without the
    table prefixes 15 (and 13) print; both pass here, and a changed view still fails. (On
    16+, under `make test-matrix`, the file holds 16's text and 13's is the other.)"""
    text = snapshot_file.read_text()
    old = json_rows("postgres-13/viewdef-big_orders.json", "PostgreSQL 13.")[0]["definition"]
    new = json_rows("postgres-16/viewdef-big_orders.json", "PostgreSQL 16.")[0]["definition"]
    assert old != new and "orders.order_id" in old and "orders." not in new
    old_body, new_body = (d.strip().removesuffix(";").replace("'", "''") for d in (old, new))
    assert text.count(old_body) + text.count(new_body) == 1  # as this server prints it
    body, theirs = (old_body, new_body) if old_body in text else (new_body, old_body)
    from16 = tmp_path / "from_another_major.sql"
    from16.write_text(text.replace(body, theirs))
    assert theirs in from16.read_text()
    run = cli(db.dsn, "run", str(from16))
    assert run.returncode == 0, run.stdout + run.stderr
    db.sql("CREATE OR REPLACE VIEW shop.big_orders AS SELECT * FROM shop.orders "
           "WHERE amount > 200")
    try:
        run = cli(db.dsn, "run", str(from16))
    finally:
        db.sql("CREATE OR REPLACE VIEW shop.big_orders AS SELECT * FROM shop.orders "
               "WHERE amount > 100")
    assert run.returncode == 1
    assert "View shop.big_orders should be defined as when generated" in run.stdout
    assert "amount > 200" in run.stdout
