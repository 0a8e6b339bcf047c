"""mysql_global_status and mysql_global_variables on captured output: the SHOW GLOBAL STATUS
typing table and name sanitising (MariaDB 10.11's full list, MySQL 8.0's InnoDB rows), the
families declared for alert rules, text values kept in the facts, and every numeric
variable exported less the `exclude` option's names and patterns."""

from __future__ import annotations

import re

import pytest

from dbgauge.collectors.mysql_global_status import (
    LINTED_PARTS,
    MySQLGlobalStatus,
    is_counter,
    sanitize,
    status_samples,
    status_spec,
)
from dbgauge.collectors.mysql_global_variables import DESCRIBED, MySQLGlobalVariables
from dbgauge.collectors.mysql_status import parse_status_rows, split_status_rows
from tests.helpers import as_dict
from tests.helpers.captured import FixtureConnection, tsv_rows

VALID_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def test_every_numeric_mariadb_status_variable_is_one_typed_lint_clean_family() -> None:
    rows = tsv_rows("mariadb-10.11/show_global_status.tsv")
    assert len(rows) > 500
    values = parse_status_rows(rows)
    numeric = {r["Variable_name"] for r in rows
               if r["Value"] not in (None, "") and (r["Value"] in ("ON", "OFF")
                                                    or re.fullmatch(r"-?[0-9.]+", r["Value"]))}
    assert set(values) == numeric
    collector = MySQLGlobalStatus()
    samples = list(status_samples(values))
    assert len(samples) == len(values)  # no two variables collide after sanitising
    for sample in samples:
        spec = collector.validate_sample(sample)
        assert VALID_NAME.match(sample.name) and sample.name == sample.name.lower()
        assert spec.type in ("counter", "gauge")
        assert spec.name.endswith("_total") == (spec.type == "counter")
        stem = spec.name.removesuffix("_total") if spec.type == "counter" else spec.name
        assert not set(stem.split("_")) & LINTED_PARTS, spec.name
        if spec.type == "gauge":
            assert not spec.name.endswith(("_count", "_sum", "_bucket")), spec.name
    got = as_dict("mysql_global_status", samples)
    p = "dbgauge_mysql_global_status_"
    for counter in ("com_select", "handler_read_key", "bytes_sent", "innodb_log_waits",
                    "slow_queries", "questions", "aborted_connects", "created_tmp_disk_tables",
                    "select_full_join", "sort_merge_passes", "table_locks_waited",
                    "innodb_row_lock_waits", "innodb_buffer_pool_reads"):
        assert (p + counter + "_total", frozenset()) in got, counter
    for gauge in ("threads_connected", "uptime", "open_tables", "innodb_buffer_pool_pages_free",
                  "innodb_buffer_pool_pages_total_value", "max_used_connections"):
        assert (p + gauge, frozenset()) in got, gauge
    assert got[(p + "innodb_have_punch_hole", frozenset())] == 1.0  # ON
    assert got[(p + "innodb_have_lz4", frozenset())] == 0.0  # OFF
    assert not any("max_memory_used" in name for name, _ in got)  # NULL
    assert not any("rpl_status" in name for name, _ in got)  # text (AUTH_MASTER)
    raw = {r["Variable_name"]: r["Value"] for r in rows}
    assert got[(p + "uptime", frozenset())] == float(raw["Uptime"])


def test_required_alert_rule_names_are_declared_and_emitted_without_run_time_spec() -> None:
    collector = MySQLGlobalStatus()
    declared = {spec.name: spec.type for spec in collector.metrics}
    assert declared["dbgauge_mysql_global_status_innodb_log_waits_total"] == "counter"
    assert declared["dbgauge_mysql_global_status_slow_queries_total"] == "counter"
    assert declared["dbgauge_mysql_global_status_threads_connected"] == "gauge"
    assert declared["dbgauge_mysql_global_status_uptime"] == "gauge"
    samples = {s.name: s for s in status_samples({"Uptime": 5.0, "Com_select": 3.0})}
    assert samples["dbgauge_mysql_global_status_uptime"].spec is None
    assert samples["dbgauge_mysql_global_status_com_select_total"].spec is not None


def test_mysql_8_innodb_rows_are_typed() -> None:
    values = parse_status_rows(tsv_rows("mysql-8.0/show_global_status_innodb.tsv"))
    for name in ("Innodb_rows_read", "Innodb_rows_inserted", "Innodb_os_log_fsyncs",
                 "Innodb_data_written", "Innodb_pages_read"):
        assert name in values and is_counter(name), name
    for name in ("Innodb_buffer_pool_pages_dirty", "Innodb_row_lock_current_waits",
                 "Innodb_page_size"):
        assert name in values and not is_counter(name), name


@pytest.mark.parametrize(("variable", "name"), [
    ("Threads_connected", "threads_connected"),
    ("Ssl-Session.Cache", "ssl_session_cache"),
    ("wsrep", "wsrep"),
    ("Foo__bar_", "foo_bar"),
    ("Replica_ms_lag", "replica_msx_lag"),
    ("Binlog_gauge", "binlog_gaugex"),
    ("Expire_logs_days", "expire_logs_daysx"),
    ("Wait_milliseconds", "wait_millisecondsx"),
    ("Résumé", "r_sum"),
])
def test_sanitize(variable: str, name: str) -> None:
    assert sanitize(variable) == name


