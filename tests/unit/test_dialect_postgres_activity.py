"""postgres_activity and postgres_buffercache, and the postgres_exporter families made from
them (collectors/dialects/_postgres_activity.py), on rows captured from the sandbox's
PostgreSQL 15 by tests/fixtures/postgres-15/capture_activity.py (the statements
activity_transactions, activity_autovacuum, activity_idle and buffercache, each fixture
naming its statement and state), and on pg_buffercache_summary() rows of PostgreSQL 16
(its documented columns: buffers_used, buffers_unused, buffers_dirty, buffers_pinned int4,
usagecount_avg float8). The expected values are upstream's (collector/*.go at
prometheus-community/postgres_exporter dbb1987).
"""

from __future__ import annotations

import pytest

from dbgauge.collectors.postgres_activity import (
    PgActivityFacts,
    PostgresActivity,
    parse_activity,
)
from dbgauge.collectors.postgres_buffercache import (
    PgBuffercacheFacts,
    PostgresBuffercache,
    missing,
    parse_buffercache,
)
from dbgauge.toolkit.errors import Incomplete
from tests.helpers import as_dict
from tests.helpers.captured import json_rows
from tests.unit.test_dialect_postgres import names, translate

PG15 = "PostgreSQL 15"
BOUNDS = ("1", "2", "5", "15", "30", "60", "90", "120", "300")


def captured() -> PgActivityFacts:
    return parse_activity(json_rows("postgres-15/activity_transactions.json", PG15),
                          json_rows("postgres-15/activity_autovacuum.json", PG15),
                          json_rows("postgres-15/activity_idle.json", PG15))


def test_an_open_transaction_is_counted_with_its_age() -> None:
    peer = translate("postgres_activity", captured())
    assert peer[("pg_long_running_transactions", frozenset())] == 1
    assert peer[("pg_long_running_transactions_oldest_timestamp_seconds", frozenset())] \
        == pytest.approx(12.24617)
    ours = as_dict("postgres_activity", PostgresActivity().samples(captured()))
    assert ours[("dbgauge_postgres_open_transactions", frozenset())] == 1
    assert ours[("dbgauge_postgres_open_transactions_oldest_seconds", frozenset())] \
        == pytest.approx(12.24617)


def test_no_open_transaction_is_zero_for_the_peer_and_absent_for_dbgauge() -> None:
    facts = parse_activity([{"transactions": 0, "oldest_seconds": None, "hidden": 0,
                             "role": "dbgauge"}], [], [])
    peer = translate("postgres_activity", facts)
    assert peer == {("pg_long_running_transactions", frozenset()): 0,
                    ("pg_long_running_transactions_oldest_timestamp_seconds", frozenset()): 0}
    ours = as_dict("postgres_activity", PostgresActivity().samples(facts))
    assert ours == {("dbgauge_postgres_open_transactions", frozenset()): 0}


def test_an_autovacuum_worker_by_relname_and_start() -> None:
    peer = translate("postgres_activity", captured())
    relname = frozenset({("relname", "dbgauge_fixture_autovacuum")})
    assert peer[("pg_stat_activity_autovacuum_timestamp_seconds", relname)] \
        == pytest.approx(1795936776.736937)
    ours = as_dict("postgres_activity", PostgresActivity().samples(captured()))
    assert ours[("dbgauge_postgres_autovacuum_worker_seconds", frozenset({
        ("database", "app"), ("table", "public.dbgauge_fixture_autovacuum"),
        ("operation", "VACUUM ANALYZE")}))] == pytest.approx(2.645558)


def test_workers_on_one_relname_and_a_wraparound_one() -> None:
    """SPLIT_PART(query, '.', 2) keeps what follows the table; two workers with one
    relname would make the peer's scrape fail: the first is kept."""
    rows = [{"datname": d, "query": f"autovacuum: VACUUM {s}.t (to prevent wraparound)",
             "relname": "t (to prevent wraparound)", "started_seconds": start,
             "age_seconds": 5.0} for d, s, start in (("a", "public", 100.0),
                                                     ("b", "other", 200.0))]
    facts = parse_activity([{"transactions": 0}], rows, [])
    peer = translate("postgres_activity", facts)
    assert peer[("pg_stat_activity_autovacuum_timestamp_seconds",
                 frozenset({("relname", "t (to prevent wraparound)")}))] == 100.0
    ours = as_dict("postgres_activity", PostgresActivity().samples(facts))
    assert ours[("dbgauge_postgres_autovacuum_worker_seconds", frozenset({
        ("database", "b"), ("table", "other.t"), ("operation", "VACUUM")}))] == 5.0


