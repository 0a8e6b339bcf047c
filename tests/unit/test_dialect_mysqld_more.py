"""The mysqld_exporter dialect's optional collectors (collectors/dialects/_mysqld_more.py) on
facts read from captured rows: MariaDB 10.11 (tests/fixtures/mariadb-10.11/, through
dbgauge's own statements) and MySQL 8's shapes where they differ (INNODB_METRICS' STATUS
column, SHOW BINARY LOGS' Encrypted column). Each sample is checked against the dialect's
declared family, as the scrape does; the peer's spellings follow its 0.14 scrapers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.dialects import _mysqld_more
from dbgauge.collectors.dialects.mysqld_exporter import DIALECT
from dbgauge.collectors.mysql_innodb import InnodbFacts, classify_innodb_metrics
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec
from dbgauge.toolkit.metrics import Sample
from tests.helpers.captured import FixtureConnection, tsv_rows

Peer = dict[tuple[str, frozenset[tuple[str, str]]], float]
MARIADB = ("mariadb", (10, 11, 19))


def _peer(collector: str, answers: dict[str, list[Any]],
          server: tuple[str, tuple[int, int, int]] = MARIADB,
          options: dict[str, object] | None = None) -> tuple[Peer, dict[str, str]]:
    """The dialect's samples of one collector's facts read from `answers`, each validated
    as the scrape validates it; and the type of each family."""
    conn = FixtureConnection(server[0], server[1], answers)
    facts = registry()[collector].configured(options or {}).read(conn)  # type: ignore[arg-type]
    return _validated(DIALECT.samples(collector, facts))


def _validated(samples: Iterable[Sample]) -> tuple[Peer, dict[str, str]]:
    out: Peer = {}
    types: dict[str, str] = {}
    for sample in samples:
        spec = DIALECT.validate_sample(sample)
        key = (sample.name, frozenset(sample.labels.items()))
        assert key not in out, f"duplicate {key}"
        out[key] = sample.value
        types[sample.name] = spec.type
    return out, types


def _get(peer: Peer, family: str, /, **labels: str) -> float | None:
    return peer.get((family, frozenset(labels.items())))


def test_every_translated_collector_exists_and_the_merge_keeps_the_families() -> None:
    reg = registry()
    assert all(name in reg for name in _mysqld_more.TRANSLATE)
    assert all(f.spec.name in {g.spec.name for g in DIALECT.families.all}
               for f in _mysqld_more.FAMILIES)


def test_a_pattern_with_a_suffix_types_the_families_it_names() -> None:
    families = PeerFamilies(PeerFamily(PeerSpec("p_*_total", "counter", "")),
                            PeerFamily(PeerSpec("p_*", "gauge", "")))
    assert families.spec("p_a_total").type == "counter"
    assert families.spec("p_a").type == "gauge"
    with pytest.raises(KeyError):
        families.spec("q_a")


def test_innodb_metrics_as_the_peer_names_and_types_them() -> None:
    captured = tsv_rows("mariadb-10.11/innodb_metrics.tsv")
    rows = [r for r in captured if r["enabled"] == "1"]
    # a buffer_page_io row as if module_buffer_page were on, and a negative counter (MySQL
    # bug 75966), which the peer types gauge: constructed from captured rows
    rows.append(next(r for r in captured if r["name"] == "buffer_page_read_index_leaf"))
    rows.append({**next(r for r in captured if r["name"] == "trx_rw_commits"), "count": "-1"})
    facts = InnodbFacts({}, tuple(classify_innodb_metrics(rows)))
    peer, types = _validated(_mysqld_more.innodb_metrics(facts))
    prefix = "mysql_info_schema_innodb_metrics_"
    assert _get(peer, prefix + "buffer_page_read_total", type="index_leaf") == 0
    assert _get(peer, prefix + "buffer_pool_pages", state="free") == 7694
    assert _get(peer, prefix + "buffer_pool_dirty_pages") == 277
    assert not any(k[0] == prefix + "buffer_pool_pages" and ("state", "total") in k[1]
                   for k in peer)
    assert types[prefix + "lock_lock_deadlocks"] == "gauge"  # TYPE value on MariaDB
    assert types[prefix + "buffer_buffer_pool_reads_total"] == "counter"  # status_counter
    assert types[prefix + "transaction_trx_rw_commits"] == "gauge"
    # MySQL names the on/off column STATUS, MariaDB ENABLED (as the peer's two queries)
    assert "STATUS = 'enabled'" in FixtureConnection("mysql", (8, 0, 36), {}).sql(
        "innodb_metrics")
    assert "ENABLED = 1" in FixtureConnection(*MARIADB, {}).sql("innodb_metrics")


def test_tables_with_views_and_the_peers_nulls() -> None:
    peer, types = _peer("mysql_tables", {
        "table_io_waits": tsv_rows("mariadb-10.11/table_io_waits.tsv"),
        "table_sizes": tsv_rows("mariadb-10.11/table_sizes.tsv"),
        "tables_hidden": [{"innodb_tables": 3, "visible_tables": 3}]})
    z = {"schema": "compat_more", "table": "z"}
    assert _get(peer, "mysql_info_schema_table_size", **z, component="data_length") == 20480
    assert _get(peer, "mysql_info_schema_table_version", **z, type="BASE TABLE",
                engine="InnoDB", row_format="Compressed",
                create_options="row_format=COMPRESSED key_block_size=4") == 10
    view = {"schema": "sys", "table": "host_summary"}
    assert _get(peer, "mysql_info_schema_table_rows", **view) == 0  # NULL, IFNULL'd
    assert _get(peer, "mysql_info_schema_table_version", **view, type="VIEW", engine="NONE",
                row_format="NONE", create_options="NONE") == 0
    assert _get(peer, "mysql_perf_schema_table_io_waits_total", schema="compat_more",
                name="t", operation="insert") == 500
    assert _get(peer, "mysql_perf_schema_table_io_waits_total", schema="sys",
                name="sys_config", operation="fetch") is not None  # the peer keeps sys
    assert types["mysql_info_schema_table_size"] == "gauge"


def test_processlist_keeps_the_servers_states_lowercased() -> None:
    peer, _ = _peer("mysql_processlist", {
        "process_probe": [{"page_sizes": 5}],  # the session holds PROCESS
        "processlist_summary": tsv_rows("mariadb-10.11/processlist_summary.tsv")})
    dump = {"command": "binlog_dump",
            "state": "master_has_sent_all_binlog_to_slave_waiting_for_more_updates"}
    assert _get(peer, "mysql_info_schema_processlist_threads", **dump) == 1
    sleeping = {"command": "query", "state": "user_sleep"}
    assert _get(peer, "mysql_info_schema_processlist_threads", **sleeping) == 2
    assert _get(peer, "mysql_info_schema_processlist_seconds", **sleeping) == 4  # summed
    assert _get(peer, "mysql_info_schema_processlist_processes_by_host",
                client_host="127.0.0.1") == 3
    assert _get(peer, "mysql_info_schema_processlist_processes_by_user",
                mysql_user="repl") == 1
    system = [{"user": "system user", "host": "", "command": "Slave_SQL", "state": "",
               "threads": "1", "longest": "5", "seconds": "5"}]
    peer, _ = _peer("mysql_processlist", {"process_probe": [{"page_sizes": 5}],
                                          "processlist_summary": system})
    assert _get(peer, "mysql_info_schema_processlist_processes_by_host",
                client_host="unknown") == 1
    assert _get(peer, "mysql_info_schema_processlist_threads", command="slave_sql",
                state="unknown") == 1


def test_statements_the_peers_filter_and_columns() -> None:
    rows = tsv_rows("mariadb-10.11/statement_digests.tsv")
    rows.append({**rows[-1], "schema_name": "app", "digest": "old", "last_seen_age": "90000"})
    peer, types = _peer("mysql_statements", {"performance_schema_enabled": [{"enabled": 1}],
                                             "statement_digests": rows})
    schemas = {dict(k[1])["schema"] for k in peer}
    assert schemas == {"compat_more"}  # NULL schema and a digest unseen for 25 h left out
    group_by = next(r for r in rows if (r["digest_text"] or "").startswith("SELECT `v`"))
    labels = {"schema": "compat_more", "digest": group_by["digest"],
              "digest_text": group_by["digest_text"]}
    prefix = "mysql_perf_schema_events_statements_"
    assert _get(peer, prefix + "total", **labels) == float(group_by["calls"])
    assert _get(peer, prefix + "seconds_total", **labels) == pytest.approx(
        float(group_by["timer_wait"]) * 1e-12)
    assert _get(peer, prefix + "tmp_tables_total", **labels) == float(group_by["tmp_tables"])
    assert _get(peer, prefix + "rows_affected_total", **labels) == 0
    assert set(types.values()) == {"counter"} and len(types) == 12


def test_binlog_file_number_as_the_peer_parses_it() -> None:
    mysql8 = [{"Log_name": "binlog.000041", "File_size": "180", "Encrypted": "No"},
              {"Log_name": "binlog.000042", "File_size": "4400", "Encrypted": "No"}]
    peer, _ = _peer("mysql_binlog", {"binlog_enabled": [{"log_bin": 1}], "binary_logs": mysql8},
                    ("mysql", (8, 4, 0)))
    assert {k[0]: v for k, v in peer.items()} == {
        "mysql_binlog_size_bytes": 4580, "mysql_binlog_files": 2, "mysql_binlog_file_number": 42}
    peer, _ = _peer("mysql_binlog", {"binlog_enabled": [{"log_bin": 1}],
                                     "binary_logs": tsv_rows("mariadb-10.11/show_binary_logs.tsv")})
    assert _get(peer, "mysql_binlog_file_number") == 1
    dotted = [{"Log_name": "db.example-bin.000003", "File_size": "10"}]
    peer, _ = _peer("mysql_binlog", {"binlog_enabled": [{"log_bin": 1}], "binary_logs": dotted})
    assert _get(peer, "mysql_binlog_file_number") == 0  # the peer reads "example-bin"
    off, _ = _peer("mysql_binlog", {"binlog_enabled": [{"log_bin": 0}]})
    assert off == {}


def test_performance_schema_summaries() -> None:
    waits = tsv_rows("mariadb-10.11/perf_schema_waits.tsv")
    peer, _ = _peer("mysql_perf_schema_waits", {"perf_schema_waits": waits})
    assert _get(peer, "mysql_perf_schema_events_waits_total",
                event_name=waits[0]["event_name"]) == float(waits[0]["count_star"])
    files = tsv_rows("mariadb-10.11/perf_schema_file_instances.tsv")
    files.append({**files[0], "file_name": "/var/lib/mysql/app/t.ibd"})
    peer, types = _peer("mysql_perf_schema_file_instances", {"perf_schema_file_instances": files})
    assert _get(peer, "mysql_perf_schema_file_instances_bytes", file_name="app/t.ibd",
                event_name=files[0]["event_name"], mode="write") == \
        float(files[0]["sum_number_of_bytes_write"])
    assert types["mysql_perf_schema_file_instances_bytes"] == "counter"
    index = tsv_rows("mariadb-10.11/perf_schema_index_io_waits.tsv")
    peer, _ = _peer("mysql_perf_schema_index_io_waits", {"perf_schema_index_io_waits": index})
    assert _get(peer, "mysql_perf_schema_index_io_waits_total", schema="compat_more", name="t",
                index="NONE", operation="insert") == 500
    assert _get(peer, "mysql_perf_schema_index_io_waits_total", schema="compat_more",
                name="t", index="PRIMARY", operation="insert") is None
    locks = tsv_rows("mariadb-10.11/perf_schema_table_lock_waits.tsv")
    peer, _ = _peer("mysql_perf_schema_table_lock_waits",
                    {"perf_schema_table_lock_waits": locks})
    m = next(r for r in locks if r["object_name"] == "m")
    assert _get(peer, "mysql_perf_schema_external_lock_waits_total", schema="compat_more",
                name="m", operation="write") == float(m["count_write_external"])
    assert _get(peer, "mysql_perf_schema_sql_lock_waits_total", schema="compat_more",
                name="m", operation="write_normal") == 1
    events = tsv_rows("mariadb-10.11/perf_schema_file_events.tsv")
    peer, _ = _peer("mysql_perf_schema_file_events", {"perf_schema_file_events": events})
    assert _get(peer, "mysql_perf_schema_file_events_bytes_total",
                event_name=events[0]["event_name"], mode="misc") is None


def test_auto_increment_and_compression() -> None:
    peer, _ = _peer("mysql_auto_increment", {
        "auto_increment_columns": tsv_rows("mariadb-10.11/auto_increment_columns.tsv"),
        "tables_hidden": [{"innodb_tables": 3, "visible_tables": 3}]})
    tiny = {"schema": "compat_more", "table": "tiny", "column": "id"}
    assert _get(peer, "mysql_info_schema_auto_increment_column", **tiny) == 4
    assert _get(peer, "mysql_info_schema_auto_increment_column_max", **tiny) == 127
    peer, _ = _peer("mysql_innodb_cmp", {"innodb_cmp": tsv_rows("mariadb-10.11/innodb_cmp.tsv")})
    assert _get(peer, "mysql_info_schema_innodb_cmp_compress_ops_total", page_size="4096") == 26
    mem = [{"page_size": "4096", "buffer_pool_instance": "0", "pages_used": "3",
            "pages_free": "1", "relocation_ops": "7", "relocation_time": "2500"}]
    peer, types = _peer("mysql_innodb_cmpmem", {"innodb_cmpmem": mem})
    labels = {"page_size": "4096", "buffer_pool": "0"}
    # the peer divides microseconds by 1000 and calls it seconds: kept, as dashboards see it
    assert _get(peer, "mysql_info_schema_innodb_cmpmem_relocation_time_seconds_total",
                **labels) == 2.5
    assert types["mysql_info_schema_innodb_cmpmem_pages_used_total"] == "counter"
