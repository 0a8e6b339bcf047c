"""The mysqld_exporter dialect on captured rows: what its default scrapers (global_status,
global_variables, slave_status, info_schema.query_response_time) and the exporter itself
would export, from the facts dbgauge's collectors read. MySQL 8 runs nowhere here, so its
names are tested on captured MySQL 8.0.30 SHOW GLOBAL STATUS and SHOW REPLICA STATUS rows;
MariaDB's against the real mysqld_exporter in tests/integration/test_compat_mysqld.py.
Expected values follow mysqld_exporter's own tests (collector/*_test.go) where they exist."""

from __future__ import annotations

import math
from collections.abc import Iterable

import pytest

from dbgauge.collectors.dialects._mysqld_values import parse_status, valid_name
from dbgauge.collectors.dialects.mysqld_exporter import DIALECT
from dbgauge.collectors.mariadb_query_response_time import ResponseTimeFacts, parse_ranges
from dbgauge.collectors.mysql_global_status import GlobalStatusFacts
from dbgauge.collectors.mysql_global_variables import variable_facts
from dbgauge.collectors.mysql_replication import (
    ReplicationFacts,
    ReplicationFlags,
    parse_replica_status,
)
from dbgauge.collectors.mysql_status import split_status_rows
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.db.base import Row
from dbgauge.toolkit.dialect import ScrapeStats
from dbgauge.toolkit.exporter.scrape import SampleOut, TargetResult
from dbgauge.toolkit.metrics import Sample
from dbgauge.toolkit.render.prometheus import build_families, encode
from tests.helpers.captured import table_rows, tsv_rows, vertical_rows
from tests.helpers.exposition import reference

Series = dict[tuple[str, frozenset[tuple[str, str]]], float]
MARIADB = ServerInfo("mariadb", (10, 11, 19), "10.11.19-MariaDB-0+deb12u1-log")


def peer(collector: str, facts: object) -> tuple[Series, dict[str, str]]:
    """The dialect's samples of one collector's facts as {(name, labels): value}, each
    checked as the scrape checks it (declared family, declared labels, no series twice),
    and each family's type."""
    return _checked(DIALECT.samples(collector, facts))


def _checked(samples: Iterable[Sample]) -> tuple[Series, dict[str, str]]:
    series: Series = {}
    types: dict[str, str] = {}
    for sample in samples:
        spec = DIALECT.validate_sample(sample)
        key = (sample.name, frozenset(sample.labels.items()))
        assert key not in series, f"{key} twice"
        series[key] = sample.value
        types[spec.name] = spec.type
    return series, types


def one(series: Series, name: str, **labels: str) -> float | None:
    return series.get((name, frozenset(labels.items())))


def status(rows: list[Row]) -> tuple[Series, dict[str, str]]:
    return peer("mysql_global_status", GlobalStatusFacts(*split_status_rows(rows)))


# ------------------------------------------------------------------ parseStatus


@pytest.mark.parametrize(("text", "number"), [
    ("Yes", 1.0), ("ON", 1.0), ("No", 0.0), ("OFF", 0.0), ("DISABLED", 0.0),
    ("Connecting", 0.0), ("Primary", 1.0), ("non-Primary", 0.0), ("Disconnected", 0.0),
    ("10.000000", 10.0), ("16016", 16016.0), ("-1", -1.0), ("1e+06", 1e6),
    ("mariadb-bin.000003", None),  # the log-file regex matches, ParseFloat fails: nothing
    ("TLSv1.2,TLSv1.3", None), ("", None), (" 5", None), ("1_000", None), ("1e400", None),
    ("Aug 15 12:43:39 2032 GMT", 1976186619.0),  # Ssl_server_not_after
    ("Aug  5 12:43:39 2032 GMT", 1975322619.0),  # OpenSSL pads the day with a blank
    ("2022-08-18 12:51:46", 1660827106.0),  # Max_used_connections_time
    ("2022-02-30 12:51:46", None), ("Slave_Pos", None), ("0-1-2", None),
    ("6c06e583-686f-11e6-b9e3-8336ad58138c", None), ("3.16(r5c765eb)", None),
])
def test_values_are_read_as_mysqld_exporter_reads_them(text: str, number: float | None
                                                        ) -> None:
    assert parse_status(text) == number


