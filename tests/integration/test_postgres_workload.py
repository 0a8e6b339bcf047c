"""postgres_statements, postgres_tables and postgres_sequences against the real sandbox.

The admin account makes the workload (a burst of one statement, a table with dead
tuples, sequences near their end) in the `app` database dbgauge connects to; the
collectors run as the monitoring role `dbgauge`, top-N limits set the way operators set
them (`collector_options:` in the target's config). Everything made is dropped after.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dbgauge.toolkit.sandbox.model import ADMIN_USER
from tests.helpers import Metrics, value, wait_for
from tests.helpers.daemon import collect_direct, scraper
from tests.helpers.pgstats import flush
from tests.helpers.servers import Sandbox, pg_admin

pytestmark = pytest.mark.integration

P = "dbgauge_postgres_"
BURST = "SELECT count(*) FROM generate_series(1, 20) AS dbgauge_burst_probe(x)"


def series(m: Metrics, name: str) -> list[dict[str, str]]:
    return [dict(labels) for n, labels in m if n == name]


def with_options(sandbox: Sandbox, collector: str, **options: int) -> Metrics:
    """One scrape of `collector` on pg-primary with these collector_options, through the
    config and the daemon's runner; the `target` and sandbox labels dropped."""
    with scraper(sandbox, "pg-primary", collector_options={collector: options}) as s:
        got = s({collector})
    return {(name, frozenset((k, v) for k, v in labels if k not in ("target", "sandbox"))): v
            for (name, labels), v in got.items()}


# ----------------------------------------------------------------- postgres_statements


def burst_queryid(sandbox: Sandbox, n: int) -> str:
    """Run BURST n times as the admin; its queryid, read on the test's side."""
    with pg_admin(sandbox, "pg-primary", dbname="app") as admin:
        for _ in range(n):
            admin.execute(BURST)
        row = admin.execute("SELECT queryid::text FROM pg_stat_statements "
                            "WHERE query LIKE %s", ("%dbgauge_burst_probe%",)).fetchone()
    assert row is not None
    return str(row[0])


def test_a_burst_of_statements_is_counted(sandbox: Sandbox) -> None:
    queryid = burst_queryid(sandbox, 1)
    labels = {"queryid": queryid, "database": "app", "user": ADMIN_USER}

    def statements() -> Metrics:
        return with_options(sandbox, "postgres_statements", limit=1000)

    before = value(statements(), P + "statements_calls_total", **labels)
    assert before is not None and before >= 1
    burst_queryid(sandbox, 25)
    m = wait_for(lambda: (lambda s: s if (value(s, P + "statements_calls_total", **labels) or 0)
                          >= before + 25 else None)(statements()),
                 what="the burst's 25 calls to be counted")
    calls = value(m, P + "statements_calls_total", **labels) or 0
    seconds = value(m, P + "statements_seconds_total", **labels) or 0
    assert value(m, P + "statements_rows_total", **labels) == calls  # one row per call
    assert value(m, P + "statements_mean_seconds", **labels) == pytest.approx(seconds / calls)
    assert value(m, P + "statements_shared_blocks_hit_total", **labels) is not None
    assert value(m, P + "statements_shared_blocks_read_total", **labels) is not None
    assert value(m, P + "statements_configured") == 1
    for found in series(m, P + "statements_calls_total"):  # never the query text
        assert set(found) == {"queryid", "database", "user"}
        assert "dbgauge_burst_probe" not in "".join(found.values())


def test_statements_limit_is_honoured_costliest_first(sandbox: Sandbox) -> None:
    burst_queryid(sandbox, 3)
    # `every` first: counters only grow, so a statement left out of `top` cost at most
    # what the cheapest kept one cost when `top` was read, and no more than that before
    every = with_options(sandbox, "postgres_statements", limit=1000)
    top = with_options(sandbox, "postgres_statements", limit=3)
    name = P + "statements_seconds_total"
    assert len(series(every, name)) > 3
    kept = series(top, name)
    assert len(kept) == 3 and len(series(top, P + "statements_calls_total")) == 3
    cheapest_kept = min(v for (n, _), v in top.items() if n == name)
    left_out = [v for (n, ls), v in every.items() if n == name and dict(ls) not in kept]
    assert max(left_out) <= cheapest_kept


