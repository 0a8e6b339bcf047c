"""The pgbouncer_exporter dialect on captured SHOW output of PgBouncer 1.18.0 (Debian 12's
package, in the sandbox, as the stats user dbgauge: tests/fixtures/pgbouncer-1.18/, one file
per command: SHOW VERSION, LISTS, CONFIG, CLIENTS, POOLS, DATABASES, STATS, STATS_TOTALS).

The expected series are computed here from the same rows the way the peers' own code does,
restated as data from their sources:
- upstream prometheus-community/pgbouncer_exporter, collector.go at v0.12.1 (metricMaps,
  listsMap, configMap, queryShowClients, queryVersion) and, for SHOW STATS, at v0.10.2 (the
  `stats` namespace: `pgbouncer_stats_*`, renamed `pgbouncer_stats_totals_*` in 0.11);
- Debian's prometheus-pgbouncer-exporter 1.7, prometheus_pgbouncer_exporter/collectors.py
  (ListsCollector, PoolsCollector, DatabasesCollector; its StatsCollector cannot read
  PgBouncer >= 1.8).
The live peers are compared in tests/integration/test_compat_pgbouncer.py.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dbgauge.app import registry
from dbgauge.collectors.dialects.pgbouncer_exporter import DIALECT
from dbgauge.collectors.pgbouncer_clients import ClientsFacts, client_samples, parse_clients
from dbgauge.collectors.pgbouncer_config import parse_config
from dbgauge.collectors.pgbouncer_databases import parse_databases
from dbgauge.collectors.pgbouncer_lists import ListsFacts, parse_lists
from dbgauge.collectors.pgbouncer_pools import parse_pools
from dbgauge.collectors.pgbouncer_stats import parse_stats
from dbgauge.toolkit.db import Row
from tests.helpers import Metrics, as_dict
from tests.helpers.captured import json_rows

F = "pgbouncer-1.18/"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "compat.md"
Series = dict[tuple[str, frozenset[tuple[str, str]]], float]

# ---------------------------------------------------------------- upstream, restated

LABEL = "LABEL"
# collector.go v0.12.1 metricMaps: namespace -> column -> LABEL or (metric, factor)
UPSTREAM: dict[str, dict[str, Any]] = {
    "databases": {
        "name": LABEL, "host": LABEL, "port": LABEL, "database": LABEL, "force_user": LABEL,
        "pool_mode": LABEL, "pool_size": ("pool_size", 1), "reserve_pool": ("reserve_pool", 1),
        "reserve_pool_size": ("reserve_pool", 1), "max_connections": ("max_connections", 1),
        "current_connections": ("current_connections", 1), "paused": ("paused", 1),
        "disabled": ("disabled", 1)},
    "stats_totals": {
        "database": LABEL, "query_count": ("queries_pooled_total", 1),
        "query_time": ("queries_duration_seconds_total", 1e-6),
        "bytes_received": ("received_bytes_total", 1), "requests": ("queries_total", 1),
        "bytes_sent": ("sent_bytes_total", 1), "wait_time": ("client_wait_seconds_total", 1e-6),
        "xact_count": ("sql_transactions_pooled_total", 1),
        "xact_time": ("server_in_transaction_seconds_total", 1e-6),
        "client_parse_count": ("client_parses_total", 1),
        "server_parse_count": ("server_parses_total", 1), "bind_count": ("binds_total", 1),
        "server_assignment_count": ("server_assignments_total", 1)},
    "pools": {
        "database": LABEL, "user": LABEL, "cl_active": ("client_active_connections", 1),
        "cl_active_cancel_req": ("client_active_cancel_connections", 1),
        "cl_waiting": ("client_waiting_connections", 1),
        "cl_waiting_cancel_req": ("client_waiting_cancel_connections", 1),
        "sv_active": ("server_active_connections", 1),
        "sv_active_cancel": ("server_active_cancel_connections", 1),
        "sv_being_canceled": ("server_being_canceled_connections", 1),
        "sv_idle": ("server_idle_connections", 1), "sv_used": ("server_used_connections", 1),
        "sv_tested": ("server_testing_connections", 1),
        "sv_login": ("server_login_connections", 1), "maxwait": ("client_maxwait_seconds", 1)},
}
# collector.go v0.10.2: SHOW STATS (what GitLab's dashboards and the mixins query)
UPSTREAM_0_10_STATS: dict[str, Any] = {
    "database": LABEL, "total_query_count": ("queries_pooled_total", 1),
    "total_query_time": ("queries_duration_seconds_total", 1e-6),
    "total_received": ("received_bytes_total", 1), "total_requests": ("queries_total", 1),
    "total_sent": ("sent_bytes_total", 1), "total_wait_time": ("client_wait_seconds_total", 1e-6),
    "total_xact_count": ("sql_transactions_pooled_total", 1),
    "total_xact_time": ("server_in_transaction_seconds_total", 1e-6)}
UPSTREAM_LISTS = {"databases": "databases", "users": "users", "pools": "pools",
                  "free_clients": "free_clients", "used_clients": "used_clients",
                  "login_clients": "login_clients", "free_servers": "free_servers",
                  "used_servers": "used_servers", "dns_names": "cached_dns_names",
                  "dns_zones": "cached_dns_zones", "dns_queries": "in_flight_dns_queries"}
UPSTREAM_CONFIG = {"max_client_conn": "config_max_client_connections",
                   "max_user_connections": "config_max_user_connections"}


def _go_label(value: object) -> str:
    """queryNamespaceMapping's label conversion (int64 -> Itoa, NULL -> "")."""
    return "" if value is None else str(value)