def test_nan_and_names() -> None:
    got = parse_status("nan")
    assert got is not None and math.isnan(got)
    assert valid_name("validate_password.dictionary_file_words_count") == \
        "validate_password_dictionary_file_words_count"
    assert valid_name("Ssl-Session.Cache") == "ssl_session_cache"


# ------------------------------------------------------------------ global_status


def test_mariadb_global_status_reshaped_as_mysqld_exporter_does() -> None:
    rows = tsv_rows("mariadb-10.11/show_global_status.tsv")
    series, types = status(rows)
    raw = {r["Variable_name"]: r["Value"] for r in rows}
    coms = [n for n, v in raw.items() if n.startswith("Com_") and v is not None]
    assert {dict(ls)["command"] for n, ls in series if n.endswith("commands_total")} == \
        {n.lower().removeprefix("com_") for n in coms}
    assert one(series, "mysql_global_status_commands_total", command="select") == \
        float(raw["Com_select"])
    assert one(series, "mysql_global_status_handlers_total", handler="read_key") == \
        float(raw["Handler_read_key"])
    assert one(series, "mysql_global_status_connection_errors_total", error="max_connections") \
        == float(raw["Connection_errors_max_connections"])
    for state in ("data", "free", "misc", "old"):
        assert one(series, "mysql_global_status_buffer_pool_pages", state=state) == \
            float(raw[f"Innodb_buffer_pool_pages_{state}"])
    assert one(series, "mysql_global_status_buffer_pool_dirty_pages") == \
        float(raw["Innodb_buffer_pool_pages_dirty"])
    assert one(series, "mysql_global_status_buffer_pool_page_changes_total",
               operation="lru_flushed") == float(raw["Innodb_buffer_pool_pages_lru_flushed"])
    assert not any("total" in dict(ls).values() for _, ls in series)  # ..._pages_total
    assert not any(n == "mysql_global_status_innodb_buffer_pool_pages_total" for n, _ in series)
    assert one(series, "mysql_global_status_performance_schema_lost_total",
               instrumentation="digest_lost") == float(raw["Performance_schema_digest_lost"])
    # everything else: untyped, validPrometheusName, ON/OFF as 1/0, NULL and text dropped
    assert one(series, "mysql_global_status_uptime") == float(raw["Uptime"])
    assert one(series, "mysql_global_status_innodb_have_punch_hole") == 1.0
    assert one(series, "mysql_global_status_innodb_have_lz4") == 0.0
    assert not any("max_memory_used" in n or "rpl_status" in n for n, _ in series)
    assert types["mysql_global_status_uptime"] == "untyped"
    assert types["mysql_global_status_commands_total"] == "counter"
    assert types["mysql_global_status_buffer_pool_pages"] == "gauge"
    assert types["mysql_global_status_buffer_pool_dirty_pages"] == "gauge"
    assert "mysql_galera_status_info" not in types  # no Galera here


def test_mysql_8_global_status_names_and_text_values() -> None:
    series, types = status(tsv_rows("mysql-8.0/show_global_status.tsv"))
    assert one(series, "mysql_global_status_innodb_row_ops_total", operation="read") is not None
    assert types["mysql_global_status_innodb_row_ops_total"] == "counter"
    # OpenSSL dates and DATETIMEs become Unix seconds, as mysqld_exporter reads them
    assert one(series, "mysql_global_status_ssl_server_not_after") == 1976186619.0
    assert one(series, "mysql_global_status_mysqlx_ssl_server_not_before") == 1660826619.0
    assert one(series, "mysql_global_status_max_used_connections_time") == 1660827106.0
    # text values give nothing
    for name in ("current_tls_version", "tls_library_version", "ssl_session_cache_mode",
                 "mysqlx_address", "current_tls_ca"):
        assert not any(n == "mysql_global_status_" + name for n, _ in series), name
    assert one(series, "mysql_global_status_acl_cache_items_count") == 0.0


