"""`dbgauge checksum` on PostgreSQL: pg-primary against pg-subscriber (real logical
replication), and MariaDB against PostgreSQL across engines.

Logical replication copies rows, not DDL: tables are created on both sides, then the
subscription is refreshed. Drift is made directly on the subscriber. Tables are dropped on
the primary first (so nothing more is published for them), then unsubscribed, then dropped on
the subscriber: the subscription stays healthy for later tests.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import struct
import subprocess
import threading
import time
from contextlib import closing
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dbgauge.app import load_config
from dbgauge.checks.drift import ChecksumOptions, run_checksum
from dbgauge.checks.drift.normalize import Column, row_text
from dbgauge.toolkit.sandbox import SUBSCRIPTION
from tests.helpers import DBGAUGE, REPO
from tests.helpers.drift import (
    exit_code,
    found,
    pg,
    pg_caught_up,
    replicated_tables,
    table_docs,
)
from tests.helpers.drift import pg_check as check
from tests.helpers.drift import pg_source_dsn as source_dsn
from tests.helpers.servers import Sandbox, admin

pytestmark = pytest.mark.integration


DRIFT_T = """CREATE TABLE drift_t (
  id int PRIMARY KEY, name varchar(40), code char(10), score float8,
  amount numeric(10,2) NOT NULL, seen timestamptz, payload bytea, flag boolean NOT NULL)"""
DRIFT_C = "CREATE TABLE drift_c (a int, b varchar(20), v int, PRIMARY KEY (a, b))"


def test_subscriber_drift_is_found_by_key(sandbox: Sandbox) -> None:
    with replicated_tables(sandbox, {"drift_t": DRIFT_T, "drift_c": DRIFT_C}) as (primary, sub):
        primary.execute(
            "INSERT INTO drift_t SELECT g * 2, 'name-' || g, 'c' || g % 97, g / 7.0, g * 1.25, "
            "'2024-01-01'::timestamptz + g * interval '1 second', decode(md5(g::text), 'hex'), "
            "g % 2 = 1 FROM generate_series(1, 3000) g")
        primary.execute("INSERT INTO drift_t (id, name, amount, flag) VALUES (30000, NULL, 0, "
                        "false)")
        primary.execute("UPDATE drift_t SET score = 0.1, name = 'abc', code = 'xyz' "
                        "WHERE id IN (40, 42, 50)")
        primary.execute("INSERT INTO drift_c SELECT g % 50, 'b' || g, g "
                        "FROM generate_series(1, 2000) g")
        pg_caught_up(primary, sub)
        clean = check(sandbox, ("public.drift_t", "public.drift_c"))
        assert exit_code(clean) == 0 and clean.evidence["method"] == "direct", clean.evidence
        for statement in (
                "UPDATE drift_t SET name = 'changed' WHERE id = 18",
                "DELETE FROM drift_t WHERE id = 250",
                "INSERT INTO drift_t (id, amount, flag) VALUES (1501, 1, false)",
                "INSERT INTO drift_t (id, amount, flag) VALUES (100001, 1, false)",
                "UPDATE drift_t SET name = '' WHERE id = 30000",  # NULL vs ''
                "UPDATE drift_t SET name = 'abc ' WHERE id = 40",  # trailing space, varchar
                "UPDATE drift_t SET code = 'xyz ' WHERE id = 42",  # char pads: no difference
                "UPDATE drift_t SET score = 0.10000000000000002 WHERE id = 50",  # last digit
                "UPDATE drift_t SET payload = overlay(payload placing '\\x00' from 16) "
                "WHERE id = 60",  # one byte of a bytea
                "UPDATE drift_t SET flag = NOT flag WHERE id = 70",  # a boolean
                "UPDATE drift_c SET v = v + 1 WHERE a = 3 AND b = 'b53'"):  # composite key
            sub.execute(statement)
        result = check(sandbox, ("public.drift_t", "public.drift_c"), chunk_time=0.01,
                       initial_chunk_rows=300, leaf_rows=64)
        assert found(result) == {
            "public.drift_t": {("changed", (18,)), ("missing", (250,)), ("extra", (1501,)),
                               ("extra", (100001,)), ("changed", (30000,)), ("changed", (40,)),
                               ("changed", (50,)), ("changed", (60,)), ("changed", (70,))},
            "public.drift_c": {("changed", (3, "b53"))},
        }
        assert exit_code(result) == 1 and table_docs(result)[0]["chunks"] > 2
        assert table_docs(result)[0]["rows"] == 3001
        assert {d["key"]["id"]: d["columns"] for d in table_docs(result)[0]["differences"]
                if d["kind"] == "changed"} == {18: ["name"], 30000: ["name"], 40: ["name"],
                                               50: ["score"], 60: ["payload"], 70: ["flag"]}
        assert [d["columns"] for d in table_docs(result)[1]["differences"]] == [["v"]]


CASE_INSENSITIVE = ("CREATE COLLATION IF NOT EXISTS dbgauge_ci (provider = icu, "
                    "locale = 'und-u-ks-level2', deterministic = false)")


def test_a_case_only_change_under_a_case_insensitive_collation_is_drift(
        sandbox: Sandbox) -> None:
    """PostgreSQL pairs hash rows with hashtextextended: over bytes (COLLATE "C"), not over
    a nondeterministic collation's sort key, which would take 'Name' and 'NAME' alike."""
    for name in ("pg-primary", "pg-subscriber"):
        with pg(sandbox, name) as conn:
            conn.execute(CASE_INSENSITIVE)
    ddl = {"drift_ci": "CREATE TABLE drift_ci (id int PRIMARY KEY, "
                       "name text COLLATE dbgauge_ci NOT NULL)"}
    with replicated_tables(sandbox, ddl) as (primary, sub):
        primary.execute("INSERT INTO drift_ci SELECT g, 'Name ' || g "
                        "FROM generate_series(1, 2000) g")
        pg_caught_up(primary, sub)
        assert exit_code(check(sandbox, ("public.drift_ci",))) == 0
        sub.execute("UPDATE drift_ci SET name = upper(name) WHERE id = 1234")
        result = check(sandbox, ("public.drift_ci",))
        assert found(result) == {"public.drift_ci": {("changed", (1234,))}}, result.evidence