def go_namespace(namespace: str, mapping: Mapping[str, Any], rows: Iterable[Row]) -> Series:
    """queryNamespaceMapping: every mapped column of every row, NULL as NaN."""
    labels = [c for c, m in mapping.items() if m == LABEL]
    out: Series = {}
    for row in rows:
        label_set = frozenset((name, _go_label(row.get(name))) for name in labels)
        for column, raw in row.items():
            usage = mapping.get(column)
            if usage is None or usage == LABEL:
                continue
            metric, factor = usage
            value = math.nan if raw is None else float(raw) * factor
            out[(f"pgbouncer_{namespace}_{metric}", label_set)] = value
    return out


def upstream(stats_rows: list[Row], totals_rows: list[Row]) -> Series:
    """Every series pgbouncer_exporter (0.12, and 0.10's SHOW STATS names) makes of the
    fixtures."""
    out: Series = {("pgbouncer_version_info", frozenset({("version", "PgBouncer 1.18.0")})): 1}
    for row in json_rows(F + "show_lists.json"):
        if row["list"] in UPSTREAM_LISTS:
            out[("pgbouncer_" + UPSTREAM_LISTS[row["list"]], frozenset())] = float(row["items"])
    for row in json_rows(F + "show_config.json"):
        if row["key"] in UPSTREAM_CONFIG:
            out[("pgbouncer_" + UPSTREAM_CONFIG[row["key"]], frozenset())] = float(row["value"])
    clients = Counter((r["database"], r["user"], r.get("application_name", ""), r["state"])
                      for r in json_rows(F + "show_clients.json"))
    for (database, user, app, state), n in clients.items():
        out[("pgbouncer_client_connections", frozenset({
            ("database", database), ("user", user), ("application_name", app),
            ("state", state)}))] = n
    out |= go_namespace("databases", UPSTREAM["databases"], json_rows(F + "show_databases.json"))
    out |= go_namespace("pools", UPSTREAM["pools"], json_rows(F + "show_pools.json"))
    out |= go_namespace("stats_totals", UPSTREAM["stats_totals"], totals_rows)
    out |= go_namespace("stats", UPSTREAM_0_10_STATS, stats_rows)
    return out


# ---------------------------------------------------------------- Debian's 1.7, restated