GALERA_STATUS = [  # mysqld_exporter's collector/global_status_test.go rows (a PXC node)
    {"Variable_name": "Com_alter_db", "Value": "1"},
    {"Variable_name": "Slave_running", "Value": "OFF"},
    {"Variable_name": "Ssl_version", "Value": ""},
    {"Variable_name": "Innodb_buffer_pool_pages_total", "Value": "11"},
    {"Variable_name": "validate_password.dictionary_file_words_count", "Value": "11"},
    {"Variable_name": "wsrep_cluster_status", "Value": "Primary"},
    {"Variable_name": "wsrep_local_state_uuid", "Value": "6c06e583-686f-11e6-b9e3-8336ad58138c"},
    {"Variable_name": "wsrep_cluster_state_uuid",
     "Value": "6c06e583-686f-11e6-b9e3-8336ad58138c"},
    {"Variable_name": "wsrep_provider_version", "Value": "3.16(r5c765eb)"},
    {"Variable_name": "wsrep_evs_repl_latency",
     "Value": "0.000227664/0.00034135/0.000544298/6.03708e-05/212"},
]


def test_galera_text_status_as_mysqld_exporter_exports_it() -> None:
    series, types = status(GALERA_STATUS)
    uuid = "6c06e583-686f-11e6-b9e3-8336ad58138c"
    assert series == {
        ("mysql_global_status_commands_total", frozenset({("command", "alter_db")})): 1.0,
        ("mysql_global_status_slave_running", frozenset()): 0.0,
        ("mysql_global_status_validate_password_dictionary_file_words_count",
         frozenset()): 11.0,
        ("mysql_global_status_wsrep_cluster_status", frozenset()): 1.0,
        ("mysql_galera_status_info", frozenset({
            ("wsrep_local_state_uuid", uuid), ("wsrep_cluster_state_uuid", uuid),
            ("wsrep_provider_version", "3.16(r5c765eb)")})): 1.0,
        ("mysql_galera_evs_repl_latency_min_seconds", frozenset()): 0.000227664,
        ("mysql_galera_evs_repl_latency_avg_seconds", frozenset()): 0.00034135,
        ("mysql_galera_evs_repl_latency_max_seconds", frozenset()): 0.000544298,
        ("mysql_galera_evs_repl_latency_stdev", frozenset()): 6.03708e-05,
        ("mysql_galera_evs_repl_latency_sample_size", frozenset()): 212.0,
    }
    assert types["mysql_global_status_wsrep_cluster_status"] == "untyped"
    assert types["mysql_galera_status_info"] == "gauge"
    non_primary, _ = status([{"Variable_name": "wsrep_cluster_status", "Value": "non-Primary"},
                             {"Variable_name": "wsrep_evs_repl_latency", "Value": "1/2/x/4/5"}])
    assert non_primary == {("mysql_global_status_wsrep_cluster_status", frozenset()): 0.0}


# ------------------------------------------------------------------ global_variables

PXC_OPTIONS = ("base_port = 4567; gcache.dir = /var/lib/mysql/; gcache.page_size = 128M; "
               "gcache.size = 128M; gcs.fc_limit = 16;")
VARIABLES = [  # mysqld_exporter's collector/global_variables_test.go rows (a PXC 5.6 node)
    ("wait_timeout", "28800"), ("version_compile_os", "Linux"), ("userstat", "OFF"),
    ("transaction_prealloc_size", "4096"), ("tx_isolation", "REPEATABLE-READ"),
    ("tmp_table_size", "16777216"), ("tmpdir", "/tmp"), ("sync_binlog", "0"),
    ("sync_frm", "ON"), ("slow_launch_time", "2"), ("innodb_version", "5.6.30-76.3"),
    ("version", "5.6.30-76.3-56"), ("version_comment", "Percona XtraDB Cluster..."),
    ("wsrep_cluster_name", "supercluster"), ("wsrep_provider_options", PXC_OPTIONS)]


def variables(rows: list[tuple[str, str | None]]) -> tuple[Series, dict[str, str]]:
    values, texts = split_status_rows({"Variable_name": n, "Value": v} for n, v in rows)
    return peer("mysql_global_variables", variable_facts(values, texts))


