"""postgres_queries and mysql_queries against the real sandbox, and against the real
postgres_exporter 0.11.1 (Debian's prometheus-postgres-exporter) reading the same file.

The queries read a table the test creates with fixed values, so both exporters see the
same rows whenever they scrape; dbgauge scrapes as the monitoring user `dbgauge`, and so
does postgres_exporter.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

import pytest

from dbgauge.app import load_config
from dbgauge.toolkit.db import connect
from dbgauge.toolkit.errors import QueryError
from tests.helpers import Metrics, free_port, wait_for
from tests.helpers.daemon import Daemon, config_file, scraper, target_entry
from tests.helpers.servers import Sandbox, execute, pg_admin

pytestmark = pytest.mark.integration

EXPORTER = "/usr/bin/prometheus-postgres-exporter"

QUERIES = """\
# postgres_exporter's queries.yaml format (--extend.query-path)
pg_cq_items:
  query: "SELECT name, kind, hits, level, junk, flag, NULL::int AS empty FROM dbgauge_test_cq"
  master: true
  metrics:
    - name:
        usage: "LABEL"
        description: "Item name"
    - kind:
        usage: "LABEL"
        description: "Item kind"
    - hits:
        usage: "COUNTER"
        description: "Hits so far"
    - level:
        usage: "GAUGE"
        description: "Current level"
    - junk:
        usage: "DISCARD"
        description: "Not exported"
    - flag:
        usage: "GAUGE"
        description: "A boolean, as 1 or 0"
    - empty:
        usage: "GAUGE"
        description: "Always NULL"
pg_cq_totals:
  query: >-
    SELECT count(*)::int AS items, sum(hits) AS hits_total, max(level) AS top
    FROM dbgauge_test_cq
  cache_seconds: 3600
  metrics:
    - items:
        usage: "GAUGE"
        description: "Rows in the table"
    - hits_total:
        usage: "COUNTER"
        description: "Hits of all items"
pg_cq_values:
  query: >-
    SELECT 1234567.5::float8 AS big, 0.25::float8 AS small,
    '2024-01-02 03:04:05+00'::timestamptz AS at, '1m30.5s'::text AS took,
    250 AS waited, 42 AS answer
  runonserver: ">=10.0.0"
  metrics:
    - big:
        usage: "LABEL"
        description: "A float label"
    - small:
        usage: "LABEL"
        description: "Another float label"
    - at:
        usage: "GAUGE"
        description: "A timestamp, as Unix seconds"
    - took:
        usage: "DURATION"
        description: "A Go duration, in milliseconds"
    - waited:
        usage: "DURATION"
        description: "A number of milliseconds"
    - answer:
        usage: "GAUGE"
        description: "Just a number"
pg_cq_hist:
  query: >-
    SELECT kind,
    ARRAY[1, 10, 100]::float8[] AS hits,
    ARRAY[count(*) FILTER (WHERE hits <= 1), count(*) FILTER (WHERE hits <= 10),
          count(*) FILTER (WHERE hits <= 100)] AS hits_bucket,
    sum(hits)::float8 AS hits_sum, count(*) AS hits_count,
    ARRAY[0.5, 2.5, 1000000, 'Infinity']::float8[] AS levels,
    ARRAY[count(*) FILTER (WHERE level <= 0.5), count(*) FILTER (WHERE level <= 2.5),
          count(*) FILTER (WHERE level <= 1000000), count(*)] AS levels_bucket,
    NULL::float8 AS levels_sum, count(*) + 10 AS levels_count
    FROM dbgauge_test_cq GROUP BY kind
  metrics:
    - kind:
        usage: "LABEL"
        description: "Item kind"
    - hits:
        usage: "HISTOGRAM"
        description: "Hits per item, as a histogram"
    - levels:
        usage: "HISTOGRAM"
        description: "Levels: a +Inf bound of their own (not levels_count), a NULL sum"