DEBIAN_LISTS = ("databases", "users", "pools", "free_clients", "used_clients",
                "login_clients", "free_servers", "used_servers", "dns_names", "dns_zones",
                "dns_queries", "dns_pending")


def debian() -> Series:
    """What Debian's exporter's working collectors make of the fixtures (a series it
    repeats is kept as Prometheus keeps it: the first)."""
    out: Series = {}
    lists = {r["list"]: r["items"] for r in json_rows(F + "show_lists.json")}
    for key in DEBIAN_LISTS:
        out[("pgbouncer_" + key, frozenset())] = float(lists[key])
    for row in json_rows(F + "show_pools.json"):
        labels = frozenset({("database", row["database"]), ("user", row["user"])})
        out[("pgbouncer_active_clients", labels)] = float(row["cl_active"])
        out[("pgbouncer_waiting_clients", labels)] = float(row["cl_waiting"])
    for row in json_rows(F + "show_databases.json"):
        labels = frozenset({("database", row["database"])})
        for column in ("pool_size", "reserve_pool"):
            out.setdefault(("pgbouncer_" + column, labels), float(row[column]))
    return out


# ---------------------------------------------------------------- dbgauge's side


def translate(stats_rows: list[Row]) -> Metrics:
    """The dialect's samples of every pgbouncer collector's facts of the fixtures."""
    facts: dict[str, object] = {
        "pgbouncer_lists": ListsFacts(parse_lists(json_rows(F + "show_lists.json")),
                                      json_rows(F + "show_version.json")[0]["version"]),
        "pgbouncer_config": parse_config(json_rows(F + "show_config.json")),
        "pgbouncer_clients": parse_clients(json_rows(F + "show_clients.json")),
        "pgbouncer_pools": parse_pools(json_rows(F + "show_pools.json")),
        "pgbouncer_databases": parse_databases(json_rows(F + "show_databases.json")),
        "pgbouncer_stats": parse_stats(stats_rows),
    }
    out: Metrics = {}
    for collector, fact in facts.items():
        for sample in DIALECT.samples(collector, fact):
            DIALECT.validate_sample(sample)
            key = (sample.name, frozenset(sample.labels.items()))
            assert key not in out, f"{key} twice"
            out[key] = sample.value
    return out


def _same(got: Metrics, want: Series) -> None:
    assert set(got) == set(want)
    for key, value in want.items():
        assert got[key] == value or (math.isnan(value) and math.isnan(got[key])), key


def test_1_18_through_show_stats_gives_every_peer_series_exactly() -> None:
    """PgBouncer 1.18-1.22: dbgauge reads SHOW STATS; the 0.11+ names are made of the same
    counters (SHOW STATS_TOTALS holds them under other column names)."""
    stats = json_rows(F + "show_stats.json")
    renamed = [{"database": r["database"], "xact_count": r["total_xact_count"],
                "query_count": r["total_query_count"], "bytes_received": r["total_received"],
                "bytes_sent": r["total_sent"], "xact_time": r["total_xact_time"],
                "query_time": r["total_query_time"], "wait_time": r["total_wait_time"]}
               for r in stats]
    got = translate(stats)
    want = upstream(stats, renamed)
    for key, value in debian().items():
        assert want.setdefault(key, value) == value, f"{key}: the peers disagree"
    _same(got, want)


def test_stats_totals_rows_give_the_0_11_names() -> None:
    """PgBouncer 1.23+: dbgauge reads SHOW STATS_TOTALS, as upstream 0.11+ does."""
    totals = json_rows(F + "show_stats_totals.json")
    got = {k: v for k, v in translate(totals).items()
           if k[0].startswith("pgbouncer_stats_totals_")}
    _same(got, go_namespace("stats_totals", UPSTREAM["stats_totals"], totals))


