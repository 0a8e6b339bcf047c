"""mysql_statements on MySQL 8's digest table (captured) and constructed rows: the real
statement's columns, NULL columns, the overflow row, the top-N limit, performance_schema off."""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.collectors.mysql_statements import MySQLStatements, parse_digests
from tests.helpers import as_dict, value
from tests.helpers.captured import FixtureConnection, project, vertical_rows


def test_mysql_8_digest_row_through_the_real_statement() -> None:
    captured = vertical_rows("mysql-8.0/statements_summary_by_digest.txt")
    conn = FixtureConnection("mysql", (8, 0, 31), {})
    # the two computed columns, as the server would compute them from the captured row
    sql = conn.sql("statement_digests").replace(
        "LEFT(DIGEST_TEXT, 120) AS digest_text,", "DIGEST_TEXT AS digest_text,").replace(
        "TIMESTAMPDIFF(SECOND, LAST_SEEN, NOW()) AS last_seen_age,", "LAST_SEEN AS last_seen,")
    rows = project(sql, captured)
    conn.answers = {"performance_schema_enabled": [{"enabled": 1}], "statement_digests": rows}
    collector = MySQLStatements()
    samples = list(collector.collect(conn))  # type: ignore[arg-type]
    m = as_dict("mysql_statements", samples)
    labels = {"schema": "", "digest":
              "44e35cee979ba420eb49a8471f852bbe15b403c89742704817dfbaace0d99dbb"}
    assert value(m, "dbgauge_mysql_statements_calls_total", **labels) == 18
    assert value(m, "dbgauge_mysql_statements_seconds_total", **labels) == \
        pytest.approx(0.059547311)
    assert value(m, "dbgauge_mysql_statements_rows_sent_total", **labels) == 18
    assert value(m, "dbgauge_mysql_statements_rows_examined_total", **labels) == 18
    assert value(m, "dbgauge_mysql_statements_errors_total", **labels) == 0
    assert value(m, "dbgauge_mysql_statements_no_index_used_total", **labels) == 0
    for column in ("rows_affected", "warnings", "tmp_tables", "tmp_disk_tables", "sort_rows",
                   "sort_merge_passes"):
        assert value(m, f"dbgauge_mysql_statements_{column}_total", **labels) == 0
    assert value(m, "dbgauge_mysql_performance_schema_enabled") == 1
    assert value(m, "dbgauge_mysql_statements_truncated") == 0
    assert not any("version_comment" in v for s in samples for v in s.labels.values())


def test_digests_limit_null_columns_and_the_overflow_row() -> None:
    rows: list[dict[str, Any]] = [
        {"schema_name": "app", "digest": f"d{i}", "calls": i, "timer_wait": i * 10**12,
         "rows_examined": None, "rows_sent": 1, "errors": 0, "no_index_used": 0}
        for i in range(7)]
    rows.append({"schema_name": None, "digest": None, "calls": 3, "timer_wait": None,
                 "rows_examined": 1, "rows_sent": 1, "errors": 0, "no_index_used": 0})
    digests, truncated = parse_digests(rows, 5)
    assert [d.digest for d in digests] == ["d0", "d1", "d2", "d3", "d4"] and truncated
    overflow = parse_digests(rows[-1:], 5)[0][0]
    assert (overflow.schema, overflow.digest, overflow.schema_null) == ("", "other", True)
    assert "timer_wait" not in overflow.values
    assert "rows_examined" not in parse_digests(rows, 1)[0][0].values
    # the limit is bound as a parameter and honoured
    conn = FixtureConnection("mariadb", (10, 11, 19), {
        "performance_schema_enabled": [{"enabled": 1}], "statement_digests": rows})
    tuned = MySQLStatements().configured({"limit": 3})
    facts = tuned.read(conn)  # type: ignore[arg-type]
    assert len(facts.digests) == 3 and facts.truncated


def test_performance_schema_off_still_succeeds_and_says_so() -> None:
    conn = FixtureConnection("mysql", (8, 4, 0), {"performance_schema_enabled": [{"enabled": 0}]})
    samples = list(MySQLStatements().collect(conn))  # type: ignore[arg-type]
    assert [(s.name, s.value) for s in samples] == [
        ("dbgauge_mysql_performance_schema_enabled", 0.0)]
    assert conn.asked == ["performance_schema_enabled"]