def test_no_privilege_and_stopped_subscription_exit_2(sandbox: Sandbox, tmp_path: Path) -> None:
    secret = "CREATE TABLE drift_secret (id int PRIMARY KEY)"
    with replicated_tables(sandbox, {"drift_t": DRIFT_T}) as (primary, sub):
        primary.execute(secret)
        try:
            base = [*DBGAUGE, "checksum", "--config", str(sandbox.config), "--source",
                    source_dsn(sandbox), "--password-file",
                    str(sandbox.state.dbgauge_password_file), "--replica", "pg-subscriber",
                    "--state-file", str(tmp_path / "state.json")]
            proc = subprocess.run([*base, "--tables", "public.drift_secret"], capture_output=True,
                                  text=True, timeout=60, cwd=REPO, check=False)
            assert proc.returncode == 2, proc.stdout + proc.stderr
            port = sandbox.state.port("pg-primary")
            assert (f"no privilege to read public.drift_secret on source 127.0.0.1:{port}"
                    in proc.stderr), proc.stderr
            assert "GRANT SELECT ON public.drift_secret" in proc.stderr
            sub.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} DISABLE")
            try:
                proc = subprocess.run([*base, "--tables", "public.drift_t"],
                                      capture_output=True, text=True, timeout=60, cwd=REPO,
                                      check=False)
            finally:
                sub.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} ENABLE")
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert "logical replication into pg-subscriber is stopped" in proc.stderr
            assert proc.stdout == "" and "Traceback" not in proc.stderr
        finally:
            primary.execute("DROP TABLE IF EXISTS drift_secret")
        deadline = time.monotonic() + 30
        while not sub.execute("SELECT count(pid) FROM pg_stat_subscription "
                              "WHERE relid IS NULL").fetchone()[0]:
            assert time.monotonic() < deadline, "the apply worker did not restart"
            time.sleep(0.1)