def test_idle_sessions_make_a_histogram_per_state_and_application() -> None:
    """Captured: three sessions idle 12-13 s, in the 15 s bucket and above; the sum adds
    whole seconds (12.75 s is 13)."""
    peer = translate("postgres_activity", captured())
    for state, app, whole in (("idle", "", 12), ("idle", "fixture_idle", 13),
                              ("idle in transaction", "fixture_holder", 12)):
        labels = {("state", state), ("application_name", app)}
        for le in (*BOUNDS, "+Inf"):
            bucket = frozenset(labels | {("le", le)})
            assert peer[("pg_process_idle_seconds_bucket", bucket)] \
                == (0 if le in ("1", "2", "5") else 1), (state, le)
        assert peer[("pg_process_idle_seconds_sum", frozenset(labels))] == whole
        assert peer[("pg_process_idle_seconds_count", frozenset(labels))] == 1
    ours = as_dict("postgres_activity", PostgresActivity().samples(captured()))
    assert ours[("dbgauge_postgres_idle_session_seconds_count", frozenset({
        ("state", "idle"), ("application_name", "fixture_idle")}))] == 1


def test_idle_null_labels_are_unknown_and_a_null_state_change_counts_only() -> None:
    rows = [{"state": "idle", "application_name": None, "idle_seconds": 0.5,
             "idle_whole_seconds": 1},
            {"state": "idle", "application_name": None, "idle_seconds": None,
             "idle_whole_seconds": None}]
    peer = translate("postgres_activity", parse_activity([{"transactions": 0}], [], rows))
    labels = {("state", "idle"), ("application_name", "unknown")}
    assert peer[("pg_process_idle_seconds_bucket", frozenset(labels | {("le", "1")}))] == 1
    assert peer[("pg_process_idle_seconds_bucket", frozenset(labels | {("le", "+Inf")}))] == 2
    assert peer[("pg_process_idle_seconds_sum", frozenset(labels))] == 1
    assert peer[("pg_process_idle_seconds_count", frozenset(labels))] == 2


def test_sessions_the_role_cannot_see_fail_the_collector_naming_the_grant() -> None:
    facts = parse_activity([{"transactions": 0, "hidden": 3, "role": "mon"}], [], [])
    with pytest.raises(Incomplete, match=r"3 session.*pg_read_all_stats"):
        list(PostgresActivity().samples(facts))


def test_buffercache_from_the_view_before_16_is_dbgauge_s_only() -> None:
    facts = parse_buffercache(json_rows("postgres-15/buffercache-view.json", PG15)[0])
    assert not facts.summary
    assert translate("postgres_buffercache", facts) == {}
    ours = as_dict("postgres_buffercache", PostgresBuffercache().samples(facts))
    assert ours[("dbgauge_postgres_shared_buffers_used", frozenset())] == 2369
    assert ours[("dbgauge_postgres_shared_buffers_unused", frozenset())] == 1727
    assert ours[("dbgauge_postgres_shared_buffers_dirty", frozenset())] == 241
    assert ours[("dbgauge_postgres_shared_buffers_usage_count_average", frozenset())] \
        == pytest.approx(1.68932, abs=1e-5)


def test_buffercache_summary_on_16_as_the_peer_reads_it() -> None:
    facts = parse_buffercache({"buffers_used": 120, "buffers_unused": 16264,
                               "buffers_dirty": 3, "buffers_pinned": 0,
                               "usagecount_avg": None, "summary": True})
    peer = translate("postgres_buffercache", facts)
    assert peer == {(f"pg_buffercache_summary_{n}", frozenset()): v for n, v in (
        ("buffers_used", 120), ("buffers_unused", 16264), ("buffers_dirty", 3),
        ("buffers_pinned", 0), ("usagecount_avg", 0))}
    ours = as_dict("postgres_buffercache", PostgresBuffercache().samples(facts))
    assert "dbgauge_postgres_shared_buffers_usage_count_average" not in names(ours)
    assert isinstance(facts, PgBuffercacheFacts)


def test_the_missing_extension_message_says_what_to_run() -> None:
    assert missing("app", "dbgauge") == (
        "pg_buffercache is not installed in database app: as a superuser connected to it, "
        "run CREATE EXTENSION pg_buffercache; GRANT pg_monitor TO dbgauge")
