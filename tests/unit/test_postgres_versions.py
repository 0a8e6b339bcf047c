"""The statements of postgres_checkpoints, postgres_statements, postgres_tables,
postgres_sequences and postgres_settings against each PostgreSQL version's views.

PostgreSQL 15 is the sandbox's (views.json captured there); 13, 14, 16 and 17 are written
from their documentation (`tests/fixtures/postgres-<v>/stat_views.json`, provenance in the
file). Every column a statement reads must exist in that version's view, and the
single-row statistics views are run through the statement by a small evaluator, so the
PostgreSQL 13 (no pg_stat_wal) and 17 (pg_stat_checkpointer) differences show in the
samples.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from dbgauge.collectors.postgres_checkpoints import PostgresCheckpoints, parse_checkpoints
from dbgauge.toolkit.sql import load_sql
from tests.helpers.captured import json_doc, json_rows

DOCUMENTED = (13, 14, 16, 17)
ALL = (13, 14, 15, 16, 17)
COLLECTOR = PostgresCheckpoints()


def documented(version: int) -> dict[str, Any]:
    doc = json_doc(f"postgres-{version}/stat_views.json")
    assert doc["source"].startswith(f"Written from the PostgreSQL {version} documentation")
    return doc


def columns(version: int) -> dict[str, list[str]]:
    """Every view's columns in `version`."""
    if version == 15:
        rows = json_rows("postgres-15/views.json", "PostgreSQL 15")
        return {r["view"]: r["columns"] for r in rows}
    doc = documented(version)
    return {**doc["columns"], **{view: list(row) for view, row in doc["views"].items()}}


def split_top_level(text: str) -> list[str]:
    """Comma-separated items, commas inside parentheses kept."""
    items, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += ch
    return [*items, current.strip()]


def select_list(sql: str) -> str:
    """The text between SELECT and the FROM outside any parentheses."""
    body = re.sub(r"^\s*SELECT\s+", "", sql)
    depth = 0
    for i, ch in enumerate(body):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and re.match(r"\sFROM\s", body[i:i + 6]):
            return body[:i]
    raise AssertionError(f"no top-level FROM in {sql}")


def aliases(sql: str) -> dict[str, str]:
    """alias -> view of the FROM/JOIN clauses ('{schema}.' dropped)."""
    return {m.group(2): m.group(1) for m in re.finditer(
        r"(?:\{schema\}\.)?(pg_\w+)\s+(?:AS\s+)?([a-z])\b", sql)}


def referenced(sql: str) -> set[tuple[str, str]]:
    """(view, column) pairs the statement reads through an alias."""
    views = aliases(sql)
    return {(views[a], c) for a, c in re.findall(r"\b([a-z])\.([a-z_]+)\b", sql) if a in views}


def evaluate(sql: str, views: dict[str, dict[str, Any]], settings: dict[str, str],
             now: dt.datetime) -> dict[str, Any]:
    """Run a single-row statistics statement (alias.column, the sum of two, EXTRACT(EPOCH
    FROM now() - alias.column), EXTRACT(EPOCH FROM alias.column), current_setting('x'),
    each maybe AS name) over one row per view."""
    by_alias = aliases(sql)
    out: dict[str, Any] = {}
    for item in split_top_level(select_list(sql)):
        expr, _, name = item.rpartition(" AS ") if " AS " in item else ("", "", item)
        expr = expr or item
        if m := re.fullmatch(r"([a-z])\.([a-z_]+)", expr.strip()):
            out[name.split(".")[-1]] = views[by_alias[m.group(1)]][m.group(2)]
        elif m := re.fullmatch(r"([a-z])\.([a-z_]+) \+ ([a-z])\.([a-z_]+)", expr.strip()):
            out[name] = (views[by_alias[m.group(1)]][m.group(2)]
                         + views[by_alias[m.group(3)]][m.group(4)])
        elif m := re.fullmatch(r"EXTRACT\(EPOCH FROM now\(\) - ([a-z])\.([a-z_]+)\)",
                               expr.strip()):
            when = views[by_alias[m.group(1)]][m.group(2)]
            out[name] = None if when is None else (
                now - dt.datetime.fromisoformat(when)).total_seconds()
        elif m := re.fullmatch(r"EXTRACT\(EPOCH FROM ([a-z])\.([a-z_]+)\)", expr.strip()):
            when = views[by_alias[m.group(1)]][m.group(2)]
            out[name] = None if when is None else dt.datetime.fromisoformat(when).timestamp()
        elif m := re.fullmatch(r"current_setting\('([a-z_]+)'\)", expr.strip()):
            out[name] = settings[m.group(1)]
        else:
            raise AssertionError(f"the evaluator does not know {item!r}")
    return out


