"""mysql_innodb on captured output: the InnoDB status parser (golden files for MySQL 8.0, 8.4,
Percona 8.0 and MariaDB 10.11), INNODB_METRICS typing, status mapping, and the MySQL-8 path
of the collector (statements chosen for MySQL, answered with MySQL 8 captures)."""

from __future__ import annotations

import pytest

from dbgauge.app import registry
from dbgauge.collectors.mysql_innodb import (
    InnodbFacts,
    InnodbStatus,
    MySQLInnodb,
    checkpoint_age_from_metrics,
    checkpoint_age_from_status,
    classify_innodb_metrics,
    parse_innodb_status,
    status_samples,
)
from dbgauge.collectors.mysql_status import parse_status_rows
from tests.helpers.captured import (
    FixtureConnection,
    body,
    project,
    tsv_rows,
    vertical_rows,
)

REGISTRY = registry()

GOLDEN = {
    "mysql-8.0/show_engine_innodb_status.txt": InnodbStatus(
        log_sequence_number=31603995, last_checkpoint=31603995, history_list_length=0),
    "mysql-8.0/show_engine_innodb_status_datadog.txt": InnodbStatus(
        log_sequence_number=32236865, last_checkpoint=32236865, history_list_length=0),
    "mysql-8.0/show_engine_innodb_status_percona.txt": InnodbStatus(
        log_sequence_number=31825026, last_checkpoint=31825026, reported_checkpoint_age=0,
        max_checkpoint_age=80576000, history_list_length=0),
    "mysql-8.4/show_engine_innodb_status.txt": InnodbStatus(
        log_sequence_number=19643450, last_checkpoint=19643450, history_list_length=19),
    "mariadb-10.11/show_engine_innodb_status.txt": InnodbStatus(
        log_sequence_number=173293, last_checkpoint=44404, history_list_length=504),
}


@pytest.mark.parametrize("fixture", sorted(GOLDEN))
def test_parse_innodb_status_golden(fixture: str) -> None:
    assert parse_innodb_status(body(fixture)) == GOLDEN[fixture]


def test_checkpoint_age_is_lsn_minus_last_checkpoint() -> None:
    maria = parse_innodb_status(body("mariadb-10.11/show_engine_innodb_status.txt"))
    # the header records Innodb_checkpoint_age 128889 at capture time: the parser agrees
    assert maria.checkpoint_age == 173293 - 44404 == 128889
    assert parse_innodb_status(body("mysql-8.4/show_engine_innodb_status.txt")).checkpoint_age == 0
    assert InnodbStatus(reported_checkpoint_age=7).checkpoint_age == 7
    assert InnodbStatus().checkpoint_age is None
    assert parse_innodb_status("").history_list_length is None
    windows = body("mariadb-10.11/show_engine_innodb_status.txt").replace("\n", "\r\n")
    assert parse_innodb_status(windows).checkpoint_age == 128889


def test_innodb_metrics_typed_by_type_column_and_comment() -> None:
    rows = tsv_rows("mariadb-10.11/innodb_metrics.tsv")
    typed = {m.name: m for m in classify_innodb_metrics(rows)}
    assert len(typed) == len(rows) == 195
    # TYPE value -> gauge, status_counter/counter -> counter
    assert not typed["buffer_pool_pages_free"].counter
    assert not typed["lock_deadlocks"].counter  # MariaDB types it 'value'
    assert typed["buffer_pool_reads"].counter
    assert typed["lock_rec_lock_requests"].counter
    assert typed["buffer_flush_batch_scanned"].counter  # set_owner
    # counter-typed rows that hold a current level, an average or a percentage
    for level in ("os_pending_reads", "lock_rec_locks", "lock_table_locks",
                  "buffer_flush_adaptive_avg_time", "buffer_flush_pct_for_lsn",
                  "buffer_flush_batch_scanned_per_call", "ddl_pending_alter_table",
                  "ddl_online_create_index", "innodb_activity_count", "ibuf_size"):
        assert not typed[level].counter, level
    negative = classify_innodb_metrics([{"name": "x", "subsystem": "s", "type": "counter",
                                         "count": "-3", "comment": "Number of x"}])
    assert negative[0].value == -3 and not negative[0].counter


