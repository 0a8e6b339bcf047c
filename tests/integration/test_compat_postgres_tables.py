"""postgres_tables against the real sandbox and against Debian's postgres_exporter 0.11.1.

The admin account gives a few tables known activity in `app` and in a second database;
postgres_exporter reads them with a queries.yaml holding upstream's pg_stat_user_tables
and pg_statio_user_tables queries (collector/pg_stat_user_tables.go and
pg_statio_user_tables.go: NULL as 0, sizes; plus the classic queries.yaml's `_blks_`
columns, NULL as NaN), with `--auto-discover-databases`; dbgauge runs `collect --compat
postgres_exporter` with `databases: all` between two readings of the peer. Both scrape as
the monitoring role `dbgauge`. Also: the limit's truncation sign, and a database the role
may not connect to costing that database only.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.helpers import DBGAUGE, REPO, Metrics, value, wait_for
from tests.helpers.captured import FIXTURES
from tests.helpers.daemon import config_file, target_entry
from tests.helpers.peers import Family, compare, parse, postgres_exporter
from tests.helpers.pgstats import flush
from tests.helpers.servers import Sandbox, pg_admin

pytestmark = pytest.mark.integration

SECOND = "dbgauge_cmp_second"
LOCKED = "dbgauge_cmp_locked"
T = "dbgauge_postgres_tables"

QUERIES = FIXTURES / "postgres-tables" / "upstream_queries.yaml"


def peer_families() -> list[str]:
    """Every family the queries file makes: namespace_column for each non-label column."""
    doc = yaml.safe_load(QUERIES.read_text())
    return [f"{namespace}_{column}" for namespace, query in doc.items()
            for metric in query["metrics"] for column, how in metric.items()
            if how["usage"] != "LABEL"]


@pytest.fixture(scope="module")
def workload(sandbox: Sandbox) -> Iterator[None]:
    """Tables with known activity in `app` and in a second database."""
    with pg_admin(sandbox, "pg-primary") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {SECOND} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {SECOND}")
    with pg_admin(sandbox, "pg-primary", dbname="app") as admin:
        for statement in (
                "DROP TABLE IF EXISTS dbgauge_cmp_idx, dbgauge_cmp_noidx",
                "CREATE TABLE dbgauge_cmp_idx (id int PRIMARY KEY, v text) "
                "WITH (autovacuum_enabled = false)",
                "INSERT INTO dbgauge_cmp_idx SELECT g, repeat(md5(g::text), 100) "
                "FROM generate_series(1, 300) g",
                "UPDATE dbgauge_cmp_idx SET v = 'short' WHERE id <= 40",
                "DELETE FROM dbgauge_cmp_idx WHERE id > 290",
                "SELECT v FROM dbgauge_cmp_idx WHERE id = 7",
                "ANALYZE dbgauge_cmp_idx",
                "CREATE TABLE dbgauge_cmp_noidx (a int) WITH (autovacuum_enabled = false)",
                "INSERT INTO dbgauge_cmp_noidx SELECT generate_series(1, 100)",
                "VACUUM dbgauge_cmp_noidx"):
            admin.execute(statement)
        flush(admin)
    with pg_admin(sandbox, "pg-primary", dbname=SECOND) as admin:
        admin.execute("CREATE TABLE elsewhere (a int) WITH (autovacuum_enabled = false)")
        admin.execute("INSERT INTO elsewhere SELECT generate_series(1, 42)")
        flush(admin)
    try:
        yield
    finally:
        with pg_admin(sandbox, "pg-primary", dbname="app") as admin:
            admin.execute("DROP TABLE IF EXISTS dbgauge_cmp_idx, dbgauge_cmp_noidx")
        with pg_admin(sandbox, "pg-primary") as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {SECOND} WITH (FORCE)")


def collect(sandbox: Sandbox, tmp: Path, **options: object) -> subprocess.CompletedProcess[str]:
    """`dbgauge collect pg-primary --compat postgres_exporter --collect postgres_tables`
    with these postgres_tables options."""
    entry = target_entry(sandbox, "pg-primary")
    entry["collector_options"] = {"postgres_tables": options}
    config = config_file(sandbox, tmp / "dbgauge.yaml", [entry])
    proc = subprocess.run([*DBGAUGE, "collect", "--config", str(config), "pg-primary",
                           "--compat", "postgres_exporter", "--collect", "postgres_tables"],
                          capture_output=True, text=True, timeout=60, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def ours(sandbox: Sandbox, tmp: Path, **options: object) -> dict[str, Family]:
    return parse(collect(sandbox, tmp, **options).stdout, drop_labels=("sandbox", "target"))


def flat(families: dict[str, Family]) -> Metrics:
    return {(name, labels): v for f in families.values() for (name, labels), v in
            f.samples.items()}


def test_same_families_as_postgres_exporter(sandbox: Sandbox, workload: None,
                                            tmp_path: Path) -> None:
    inserted = ("pg_stat_user_tables_n_tup_ins",
                frozenset({("datname", SECOND), ("schemaname", "public"),
                           ("relname", "elsewhere")}))
    idx = frozenset({("datname", "app"), ("schemaname", "public"),
                     ("relname", "dbgauge_cmp_idx")})
    noidx = idx - {("relname", "dbgauge_cmp_idx")} | {("relname", "dbgauge_cmp_noidx")}

    def flushed() -> bool:  # statistics reach the views asynchronously
        m = flat(ours(sandbox, tmp_path, databases="all"))
        return (m.get(inserted) == 42 and m.get(("pg_stat_user_tables_n_tup_del", idx)) == 10
                and m.get(("pg_stat_user_tables_vacuum_count", noidx)) == 1)

    wait_for(flushed, timeout=30, what="the workload's statistics to show")
    families = peer_families()
    assert len(families) == 38
    # 0.11 adds `server` to queries.yaml families; upstream's collectors (and dbgauge) do not
    with postgres_exporter(sandbox, "pg-primary", "app", flags=[
            f"--extend.query-path={QUERIES}", "--auto-discover-databases"]) as peer:
        before = parse(peer.scrape(), drop_labels=("server",))
        mine = ours(sandbox, tmp_path, databases="all")
        after = parse(peer.scrape(), drop_labels=("server",))
    assert compare(before, mine, after, families) == []
    theirs = flat(before)
    assert theirs[inserted] == 42  # the peer saw the second database too, and so did we
    m = flat(mine)
    assert m[("pg_stat_user_tables_n_tup_ins", idx)] == 300
    assert m[("pg_stat_user_tables_n_tup_upd", idx)] == 40
    assert m[("pg_stat_user_tables_n_tup_del", idx)] == 10
    assert m[("pg_stat_user_tables_vacuum_count", noidx)] == 1
    assert m[("pg_stat_user_tables_idx_scan", noidx)] == 0  # NULL: upstream's 0
    nan = m[("pg_statio_user_tables_idx_blks_read", noidx)]
    assert nan != nan  # NULL: 0.11's NaN
    assert (m[("pg_stat_user_tables_last_analyze", idx)]
            == theirs[("pg_stat_user_tables_last_analyze", idx)] > 1.6e9)
    # a table with a TOAST table has numbers there under both spellings (NaN != NaN)
    assert m[("pg_statio_user_tables_toast_blks_hit", idx)] == m[
        ("pg_statio_user_tables_toast_blocks_hit", idx)]


def test_limit_says_what_it_left_out(sandbox: Sandbox, workload: None,
                                     tmp_path: Path) -> None:
    m = flat(ours(sandbox, tmp_path, limit=1))
    app = frozenset({("database", "app")})
    total = m[(T, app)]
    assert total >= 2
    assert m[(T + "_not_exported", app)] == total - 1
    per_table = [k for k in m if k[0] == "dbgauge_postgres_table_live_tuples"]
    assert len(per_table) == 1
    assert len([k for k in m if k[0] == "pg_stat_user_tables_n_live_tup"]) == 1
    assert not any(dict(k[1]).get("database") == SECOND for k in m)  # `current`: app only


def test_a_database_it_may_not_connect_to_costs_that_database(
        sandbox: Sandbox, workload: None, tmp_path: Path) -> None:
    with pg_admin(sandbox, "pg-primary") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {LOCKED} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {LOCKED}")
        admin.execute(f"REVOKE CONNECT ON DATABASE {LOCKED} FROM PUBLIC")
        try:
            proc = collect(sandbox, tmp_path, databases="all", exclude_databases="postgres")
            got = parse(proc.stdout, drop_labels=("sandbox", "target"))
            m = flat(got)
            success = "dbgauge_postgres_tables_database_success"
            assert value(m, success, database=LOCKED) == 0
            assert value(m, success, database="app") == 1
            assert value(m, success, database=SECOND) == 1
            assert value(m, success, database="postgres") is None  # excluded
            assert value(m, "dbgauge_collector_success", collector="postgres_tables") == 1
            assert value(m, T, database=LOCKED) is None  # nothing made up
            assert LOCKED in proc.stderr and "permission denied" in proc.stderr
            # a name that is not there is the same: that database, not the collector
            m = flat(ours(sandbox, tmp_path, databases="app,dbgauge_cmp_missing"))
            assert value(m, success, database="dbgauge_cmp_missing") == 0
            assert value(m, success, database="app") == 1
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {LOCKED} WITH (FORCE)")
