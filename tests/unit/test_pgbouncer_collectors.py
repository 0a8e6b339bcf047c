"""PgBouncer collectors on SHOW outputs: captured from the sandbox's PgBouncer 1.18 and
taken from public sources for older and newer versions (tests/fixtures/pgbouncer-*)."""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.pgbouncer_config import config_samples, parse_config
from dbgauge.collectors.pgbouncer_databases import database_samples, parse_databases
from dbgauge.collectors.pgbouncer_lists import ListsFacts, parse_lists
from dbgauge.collectors.pgbouncer_pools import parse_pools, pool_samples
from dbgauge.collectors.pgbouncer_stats import COUNTERS, normalise, parse_stats, stats_samples
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.metrics import Collector
from dbgauge.toolkit.sql import load_sql
from tests.helpers import as_dict, value
from tests.helpers.captured import Answers, json_doc, json_rows

REGISTRY = registry()
PUBLIC = "pgbouncer-public/"


def test_all_pgbouncer_collectors_default_on() -> None:
    names = {c.name for c in REGISTRY if c.kind == "pgbouncer" and c.default_enabled}
    assert names == {"pgbouncer_pools", "pgbouncer_stats", "pgbouncer_databases",
                     "pgbouncer_config", "pgbouncer_lists", "pgbouncer_clients"}


def test_pools_1_18_exhausted_pool() -> None:
    facts = parse_pools(json_rows("pgbouncer-1.18/show_pools.json"))
    d = as_dict("pgbouncer_pools", list(pool_samples(facts)))
    pool = {"database": "app_tiny", "user": "sandbox_admin"}
    clients = "dbgauge_pgbouncer_pool_client_connections"
    servers = "dbgauge_pgbouncer_pool_server_connections"
    assert value(d, clients, **pool, state="active") == 4
    assert value(d, clients, **pool, state="waiting") == 1
    assert value(d, clients, **pool, state="waiting_cancel_req") == 0
    assert value(d, servers, **pool, state="active") == 2
    assert value(d, servers, **pool, state="login") == 0
    row = json_rows("pgbouncer-1.18/show_pools.json")[0]
    maxwait = value(d, "dbgauge_pgbouncer_pool_client_maxwait_seconds", **pool)
    assert maxwait == pytest.approx(row["maxwait"] + row["maxwait_us"] / 1e6)
    assert maxwait is not None and maxwait >= 1


def test_pools_other_versions() -> None:
    # 1.21-1.23: the same columns as 1.18
    d = as_dict("pgbouncer_pools",
                list(pool_samples(parse_pools(json_rows(PUBLIC + "show_pools-1.21.json")))))
    assert value(d, "dbgauge_pgbouncer_pool_server_connections", database="postgres",
                 user="postgres", state="used") == 1
    # 1.17 (before the cancel-request split): the states it has, nothing invented
    d = as_dict("pgbouncer_pools",
                list(pool_samples(parse_pools(json_rows(PUBLIC + "show_pools-1.17.json")))))
    pool = {"database": "xxdb", "user": "xxdb_user"}
    assert value(d, "dbgauge_pgbouncer_pool_client_connections", **pool, state="waiting") == 419
    assert value(d, "dbgauge_pgbouncer_pool_client_connections", **pool,
                 state="waiting_cancel_req") is None
    maxwait = value(d, "dbgauge_pgbouncer_pool_client_maxwait_seconds", **pool)
    assert maxwait == pytest.approx(0.142343)
    # 1.24+: load_balance_hosts is a new text column and is ignored
    cols = json_doc("pgbouncer-public/columns-source.json")["SHOW POOLS"]
    row = dict.fromkeys(cols, 0) | {"database": "d", "user": "u", "pool_mode": "session",
                                    "load_balance_hosts": None}
    d = as_dict("pgbouncer_pools", list(pool_samples(parse_pools([row]))))
    assert len(d) == 4 + 7 + 1