def test_status_mapping_mysql_80() -> None:
    status = parse_status_rows(tsv_rows("mysql-8.0/show_global_status_innodb.tsv"))
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for s in status_samples(status)}
    assert samples[("dbgauge_mysql_innodb_buffer_pool_pages", (("state", "data"),))] == 1045
    assert samples[("dbgauge_mysql_innodb_buffer_pool_pages", (("state", "misc"),))] == 4
    assert samples[("dbgauge_mysql_innodb_buffer_pool_bytes", (("state", "free"),))] \
        == 7143 * 16384
    assert samples[("dbgauge_mysql_innodb_buffer_pool_read_requests_total", ())] == 16723
    assert samples[("dbgauge_mysql_innodb_buffer_pool_disk_reads_total", ())] == 878
    assert samples[("dbgauge_mysql_innodb_log_fsyncs_total", ())] == 69
    assert samples[("dbgauge_mysql_innodb_redo_log_capacity_bytes", ())] == 104857600
    assert ("dbgauge_mysql_innodb_row_operations_total", (("operation", "read"),)) in samples
    assert not any(name == "dbgauge_mysql_innodb_deadlocks_total" for name, _ in samples)
    pages = sum(v for (n, _), v in samples.items() if n == "dbgauge_mysql_innodb_buffer_pool_pages")
    assert pages == status["Innodb_buffer_pool_pages_total"]


def test_status_mapping_mariadb_1011() -> None:
    status = parse_status_rows(tsv_rows("mariadb-10.11/show_global_status_innodb.tsv"))
    names = {s.name for s in status_samples(status)}
    assert "dbgauge_mysql_innodb_deadlocks_total" in names
    assert "dbgauge_mysql_innodb_checkpoint_max_age_bytes" in names
    assert "dbgauge_mysql_innodb_row_operations_total" not in names  # MariaDB 10.6+ dropped them
    row_lock = next(s for s in status_samples(status)
                    if s.name == "dbgauge_mysql_innodb_row_lock_time_seconds_total")
    assert row_lock.value == status["Innodb_row_lock_time"] / 1000


def test_every_status_sample_is_declared() -> None:
    collector = REGISTRY["mysql_innodb"]
    for fixture in ("mysql-8.0/show_global_status_innodb.tsv",
                    "mariadb-10.11/show_global_status_innodb.tsv"):
        for sample in status_samples(parse_status_rows(tsv_rows(fixture))):
            collector.validate_sample(sample)


def test_collector_on_mysql_80_uses_mysql_statements_and_falls_back_to_the_parser() -> None:
    """A MySQL 8.0.29-like server: no Innodb_redo_log_*_lsn status (added in 8.0.30) and the
    log counters disabled (MySQL's default), so checkpoint age comes from the parser; the
    INNODB_METRICS statement must be MySQL's (STATUS column), answered from the 8.4 manual."""
    status_rows = [r for r in tsv_rows("mysql-8.0/show_global_status_innodb.tsv")
                   if not r["Variable_name"].startswith("Innodb_redo_log_")]
    metric_row = vertical_rows("mysql-8.4/innodb_metrics_row.txt")
    conn = FixtureConnection("mysql", (8, 0, 29), {})
    metrics_sql = conn.sql("innodb_metrics")
    assert "STATUS = 'enabled'" in metrics_sql and metric_row[0]["STATUS"] == "enabled"
    conn.answers = {
        "innodb_global_status": status_rows,
        "innodb_metrics": project(metrics_sql, metric_row),
        "engine_innodb_status": [{"Type": "InnoDB", "Name": "",
                                  "Status": body("mysql-8.4/show_engine_innodb_status.txt")}],
    }
    collector = REGISTRY["mysql_innodb"]
    samples = list(collector.collect(conn))  # type: ignore[arg-type]
    for sample in samples:
        collector.validate_sample(sample)
    values = {(s.name, tuple(sorted(s.labels.items()))): s.value for s in samples}
    assert conn.asked == ["innodb_global_status", "innodb_metrics", "engine_innodb_status"]
    assert values[("dbgauge_mysql_innodb_history_list_length", ())] == 19
    assert values[("dbgauge_mysql_innodb_checkpoint_age_bytes", ())] == 0
    assert values[("dbgauge_mysql_innodb_metrics_total",
                   (("metric", "dml_inserts"), ("subsystem", "dml")))] == 46273


