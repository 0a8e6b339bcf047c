"""postgres_exporter's per-table families from postgres_tables' facts, on rows captured from
PostgreSQL 15 and 18: upstream's names, types and labels (collector/pg_stat_user_tables.go,
pg_statio_user_tables.go), NULL as 0 and times as whole Unix seconds as upstream writes
them, and Debian 0.11's queries.yaml `_blks_` names with its NaN for NULL."""

from __future__ import annotations

import math

import pytest

from dbgauge.collectors._pg_databases import DatabaseRead
from dbgauge.collectors.dialects.postgres_exporter import DIALECT
from dbgauge.collectors.postgres_tables import PgTablesFacts, parse_database
from tests.helpers.captured import json_rows

UPSTREAM_COUNTERS = ["seq_scan", "seq_tup_read", "idx_scan", "idx_tup_fetch", "n_tup_ins",
                     "n_tup_upd", "n_tup_del", "n_tup_hot_upd", "vacuum_count", "autovacuum_count",
                     "analyze_count", "autoanalyze_count"]
UPSTREAM_GAUGES = ["n_live_tup", "n_dead_tup", "n_mod_since_analyze", "last_vacuum",
                   "last_autovacuum", "last_analyze", "last_autoanalyze", "index_size_bytes",
                   "table_size_bytes", "size_bytes"]
IO = [f"{p}_{s}_{e}" for p in ("heap", "idx", "toast", "tidx") for s in ("blocks", "blks")
      for e in ("read", "hit")]


def peer(version: int) -> dict[tuple[str, str], float]:
    rows = json_rows(f"postgres-{version}/tables.json", f"PostgreSQL {version}")
    facts = PgTablesFacts((DatabaseRead("postgres", parse_database(rows)),))
    out: dict[tuple[str, str], float] = {}
    for sample in DIALECT.samples("postgres_tables", facts):
        spec = DIALECT.validate_sample(sample)  # declared, with its label set
        assert spec.labels == ("datname", "schemaname", "relname")
        assert sample.labels["datname"] == "postgres"
        key = (sample.name, sample.labels["relname"])
        assert key not in out
        out[key] = sample.value
    return out


def test_names_and_types_are_the_peers() -> None:
    types = {f.spec.name: f.spec.type for f in DIALECT.families.all}
    for name in UPSTREAM_COUNTERS:
        assert types["pg_stat_user_tables_" + name] == "counter"
    for name in UPSTREAM_GAUGES:
        assert types["pg_stat_user_tables_" + name] == "gauge"
    for name in IO:
        assert types["pg_statio_user_tables_" + name] == "counter"
    per_table = [n for n in types if "user_tables_" in n]
    assert len(per_table) == len(UPSTREAM_COUNTERS) + len(UPSTREAM_GAUGES) + len(IO) == 38


@pytest.mark.parametrize("version", [15, 18])
def test_values_as_the_peer_writes_them(version: int) -> None:
    m = peer(version)
    rows = {r["relname"]: r for r in json_rows(f"postgres-{version}/tables.json")}
    assert len(m) == 3 * 38  # every family for every table
    assert m[("pg_stat_user_tables_n_tup_ins", "t_idx")] == 200
    assert m[("pg_stat_user_tables_idx_scan", "t_noidx")] == 0  # NULL: upstream's 0
    assert m[("pg_stat_user_tables_last_analyze", "t_noidx")] == 0  # never: 0
    analyzed = m[("pg_stat_user_tables_last_analyze", "t_idx")]
    assert analyzed == math.floor(rows["t_idx"]["last_analyze"])  # whole Unix seconds
    assert m[("pg_stat_user_tables_size_bytes", "t_idx")] == (
        m[("pg_stat_user_tables_table_size_bytes", "t_idx")]
        + m[("pg_stat_user_tables_index_size_bytes", "t_idx")])
    assert m[("pg_statio_user_tables_heap_blocks_hit", "t_idx")] == \
        m[("pg_statio_user_tables_heap_blks_hit", "t_idx")] == rows["t_idx"]["heap_blks_hit"]
    assert m[("pg_statio_user_tables_idx_blocks_read", "t_noidx")] == 0  # upstream
    assert math.isnan(m[("pg_statio_user_tables_idx_blks_read", "t_noidx")])  # 0.11


def test_a_database_not_read_gives_no_peer_series() -> None:
    facts = PgTablesFacts((DatabaseRead("shop", error="refused"),))
    assert list(DIALECT.samples("postgres_tables", facts)) == []