def test_global_variables_as_mysqld_exporter_exports_them() -> None:
    series, types = variables(VARIABLES)
    v = "mysql_global_variables_"
    assert series == {
        (v + "wait_timeout", frozenset()): 28800.0, (v + "userstat", frozenset()): 0.0,
        (v + "transaction_prealloc_size", frozenset()): 4096.0,
        (v + "tmp_table_size", frozenset()): 16777216.0, (v + "sync_binlog", frozenset()): 0.0,
        (v + "sync_frm", frozenset()): 1.0, (v + "slow_launch_time", frozenset()): 2.0,
        ("mysql_version_info", frozenset({("innodb_version", "5.6.30-76.3"),
                                          ("version", "5.6.30-76.3-56"),
                                          ("version_comment", "Percona XtraDB Cluster...")})
         ): 1.0,
        ("mysql_galera_variables_info", frozenset({("wsrep_cluster_name", "supercluster")})
         ): 1.0,
        ("mysql_galera_gcache_size_bytes", frozenset()): 128 * 2**20,
        ("mysql_transaction_isolation", frozenset({("level", "REPEATABLE-READ")})): 1.0,
    }
    assert set(types.values()) == {"gauge"}


def test_mysql_8_variables_version_and_isolation() -> None:
    series, _ = variables([
        ("version", "8.0.30"), ("version_comment", "MySQL Community Server - GPL"),
        ("innodb_version", "8.0.30"), ("transaction_isolation", "READ-COMMITTED"),
        ("long_query_time", "10.000000"), ("wsrep_provider_options", ""),
        ("gtid_executed", "61221e31-1ef3-11ed-a56a-0242ac120002:1-3"), ("max_connections", None)])
    assert series == {
        ("mysql_global_variables_long_query_time", frozenset()): 10.0,
        ("mysql_version_info", frozenset({("innodb_version", "8.0.30"), ("version", "8.0.30"),
                                          ("version_comment", "MySQL Community Server - GPL")})
         ): 1.0,
        ("mysql_transaction_isolation", frozenset({("level", "READ-COMMITTED")})): 1.0,
    }


@pytest.mark.parametrize(("options", "size"), [
    ("gcache.page_size = 128M; gcache.size = 2G; gcomm.thread_prio = ;", 2 * 2**30),
    ("gcache.page_size = 128M; gcache.size = 131072; gcomm.thread_prio = ;", 131072),
    ("base_port = 4567;", 0)])
def test_gcache_size_from_provider_options(options: str, size: int) -> None:
    series, _ = variables([("wsrep_provider_options", options)])
    assert one(series, "mysql_galera_gcache_size_bytes") == size


# ------------------------------------------------------------------ slave_status

LABELS = ("master_host", "master_uuid", "channel_name", "connection_name")


def slave(rows: list[Row], server: ServerInfo) -> tuple[Series, dict[str, str]]:
    facts = ReplicationFacts(tuple(parse_replica_status(r) for r in rows), ReplicationFlags(),
                             server)
    return peer("mysql_replication", facts)


def test_mariadb_slave_status_every_numeric_column() -> None:
    (row,) = vertical_rows("mariadb-10.11/show_all_slaves_status.txt")
    series, types = slave([row], MARIADB)
    labels = {"master_host": "127.0.0.1", "master_uuid": "", "channel_name": "",
              "connection_name": ""}
    s = "mysql_slave_status_"
    assert one(series, s + "slave_io_running", **labels) == 1.0
    assert one(series, s + "slave_sql_running", **labels) == 1.0
    assert one(series, s + "seconds_behind_master", **labels) == 0.0
    assert one(series, s + "master_port", **labels) == float(row["Master_Port"])
    assert one(series, s + "exec_master_log_pos", **labels) == float(row["Exec_Master_Log_Pos"])
    assert one(series, s + "master_ssl_allowed", **labels) == 0.0  # No
    for text in ("master_log_file", "relay_log_file", "slave_sql_state", "using_gtid",
                 "gtid_io_pos", "parallel_mode", "master_host"):
        assert not any(n == s + text and not dict(ls).get("domain_id") for n, ls in series), \
            text
    assert types[s + "slave_io_running"] == "untyped"
    # upstream's GTID positions, one per domain
    io_pos = row["Gtid_IO_Pos"]
    assert io_pos
    domain, server_id, seq = io_pos.split("-")
    assert one(series, s + "gtid_io_pos", **labels, domain_id=domain,
               server_id=server_id) == float(seq)
    assert types[s + "gtid_io_pos"] == "gauge"