def test_units_and_the_debian_duplicate() -> None:
    got = translate(json_rows(F + "show_stats.json"))
    tiny = frozenset({("database", "app_tiny"), ("user", "sandbox_admin")})
    row = json_rows(F + "show_pools.json")[0]
    assert row["maxwait"] == 1 and row["maxwait_us"] > 0
    assert got[("pgbouncer_pools_client_maxwait_seconds", tiny)] == 1  # whole seconds
    wait = got[("pgbouncer_stats_client_wait_seconds_total", frozenset({("database",
                                                                          "app_tiny")}))]
    assert wait == json_rows(F + "show_stats.json")[0]["total_wait_time"] * 1e-6
    # app and app_tiny both point at database app: Debian's exporter writes
    # pgbouncer_pool_size{database="app"} twice (10, then 2); Prometheus keeps the first
    assert got[("pgbouncer_pool_size", frozenset({("database", "app")}))] == 10


def test_families_declared_per_peer() -> None:
    names = {f.spec.name for f in DIALECT.families.all}
    upstream_names = {name for name, _ in upstream(json_rows(F + "show_stats.json"),
                                                   json_rows(F + "show_stats_totals.json"))}
    # what 1.18 lacks: the 1.23/1.24 counters; the requests column is gone since 1.8
    later = {f"pgbouncer_stats_totals_{n}" for n in (
        "server_assignments_total", "client_parses_total", "server_parses_total",
        "binds_total")}
    assert upstream_names | later | {"pgbouncer_up"} <= names
    assert len(upstream_names | later | {"pgbouncer_up"}) == 52
    debian_names = {name for name, _ in debian()}
    assert len(debian_names) == 16
    assert names == upstream_names | later | {"pgbouncer_up"} | debian_names
    assert len(debian_names - upstream_names) == 8


def test_every_family_is_in_the_docs() -> None:
    text = DOCS.read_text()
    section = text[text.index("## pgbouncer_exporter"):]
    missing = [f.spec.name for f in DIALECT.families.all if f"`{f.spec.name}`" not in section]
    assert not missing


def test_the_dialect_runs_every_collector_it_reads() -> None:
    reg = registry()
    assert set(DIALECT.translate) == set(DIALECT.collectors)
    assert all(reg[name].kind == "pgbouncer" for name in DIALECT.collectors)


def test_clients_per_application_keep_at_most_the_limit() -> None:
    facts = parse_clients(json_rows(F + "show_clients.json"))
    d = as_dict("pgbouncer_clients", list(client_samples(facts, 50)))
    tiny = {("database", "app_tiny"), ("user", "sandbox_admin")}
    name = "dbgauge_pgbouncer_client_connections"
    assert d[(name, frozenset(tiny | {("application_name", "web"), ("state", "active")}))] == 3
    assert d[(name, frozenset(tiny | {("application_name", "worker"),
                                      ("state", "waiting")}))] == 1
    assert d[("dbgauge_pgbouncer_client_applications", frozenset())] == 3  # web, worker, ""
    # one name kept: the one with the most connections ("" has 2: dbgauge's own and one)
    d = as_dict("pgbouncer_clients", list(client_samples(facts, 1)))
    apps = {dict(k[1])["application_name"] for k in d if k[0] == name}
    assert apps == {"web", "(other)"}
    assert d[(name, frozenset(tiny | {("application_name", "(other)"),
                                      ("state", "active")}))] == 2  # worker 1, "" 1
    assert sum(v for k, v in d.items() if k[0] == name) == 7
    # the peer's family is never cut
    many = ClientsFacts(parse_clients(
        [{"database": "d", "user": "u", "state": "active", "application_name": f"app{i}"}
         for i in range(200)]).groups)
    assert len(list(DIALECT.samples("pgbouncer_clients", many))) == 200
    assert len(list(client_samples(many, 50))) == 50 + 1 + 1


def test_clients_without_application_name_count_under_empty() -> None:
    facts = parse_clients([{"database": "d", "user": "u", "state": "active"}] * 2)
    assert [(g.application_name, g.count) for g in facts.groups] == [("", 2)]