def test_stats_1_18_show_stats_and_stats_totals_agree() -> None:
    via_stats = as_dict("pgbouncer_stats",
                        list(stats_samples(parse_stats(
                            json_rows("pgbouncer-1.18/show_stats.json")))))
    via_totals = as_dict("pgbouncer_stats",
                         list(stats_samples(parse_stats(
                             json_rows("pgbouncer-1.18/show_stats_totals.json")))))
    assert set(via_stats) == set(via_totals)
    db = {"database": "app_tiny"}
    assert (value(via_stats, "dbgauge_pgbouncer_stats_queries_total", **db) or 0) >= 1
    wait = value(via_stats, "dbgauge_pgbouncer_stats_client_wait_seconds_total", **db)
    assert wait == pytest.approx(json_rows("pgbouncer-1.18/show_stats.json")[0]["total_wait_time"]
                                 / 1e6)
    assert not any("avg" in name for name, _ in via_stats)


def test_stats_newest_columns_all_map() -> None:
    cols = json_doc("pgbouncer-public/columns-source.json")
    totals = {normalise(c) for c in cols["SHOW STATS_TOTALS"]} - {"database"}
    stats = {normalise(c) for c in cols["SHOW STATS"]} - {"database", None}
    assert totals == stats  # both spellings normalise to the same names
    assert totals <= set(COUNTERS)
    row = dict.fromkeys(cols["SHOW STATS_TOTALS"], 7) | {"database": "db"}
    d = as_dict("pgbouncer_stats", list(stats_samples(parse_stats([row]))))
    assert len(d) == len(totals)


def test_stats_statement_by_version() -> None:
    assert load_sql("pgbouncer", "show_stats", (1, 18, 0)) == "SHOW STATS"
    assert load_sql("pgbouncer", "show_stats", (1, 22, 1)) == "SHOW STATS"
    assert load_sql("pgbouncer", "show_stats", (1, 23, 0)) == "SHOW STATS_TOTALS"
    assert load_sql("pgbouncer", "show_stats", (1, 25, 1)) == "SHOW STATS_TOTALS"
    for name in ("show_pools", "show_databases", "show_config", "show_lists", "show_stats"):
        assert "--" not in load_sql("pgbouncer", name, (1, 18, 0))  # the console takes no comments


def test_databases_1_18() -> None:
    d = as_dict("pgbouncer_databases",
                list(database_samples(parse_databases(
                    json_rows("pgbouncer-1.18/show_databases.json")))))
    p = "dbgauge_pgbouncer_database_"
    assert value(d, p + "pool_size", database="app_tiny") == 2
    assert value(d, p + "reserve_pool_size", database="app") == 0  # 1.18: reserve_pool
    assert value(d, p + "current_connections", database="app_tiny") == 2
    assert value(d, p + "paused", database="app") == 0
    assert value(d, p + "server_lifetime_seconds", database="app") is None  # 1.23+
    assert value(d, p + "info", database="app_tiny", host="127.0.0.1",
                 port=str(json_rows("pgbouncer-1.18/show_databases.json")[0]["port"]),
                 backend_database="app", force_user="", pool_mode="") == 1


def test_databases_1_25() -> None:
    d = as_dict("pgbouncer_databases",
                list(database_samples(parse_databases(
                    json_rows("pgbouncer-public/show_databases-1.25.json")))))
    p = "dbgauge_pgbouncer_database_"
    db = {"database": "rideshare_development"}
    assert value(d, p + "pool_size", **db) == 20
    assert value(d, p + "reserve_pool_size", **db) == 0  # 1.24+: reserve_pool_size
    assert value(d, p + "server_lifetime_seconds", **db) == 3600
    assert value(d, p + "current_connections", **db) == 1
    assert value(d, p + "current_client_connections", database="pgbouncer") == 1
    assert value(d, p + "info", database="pgbouncer", host="", port="6432",
                 backend_database="pgbouncer", force_user="pgbouncer", pool_mode="statement") == 1