def test_statements_absent_is_not_an_error(sandbox: Sandbox) -> None:
    # pg-subscriber preloads the library, but dbgauge connects to `drift`, where the
    # extension was never created
    m = collect_direct(sandbox, "pg-subscriber", "postgres_statements")
    assert m == {(P + "statements_configured", frozenset()): 0.0}


# ----------------------------------------------------------------- postgres_tables


@pytest.fixture
def dead_table(sandbox: Sandbox) -> Iterator[str]:
    """2000 rows, 1500 deleted, autovacuum off on the table so the dead rows stay."""
    with pg_admin(sandbox, "pg-primary", dbname="app") as admin:
        admin.execute("DROP TABLE IF EXISTS public.dbgauge_cov_dead")
        admin.execute("CREATE TABLE public.dbgauge_cov_dead (id int, pad text) "
                      "WITH (autovacuum_enabled = false)")
        admin.execute("INSERT INTO public.dbgauge_cov_dead "
                      "SELECT g, repeat('x', 50) FROM generate_series(1, 2000) g")
        admin.execute("DELETE FROM public.dbgauge_cov_dead WHERE id > 500")
        flush(admin)  # the session stays open while the test runs
        try:
            yield "dbgauge_cov_dead"
        finally:
            admin.execute("DROP TABLE IF EXISTS public.dbgauge_cov_dead")


def test_dead_tuples_then_vacuum_and_analyze(sandbox: Sandbox, dead_table: str) -> None:
    t = {"schema": "public", "table": dead_table}

    def tables() -> Metrics:
        return with_options(sandbox, "postgres_tables", limit=1000)

    m = wait_for(lambda: (lambda s: s if value(s, P + "table_dead_tuples", **t) == 1500
                          else None)(tables()),
                 timeout=30, what="pg_stat_user_tables to show the 1500 dead rows")
    assert value(m, P + "table_live_tuples", **t) == 500
    assert (value(m, P + "table_size_bytes", **t) or 0) > 8192
    assert value(m, P + "table_seq_scans_total", **t) is not None
    assert value(m, P + "table_index_scans_total", **t) is None  # no index
    assert (value(m, P + "tables") or 0) >= 1
    for event in ("vacuum", "autovacuum", "analyze", "autoanalyze"):
        assert value(m, f"{P}table_last_{event}_age_seconds", **t) is None  # never yet
    with pg_admin(sandbox, "pg-primary", dbname="app") as admin:
        admin.execute(f"VACUUM ANALYZE public.{dead_table}")
    m = wait_for(lambda: (lambda s: s if value(s, P + "table_dead_tuples", **t) == 0
                          and value(s, P + "table_last_vacuum_age_seconds", **t) is not None
                          else None)(tables()),
                 timeout=30, what="VACUUM to clear the dead rows and be dated")
    for age in ("table_last_vacuum_age_seconds", "table_last_analyze_age_seconds"):
        seconds = value(m, P + age, **t)
        assert seconds is not None and seconds < 60, age  # 0.0 (just now) counts
    assert value(m, P + "table_last_autovacuum_age_seconds", **t) is None


