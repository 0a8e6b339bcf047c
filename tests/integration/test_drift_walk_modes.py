"""The direct walk reads every chunk over an integer key by key bucket, one range read per bucket
joined by UNION ALL (`TableQueries.chunk_buckets`, checks/drift/chunks.py `bucket_pieces`), on
MariaDB and on PostgreSQL: differences anywhere, rows on the replica only below the source's
lowest key and beyond its highest among them, are named from the walk's own bucket hashes.

The sides are pipelined (checks/drift/pipeline.py): a MariaDB source compared with a MariaDB
replica and a PostgreSQL copy at once hashes each chunk twice (native and portable) on its one
connection, and a pause asked for mid-walk drains the pipeline, waits, and walks on."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from dbgauge.checks.drift import ChecksumOptions, run_checksum
from dbgauge.checks.drift.context import THROTTLE_EVERY
from tests.helpers.drift import (
    mariadb_table,
    pg,
    pg_caught_up,
    pg_source,
    pg_subscriber,
    replicated_tables,
    targets,
)
from tests.helpers.servers import Sandbox, admin, execute, one

pytestmark = pytest.mark.integration

ROWS = 300_000
# Fixed 100,000-row chunks of 3 buckets each (at least 32768 keys a bucket), whatever the
# machine's speed.
OPTIONS = {"method": "direct", "whole_table_time": 0, "chunk_size": 100_000, "retry_delay": 0.05,
           "keep_state": False}
# Changed and missing rows at both ends and inside; rows on the replica only far below the
# source's lowest key and beyond its highest (the walk's open first and last chunks).
DRIFT = ["UPDATE drift_late SET v = 'changed' WHERE id IN (2, 140000, 299990)",
         "DELETE FROM drift_late WHERE id = 270001",
         "INSERT INTO drift_late VALUES (-1000000, 'x'), (0, 'x'), (300001, 'x'), (999999, 'x')"]
EXPECTED = {("changed", 2), ("changed", 140000), ("changed", 299990), ("missing", 270001),
            ("extra", -1000000), ("extra", 0), ("extra", 300001), ("extra", 999999)}


def named(result: Any) -> set[tuple[str, int]]:
    table: dict[str, Any] = result.evidence["tables"][0]
    assert table["rows"] == ROWS and table["chunks"] >= 3, table
    return {(d["kind"], d["key"]["id"]) for d in table["differences"]}


@pytest.fixture
def mariadb_drift(sandbox: Sandbox) -> Iterator[None]:
    with mariadb_table(
            sandbox, "app.drift_late",
            "CREATE TABLE app.drift_late (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)",
            "INSERT INTO app.drift_late SELECT seq, CONCAT('v-', seq) FROM app.seq_1_to_300000"):
        execute(sandbox, "mariadb-replica", "USE app", *DRIFT, log_bin=False)
        yield


def test_mariadb_bucket_reads_name_every_difference(sandbox: Sandbox,
                                                     mariadb_drift: None) -> None:
    t = targets(sandbox)
    result = run_checksum(t["mariadb-primary"], [t["mariadb-replica"]],
                          ChecksumOptions(tables=("app.drift_late",), **OPTIONS))
    assert named(result) == EXPECTED


def test_postgres_bucket_reads_name_every_difference(sandbox: Sandbox) -> None:
    ddl = {"drift_late": "CREATE TABLE drift_late (id int PRIMARY KEY, v varchar(40) NOT NULL)"}
    with replicated_tables(sandbox, ddl) as (primary, sub):
        primary.execute("INSERT INTO drift_late SELECT g, 'v-' || g "
                        "FROM generate_series(1, %s) g", (ROWS,))
        pg_caught_up(primary, sub)
        for statement in DRIFT:
            sub.execute(statement)
        result = run_checksum(pg_source(sandbox), [pg_subscriber(sandbox)],
                              ChecksumOptions(tables=("public.drift_late",), **OPTIONS))
    assert named(result) == EXPECTED


MIXED_ROWS = 20_000
MIXED = {**OPTIONS, "chunk_size": 2_000}  # ten chunks


@pytest.fixture
def mixed_copies(sandbox: Sandbox) -> Iterator[None]:
    """app.mixed on the MariaDB primary (and so its replica) and on PostgreSQL, equal."""
    with mariadb_table(
            sandbox, "app.mixed",
            "CREATE TABLE app.mixed (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)",
            "INSERT INTO app.mixed SELECT seq, CONCAT('v-', seq) FROM app.seq_1_to_20000"), \
            pg(sandbox, "pg-primary", "app") as postgres:
        postgres.execute("CREATE SCHEMA IF NOT EXISTS app")
        postgres.execute("DROP TABLE IF EXISTS app.mixed")
        postgres.execute("CREATE TABLE app.mixed (id int PRIMARY KEY, v varchar(40) NOT NULL)")
        postgres.execute("INSERT INTO app.mixed SELECT g, 'v-' || g "
                         "FROM generate_series(1, %s) g", (MIXED_ROWS,))
        postgres.execute("GRANT USAGE ON SCHEMA app TO dbgauge")
        postgres.execute("GRANT SELECT ON app.mixed TO dbgauge")
        try:
            yield
        finally:
            postgres.execute("DROP TABLE IF EXISTS app.mixed")


def test_a_mariadb_replica_and_a_postgres_copy_are_compared_in_one_walk(
        sandbox: Sandbox, mixed_copies: None) -> None:
    """Two hash modes on the source's one connection, one after the other (run at once,
    they would interleave two statements on one MariaDB session)."""
    t = targets(sandbox)
    execute(sandbox, "mariadb-replica", "UPDATE app.mixed SET v = 'changed' WHERE id = 7",
            log_bin=False)
    with pg(sandbox, "pg-primary", "app") as postgres:
        postgres.execute("DELETE FROM app.mixed WHERE id = 15001")
    result = run_checksum(t["mariadb-primary"], [t["mariadb-replica"], t["pg-primary"]],
                          ChecksumOptions(tables=("app.mixed",), **MIXED))
    table = result.evidence["tables"][0]
    assert table["rows"] == MIXED_ROWS and table["chunks"] >= 10, table
    assert {(d["replica"], d["kind"], d["key"]["id"]) for d in table["differences"]} == {
        ("mariadb-replica", "changed", 7), ("pg-primary", "missing", 15001)}


class LoadMidWalk:
    """A reporter that, after the walk's second chunk, pushes the source's
    Threads_connected over --max-load with extra sessions, and closes them when the walk
    says it is pausing: the walk must pause, then resume and finish."""

    def __init__(self, sandbox: Sandbox, extra: int) -> None:
        self.sandbox = sandbox
        self.extra = extra
        self.sessions: list[Any] = []
        self.notes: list[str] = []
        self.progressed = 0

    def plan(self, tables: object) -> None:
        pass

    def progress(self, table: str, rows: int, total: int) -> None:
        self.progressed += 1
        if self.progressed == 2:
            self.sessions = [admin(self.sandbox, "mariadb-primary", database=None)
                             for _ in range(self.extra)]
            time.sleep(THROTTLE_EVERY)  # the sides' next chunks answer the load check

    def note(self, text: str) -> None:
        self.notes.append(text)
        if text.startswith("pausing"):
            self.close()

    def close(self) -> None:
        for conn in self.sessions:
            conn.close()
        self.sessions = []


def test_a_pause_asked_for_mid_walk_drains_waits_and_walks_on(
        sandbox: Sandbox, mixed_copies: None) -> None:
    t = targets(sandbox)
    connected = int(one(sandbox, "mariadb-primary",
                        "SHOW GLOBAL STATUS LIKE 'Threads_connected'")[1])
    # the run's own two sessions come on top of what is connected now
    limit = connected + 2 + 5
    reporter = LoadMidWalk(sandbox, extra=20)
    try:
        result = run_checksum(t["mariadb-primary"], [t["mariadb-replica"]],
                              ChecksumOptions(tables=("app.mixed",), **MIXED, max_load=(
                                  ("Threads_connected", float(limit)),)), reporter)
    finally:
        reporter.close()
    table = result.evidence["tables"][0]
    assert result.evidence["status"] == "ok" and table["rows"] == MIXED_ROWS, table
    assert table["chunks"] >= 10
    pausing = [n for n in reporter.notes if n.startswith("pausing")]
    assert pausing and "Threads_connected" in pausing[0], reporter.notes
    assert "resuming" in reporter.notes



@pytest.fixture
def small_then_keyless(sandbox: Sandbox) -> Iterator[None]:
    """app.drift_small (an integer key, one chunk) and app.drift_nokey (no key), each with
    a row changed on the replica."""
    with mariadb_table(
            sandbox, "app.drift_small",
            "CREATE TABLE app.drift_small (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)",
            "INSERT INTO app.drift_small SELECT seq, CONCAT('v-', seq) FROM app.seq_1_to_10"), \
            mariadb_table(
                sandbox, "app.drift_nokey",
                "CREATE TABLE app.drift_nokey (n INT NOT NULL, v VARCHAR(40) NOT NULL)",
                "INSERT INTO app.drift_nokey SELECT seq, 'x' FROM app.seq_1_to_10"):
        execute(sandbox, "mariadb-replica",
                "UPDATE app.drift_small SET v = 'changed' WHERE id = 3",
                "UPDATE app.drift_nokey SET v = 'changed' WHERE n = 4", log_bin=False)
        yield


def test_each_table_reads_only_its_own_differing_buckets(
        sandbox: Sandbox, small_then_keyless: None) -> None:
    """A small table over an integer key is one chunk, (-inf, +inf], as a keyless table is:
    the buckets that differed in the first table's walk are not the second's to re-read."""
    t = targets(sandbox)
    result = run_checksum(t["mariadb-primary"], [t["mariadb-replica"]],
                          ChecksumOptions(tables=("app.drift_small", "app.drift_nokey"),
                                          **OPTIONS))
    small, nokey = result.evidence["tables"]
    assert [d["key"] for d in small["differences"]] == [{"id": 3}], small
    assert (nokey["status"], nokey["differing_chunks"]) == ("drift", {"mariadb-replica": 1})
    assert [u["replica"] for u in nokey["unnamed_differences"]] == ["mariadb-replica"], nokey