def test_config_selected_keys() -> None:
    d = as_dict("pgbouncer_config",
                list(config_samples(parse_config(json_rows("pgbouncer-1.18/show_config.json")))))
    p = "dbgauge_pgbouncer_config_"
    assert value(d, p + "max_client_connections") == 200
    assert value(d, p + "default_pool_size") == 10
    assert value(d, p + "query_wait_timeout_seconds") == 120
    assert value(d, p + "info", pool_mode="transaction") == 1
    assert len(d) == 8


def test_lists() -> None:
    lists = parse_lists(json_rows("pgbouncer-1.18/show_lists.json"))
    assert lists["databases"] == 4 and lists["used_clients"] >= 5
    names = set(json_doc("pgbouncer-public/columns-source.json")["SHOW LISTS rows"])
    assert set(lists) <= names  # newer versions only add lists (peers, peer_pools)


def test_read_returns_facts_and_samples_are_pure() -> None:
    """Each PgBouncer collector: read() runs its one SHOW and returns typed facts;
    samples() of those facts is what collect() yields."""
    conn = Answers({"show_pools": json_rows("pgbouncer-1.18/show_pools.json"),
                     "show_stats": json_rows("pgbouncer-1.18/show_stats.json"),
                     "show_databases": json_rows("pgbouncer-1.18/show_databases.json"),
                     "show_config": json_rows("pgbouncer-1.18/show_config.json"),
                     "show_lists": json_rows("pgbouncer-1.18/show_lists.json"),
                     "show_clients": json_rows("pgbouncer-1.18/show_clients.json")},
                    ServerInfo("pgbouncer", (1, 18, 0), "PgBouncer 1.18.0"))
    facts: dict[str, Any] = {}
    for name in ("pgbouncer_pools", "pgbouncer_stats", "pgbouncer_databases",
                 "pgbouncer_config", "pgbouncer_lists", "pgbouncer_clients"):
        c: Collector[Any] = REGISTRY[name]
        facts[name] = c.read(conn)  # type: ignore[arg-type]
        assert list(c.samples(facts[name])) == list(c.collect(conn))  # type: ignore[arg-type]
    assert conn.asked == ["show_pools", "show_pools", "show_stats", "show_stats",
                          "show_databases", "show_databases", "show_config", "show_config",
                          "show_lists", "show_lists", "show_clients", "show_clients"]
    pool = next(p for p in facts["pgbouncer_pools"].pools if p.name == "app_tiny/sandbox_admin")
    assert pool.clients["waiting"] == 1 and pool.servers["active"] == 2
    assert pool.maxwait_seconds is not None and pool.maxwait_seconds >= 1
    assert pool.maxwait == 1 and pool.maxwait_seconds == 1 + pool.maxwait_us / 1e6
    stats = {db.database: db for db in facts["pgbouncer_stats"].databases}
    raw = json_rows("pgbouncer-1.18/show_stats.json")[0]
    assert stats[raw["database"]].counters["wait_time"] == raw["total_wait_time"]  # as read: us
    assert "avg_wait_time" not in stats[raw["database"]].counters
    app = next(d for d in facts["pgbouncer_databases"].databases if d.name == "app")
    assert app.reserve_pool_size == 0 and app.server_lifetime is None and app.force_user == ""
    config = facts["pgbouncer_config"]
    assert (config.max_client_conn, config.pool_mode) == (200, "transaction")
    lists = facts["pgbouncer_lists"]
    assert isinstance(lists, ListsFacts) and lists.used_clients >= 5
    assert lists.version == "PgBouncer 1.18.0"  # read at connect, for pgbouncer_version_info
    clients = {(g.application_name, g.state): g.count for g in facts["pgbouncer_clients"].groups
               if g.database == "app_tiny"}
    assert clients == {("web", "active"): 3, ("worker", "active"): 1, ("", "active"): 1,
                       ("worker", "waiting"): 1}
    assert ListsFacts({}).used_clients == 0