def checkpoint_samples(version: int) -> dict[str, float]:
    doc = documented(version)
    row = evaluate(load_sql("postgres", "checkpoints", (version,)), doc["views"],
                   doc["settings"], dt.datetime.fromisoformat(doc["now"]))
    samples = list(COLLECTOR.samples(parse_checkpoints(row)))
    for s in samples:
        COLLECTOR.validate_sample(s)
    return {s.name: s.value for s in samples}


P = "dbgauge_postgres_"
WAL = {P + n for n in ("wal_records_total", "wal_fpi_total", "wal_bytes_total",
                       "wal_buffers_full_total")}
BACKEND = {P + "buffers_backend_total", P + "buffers_backend_fsync_total"}


def test_pg13_has_no_wal_statistics_and_never_archived() -> None:
    by = checkpoint_samples(13)
    assert not WAL & set(by)
    assert set(by) >= BACKEND
    assert by[P + "checkpoints_timed_total"] == 1520
    assert by[P + "checkpoint_write_seconds_total"] == pytest.approx(8123.456)
    assert by[P + "archiver_enabled"] == 0 and by[P + "archiver_archived_total"] == 0
    assert P + "archiver_last_archived_age_seconds" not in by
    assert P + "archiver_last_failed_age_seconds" not in by


@pytest.mark.parametrize("version", [14, 16])
def test_pg14_to_16_read_wal_and_bgwriter(version: int) -> None:
    by = checkpoint_samples(version)
    assert set(by) >= WAL and set(by) >= BACKEND
    assert by[P + "wal_bytes_total"] == 45678901234
    assert by[P + "checkpoint_buffers_written_total"] == 912345
    assert by[P + "archiver_last_archived_age_seconds"] == 30
    assert by[P + "archiver_last_failed_age_seconds"] == 7200
    assert by[P + "archiver_failed_total"] == 3
    assert by[P + "archiver_enabled"] == 1  # on (14) and always (16)


def test_pg17_reads_pg_stat_checkpointer_and_has_no_backend_writes() -> None:
    by = checkpoint_samples(17)
    assert not BACKEND & set(by)
    assert set(by) >= WAL
    # same checkpointer numbers as the other fixtures, from the renamed columns
    assert by[P + "checkpoints_timed_total"] == 1520
    assert by[P + "checkpoints_requested_total"] == 37
    assert by[P + "checkpoint_sync_seconds_total"] == pytest.approx(2.3455)
    assert by[P + "checkpoint_buffers_written_total"] == 912345
    assert by[P + "buffers_alloc_total"] == 1234567


def test_pg16_statement_would_fail_on_pg17() -> None:
    doc = documented(17)
    with pytest.raises(KeyError, match="checkpoints_timed"):
        evaluate(load_sql("postgres", "checkpoints", (16,)), doc["views"], doc["settings"],
                 dt.datetime.fromisoformat(doc["now"]))


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("statement", ["checkpoints", "statements", "tables", "sequences"])
def test_every_column_read_exists_in_that_version(version: int, statement: str) -> None:
    sql = load_sql("postgres", statement, (version,))
    have = columns(version)
    # catalogs joined for names (pg_database, pg_roles) are stable and not listed
    refs = {(v, c) for v, c in referenced(sql) if v in have}
    assert refs, sql
    missing = sorted((v, c) for v, c in refs if c not in have[v])
    assert not missing, f"PostgreSQL {version} has no {missing}"


@pytest.mark.parametrize("version", ALL)
def test_settings_statement_columns_exist(version: int) -> None:
    sql = load_sql("postgres", "settings", (version,))
    used = {"name", "setting", "vartype", "unit", "source"}
    assert all(re.search(rf"\b{c}\b", sql) for c in used)
    assert used <= set(columns(version)["pg_settings"])


def test_the_statements_collector_needs_total_exec_time() -> None:
    # PostgreSQL 12 called it total_time: the collector declares 13 as its minimum
    assert "total_exec_time" in columns(13)["pg_stat_statements"]
    assert "toplevel" not in columns(13)["pg_stat_statements"]  # hence the GROUP BY
    assert "toplevel" in columns(14)["pg_stat_statements"]
