"""Reading a scrape's statements ahead in one libpq pipeline (toolkit/db/pipeline.py), on
the sandbox's PostgreSQL as the monitoring role: the rows are the ones a statement run
alone gives, a failure costs only its statement, a lost connection is reported lost, and a
scrape reads ahead what its collectors ran the time before instead of running it again."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import psycopg
import pytest

from dbgauge.app import load_config, registry
from dbgauge.toolkit.db import connect
from dbgauge.toolkit.db.base import Row
from dbgauge.toolkit.db.pipeline import ReadAhead, Statement
from dbgauge.toolkit.db.postgres import PostgresConnection
from dbgauge.toolkit.exporter.scrape import TargetRunner
from tests.helpers.daemon import target_config
from tests.helpers.servers import Sandbox, pg_admin

pytestmark = pytest.mark.integration

# Every type the collectors read, NULL included; fixed values, so both paths must agree.
TYPES = ("SELECT 1::int AS i, 9007199254740993::bigint AS big, 12.5::numeric AS num, "
         "0.25::float8 AS f, 'x''y'::text AS t, true AS b, NULL::bigint AS missing, "
         "'2024-01-02 03:04:05+00'::timestamptz AS ts, '0/16B3748'::pg_lsn AS lsn, "
         "'app'::name AS datname FROM generate_series(1, 3) AS g(n) ORDER BY n")
DENIED = "SELECT count(*) AS n FROM pg_authid"  # superuser only: the role may not read it


@pytest.fixture
def conn(sandbox: Sandbox) -> Iterator[PostgresConnection]:
    opened = connect(load_config(sandbox.config).target("pg-primary"))
    assert isinstance(opened, PostgresConnection)
    try:
        yield opened
    finally:
        opened.close()


def _raw(conn: PostgresConnection) -> psycopg.Connection[Row]:
    return conn._conn  # the psycopg connection the pipeline runs on


def test_rows_read_ahead_are_the_rows_a_statement_alone_gives(
        conn: PostgresConnection) -> None:
    ahead = ReadAhead(_raw(conn), 10.0)
    ahead.run([Statement("types", TYPES), Statement("one", "SELECT 1 AS one")])
    rows = ahead.take("types")
    assert rows is not None and len(rows) == 3
    assert rows == conn.execute_sql(TYPES)
    assert type(rows[0]["num"]).__name__ == "Decimal" and rows[0]["missing"] is None
    assert ahead.take("one") == [{"one": 1}]
    assert ahead.take("types") is None, "rows are handed out once"
    # the connection is out of pipeline mode and answers as before
    assert conn.execute_sql("SELECT 2 AS two") == [{"two": 2}]


def test_a_refused_statement_costs_only_itself_and_is_not_read_ahead_again(
        conn: PostgresConnection) -> None:
    ahead = ReadAhead(_raw(conn), 10.0)
    statements = [Statement("before", "SELECT 1 AS n"), Statement("denied", DENIED),
                  Statement("after", "SELECT 2 AS n")]
    ahead.run(statements)
    assert ahead.take("denied") is None
    assert ahead.take("before") == [{"n": 1}] and ahead.take("after") == [{"n": 2}]
    ahead.run(statements)
    assert ahead.take("after") == [{"n": 2}]
    assert "denied" in ahead._refused
    assert not conn.closed and conn.execute_sql("SELECT 3 AS n") == [{"n": 3}]


def test_a_connection_lost_while_reading_ahead_is_closed_not_raised(
        sandbox: Sandbox, conn: PostgresConnection) -> None:
    pid = conn.execute_sql("SELECT pg_backend_pid() AS pid")[0]["pid"]
    with pg_admin(sandbox, "pg-primary") as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    ahead = ReadAhead(_raw(conn), 10.0)
    ahead.run([Statement("one", "SELECT 1 AS one")])  # must not raise
    assert conn.closed
    assert ahead.take("one") is None


def test_a_scrape_reads_ahead_what_its_collectors_ran_the_time_before(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second scrape runs no collector statement one at a time: each was read ahead
    (the first scrape learnt them), and its rows are what the collectors used."""
    cfg = target_config(sandbox, "pg-primary", compat=["postgres_exporter"])
    reg = registry()
    runner = TargetRunner(cfg, reg.for_target(cfg), reg.dialects_for(cfg))
    alone: list[str] = []
    ahead: list[list[str]] = []
    execute, run = PostgresConnection._execute, ReadAhead.run

    def counted(self: PostgresConnection, sql: str, params: Any, *, prepare: bool) -> Any:
        if prepare and params is None:  # a named sql/ statement (query()), not built SQL
            alone.append(sql)
        return execute(self, sql, params, prepare=prepare)

    def pipelined(self: ReadAhead, statements: list[Statement]) -> None:
        ahead.append([s.name for s in statements])
        run(self, statements)

    monkeypatch.setattr(PostgresConnection, "_execute", counted)
    monkeypatch.setattr(ReadAhead, "run", pipelined)
    try:
        first = runner.scrape(time.monotonic() + 15)
        assert first.up and all(r.success for r in first.collectors), first.collectors
        assert alone and not ahead, "the first scrape has nothing to read ahead"
        alone.clear()
        second = runner.scrape(time.monotonic() + 15)
    finally:
        runner.close()
    assert second.up and all(r.success for r in second.collectors), second.collectors
    assert len(ahead) == 1 and {"stat_database", "lock_counts"} <= set(ahead[0])
    assert alone == [], f"statements run one at a time: {alone}"
    made = {s.name for s in second.peer_samples}
    assert {"pg_stat_database_xact_commit", "pg_locks_count"} <= made


def test_nothing_is_read_ahead_through_a_pooler(sandbox: Sandbox) -> None:
    """A transaction-pooling PgBouncer (1.18 here) hands the server connection to another
    client at the first Sync, with the rest of a pipeline's answers still to come: through
    it, statements run one at a time. Straight to the server, they are read ahead."""
    base = load_config(sandbox.config).target("pg-primary")
    pooled = replace(base, dsn=f"postgresql://dbgauge@127.0.0.1:"
                                f"{sandbox.state.port('pgbouncer')}/app")
    for target, direct in ((base, True), (pooled, False)):
        conn = connect(target)
        try:
            assert isinstance(conn, PostgresConnection)
            assert conn._direct is direct, target.dsn
            conn.ran()
            assert conn.query("server_info")
            conn.read_ahead(conn.ran())
            assert (conn._ahead is not None) is direct, target.dsn
            assert conn.query("server_info")  # answered either way
        finally:
            conn.close()