def test_a_null_seconds_behind_drops_the_series_as_the_peer_does() -> None:
    (row,) = vertical_rows("mariadb-10.11/show_all_slaves_status_sql_stopped.txt")
    series, _ = slave([row], MARIADB)
    names = {n for n, _ in series}
    assert "mysql_slave_status_seconds_behind_master" not in names
    assert "mysql_slave_status_sql_remaining_delay" not in names
    sql = [v for (n, _), v in series.items() if n == "mysql_slave_status_slave_sql_running"]
    assert sql == [0.0]
    connecting = dict(row, Slave_IO_Running="Connecting")
    series, _ = slave([connecting], MARIADB)
    io = [v for (n, _), v in series.items() if n == "mysql_slave_status_slave_io_running"]
    assert io == [0.0]


def test_mysql_8022_replica_status_is_named_as_show_slave_status() -> None:
    """MySQL 8.0.30 answers dbgauge's SHOW REPLICA STATUS with Source/Replica columns;
    mysqld_exporter runs SHOW SLAVE STATUS there, whose columns keep the old names."""
    rows = table_rows("mysql-8.0/show_replica_status.txt")
    series, _ = slave(rows, ServerInfo("mysql", (8, 0, 30), "8.0.30"))
    s = "mysql_slave_status_"
    first = {"master_host": "mysql-master1", "channel_name": "master1", "connection_name": "",
             "master_uuid": "61221e31-1ef3-11ed-a56a-0242ac120002"}
    second = {"master_host": "mysql-master2", "channel_name": "master2", "connection_name": "",
              "master_uuid": "6151d979-1ef3-11ed-a509-0242ac120003"}
    assert one(series, s + "slave_io_running", **first) == 1.0
    assert one(series, s + "slave_sql_running", **second) == 1.0
    assert one(series, s + "seconds_behind_master", **first) == 0.0
    assert one(series, s + "read_master_log_pos", **first) == 975.0
    assert one(series, s + "exec_master_log_pos", **second) == 974.0
    assert one(series, s + "master_server_id", **second) == 2.0
    assert one(series, s + "get_master_public_key", **first) == 0.0
    assert one(series, s + "master_retry_count", **first) == 86400.0
    assert one(series, s + "auto_position", **first) == 1.0
    assert one(series, s + "replicate_ignore_server_ids", **first) is None  # empty
    assert not any("source" in n or "replica_" in n for n, _ in series)
    assert not any(n.startswith(s + "gtid") for n, _ in series)  # MariaDB only


def test_mysql_84_exports_the_replica_names_as_upstream_does() -> None:
    """MySQL 8.4 has no SHOW SLAVE STATUS: upstream reads SHOW REPLICA STATUS and names
    its columns as they are (the 8.0.30 rows stand in for 8.4's, same naming)."""
    rows = table_rows("mysql-8.0/show_replica_status.txt")
    series, _ = slave(rows, ServerInfo("mysql", (8, 4, 3), "8.4.3"))
    first = {"master_host": "mysql-master1", "channel_name": "master1", "connection_name": "",
             "master_uuid": "61221e31-1ef3-11ed-a56a-0242ac120002"}
    s = "mysql_slave_status_"
    assert one(series, s + "replica_io_running", **first) == 1.0
    assert one(series, s + "seconds_behind_source", **first) == 0.0
    assert one(series, s + "source_port", **first) == 3306.0
    assert not any(n == s + "slave_io_running" for n, _ in series)


def test_a_primary_has_no_slave_status() -> None:
    assert slave([], MARIADB) == ({}, {})


# ------------------------------------------------------------------ query_response_time


def test_query_response_time_is_a_histogram_as_mysqld_exporter_exports_it() -> None:
    rows = tsv_rows("mariadb-10.11/query_response_time.tsv")
    series, types = peer("mariadb_query_response_time", parse_ranges(rows))
    h = "mysql_info_schema_query_response_time_seconds"
    assert types == {h: "histogram"}
    counts = [float(r["count"]) for r in rows]
    les = [dict(ls)["le"] for n, ls in series if n == h + "_bucket"]
    assert les == ["1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1", "10", "100",
                   "1000", "10000", "100000", "1e+06", "+Inf"]
    assert one(series, h + "_bucket", le="1e-06") == counts[0]
    assert one(series, h + "_bucket", le="1e-05") == counts[0] + counts[1]
    assert one(series, h + "_bucket", le="+Inf") == sum(counts)  # TOO LONG counted here
    assert one(series, h + "_count") == sum(counts)
    total = sum(float(r["total"]) for r in rows if r["total"].strip() != "TOO LONG")
    assert one(series, h + "_sum") == pytest.approx(total)
    assert peer("mariadb_query_response_time", ResponseTimeFacts(False)) == ({}, {})