pg_cq_broken:
  query: "SELECT no_such_column FROM dbgauge_test_cq"
  metrics:
    - no_such_column:
        usage: "GAUGE"
        description: "Never there"
"""


@pytest.fixture
def pg_table(sandbox: Sandbox) -> Iterator[None]:
    with pg_admin(sandbox, "pg-primary") as admin:
        admin.execute("DROP TABLE IF EXISTS dbgauge_test_cq")
        admin.execute("CREATE TABLE dbgauge_test_cq (name text, kind text, hits bigint, "
                      "level float8, junk int, flag boolean)")
        admin.execute("INSERT INTO dbgauge_test_cq VALUES ('a', 'x', 10, 1.5, 7, true), "
                      "('b', 'x', 20, 2.25, 8, false), ('c', 'y', 5, -3, 9, true)")
        admin.execute("GRANT SELECT ON dbgauge_test_cq TO dbgauge")
    try:
        yield
    finally:
        with pg_admin(sandbox, "pg-primary") as admin:
            admin.execute("DROP TABLE IF EXISTS dbgauge_test_cq")


_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def _exposition(text: str) -> Metrics:
    """Sample lines as written (prometheus_client's parser adds _total to counters)."""
    out: Metrics = {}
    for line in text.splitlines():
        m = _SAMPLE.fullmatch(line)
        if m:
            labels = frozenset(_LABEL.findall(m.group(2) or ""))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


def _types(text: str) -> dict[str, str]:
    return dict(line.split()[2:4] for line in text.splitlines()  # type: ignore[misc]
                if line.startswith("# TYPE "))


def _custom(metrics: Metrics, drop: frozenset[str] = frozenset()) -> Metrics:
    """The pg_cq_ samples, without the labels only one side sets."""
    return {(name, frozenset((k, v) for k, v in labels if k not in drop)): value
            for (name, labels), value in metrics.items() if name.startswith("pg_cq_")}


def _exporter_body(sandbox: Sandbox, queries: Path) -> str:
    """One scrape of postgres_exporter 0.11.1 reading `queries`, as `dbgauge`."""
    port = free_port()
    dsn = (f"postgresql://dbgauge:{quote(sandbox.state.dbgauge_password, safe='')}"
           f"@127.0.0.1:{sandbox.state.port('pg-primary')}/app?sslmode=disable")
    env = {**os.environ, "DATA_SOURCE_NAME": dsn}
    proc = subprocess.Popen([EXPORTER, f"--web.listen-address=127.0.0.1:{port}",
                             f"--extend.query-path={queries}"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def scraped() -> str | None:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                            timeout=10) as resp:
                    body = resp.read().decode()
            except OSError:
                return None
            return body if "pg_cq_items_hits" in body else None

        return wait_for(scraped, timeout=30, what="postgres_exporter's custom metrics")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_same_families_as_postgres_exporter(sandbox: Sandbox, pg_table: None,
                                            tmp_path: Path) -> None:
    queries = tmp_path / "queries.yaml"
    queries.write_text(QUERIES)
    peer_body = _exporter_body(sandbox, queries)
    peer = _custom(_exposition(peer_body))
    entry = target_entry(sandbox, "pg-primary")
    entry["collector_options"] = {"postgres_queries": {"file": str(queries)}}
    daemon = Daemon(config_file(sandbox, tmp_path / "dbgauge.yaml", [entry]),
                    tmp_path / "serve.log")
    try:
        status, body = daemon.get("/metrics")
        assert status == 200, body
    finally:
        daemon.stop()
    ours = _custom(_exposition(body), frozenset({"target", "sandbox"}))

    server = f"127.0.0.1:{sandbox.state.port('pg-primary')}"
    item = frozenset({("name", "a"), ("kind", "x"), ("server", server)})
    # postgres_exporter exports NULL as NaN; dbgauge leaves the sample out, but for a
    # histogram's sum (a histogram has one): NaN on both sides there
    nan = {k for k, v in peer.items() if v != v}
    assert {k[0] for k in nan} == {"pg_cq_items_empty", "pg_cq_hist_levels_sum"}
    assert len(nan) == 3 + 2
    assert {k for k, v in ours.items() if v != v} == {
        k for k in nan if k[0] == "pg_cq_hist_levels_sum"}
    ours = {k: v for k, v in ours.items() if v == v}
    # postgres_exporter 0.11 reads a DURATION column as a number: Go duration text
    # ('1m30.5s') gives no sample there, and its milliseconds here
    values = frozenset({("big", "1.2345675e+06"), ("small", "0.25"), ("server", server)})
    took = ("pg_cq_values_took_milliseconds", values)
    assert took not in peer and ours.pop(took) == 90500
    assert {k: v for k, v in peer.items() if k not in nan} == ours
    assert ours[("pg_cq_items_hits", item)] == 10
    assert ours[("pg_cq_items_level", item)] == 1.5
    assert ours[("pg_cq_items_flag", item)] == 1
    assert ours[("pg_cq_totals_hits_total", frozenset({("server", server)}))] == 35
    assert ours[("pg_cq_totals_top", frozenset({("server", server)}))] == 2.25  # undeclared
    assert ours[("pg_cq_values_at", values)] == 1704164645
    assert ours[("pg_cq_values_waited_milliseconds", values)] == 250
    assert not any(k[0].startswith(("pg_cq_items_junk", "pg_cq_broken")) for k in ours)
    # HISTOGRAM: cumulative buckets by `le` (+Inf: the count), _sum, _count
    x = frozenset({("kind", "x"), ("server", server)})
    assert [(dict(k[1])["le"], v) for k, v in ours.items()
            if k[0] == "pg_cq_hist_hits_bucket" and k[1] >= x] == [
        ("1", 0), ("10", 1), ("100", 2), ("+Inf", 2)]
    assert ours[("pg_cq_hist_hits_sum", x)] == 30 and ours[("pg_cq_hist_hits_count", x)] == 2
    assert [(dict(k[1])["le"], v) for k, v in ours.items()
            if k[0] == "pg_cq_hist_levels_bucket" and k[1] >= x] == [
        ("0.5", 0), ("2.5", 2), ("1e+06", 2), ("+Inf", 2)]  # not levels_count (12)
    assert ours[("pg_cq_hist_levels_count", x)] == 12
    # the failing query is reported without taking the others' samples along
    all_ours = _exposition(body)
    assert all_ours[("dbgauge_postgres_custom_query_success", frozenset(
        {("query", "pg_cq_broken"), ("target", "pg-primary"), ("sandbox", "true")}))] == 0
    assert all_ours[("dbgauge_postgres_custom_query_success", frozenset(
        {("query", "pg_cq_items"), ("target", "pg-primary"), ("sandbox", "true")}))] == 1
    # types: postgres_exporter's counter without _total is untyped here (promtool clean)
    assert _types(peer_body)["pg_cq_items_hits"] == "counter"
    types = _types(body)
    assert types["pg_cq_items_hits"] == "untyped"
    assert types["pg_cq_items_level"] == "gauge"
    assert types["pg_cq_totals_hits_total"] == "counter"
    assert _types(peer_body)["pg_cq_hist_hits"] == types["pg_cq_hist_hits"] == "histogram"
    assert _types(peer_body)["pg_cq_hist_levels"] == types["pg_cq_hist_levels"] == "histogram"
    check = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True,
                           text=True, timeout=30, check=False)
    problems = [line for line in (check.stdout + check.stderr).splitlines() if line.strip()]
    # DURATION keeps postgres_exporter's _milliseconds name, which promtool points out
    assert problems == [f'pg_cq_values_{c}_milliseconds use base unit "seconds" instead of '
                        '"milliseconds"' for c in ("took", "waited")]


def test_cache_seconds_keeps_rows_and_a_fixed_file_runs(sandbox: Sandbox, pg_table: None,
                                                         tmp_path: Path) -> None:
    queries = tmp_path / "queries.yaml"
    queries.write_text(QUERIES)
    server = f"127.0.0.1:{sandbox.state.port('pg-primary')}"
    item = ("pg_cq_items_hits", frozenset({("name", "a"), ("kind", "x"), ("server", server),
                                          ("target", "pg-primary"), ("sandbox", "true")}))
    total = ("pg_cq_totals_hits_total", frozenset({("server", server),
                                                   ("target", "pg-primary"),
                                                   ("sandbox", "true")}))
    with scraper(sandbox, "pg-primary", collectors=["postgres_queries"],
                 collector_options={"postgres_queries": {"file": str(queries)}}) as scrape:
        first = scrape(failing=BROKEN)
        assert first[item] == 10 and first[total] == 35
        with pg_admin(sandbox, "pg-primary") as admin:
            admin.execute("UPDATE dbgauge_test_cq SET hits = 110 WHERE name = 'a'")
        second = scrape(failing=BROKEN)
        assert second[item] == 110  # read again
        assert second[total] == 35  # cached for an hour
        # an edited file is read again on the next scrape (and drops the cache)
        queries.write_text(QUERIES.replace("cache_seconds: 3600", "cache_seconds: 0"))
        third = scrape(failing=BROKEN)
        assert third[total] == 135


def test_queries_run_read_only_one_statement(sandbox: Sandbox, pg_table: None) -> None:
    with pg_admin(sandbox, "pg-primary") as admin:
        admin.execute("GRANT DELETE ON dbgauge_test_cq TO dbgauge")
    target = load_config(sandbox.config).target("pg-primary")
    with closing(connect(target)) as conn:
        with pytest.raises(QueryError, match="read-only transaction"):
            conn.query_read_only("WITH d AS (DELETE FROM dbgauge_test_cq RETURNING 1) "
                                 "SELECT count(*) AS n FROM d", 10)
        with pytest.raises(QueryError, match="multiple commands"):
            conn.query_read_only("SELECT 1 AS one; COMMIT; DELETE FROM dbgauge_test_cq", 10)
        with pytest.raises(QueryError, match="more than 2 rows"):
            conn.query_read_only("SELECT name FROM dbgauge_test_cq", 2)
        assert conn.query_read_only("SELECT current_setting('transaction_read_only') AS ro",
                                    1) == [{"ro": "on"}]
        # the connection is left usable, outside any transaction
        assert conn.execute_sql("SELECT current_setting('transaction_read_only') AS ro") == \
            [{"ro": "off"}]
    with pg_admin(sandbox, "pg-primary") as admin:
        assert admin.execute("SELECT count(*) FROM dbgauge_test_cq").fetchone() == (3,)


# QUERIES has a broken query on purpose: postgres_queries is reported failed on every scrape
BROKEN = frozenset({"postgres_queries"})

MYSQL_QUERIES = """\
mysql_cq_items:
  query: "SELECT name, kind, hits, level, junk FROM app.dbgauge_test_cq"
  metrics:
    - name: {usage: LABEL, description: Item name}
    - kind: {usage: LABEL, description: Item kind}
    - hits: {usage: COUNTER, description: Hits so far}
    - level: {usage: GAUGE, description: Current level}
    - junk: {usage: DISCARD, description: Not exported}
mysql_cq_totals:
  query: "SELECT COUNT(*) AS items, SUM(hits) AS hits_total FROM app.dbgauge_test_cq"
  runonserver: ">=10.6.0"
  metrics:
    - items: {usage: GAUGE, description: Rows}
    - hits_total: {usage: COUNTER, description: Hits of all items}
mysql_cq_never:
  query: "SELECT 1 AS one"
  runonserver: "<5.0.0"
  metrics:
    - one: {usage: GAUGE, description: Not on this server}
"""


def test_mariadb_reads_the_same_format(sandbox: Sandbox, tmp_path: Path) -> None:
    execute(sandbox, "mariadb-primary",
            "DROP TABLE IF EXISTS app.dbgauge_test_cq",
            "CREATE TABLE app.dbgauge_test_cq (name varchar(10), kind varchar(10), hits bigint, "
            "level decimal(6,2), junk int)",
            "INSERT INTO app.dbgauge_test_cq VALUES ('a', 'x', 10, 1.50, 7), ('b', 'y', 20, -2, 8)")
    queries = tmp_path / "queries.yaml"
    queries.write_text(MYSQL_QUERIES)
    base = frozenset({("target", "mariadb-primary"), ("sandbox", "true")})
    try:
        with scraper(sandbox, "mariadb-primary", collectors=["mysql_queries"],
                     collector_options={"mysql_queries": {"file": str(queries)}}) as scrape:
            got = scrape()
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.dbgauge_test_cq")
    a = base | {("name", "a"), ("kind", "x")}
    b = base | {("name", "b"), ("kind", "y")}
    assert got == {
        ("mysql_cq_items_hits", a): 10, ("mysql_cq_items_level", a): 1.5,
        ("mysql_cq_items_hits", b): 20, ("mysql_cq_items_level", b): -2,
        ("mysql_cq_totals_items", base): 2, ("mysql_cq_totals_hits_total", base): 30,
        ("dbgauge_mysql_custom_query_success", base | {("query", "mysql_cq_items")}): 1,
        ("dbgauge_mysql_custom_query_success", base | {("query", "mysql_cq_totals")}): 1,
    }


def test_collector_fails_when_a_query_fails_or_the_file_breaks(
        sandbox: Sandbox, tmp_path: Path) -> None:
    queries = tmp_path / "queries.yaml"
    queries.write_text("pg_cq_only:\n  query: SELECT no_such_column\n"
                       "  metrics: [{no_such_column: {usage: GAUGE}}]\n"
                       "pg_cq_good:\n  query: SELECT 7 AS seven\n"
                       "  metrics: [{seven: {usage: GAUGE}}]\n")
    with scraper(sandbox, "pg-primary", collectors=["postgres_queries"],
                 collector_options={"postgres_queries": {"file": str(queries)}}) as scrape:
        result = scrape.runner.scrape(time.monotonic() + 8)
        assert result.up
        (run,) = result.collectors
        assert not run.success  # one query failed: the collector says so ...
        assert run.error is not None and "1 of 2 custom queries failed" in run.error
        assert "no_such_column" in run.error
        # ... and the query that worked still gives its samples
        got = {(s.name, dict(s.labels).get("query")): s.value for s in result.samples}
        assert got[("pg_cq_good_seven", None)] == 7
        assert got[("dbgauge_postgres_custom_query_success", "pg_cq_only")] == 0
        assert got[("dbgauge_postgres_custom_query_success", "pg_cq_good")] == 1
        queries.write_text("pg_cq_only:\n  query: SELECT 1 AS one\n"
                           "  metrics: [{one: {usage: GAUGE}}]\n")
        assert ("pg_cq_only_one", frozenset({
            ("server", f"127.0.0.1:{sandbox.state.port('pg-primary')}"),
            ("target", "pg-primary"), ("sandbox", "true")})) in scrape()
        queries.write_text("pg_cq_only:\n  query: SELECT 1 AS one\n"
                           "  metrics: [{one: {usage: GUAGE}}]\n")
        (run,) = scrape.runner.scrape(time.monotonic() + 8).collectors
        assert not run.success
        assert run.error == (f"{queries}:3: pg_cq_only.metrics[0].one.usage: 'GUAGE' is not "
                             "one of LABEL, COUNTER, GAUGE, DISCARD, MAPPEDMETRIC, DURATION, "
                             "HISTOGRAM")