def test_collector_skips_the_monitor_text_when_status_has_everything() -> None:
    """MariaDB reports history list length and checkpoint age as status variables: no
    SHOW ENGINE INNODB STATUS then (answers: the MariaDB 10.11 captures)."""
    status_rows = tsv_rows("mariadb-10.11/show_global_status_innodb.tsv")
    metric_rows = [r for r in tsv_rows("mariadb-10.11/innodb_metrics.tsv") if r["enabled"] == "1"]
    conn = FixtureConnection("mariadb", (10, 11, 19), {"innodb_global_status": status_rows,
                                                       "innodb_metrics": metric_rows})
    samples = list(REGISTRY["mysql_innodb"].collect(conn))  # type: ignore[arg-type]
    values = {s.name: s.value for s in samples if not s.labels}
    status = parse_status_rows(status_rows)
    assert conn.asked == ["innodb_global_status", "innodb_metrics"]
    assert values["dbgauge_mysql_innodb_checkpoint_age_bytes"] == status["Innodb_checkpoint_age"]
    assert status["Innodb_checkpoint_age"] == (status["Innodb_lsn_current"]
                                               - status["Innodb_lsn_last_checkpoint"])
    assert values["dbgauge_mysql_innodb_history_list_length"] \
        == status["Innodb_history_list_length"]
    assert values["dbgauge_mysql_innodb_deadlocks_total"] == status["Innodb_deadlocks"]
    enabled = {s.labels["metric"] for s in samples if s.name.startswith(
        "dbgauge_mysql_innodb_metrics_")}
    assert enabled == {r["name"] for r in metric_rows}


def test_checkpoint_age_sources() -> None:
    mysql = parse_status_rows(tsv_rows("mysql-8.0/show_global_status_innodb.tsv"))
    assert checkpoint_age_from_status(mysql) == 31758453 - 31758453
    older = {k: v for k, v in mysql.items() if not k.startswith("Innodb_redo_log_")}
    assert checkpoint_age_from_status(older) is None
    assert checkpoint_age_from_metrics({"log_lsn_checkpoint_age": 5.0}) == 5.0
    assert checkpoint_age_from_metrics({"log_lsn_current": 9.0,
                                        "log_lsn_last_checkpoint": 4.0}) == 5.0
    assert checkpoint_age_from_metrics({"log_lsn_current": 9.0}) is None


def test_read_keeps_the_monitor_only_when_it_was_needed() -> None:
    """read() returns the status values, the typed INNODB_METRICS rows and the monitor
    text's numbers only when it had to read them; samples() turns the facts into what
    collect() yields."""
    status_rows = tsv_rows("mariadb-10.11/show_global_status_innodb.tsv")
    conn = FixtureConnection("mariadb", (10, 11, 19), {"innodb_global_status": status_rows,
                                                       "innodb_metrics": []})
    collector = MySQLInnodb()
    facts = collector.read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["innodb_global_status", "innodb_metrics"]
    assert facts.monitor is None and facts.metrics == ()
    assert facts.history_list_length == facts.status["Innodb_history_list_length"]
    assert facts.checkpoint_age == facts.status["Innodb_checkpoint_age"]
    assert list(collector.samples(facts)) == list(collector.samples(facts))
    older = [r for r in tsv_rows("mysql-8.0/show_global_status_innodb.tsv")
             if not r["Variable_name"].startswith("Innodb_redo_log_")]
    conn = FixtureConnection("mysql", (8, 0, 29), {
        "innodb_global_status": older, "innodb_metrics": [],
        "engine_innodb_status": [
            {"Status": body("mysql-8.0/show_engine_innodb_status_percona.txt")}]})
    facts = collector.read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["innodb_global_status", "innodb_metrics", "engine_innodb_status"]
    assert facts.monitor is not None and facts.monitor.max_checkpoint_age == 80576000
    assert (facts.history_list_length, facts.checkpoint_age) == (0, 0)
    values = {s.name: s.value for s in collector.samples(facts) if not s.labels}
    assert values["dbgauge_mysql_innodb_checkpoint_max_age_bytes"] == 80576000
    # without the monitor and without the sources, nothing is made up
    assert InnodbFacts({}).history_list_length is None
    assert InnodbFacts({}).checkpoint_age is None