def test_a_peer_histogram_renders_as_one_family() -> None:
    rows = tsv_rows("mariadb-10.11/query_response_time.tsv")
    samples = [SampleOut(s.name, tuple(sorted(s.labels.items())), s.value,
                         DIALECT.validate_sample(s))
               for s in DIALECT.samples("mariadb_query_response_time", parse_ranges(rows))]
    result = TargetResult("db", "mysql", (("target", "db"),), True, 0.01, MARIADB,
                          peer_samples=tuple(samples), peer_up=(DIALECT.up,))
    text = encode([result])[0].decode()
    h = "mysql_info_schema_query_response_time_seconds"
    assert text.count(f"# TYPE {h} histogram") == 1
    assert f'{h}_bucket{{le="+Inf"}}' in text and f"{h}_count " in text
    # the same bytes as prometheus_client writes for that histogram, in both formats
    families = build_families([result])
    assert text.encode() == reference(families)[0]
    om = "application/openmetrics-text; version=1.0.0"
    assert encode([result], om)[0] == reference(families, accept=om)[0]


# ------------------------------------------------------------------ the exporter's own


def self_samples(stats: ScrapeStats) -> Iterable[Sample]:
    assert DIALECT.self_samples is not None
    return DIALECT.self_samples(stats)


def test_exporter_families_of_a_scrape() -> None:
    stats = ScrapeStats(0.05, True, 7, (
        ("mysql_global_status", True, 0.01), ("mysql_global_variables", True, 0.0),
        ("mysql_replication", False, 0.03), ("mysql_heartbeat", False, 0.001)),
        True, 0.002, {"mysql_replication": 2, "mysql_heartbeat": 5})
    series, types = _checked(self_samples(stats))
    d = "mysql_exporter_collector_duration_seconds"
    assert series == {
        (d, frozenset({("collector", "connection")})): 0.002,
        (d, frozenset({("collector", "collect.global_status")})): 0.01,
        (d, frozenset({("collector", "collect.global_variables")})): 0.0,
        (d, frozenset({("collector", "collect.slave_status")})): 0.03,
        ("mysql_exporter_scrapes_total", frozenset()): 7.0,
        ("mysql_exporter_last_scrape_error", frozenset()): 1.0,  # slave_status failed
        ("mysql_exporter_scrape_errors_total",
         frozenset({("collector", "collect.slave_status")})): 2.0,
    }
    assert types == {d: "gauge", "mysql_exporter_scrapes_total": "counter",
                     "mysql_exporter_last_scrape_error": "gauge",
                     "mysql_exporter_scrape_errors_total": "counter"}
    # a failed dbgauge-only collector (heartbeat) is no error of the peer's scrapers
    fine, _ = _checked(self_samples(ScrapeStats(0.02, True, 1, (
        ("mysql_global_status", True, 0.01), ("mysql_heartbeat", False, 0.001)))))
    assert one(fine, "mysql_exporter_last_scrape_error") == 0.0


def test_a_target_that_did_not_answer() -> None:
    down, _ = _checked(self_samples(ScrapeStats(0.1, True, 3, up=False)))
    assert down == {("mysql_exporter_scrapes_total", frozenset()): 3.0,
                    ("mysql_exporter_last_scrape_error", frozenset()): 1.0}


def test_every_family_is_declared_once_with_its_dbgauge_counterpart() -> None:
    names = [f.spec.name for f in DIALECT.families.all]
    assert len(names) == len(set(names))
    assert all(n.startswith("mysql_") for n in names)
    # the collectors behind the peer's default scrapers, each naming its scraper
    assert set(DIALECT.collectors) == {"mysql_global_status", "mysql_global_variables",
                                       "mysql_replication", "mariadb_query_response_time",
                                       "mysql_innodb_cmp", "mysql_innodb_cmpmem"}
    from dbgauge.app import registry
    from dbgauge.collectors.dialects.mysqld_exporter import SCRAPERS

    assert set(DIALECT.collectors) <= set(SCRAPERS)
    reg = registry()
    assert set(SCRAPERS) <= {c.name for c in reg.for_kind("mysql")}
    assert set(SCRAPERS) <= set(DIALECT.translate)
