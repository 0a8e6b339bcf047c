"""postgres_exporter's per-table families, from the facts of dbgauge's postgres_tables.

Upstream's `stat_user_tables` and `statio_user_tables` collectors
(collector/pg_stat_user_tables.go, pg_statio_user_tables.go, both on by default), and the
names Debian's 0.11 gives the same data through the classic queries.yaml (its
examples/queries.yaml: `pg_stat_user_tables_*` as upstream, `pg_statio_user_tables_*_blks_*`
where upstream says `_blocks_`). Labels `datname`, `schemaname`, `relname`; the peer's
types (counters without `_total`). Upstream writes 0 for a NULL column (no index, no TOAST
table, never vacuumed: `last_*` are Unix seconds, 0 for never); 0.11's queries.yaml writes
NaN for a NULL, which the `_blks_` names, 0.11's only, keep.

Upstream's opt-in `statio_user_indexes` (collector/pg_statio_user_indexes.go) comes from
dbgauge's opt-in postgres_indexes: the connected database's indexes only, as the peer
reads them (labels `schemaname`, `relname`, `indexrelname`, no `datname`; NULL as
"unknown" and 0).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from dbgauge.collectors.postgres_indexes import PgIndexesFacts
from dbgauge.collectors.postgres_tables import PgTablesFacts, TableStats
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec, Translate
from dbgauge.toolkit.metrics import MetricType, Sample

_L = ("datname", "schemaname", "relname")
_T, _IO = "pg_stat_user_tables_", "pg_statio_user_tables_"
_OURS = "dbgauge_postgres_table_"
_NAN = float("nan")

# (peer suffix, type, help as upstream words it, our column, our family)
_STAT: tuple[tuple[str, MetricType, str, str, str], ...] = (
    ("seq_scan", "counter", "Number of sequential scans initiated on this table", "seq_scan",
     "seq_scans_total"),
    ("seq_tup_read", "counter", "Number of live rows fetched by sequential scans",
     "seq_tup_read", "seq_tuples_read_total"),
    ("idx_scan", "counter", "Number of index scans initiated on this table", "idx_scan",
     "index_scans_total"),
    ("idx_tup_fetch", "counter", "Number of live rows fetched by index scans",
     "idx_tup_fetch", "index_tuples_fetched_total"),
    ("n_tup_ins", "counter", "Number of rows inserted", "n_tup_ins", "tuples_inserted_total"),
    ("n_tup_upd", "counter", "Number of rows updated", "n_tup_upd", "tuples_updated_total"),
    ("n_tup_del", "counter", "Number of rows deleted", "n_tup_del", "tuples_deleted_total"),
    ("n_tup_hot_upd", "counter", "Number of rows HOT updated (i.e., with no separate index "
     "update required)", "n_tup_hot_upd", "tuples_hot_updated_total"),
    ("n_live_tup", "gauge", "Estimated number of live rows", "n_live_tup", "live_tuples"),
    ("n_dead_tup", "gauge", "Estimated number of dead rows", "n_dead_tup", "dead_tuples"),
    ("n_mod_since_analyze", "gauge", "Estimated number of rows changed since last analyze",
     "n_mod_since_analyze", "modified_since_analyze_tuples"),
    ("vacuum_count", "counter", "Number of times this table has been manually vacuumed (not "
     "counting VACUUM FULL)", "vacuum_count", "vacuums_total"),
    ("autovacuum_count", "counter", "Number of times this table has been vacuumed by the "
     "autovacuum daemon", "autovacuum_count", "autovacuums_total"),
    ("analyze_count", "counter", "Number of times this table has been manually analyzed",
     "analyze_count", "analyzes_total"),
    ("autoanalyze_count", "counter", "Number of times this table has been analyzed by the "
     "autovacuum daemon", "autoanalyze_count", "autoanalyzes_total"),
    ("index_size_bytes", "gauge", "Total disk space used by this index, in bytes",
     "indexes_bytes", "indexes_size_bytes"),
    ("table_size_bytes", "gauge", "Total disk space used by this table, in bytes",
     "table_bytes", "data_size_bytes"),
    ("size_bytes", "gauge", "Total disk space used by this table, in bytes, including all "
     "indexes and TOAST data", "size_bytes", "size_bytes"),
)
# Points in time: Unix seconds, whole (Go's Time.Unix()), 0 for never.
_TIMES: tuple[tuple[str, str, str], ...] = (
    ("last_vacuum", "Last time at which this table was manually vacuumed (not counting "
     "VACUUM FULL)", "last_vacuum_age_seconds"),
    ("last_autovacuum", "Last time at which this table was vacuumed by the autovacuum "
     "daemon", "last_autovacuum_age_seconds"),
    ("last_analyze", "Last time at which this table was manually analyzed",
     "last_analyze_age_seconds"),
    ("last_autoanalyze", "Last time at which this table was analyzed by the autovacuum "
     "daemon", "last_autoanalyze_age_seconds"),
)
_WHERE = (("heap", "heap", "this table"),
          ("idx", "index", "all indexes on this table"),
          ("toast", "toast", "this table's TOAST table (if any)"),
          ("tidx", "toast_index", "this table's TOAST table indexes (if any)"))


_IX, _IXL = "pg_statio_user_indexes_", ("schemaname", "relname", "indexrelname")
# column -> (peer family, help as upstream words it)
_INDEX = {"idx_blks_read": (_IX + "idx_blks_read_total",
                            "Number of disk blocks read from this index"),
          "idx_blks_hit": (_IX + "idx_blks_hit_total", "Number of buffer hits in this index")}


def _io_help(event: str, where: str) -> str:
    return (f"Number of disk blocks read from {where}" if event == "read"
            else f"Number of buffer hits in {where}")


FAMILIES = PeerFamilies(
    *(PeerFamily(PeerSpec(_T + name, type_, help_, _L), _OURS + ours)
      for name, type_, help_, _, ours in _STAT),
    *(PeerFamily(PeerSpec(_T + name, "gauge", help_, _L), _OURS + ours,
                 "Unix seconds, as the peer; dbgauge's family is the age")
      for name, help_, ours in _TIMES),
    *(PeerFamily(PeerSpec(f"{_IO}{prefix}_{spelling}_{event}", "counter",
                          _io_help(event, where), _L),
                 f"{_OURS}{part}_blocks_{event}_total",
                 "" if spelling == "blocks" else "Debian 0.11's queries.yaml name: NaN "
                 "where PostgreSQL has NULL, as 0.11 writes it")
      for prefix, part, where in _WHERE for spelling in ("blocks", "blks")
      for event in ("read", "hit")),
    *(PeerFamily(PeerSpec(name, "counter", help_, _IXL),
                 f"dbgauge_postgres_index_blocks_{column.rsplit('_', 1)[1]}_total",
                 "the connected database's indexes, as the peer's; postgres_indexes' "
                 "`limit` (default 5000, the most read first) bounds them, the peer has none"
                 if column == "idx_blks_read" else "")
      for column, (name, help_) in _INDEX.items()),
)


def _table(labels: Mapping[str, str], t: TableStats) -> Iterator[Sample]:
    values = t.values
    for name, _, _, column, _ in _STAT:
        yield FAMILIES.sample(_T + name, values.get(column, 0.0), labels)
    for name, _, _ in _TIMES:
        yield FAMILIES.sample(_T + name, float(int(values.get(name, 0.0))), labels)
    for prefix, _, _ in _WHERE:
        for event in ("read", "hit"):
            value = values.get(f"{prefix}_blks_{event}")
            yield FAMILIES.sample(f"{_IO}{prefix}_blocks_{event}", value or 0.0, labels)
            yield FAMILIES.sample(f"{_IO}{prefix}_blks_{event}",
                                _NAN if value is None else value, labels)


def _tables(facts: PgTablesFacts) -> Iterator[Sample]:
    for outcome in facts.databases:
        if outcome.facts is None:
            continue
        for t in outcome.facts.tables:
            yield from _table({"datname": outcome.database, "schemaname": t.schema,
                               "relname": t.table}, t)


def _indexes(facts: PgIndexesFacts) -> Iterator[Sample]:
    """The connected database's indexes (the peer reads no other)."""
    for outcome in facts.databases:
        if outcome.facts is None or not outcome.facts.connected:
            continue
        for i in outcome.facts.indexes:
            labels = {"schemaname": "unknown" if i.schema is None else i.schema,
                      "relname": "unknown" if i.table is None else i.table,
                      "indexrelname": "unknown" if i.index is None else i.index}
            for column, (name, _) in _INDEX.items():
                yield FAMILIES.sample(name, i.values.get(column, 0.0), labels)


TRANSLATE: dict[str, Translate] = {"postgres_tables": _tables, "postgres_indexes": _indexes}
