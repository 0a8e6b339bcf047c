"""The postgres_exporter dialect's translations, on rows captured from the sandbox's
PostgreSQL 15 (tests/fixtures/postgres-15/compat-*.json) and on rows of the majors the
sandbox does not run, written from their documentation (13, 16, 17, 18; each row has the
columns of that version's statement in sql/postgres/, which the tests check). The live
comparison with the peer is tests/integration/test_compat_postgres.py.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.dialects import _postgres_server as server_part
from dbgauge.collectors.dialects.postgres_exporter import DIALECT, self_samples, server_label
from dbgauge.collectors.postgres_checkpoints import parse_checkpoints
from dbgauge.collectors.postgres_database import (
    PgDatabaseFacts,
    parse_activity,
    parse_stat_database,
)
from dbgauge.collectors.postgres_locks import LockSummary, PgLockFacts, parse_counts
from dbgauge.collectors.postgres_replication import (
    PgReplicationFacts,
    parse_local,
    parse_slots,
    parse_standbys,
)
from dbgauge.collectors.postgres_settings import PgSettingsFacts, parse_settings
from dbgauge.collectors.postgres_vacuum_progress import parse_progress
from dbgauge.toolkit.dialect import ScrapeStats
from dbgauge.toolkit.sql import load_sql
from tests.helpers.captured import json_rows
from tests.unit.test_postgres_versions import documented, evaluate, select_list, split_top_level

PG15 = "PostgreSQL 15"
SERVER = {"server": "db1:5432"}
Series = dict[tuple[str, frozenset[tuple[str, str]]], float]


def translate(collector: str, facts: object) -> Series:
    """The dialect's samples of one collector's facts, each checked as the scrape checks
    it (declared family, declared labels), by (name, labels)."""
    out: Series = {}
    for sample in DIALECT.samples(collector, facts):
        labels, _spec = DIALECT.resolve(sample, SERVER)  # checked as the scrape checks it
        key = (sample.name, frozenset(labels.items()))
        assert key not in out, f"duplicate series {key}"
        out[key] = sample.value
    return out


def names(series: Series) -> set[str]:
    return {name for name, _ in series}


def value(series: Series, name: str, **labels: str) -> float:
    """The series with `labels`, and the server label where its family has one."""
    with_server = (name, frozenset({**SERVER, **labels}.items()))
    return series[with_server] if with_server in series \
        else series[(name, frozenset(labels.items()))]


def columns_of(statement: str, version: int) -> list[str]:
    """The output column names of a statement for a version."""
    out = []
    for item in split_top_level(select_list(load_sql("postgres", statement, (version,)))):
        alias = item.rpartition(" AS ")[2] if " AS " in item else item.split(".")[-1]
        out.append(alias.strip())
    return out


def stat_database_row(version: int, **values: Any) -> dict[str, Any]:
    """A pg_stat_database row of `version` for database `app` (written from that version's
    documentation of pg_stat_database and pg_stat_database_conflicts), with the columns
    sql/postgres/stat_database@<version>.sql selects, zero unless given."""
    row: dict[str, Any] = dict.fromkeys(columns_of("stat_database", version), 0)
    row.update(datid=16384, datname="app", has_conflicts=True, stats_reset=None,
               checksum_failures=None, checksum_last_failure=None)
    row.update(values)
    return row


def test_pg13_has_no_session_statistics_and_checksums_are_untyped() -> None:
    row = stat_database_row(13, xact_commit=42, blk_read_time=1500.5,
                            checksum_failures=2, checksum_last_failure=1.7e9 + 0.75)
    assert "session_time" not in row and "confl_active_logicalslot" not in row
    series = translate("postgres_database", PgDatabaseFacts(
        parse_stat_database([row]), parse_activity([])[1]))
    db = {"datid": "16384", "datname": "app"}
    assert value(series, "pg_stat_database_xact_commit", **db) == 42
    assert value(series, "pg_stat_database_blk_read_time", **db) == 1500.5  # milliseconds
    assert value(series, "pg_stat_database_checksum_failures", **db) == 2
    assert value(series, "pg_stat_database_checksum_last_failure", **db) == 1.7e9  # whole s
    assert math.isnan(value(series, "pg_stat_database_stats_reset", **db))  # NULL is NaN
    assert not names(series) & {"pg_stat_database_session_time",
                                "pg_stat_database_active_time_seconds_total"}
    assert {n for n in names(series) if n.startswith("pg_stat_database_conflicts_")} == {
        f"pg_stat_database_conflicts_confl_{c}"
        for c in ("tablespace", "lock", "snapshot", "bufferpin", "deadlock")}
    specs = {n: DIALECT.families.spec(n).type for n in names(series)}
    assert specs["pg_stat_database_checksum_failures"] == "untyped"  # not in 0.11's map
    assert specs["pg_stat_database_xact_commit"] == "counter"


@pytest.mark.parametrize("version", [14, 16, 18])
def test_session_statistics_from_14_and_the_later_columns(version: int) -> None:
    row = stat_database_row(version, active_time=2500.0, sessions=7, confl_lock=3)
    series = translate("postgres_database", PgDatabaseFacts(
        parse_stat_database([row]), parse_activity([])[1]))
    db = {"datid": "16384", "datname": "app"}
    assert value(series, "pg_stat_database_active_time", **db) == 2500  # 0.11: milliseconds
    assert value(series, "pg_stat_database_active_time_seconds_total",
                 **db) == 2.5  # upstream: seconds, no server label
    assert value(series, "pg_stat_database_sessions", **db) == 7
    assert value(series, "pg_stat_database_conflicts_confl_lock", **db) == 3
    assert ("pg_stat_database_conflicts_confl_active_logicalslot" in names(series)) \
        == (version >= 16)
    assert ("pg_stat_database_parallel_workers_launched" in names(series)) == (version >= 18)


def test_the_shared_row_and_activity_from_the_sandbox() -> None:
    facts = PgDatabaseFacts(
        parse_stat_database(json_rows("postgres-15/compat-stat_database-primary.json", PG15)),
        *reversed(parse_activity(json_rows("postgres-15/compat-activity-primary.json", PG15))))
    series = translate("postgres_database", facts)
    shared = {"datid": "0", "datname": ""}
    assert value(series, "pg_stat_database_numbackends", **shared) == 0
    # the shared-objects row has no conflicts row, and upstream's family skips it
    assert ("pg_stat_database_conflicts_confl_lock", frozenset({**SERVER, **shared}.items())) \
        not in series
    assert ("pg_stat_database_active_time_seconds_total", frozenset(shared.items())) \
        not in series
    states = ("active", "idle", "idle in transaction", "idle in transaction (aborted)",
              "fastpath function call", "disabled")
    for db in ("app", "drift", "postgres", "template0", "template1"):
        for state in states:  # every database and state, 0 where none
            assert ("pg_stat_activity_count",
                    frozenset({**SERVER, "datname": db, "state": state}.items())) in series
    assert value(series, "pg_stat_activity_count", datname="app", state="active") == 1
    # the logical walsender of the drift subscription is a backend of its database
    assert value(series, "pg_stat_activity_count", datname="drift", state="active") == 1
    assert value(series, "pg_stat_activity_max_tx_duration", datname="drift",
                 state="active") == 0  # NULL (no transaction) is 0, as COALESCE makes it


def test_locks_every_database_and_the_peers_nine_modes_lowercased() -> None:
    rows = json_rows("postgres-15/compat-lock_counts-primary.json", PG15)
    facts = PgLockFacts(LockSummary(), (), parse_counts(
        [*rows, {"datname": "app", "mode": "AccessExclusiveLock", "locks": 2},
         {"datname": "app", "mode": "SomeFutureLock", "locks": 1}]))
    series = translate("postgres_locks", facts)
    assert len(series) == 5 * 9  # five databases, nine modes; the unknown mode is not one
    assert value(series, "pg_locks_count", datname="app", mode="accessexclusivelock") == 2
    assert value(series, "pg_locks_count", datname="app", mode="accesssharelock") == 1
    assert value(series, "pg_locks_count", datname="postgres", mode="sireadlock") == 0
    ours = {(s.labels["database"], s.labels["mode"]): s.value
            for s in registry()["postgres_locks"].samples(facts)
            if s.name == "dbgauge_postgres_locks"}
    assert ours[("app", "other")] == 1 and ours[("app", "AccessExclusiveLock")] == 2


def settings_rows() -> list[dict[str, Any]]:
    return json_rows("postgres-15/compat-settings-primary.json", PG15)


@pytest.mark.parametrize(("name", "setting", "vartype", "unit", "family", "expected"), [
    ("shared_buffers", "16384", "integer", "8kB", "pg_settings_shared_buffers_bytes",
     16384 * 8192),
    ("work_mem", "4096", "integer", "kB", "pg_settings_work_mem_bytes", 4 * 1024 ** 2),
    ("max_wal_size", "1024", "integer", "MB", "pg_settings_max_wal_size_bytes", 1024 ** 3),
    ("checkpoint_timeout", "300", "integer", "s", "pg_settings_checkpoint_timeout_seconds",
     300),
    ("autovacuum_naptime", "1", "integer", "min", "pg_settings_autovacuum_naptime_seconds",
     60),
    ("deadlock_timeout", "1000", "integer", "ms", "pg_settings_deadlock_timeout_seconds", 1),
    ("log_min_duration_statement", "-1", "integer", "ms",
     "pg_settings_log_min_duration_statement_seconds", -1),  # -1 is kept
    ("fsync", "on", "bool", None, "pg_settings_fsync", 1),
    ("data_checksums", "off", "bool", None, "pg_settings_data_checksums", 0),
    ("pg_stat_statements.max", "5000", "integer", None, "pg_settings_pg_stat_statements_max",
     5000),
    ("random_page_cost", "1.1", "real", None, "pg_settings_random_page_cost", 1.1),
])
def test_settings_as_the_peer_converts_them(name: str, setting: str, vartype: str,
                                            unit: str | None, family: str,
                                            expected: float) -> None:
    facts = PgSettingsFacts(parse_settings([{"name": name, "setting": setting,
                                             "vartype": vartype, "unit": unit}]))
    assert translate("postgres_settings", facts) == {
        (family, frozenset(SERVER.items())): pytest.approx(expected)}


def test_every_captured_setting_becomes_one_family() -> None:
    facts = PgSettingsFacts(parse_settings(settings_rows()))
    series = translate("postgres_settings", facts)
    assert len(series) == len(settings_rows()) > 240
    assert value(series, "pg_settings_port") > 0
    # the capture's session set no timeout of its own: the server's shows (0, none)
    assert value(series, "pg_settings_statement_timeout_seconds") == 0


def checkpoint_series(version: int) -> Series:
    doc = documented(version)
    row = evaluate(load_sql("postgres", "checkpoints", (version,)), doc["views"],
                   doc["settings"], dt.datetime.fromisoformat(doc["now"]))
    return translate("postgres_checkpoints", parse_checkpoints(row))


def test_pg13_bgwriter_in_both_spellings_and_no_checkpointer() -> None:
    series = checkpoint_series(13)
    for column in ("checkpoints_timed", "checkpoint_write_time", "buffers_backend",
                   "buffers_alloc"):
        assert value(series, f"pg_stat_bgwriter_{column}_total") \
            == value(series, f"pg_stat_bgwriter_{column}")
    assert value(series, "pg_stat_bgwriter_checkpoints_timed_total") == 1520
    assert value(series, "pg_stat_bgwriter_checkpoint_write_time_total") \
        == pytest.approx(8123456)  # milliseconds, as the peer
    assert value(series, "pg_stat_bgwriter_stats_reset_total") == dt.datetime(
        2026, 1, 1, tzinfo=dt.UTC).timestamp()
    assert math.isnan(value(series, "pg_stat_archiver_last_archive_age"))  # never archived
    assert not any(n.startswith("pg_stat_checkpointer_") for n in names(series))


def test_pg17_checkpointer_and_a_smaller_bgwriter() -> None:
    series = checkpoint_series(17)
    assert value(series, "pg_stat_checkpointer_num_timed_total") == 1520
    assert value(series, "pg_stat_checkpointer_num_requested_total") == 37
    assert value(series, "pg_stat_checkpointer_buffers_written_total") == 912345
    assert "pg_stat_checkpointer_restartpoints_done_total" in names(series)
    assert {n for n in names(series) if n.startswith("pg_stat_bgwriter_")} == {
        f"pg_stat_bgwriter_{c}{t}" for c in ("buffers_clean", "maxwritten_clean",
                                             "buffers_alloc", "stats_reset")
        for t in ("", "_total")}
    assert value(series, "pg_stat_archiver_last_archive_age") == 30


def test_pg17_standby_checkpointer_as_the_view_has_it() -> None:
    """postgres_exporter's pg_stat_checkpointer families are the view's columns: num_* do
    not count restartpoints (dbgauge's checkpoint counts do, as before 17)."""
    row = json_rows("postgres-17/checkpoints-standby.json", "PostgreSQL 17.")[0]
    series = translate("postgres_checkpoints", parse_checkpoints(row))
    assert value(series, "pg_stat_checkpointer_num_requested_total") == row["num_requested"] == 1
    assert value(series, "pg_stat_checkpointer_num_timed_total") == row["num_timed"]
    assert value(series, "pg_stat_checkpointer_restartpoints_req_total") == 3
    assert value(series, "pg_stat_checkpointer_restartpoints_done_total") == 2


def replication_facts(local: str) -> PgReplicationFacts:
    return PgReplicationFacts(
        parse_local(json_rows(f"postgres-15/compat-replication_local-{local}.json", PG15)[0]),
        parse_standbys(json_rows("postgres-15/compat-replication_standbys-primary.json",
                                 PG15)) if local == "primary" else (),
        parse_slots(json_rows("postgres-15/compat-replication_slots-primary.json", PG15))
        if local == "primary" else ())


def test_replication_on_the_primary() -> None:
    facts = replication_facts("primary")
    series = translate("postgres_replication", facts)
    assert value(series, "pg_replication_is_replica") == 0
    assert value(series, "pg_replication_lag_seconds") == value(series, "pg_replication_lag") \
        == value(series, "pg_replication_last_replay_seconds") == 0
    standby = facts.standbys[0]
    labels = {"application_name": standby.application_name, "client_addr": "127.0.0.1",
              "state": "streaming", "slot_name": standby.pid}  # 0.11 puts the pid there
    assert value(series, "pg_stat_replication_pg_current_wal_lsn_bytes", **labels) > 0
    assert value(series, "pg_stat_replication_reply_time", **labels) % 1 == 0
    slots = {dict(labels)["slot_name"]: dict(labels)["database"] for name, labels in series
             if name == "pg_replication_slots_active"}
    assert slots == {"pg_standby": "", "drift_sub": "drift"}
    assert ("pg_replication_slots_wal_status", frozenset(
        {"slot_name": "pg_standby", "slot_type": "physical", "wal_status": "reserved"}.items(),
    )) in series
    physical = {"slot_name": "pg_standby", "slot_type": "physical"}
    logical = {"slot_name": "drift_sub", "slot_type": "logical"}
    assert value(series, "pg_replication_slots_slot_current_wal_lsn", **physical) \
        == value(series, "pg_replication_slots_slot_current_wal_lsn", **logical) > 0
    assert value(series, "pg_replication_slots_slot_confirmed_flush_lsn", **physical) == 0
    assert value(series, "pg_replication_slots_slot_confirmed_flush_lsn", **logical) > 0


def test_replication_on_a_caught_up_standby_reports_no_lag() -> None:
    series = translate("postgres_replication", replication_facts("standby"))
    assert value(series, "pg_replication_is_replica") == 1
    assert value(series, "pg_replication_lag_seconds") == 0
    assert value(series, "pg_replication_last_replay_seconds") >= 0
    assert not any(n.startswith("pg_stat_replication_") for n in names(series))


def test_a_cascading_standby_has_no_wal_position() -> None:
    row = {**json_rows("postgres-15/compat-replication_standbys-primary.json", PG15)[0],
           "current_lsn_bytes": None, "replay_diff_bytes": None, "client_addr": ""}
    local = parse_local(json_rows("postgres-15/compat-replication_local-standby.json",
                                  PG15)[0])
    series = translate("postgres_replication",
                       PgReplicationFacts(local, parse_standbys([row])))
    assert [labels for name, labels in series if name == "pg_stat_replication_reply_time"]
    assert not names(series) & {"pg_stat_replication_pg_current_wal_lsn_bytes",
                                "pg_stat_replication_pg_wal_lsn_diff"}


@pytest.mark.parametrize(("server_version", "short"), [
    ("15.20", "15.20.0"), ("13.4 (Ubuntu 13.4-1.pgdg20.04+1)", "13.4.0"),
    ("16beta1", "16.0.0"), ("18.0", "18.0.0"), ("17", "17.0.0")])
def test_short_version_is_the_peers_semver(server_version: str, short: str) -> None:
    assert server_part.short_version(server_version) == short


@pytest.mark.parametrize(("dsn", "server"), [
    ("postgresql://u@db1:6432/app", "db1:6432"),
    ("postgresql://u@db1/app", "db1:5432"),
    ("host=10.0.0.5 port=5433 dbname=app user=u", "10.0.0.5:5433"),
    ("postgresql:///app?host=/var/run/postgresql", "/var/run/postgresql:5432"),
])
def test_the_server_label_is_the_dsns_host_and_port(dsn: str, server: str) -> None:
    from dbgauge.app import parse_config

    target = parse_config(f"targets: [{{name: a, kind: postgres, dsn: '{dsn}'}}]"
                          ).all_targets()[0]
    assert server_label(target) == {"server": server}


def test_self_metrics_after_a_failed_collector() -> None:
    stats = ScrapeStats(0.25, True, 7, (("postgres_checkpoints", False, 0.1),
                                       ("postgres_server", True, 0.05),
                                       ("postgres_sequences", True, 0.01)))
    by = {(s.name, tuple(sorted(s.labels.items()))): s.value for s in self_samples(stats)}
    for s in self_samples(stats):
        DIALECT.validate_sample(s)
    assert by[("pg_exporter_last_scrape_error", ())] == 1
    assert by[("pg_exporter_scrapes_total", ())] == 7
    assert by[("pg_scrape_collector_success", (("collector", "bgwriter"),))] == 0
    assert by[("pg_scrape_collector_success", (("collector", "database"),))] == 1
    # a collector the peer has no counterpart of gives no series
    assert {dict(k[1]).get("collector") for k in by} >= {"stat_archiver", "postmaster"}


def test_families_of_other_majors_are_declared() -> None:
    for name in ("pg_stat_checkpointer_num_timed_total",
                 "pg_stat_database_conflicts_confl_active_logicalslot",
                 "pg_stat_database_parallel_workers_launched", "pg_stat_bgwriter_buffers_alloc"):
        assert DIALECT.families.spec(name).name == name


def test_the_dialect_runs_the_collectors_it_translates() -> None:
    """All it translates but the opt-in ones, which stay opt-in as in the peer."""
    reg = registry()
    opt_in = {c for c in DIALECT.translate if not reg[c].default_enabled}
    assert opt_in == {"postgres_activity", "postgres_buffercache", "postgres_wal_receiver",
                      "postgres_indexes"}
    assert set(DIALECT.collectors) == set(DIALECT.translate) - opt_in
    assert all(c in reg for c in DIALECT.collectors)


def test_no_label_value_or_name_outside_prometheus_rules() -> None:
    facts = PgSettingsFacts(parse_settings(settings_rows()))
    for name in names(translate("postgres_settings", facts)):
        assert re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", name), name


def test_a_running_vacuum_on_15_captured() -> None:
    facts = parse_progress(json_rows("postgres-15/compat-vacuum_progress-running.json", PG15))
    series = translate("postgres_vacuum_progress", facts)
    table = {"datname": "app", "relname": "dbgauge_test_vacuum"}
    assert value(series, "pg_stat_progress_vacuum_phase", **table, phase="scanning heap") == 1
    assert sum(v for (n, _), v in series.items() if n == "pg_stat_progress_vacuum_phase") == 1
    assert value(series, "pg_stat_progress_vacuum_heap_blks", **table) == 1031
    assert value(series, "pg_stat_progress_vacuum_max_dead_tuples", **table) == 291
    assert value(series, "pg_stat_progress_vacuum_num_dead_tuples", **table) == 49
    ours = {s.name: s.value for s in registry()["postgres_vacuum_progress"].samples(facts)
            if s.labels.get("phase") in (None, "scanning heap")}
    assert ours["dbgauge_postgres_vacuums_running"] == 1
    assert ours["dbgauge_postgres_vacuum_phase"] == 1
    assert ours["dbgauge_postgres_vacuum_heap_blocks_scanned"] == 4


def test_a_running_vacuum_on_17_reports_bytes_where_upstream_reads_them() -> None:
    # written from the PostgreSQL 17 documentation of pg_stat_progress_vacuum, with the
    # columns of sql/postgres/vacuum_progress@17.sql; a vacuum of a table of another
    # database (named by its oid), vacuuming indexes
    row = dict.fromkeys(columns_of("vacuum_progress", 17), 0)
    row.update(datname="other", relname="16500", phase="vacuuming indexes",
               heap_blks_total=5000, max_dead_tuple_bytes=67108864, dead_tuple_bytes=1048576,
               dead_tuples=30000)
    assert "max_dead_tuples" not in row
    facts = parse_progress([row])
    series = translate("postgres_vacuum_progress", facts)
    table = {"datname": "other", "relname": "16500"}
    assert value(series, "pg_stat_progress_vacuum_phase", **table,
                 phase="vacuuming indexes") == 1
    assert value(series, "pg_stat_progress_vacuum_max_dead_tuples", **table) == 67108864
    assert value(series, "pg_stat_progress_vacuum_num_dead_tuples", **table) == 1048576
    ours = {s.name for s in registry()["postgres_vacuum_progress"].samples(facts)}
    assert "dbgauge_postgres_vacuum_max_dead_tuples" not in ours
    assert "dbgauge_postgres_vacuum_dead_tuple_bytes" in ours


def test_no_vacuum_no_series_but_the_count() -> None:
    facts = parse_progress([])
    assert translate("postgres_vacuum_progress", facts) == {}
    assert [(s.name, s.value) for s in registry()["postgres_vacuum_progress"].samples(facts)] \
        == [("dbgauge_postgres_vacuums_running", 0.0)]