def test_no_false_positives_under_300_commits_per_second(sandbox: Sandbox) -> None:
    rows = 20_000
    ddl = {"drift_live": "CREATE TABLE drift_live (id int PRIMARY KEY, k int, c text)"}
    with replicated_tables(sandbox, ddl) as (primary, sub):
        primary.execute("INSERT INTO drift_live SELECT g, g, md5(g::text) "
                        "FROM generate_series(1, %s) g", (rows,))
        pg_caught_up(primary, sub)
        commits = [0]
        stop = threading.Event()

        def write(n: int) -> None:
            """150 commits a second (paced: flat out, three writers took the cores the
            check and the other test workers need); slower only if the machine is."""
            rnd = random.Random(n)
            due = time.monotonic()
            with pg(sandbox, "pg-primary") as conn:
                while not stop.is_set():
                    conn.execute("UPDATE drift_live SET k = k + 1, c = md5(random()::text) "
                                 "WHERE id = %s", (rnd.randint(1, rows),))
                    commits[0] += 1
                    due = max(due + 1 / 150, time.monotonic() - 0.1)
                    stop.wait(max(0.0, due - time.monotonic()))

        threads = [threading.Thread(target=write, args=(n,), daemon=True) for n in range(3)]
        for thread in threads:
            thread.start()
        try:
            time.sleep(0.3)
            before, started = commits[0], time.monotonic()
            # 2 ms chunks: many of them whatever the machine (with 5 ms, 20k warm rows
            # took as few as 9)
            result = check(sandbox, ("public.drift_live",), chunk_time=0.002,
                           initial_chunk_rows=300)
            rate = (commits[0] - before) / (time.monotonic() - started)
            time.sleep(0.2)
        finally:
            stop.set()
            for thread in threads:
                thread.join(10)
        assert rate >= 300, f"the writer managed only {rate:.0f} commits/s"
        assert table_docs(result)[0]["chunks"] >= 10
        assert exit_code(result) == 0, result.evidence


# ----------------------------------------------------------------- across engines

SPECIAL_FLOATS = [0.0, -0.0, 0.1, 1 / 3, -2.5, 1e100, 1e-5, 1.5e-7, 1e15, 1e16, 1e17, 1e21,
                  1e22, 123456789012345678.0, 3.4028234663852886e38, 5e-324,
                  1.7976931348623157e308, 2.2250738585072014e-308, 1234567.0, 0.000123,
                  1.2345678901234567e-15, 1.2345678901234567e16, 1e-21, 9.999999999999999e25,
                  1e26, 12345678901234567890.0]


def _rows(n: int) -> list[tuple[Any, ...]]:
    rnd = random.Random(5)
    out = []
    for i in range(1, n + 1):
        score = (SPECIAL_FLOATS[i - 1] if i <= len(SPECIAL_FLOATS)
                 else rnd.uniform(-1, 1) * 10 ** rnd.randint(-30, 30))
        null = i % 10 == 0
        out.append((
            i, None if null else f"name {i} é€", None if null else f"c{i}",
            score, rnd.uniform(-1e6, 1e6),
            Decimal(f"{rnd.randint(-10**8, 10**8)}.{rnd.randint(0, 99):02d}"),
            dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i * 97.5),
            dt.datetime(2020, 2, 29) + dt.timedelta(microseconds=i * 123457),
            dt.date(1999, 12, 31) + dt.timedelta(days=i),
            dt.time(i % 24, i % 60, i % 60, i * 7 % 1_000_000),
            None if null else bytes(rnd.getrandbits(8) for _ in range(i % 20)),
            i % 3 == 0,
        ))
    return out


XENG_INSERT = ("INSERT INTO app.xeng (id, name, code, score, f, amount, seen, born, d, t, "
               "payload, flag) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")
MYSQL_XENG = """CREATE TABLE app.xeng (id INT PRIMARY KEY, name VARCHAR(40) NULL,
  code CHAR(10) NULL, score DOUBLE, f FLOAT, amount DECIMAL(12,2), seen TIMESTAMP(6) NULL,
  born DATETIME(6), d DATE, t TIME(6), payload BLOB NULL, flag BOOLEAN) CHARSET utf8mb4"""
POSTGRES_XENG = """CREATE TABLE app.xeng (id int PRIMARY KEY, name text, code char(10),
  score float8, f real, amount numeric(14,4), seen timestamptz, born timestamp(6), d date,
  t time(6), payload bytea, flag boolean)"""