def test_tables_limit_keeps_the_most_dead_tuples(sandbox: Sandbox, dead_table: str) -> None:
    t = {"schema": "public", "table": dead_table}
    small = {"schema": "public", "table": "dbgauge_cov_small"}
    with pg_admin(sandbox, "pg-primary", dbname="app") as admin:
        admin.execute("DROP TABLE IF EXISTS public.dbgauge_cov_small")
        admin.execute("CREATE TABLE public.dbgauge_cov_small (id int) "
                      "WITH (autovacuum_enabled = false)")
        try:
            admin.execute("INSERT INTO public.dbgauge_cov_small SELECT generate_series(1, 100)")
            admin.execute("DELETE FROM public.dbgauge_cov_small WHERE id <= 10")
            flush(admin)

            def both() -> bool:
                m = with_options(sandbox, "postgres_tables", limit=1000)
                return (value(m, P + "table_dead_tuples", **t) == 1500
                        and value(m, P + "table_dead_tuples", **small) == 10)

            wait_for(both, timeout=30, what="both tables' dead rows to show")
            one = with_options(sandbox, "postgres_tables", limit=1)
            assert series(one, P + "table_dead_tuples") == [{**t, "database": "app"}]  # most dead
            assert series(one, P + "table_live_tuples") == [{**t, "database": "app"}]
            assert value(one, P + "table_dead_tuples", **t) == 1500
            assert (value(one, P + "tables") or 0) >= 2  # all tables counted, not the kept
        finally:
            admin.execute("DROP TABLE IF EXISTS public.dbgauge_cov_small")


# ----------------------------------------------------------------- postgres_sequences


@pytest.fixture
def sequences(sandbox: Sandbox) -> Iterator[None]:
    """Ascending at 95 of 1..100, descending at -91 of -1..-100 (both readable by
    dbgauge), one used but unreadable, one readable but never used."""
    names = ("dbgauge_cov_up", "dbgauge_cov_down", "dbgauge_cov_hidden", "dbgauge_cov_new")
    with pg_admin(sandbox, "pg-primary", dbname="app") as admin:
        for name in names:
            admin.execute(f"DROP SEQUENCE IF EXISTS public.{name}")
        admin.execute("CREATE SEQUENCE public.dbgauge_cov_up MINVALUE 1 MAXVALUE 100")
        admin.execute("SELECT setval('public.dbgauge_cov_up', 95)")
        admin.execute("CREATE SEQUENCE public.dbgauge_cov_down INCREMENT -1 "
                      "MINVALUE -100 MAXVALUE -1 START -1")
        admin.execute("SELECT setval('public.dbgauge_cov_down', -91)")
        admin.execute("CREATE SEQUENCE public.dbgauge_cov_hidden")
        admin.execute("SELECT nextval('public.dbgauge_cov_hidden')")
        admin.execute("CREATE SEQUENCE public.dbgauge_cov_new")
        # what the README asks operators to grant for sequence ratios
        admin.execute("GRANT SELECT ON SEQUENCE public.dbgauge_cov_up, "
                      "public.dbgauge_cov_down, public.dbgauge_cov_new TO dbgauge")
        try:
            yield
        finally:
            for name in names:
                admin.execute(f"DROP SEQUENCE IF EXISTS public.{name}")


def test_sequences_near_their_end(sandbox: Sandbox, sequences: None) -> None:
    m = with_options(sandbox, "postgres_sequences", limit=1000)
    ratio = P + "sequence_used_ratio"
    up = value(m, ratio, schema="public", sequence="dbgauge_cov_up")
    down = value(m, ratio, schema="public", sequence="dbgauge_cov_down")
    assert up == pytest.approx(94 / 99) and up > 0.9
    assert down == pytest.approx(90 / 99) and down > 0.9
    assert value(m, ratio, schema="public", sequence="dbgauge_cov_hidden") is None
    assert value(m, ratio, schema="public", sequence="dbgauge_cov_new") is None
    assert (value(m, P + "sequences") or 0) >= 4
    assert (value(m, P + "sequences_unreadable") or 0) >= 1
    one = with_options(sandbox, "postgres_sequences", limit=1)
    (kept,) = series(one, ratio)  # one, and the one nearest its end
    assert value(one, ratio, **kept) == max(v for (n, _), v in m.items() if n == ratio) >= up