def test_status_spec_types_and_reserved_suffixes() -> None:
    assert status_spec("Com_select").name.endswith("com_select_total")
    assert status_spec("Performance_schema_digest_lost").type == "counter"
    assert status_spec("Acl_cache_items_count").name.endswith("acl_cache_items_count_value")
    unknown = status_spec("Some_new_variable")
    assert (unknown.type, unknown.name) == (
        "gauge", "dbgauge_mysql_global_status_some_new_variable")
    # text values and NaN are not numbers
    assert parse_status_rows([{"Variable_name": "a", "Value": "nan"},
                            {"Variable_name": "b", "Value": b"12"},
                            {"Variable_name": "c", "Value": None}]) == {"b": 12.0}


VARIABLE_ROWS = [
    {"Variable_name": "max_connections", "Value": "151"},
    {"Variable_name": "innodb_buffer_pool_size", "Value": "134217728"},
    {"Variable_name": "long_query_time", "Value": "10.000000"},
    {"Variable_name": "read_only", "Value": "OFF"},
    {"Variable_name": "version_comment", "Value": "Debian 12"},
    {"Variable_name": "max_prepared_stmt_count", "Value": "16382"},
    {"Variable_name": "table_open_cache", "Value": None},
    {"Variable_name": "auto_increment_increment", "Value": "1"},
    {"Variable_name": "wsrep_slave_threads", "Value": "1"},
    {"Variable_name": "wsrep_on", "Value": "OFF"},
    {"Variable_name": "expire_logs_days", "Value": "0.000000"}]


def _variables(exclude: object = None) -> dict[str, float]:
    conn = FixtureConnection("mariadb", (10, 11, 19), {"global_variables": VARIABLE_ROWS})
    collector = MySQLGlobalVariables()
    if exclude is not None:
        collector = collector.configured({"exclude": exclude})
    samples = list(collector.collect(conn))  # type: ignore[arg-type]
    for s in samples:
        collector.validate_sample(s)
    return {s.name: s.value for s in samples}


def test_global_variables_export_every_numeric_variable() -> None:
    p = "dbgauge_mysql_global_variables_"
    assert _variables() == {
        p + "max_connections": 151.0, p + "innodb_buffer_pool_size": 134217728.0,
        p + "long_query_time": 10.0, p + "read_only": 0.0,
        p + "max_prepared_stmt_count_value": 16382.0, p + "auto_increment_increment": 1.0,
        p + "wsrep_slave_threads": 1.0, p + "wsrep_on": 0.0,
        p + "expire_logs_daysx": 0.0}
    assert "max_connections" in DESCRIBED  # a described variable keeps its HELP
    conn = FixtureConnection("mariadb", (10, 11, 19), {"global_variables": VARIABLE_ROWS})
    facts = MySQLGlobalVariables().read(conn)  # type: ignore[arg-type]
    assert facts.text["version_comment"] == "Debian 12"  # text is kept for the dialects
    assert facts.text["read_only"] == "OFF"


@pytest.mark.parametrize("exclude", [["wsrep_*", "AUTO_increment_increment"],
                                     "wsrep_*, auto_increment_increment", ("wsrep_[os]*",
                                                                           "auto*")])
def test_global_variables_exclude_names_and_patterns(exclude: object) -> None:
    got = _variables(exclude)
    assert not any("wsrep" in name or "auto_increment" in name for name in got)
    assert "dbgauge_mysql_global_variables_max_connections" in got


@pytest.mark.parametrize("bad", [3, [1], {"a": 1}, ["a,b"]])
def test_global_variables_exclude_must_be_names(bad: object) -> None:
    with pytest.raises(ValueError, match=r"mysql_global_variables\.exclude"):
        MySQLGlobalVariables().configured({"exclude": bad})


def test_status_text_values_are_kept_beside_the_numbers() -> None:
    values, texts = split_status_rows([
        {"Variable_name": "wsrep_cluster_status", "Value": "Primary"},
        {"Variable_name": "wsrep_local_state_uuid",
         "Value": "6c06e583-686f-11e6-b9e3-8336ad58138c"},
        {"Variable_name": "Slave_running", "Value": "OFF"},
        {"Variable_name": "Uptime", "Value": b"10"},
        {"Variable_name": "Max_memory_used", "Value": None}])
    assert values == {"Slave_running": 0.0, "Uptime": 10.0}
    assert texts == {"wsrep_cluster_status": "Primary", "Slave_running": "OFF",
                     "wsrep_local_state_uuid": "6c06e583-686f-11e6-b9e3-8336ad58138c"}


def test_exclude_in_the_config_reaches_the_collector() -> None:
    from dbgauge.app import parse_config, registry
    from dbgauge.toolkit.errors import ConfigError

    config = parse_config(
        "targets: [{name: a, kind: mysql, dsn: 'mysql://u@h/',"
        " collector_options: {mysql_global_variables: {exclude: ['wsrep_*', 'Auto*']}}}]")
    (target,) = config.all_targets()
    (collector,) = [c for c in registry().for_target(target)
                    if c.name == "mysql_global_variables"]
    assert collector.setting("exclude") == "wsrep_*,auto*"
    with pytest.raises(ConfigError, match="exclude"):
        parse_config("targets: [{name: a, kind: mysql, dsn: 'mysql://u@h/',"
                     " collector_options: {mysql_global_variables: {exclude: 5}}}]")