def test_mariadb_and_postgres_compare_equal_and_one_changed_row_is_found(
        sandbox: Sandbox, tmp_path: Path) -> None:
    rows = _rows(400)
    maria = admin(sandbox, "mariadb-primary", database=None)
    with closing(maria), pg(sandbox, "pg-primary", "app") as postgres:
        cur = maria.cursor()
        cur.execute("SET SESSION time_zone = '+00:00'")
        try:
            cur.execute("DROP TABLE IF EXISTS app.xeng")
            cur.execute(MYSQL_XENG)
            cur.executemany(XENG_INSERT,
                            [(*r[:6], r[6].replace(tzinfo=None), *r[7:]) for r in rows])
            postgres.execute("DROP SCHEMA IF EXISTS app CASCADE")
            postgres.execute("CREATE SCHEMA app")
            postgres.execute(POSTGRES_XENG)
            postgres.execute("GRANT USAGE ON SCHEMA app TO dbgauge")
            postgres.execute("GRANT SELECT ON app.xeng TO dbgauge")
            with postgres.cursor() as pcur:
                pcur.executemany(XENG_INSERT, rows)
            targets = {t.name: t for t in load_config(sandbox.config).all_targets()}
            args = ["--config", str(sandbox.config), "--source", "mariadb-primary",
                    "--replica", "pg-primary", "--tables", "app.xeng", "--format", "json",
                    "--state-file", str(tmp_path / "state.json")]
            same = subprocess.run([*DBGAUGE, "checksum", *args], capture_output=True, text=True,
                                  timeout=60, cwd=REPO, check=False)
            assert same.returncode == 0, same.stdout + same.stderr
            assert json.loads(same.stdout)["tables"][0]["rows"] == 400
            postgres.execute("UPDATE app.xeng SET amount = amount + 0.01 WHERE id = 77")
            changed = run_checksum(targets["mariadb-primary"], [targets["pg-primary"]],
                                   ChecksumOptions(tables=("app.xeng",), print_repair=True,
                                                   retry_delay=0.05, keep_state=False))
            assert changed.evidence["method"] == "direct" and exit_code(changed) == 1
            assert found(changed) == {"app.xeng": {("changed", (77,))}}
            (diff,) = table_docs(changed)[0]["differences"]
            assert diff["columns"] == ["amount"] and "values" not in diff
            shown = run_checksum(targets["mariadb-primary"], [targets["pg-primary"]],
                                 ChecksumOptions(tables=("app.xeng",), show_values=True,
                                                 retry_delay=0.05, keep_state=False))
            (diff,) = table_docs(shown)[0]["differences"]
            values = diff["values"]["amount"]
            assert Decimal(values["replica"]) - Decimal(values["source"]) == Decimal("0.01")
            ((replica, script),) = table_docs(changed)[0]["repair"]  # one table, one script
            assert replica == "pg-primary"
            assert script[1] == "SET TIME ZONE 'UTC';" and script[2].startswith(
                'UPDATE "app"."xeng" SET')
            for statement in script[1:]:
                postgres.execute(statement)
            again = run_checksum(targets["mariadb-primary"], [targets["pg-primary"]],
                                 ChecksumOptions(tables=("app.xeng",), keep_state=False))
            assert exit_code(again) == 0, again.evidence
        finally:
            cur.execute("DROP TABLE IF EXISTS app.xeng")
            postgres.execute("DROP SCHEMA IF EXISTS app CASCADE")


def test_floats_have_one_exact_text_in_both_engines(sandbox: Sandbox) -> None:
    """Shortest round-trip texts differ between the engines in tie cases (MariaDB
    -4.30288257071727e16, PostgreSQL -4.3028825707172704e+16 for one double): the portable
    text is the double's exact mantissa and exponent, the same in both and equal to
    Python's own decomposition, for random bit patterns, subnormals and extremes."""
    rnd = random.Random(7)
    values = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
              -43028825707172704.0, 0.1, 1 / 3, 2.0 ** 53, 1e-5]
    while len(values) < 2000:
        value = struct.unpack("<d", rnd.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(value):
            values.append(value)

    def exact(value: float) -> str:
        if value == 0:
            return "0"
        e = math.frexp(value)[1] - 1
        return f"{int(math.ldexp(value, 52 - e))}p{e}"

    column = [Column("d", "double", "double", False)]
    rows = list(enumerate(values))
    maria = admin(sandbox, "mariadb-primary")
    with closing(maria):
        cur = maria.cursor()
        cur.execute("CREATE TEMPORARY TABLE fx (i INT PRIMARY KEY, d DOUBLE NOT NULL)")
        cur.executemany("INSERT INTO fx VALUES (%s, %s)", rows)
        text = row_text("mariadb", column, True)
        cur.execute(f"SELECT i, {text} FROM fx ORDER BY i", ())  # noqa: S608 - under test
        in_mariadb = dict(cur.fetchall())
    column = [Column("d", "float8", "double precision", False)]
    with pg(sandbox, "pg-primary", "app") as conn:
        conn.execute("CREATE TEMPORARY TABLE fx (i int PRIMARY KEY, d float8 NOT NULL)")
        with conn.cursor() as pcur:
            pcur.executemany("INSERT INTO fx VALUES (%s, %s)", rows)
        text = row_text("postgres", column, True)
        in_postgres = dict(conn.execute(
            f"SELECT i, {text} FROM fx ORDER BY i").fetchall())  # noqa: S608 - under test
    expected = {i: exact(v) for i, v in rows}
    assert in_mariadb == expected
    assert in_postgres == expected
