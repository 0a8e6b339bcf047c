"""`dbgauge checksum` spoken as pt-table-checksum: table filters with patterns,
--chunk-size, --max-load, --recursion-method, --replicate in pt's layout (read back with
the query from pt-table-checksum's documentation) and --replicate-check-only.

MariaDB primary -> replica of the sandbox (and its PostgreSQL primary -> standby where an
option applies there). Drift is planted on the replica with sql_log_bin=0; the tables and
databases made here are dropped at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dbgauge.checks.drift import ChecksumOptions, DriftError, run_checksum
from tests.helpers import DBGAUGE, REPO
from tests.helpers.drift import STATE_HOME, targets
from tests.helpers.servers import Sandbox, caught_up, execute, mariadb_account, pg_admin, run

pytestmark = pytest.mark.integration

PT_USER = "dbgauge_pt"  # pt-table-checksum's privileges: sees SHOW SLAVE HOSTS, sets SBR
PT_LAYOUT = ["db", "tbl", "chunk", "chunk_time", "chunk_index", "lower_boundary",
             "upper_boundary", "this_crc", "this_cnt", "master_crc", "master_cnt", "ts"]
# pt-table-checksum's documentation, "which tables and chunks have differences"
PT_QUERY = """SELECT db, tbl, SUM(this_cnt) AS total_rows, COUNT(*) AS chunks
FROM percona.checksums
WHERE (
 master_cnt <> this_cnt
 OR master_crc <> this_crc
 OR ISNULL(master_crc) <> ISNULL(this_crc))
GROUP BY db, tbl"""


def cli(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(STATE_HOME)}
    return subprocess.run([*DBGAUGE, "checksum", "--config", str(sandbox.config), *args],
                          capture_output=True, text=True, timeout=180, cwd=REPO, check=False,
                          env=env)


def doc(proc: subprocess.CompletedProcess[str], code: int) -> dict[str, Any]:
    assert proc.returncode == code, proc.stdout + proc.stderr
    return dict(json.loads(proc.stdout))


def error(proc: subprocess.CompletedProcess[str], sandbox: Sandbox) -> str:
    """The one-line error of a run that could not check (exit 2)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("dbgauge: error: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr and sandbox.state.dbgauge_password not in proc.stderr
    return proc.stderr


def pt_dsn(sandbox: Sandbox) -> str:
    """The source as pt-table-checksum users write it: a pt DSN."""
    return (f"h=127.0.0.1,P={sandbox.state.port('mariadb-primary')},u={PT_USER},"
            f"p=pt-{sandbox.state.dbgauge_password}")


def tables_of(d: dict[str, Any]) -> list[str]:
    return [t["table"] for t in d["tables"]]


@pytest.fixture(scope="module")
def pt_user(sandbox: Sandbox) -> Iterator[None]:
    with mariadb_account(sandbox, PT_USER, f"pt-{sandbox.state.dbgauge_password}",
                         "SELECT, PROCESS, BINLOG ADMIN, SLAVE MONITOR, REPLICATION MASTER ADMIN",
                         "dbgauge", "percona"):
        yield


@pytest.fixture(scope="module")
def shop(sandbox: Sandbox) -> Iterator[None]:
    """pt_shop.pt_orders, pt_shop.items, app.pt_log_1, app.pt_log_2: equal on both servers."""
    make = "CREATE TABLE {} (id INT NOT NULL PRIMARY KEY, v VARCHAR(20))"
    fill = "INSERT INTO {} SELECT seq, CONCAT('v', seq) FROM app.seq_1_to_50"
    names = ("pt_shop.pt_orders", "pt_shop.items", "app.pt_log_1", "app.pt_log_2")
    execute(sandbox, "mariadb-primary", "DROP DATABASE IF EXISTS pt_shop",
            "CREATE DATABASE pt_shop", "DROP TABLE IF EXISTS app.pt_log_1, app.pt_log_2",
            *(make.format(n) for n in names), *(fill.format(n) for n in names))
    caught_up(sandbox)
    try:
        yield
    finally:
        execute(sandbox, "mariadb-primary", "DROP DATABASE IF EXISTS pt_shop",
                "DROP TABLE IF EXISTS app.pt_log_1, app.pt_log_2")


# ----------------------------------------------------------------- filters


@pytest.mark.parametrize(("args", "expected"), [
    (["--tables", "pt_shop.*"], ["pt_shop.items", "pt_shop.pt_orders"]),
    (["--tables", "app.pt_log_*"], ["app.pt_log_1", "app.pt_log_2"]),
    # a bare name (unlike "orders", no other test's table has it: docs/drift.md's shop.orders)
    (["--tables", "pt_orders,app.pt_log_2"], ["app.pt_log_2", "pt_shop.pt_orders"]),
    (["--databases", "pt_shop", "--ignore-tables", "items"], ["pt_shop.pt_orders"]),
    (["--databases", "pt_sh*,app", "--tables", "pt_*,pt_orders", "--ignore-databases", "app"],
     ["pt_shop.pt_orders"]),
    (["--databases-regex", "^pt_sh", "--tables-regex", "^it"], ["pt_shop.items"]),
    (["--tables", "pt_shop.*,app.pt_log_*", "--ignore-tables-regex", "(ems|_2)$",
      "--exclude", "pt_shop.pt_orders"], ["app.pt_log_1"]),
    (["--tables", "app.pt_log_*", "--ignore-databases-regex", "^a"], None),
])
def test_database_and_table_filters(sandbox: Sandbox, shop: None, args: list[str],
                                    expected: list[str] | None) -> None:
    proc = cli(sandbox, "--source", "mariadb-primary", "--replica", "mariadb-replica",
               "--method", "direct", "--format", "json", *args)
    if expected is None:  # every table filtered out: an error, not "no drift" over nothing
        assert "passes all the filters" in error(proc, sandbox)
        return
    assert sorted(tables_of(doc(proc, 0))) == expected


@pytest.mark.parametrize(("args", "message"), [
    (["--tables", "pt_shop.nomatch_*"], "--tables 'pt_shop.nomatch_*' matches no table on "
                                        "source mariadb-primary"),
    (["--tables", "no_such_table"], "--tables 'no_such_table' matches no table"),
    (["--databases", "no_such_db"], "--databases 'no_such_db' matches no database"),
    (["--tables-regex", "("], "--tables-regex '(' is not a valid regular expression"),
])
def test_a_filter_that_matches_nothing_exits_2(sandbox: Sandbox, shop: None,
                                               args: list[str], message: str) -> None:
    proc = cli(sandbox, "--source", "mariadb-primary", "--replica", "mariadb-replica",
               "--method", "direct", *args)
    assert message in error(proc, sandbox)


# ----------------------------------------------------------------- --chunk-size


@pytest.fixture(scope="module")
def sized(sandbox: Sandbox) -> Iterator[None]:
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.pt_sized, app.pt_sized_c",
            "CREATE TABLE app.pt_sized (id INT NOT NULL PRIMARY KEY, v INT)",
            "INSERT INTO app.pt_sized SELECT seq, seq FROM app.seq_1_to_1000",
            "CREATE TABLE app.pt_sized_c (a INT NOT NULL, b VARCHAR(10) NOT NULL, v INT, "
            "PRIMARY KEY (a, b))",
            "INSERT INTO app.pt_sized_c SELECT seq % 10, CONCAT('b', seq), seq "
            "FROM app.seq_1_to_1000")
    caught_up(sandbox)
    try:
        yield
    finally:
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.pt_sized, app.pt_sized_c")


@pytest.mark.parametrize("method", ["direct", "replicated"])
def test_chunk_size_fixes_rows_per_chunk(sandbox: Sandbox, sized: None, pt_user: None,
                                         method: str) -> None:
    source = pt_dsn(sandbox) if method == "replicated" else "mariadb-primary"
    base = ["--source", source, "--replica", "mariadb-replica", "--method", method,
            "--tables", "app.pt_sized,app.pt_sized_c", "--format", "json"]
    # --chunk-size alone means chunks: no whole-table pre-check of these clean tables
    fixed = {t["table"]: t for t in doc(cli(sandbox, *base, "--chunk-size", "100"), 0)["tables"]}
    assert not any(t["whole_table"] for t in fixed.values()), fixed
    # a composite key is nibbled: exactly 100 rows per chunk, then the open-ended last one
    assert fixed["app.pt_sized_c"]["chunks"] in (10, 11), fixed
    # an integer key is cut arithmetically (100 keys), the last few ranges tapered
    assert 10 <= fixed["app.pt_sized"]["chunks"] <= 16, fixed
    assert all(t["rows"] == 1000 and t["status"] == "ok" for t in fixed.values())
    sized_by_time = doc(cli(sandbox, *base, "--chunk-time", "5", "--whole-table-time", "0"),
                        0)["tables"]
    assert all(t["chunks"] < 10 for t in sized_by_time), sized_by_time


def test_chunk_size_and_chunk_time_together_are_refused(sandbox: Sandbox, sized: None) -> None:
    proc = cli(sandbox, "--source", "mariadb-primary", "--replica", "mariadb-replica",
               "--tables", "app.pt_sized", "--chunk-size", "100", "--chunk-time", "0.5")
    assert "give --chunk-size ROWS (fixed rows per chunk) or --chunk-time" in \
        error(proc, sandbox)


# ----------------------------------------------------------------- --max-load


class Notes:
    def __init__(self) -> None:
        self.notes: list[str] = []

    def plan(self, tables: object) -> None:
        pass

    def progress(self, table: str, rows: int, total: int) -> None:
        pass

    def note(self, text: str) -> None:
        self.notes.append(text)


def test_max_load_pauses_on_any_status_variable(sandbox: Sandbox, sized: None) -> None:
    t = targets(sandbox)
    connected = int(run(sandbox, "mariadb-primary",
                        "SHOW GLOBAL STATUS LIKE 'Threads_connected'")[0]["Value"])
    assert connected >= 2  # the replica's dump thread and this admin session at least
    notes = Notes()
    with pytest.raises(DriftError, match=r"gave up after pausing 1 s: source "
                                         r"Threads_connected is \d+ \(> 1\)"):
        run_checksum(t["mariadb-primary"], [t["mariadb-replica"]], ChecksumOptions(
            tables=("app.pt_sized",), method="direct", keep_state=False, max_pause=1.0,
            max_load=(("Threads_connected", 1.0),)), notes)
    assert any(n.startswith("pausing: source Threads_connected is") for n in notes.notes)
    # a limit the server is under, and one taken from its value now (+20%): no pause
    proc = cli(sandbox, "--source", "mariadb-primary", "--replica", "mariadb-replica",
               "--tables", "app.pt_sized", "--method", "direct",
               "--max-load", "Threads_running=50,Threads_connected", "--max-load",
               "Innodb_row_lock_current_waits:10")
    assert proc.returncode == 0 and "pausing" not in proc.stderr, proc.stdout + proc.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--max-load", "No_such_status=5"],
     "--max-load No_such_status: source mariadb-primary has no such status variable"),
    (["--max-load", "Threads_running"], None),  # a name alone is fine ...
    (["--max-load", "Threads_running=5", "--max-threads-running", "9"],
     "--max-load Threads_running=N and --max-threads-running N set the same limit"),
    (["--max-load", "Threads_running=x"], "the limit must be a number"),
])
def test_max_load_bad_input(sandbox: Sandbox, sized: None, args: list[str],
                            message: str | None) -> None:
    proc = cli(sandbox, "--source", "mariadb-primary", "--replica", "mariadb-replica",
               "--tables", "app.pt_sized", "--method", "direct", *args)
    if message is None:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    else:
        assert message in error(proc, sandbox)


# ----------------------------------------------------------------- --recursion-method


@pytest.fixture
def dsn_table(sandbox: Sandbox) -> Iterator[str]:
    replica_port = sandbox.state.port("mariadb-replica")
    execute(sandbox, "mariadb-primary", "DROP DATABASE IF EXISTS pt_dsns",
            "CREATE DATABASE pt_dsns",
            "CREATE TABLE pt_dsns.dsns (id int(11) NOT NULL AUTO_INCREMENT, "
            "parent_id int(11) DEFAULT NULL, dsn varchar(255) NOT NULL, PRIMARY KEY (id))")
    run(sandbox, "mariadb-primary", ("INSERT INTO pt_dsns.dsns (parent_id, dsn) VALUES (1, %s)",
                                     (f"h=127.0.0.1,P={replica_port}",)))
    caught_up(sandbox)
    try:
        yield "dsn=D=pt_dsns,t=dsns"
    finally:
        execute(sandbox, "mariadb-primary", "DROP DATABASE IF EXISTS pt_dsns")


@pytest.mark.parametrize("method", ["processlist", "hosts", "processlist,hosts", "dsn"])
def test_recursion_method_finds_the_replica(sandbox: Sandbox, sized: None, pt_user: None,
                                            dsn_table: str, method: str) -> None:
    if method == "dsn":
        method = dsn_table
    replica = f"127.0.0.1:{sandbox.state.port('mariadb-replica')}"
    execute(sandbox, "mariadb-replica", "UPDATE app.pt_sized SET v = -1 WHERE id = 77",
            log_bin=False)
    try:
        proc = cli(sandbox, "--source", pt_dsn(sandbox), "--recursion-method", method,
                   "--tables", "app.pt_sized", "--method", "direct", "--format", "json")
        d = doc(proc, 1)  # the replica found is the one compared: its planted row shows
        assert d["replicas"] == [replica]
        assert d["tables"][0]["differences"] == [
            {"replica": replica, "kind": "changed", "key": {"id": 77}, "columns": ["v"]}]
        first = method if method.startswith("dsn=") else method.split(",")[0]
        assert f"replicas found by --recursion-method {first}: {replica}" in proc.stderr
    finally:
        execute(sandbox, "mariadb-replica", "UPDATE app.pt_sized SET v = 77 WHERE id = 77",
                log_bin=False)


def test_recursion_method_default_and_failures(sandbox: Sandbox, sized: None, pt_user: None,
                                               dsn_table: str) -> None:
    replica = f"127.0.0.1:{sandbox.state.port('mariadb-replica')}"
    base = ["--tables", "app.pt_sized", "--method", "direct", "--format", "json"]
    # no --replica: pt's default, processlist then hosts
    assert doc(cli(sandbox, "--source", pt_dsn(sandbox), *base), 0)["replicas"] == [replica]
    assert "--recursion-method none finds no replica: give --replica" in error(
        cli(sandbox, "--source", pt_dsn(sandbox), "--recursion-method", "none", *base),
        sandbox)
    execute(sandbox, "mariadb-primary", "DELETE FROM pt_dsns.dsns")
    assert "no replica of source" in error(
        cli(sandbox, "--source", pt_dsn(sandbox), "--recursion-method", dsn_table, *base),
        sandbox)
    assert "--recursion-method 'bogus': use processlist, hosts" in error(
        cli(sandbox, "--source", pt_dsn(sandbox), "--recursion-method", "bogus", *base),
        sandbox)
    assert "give --replica or --recursion-method, not both" in error(
        cli(sandbox, "--source", pt_dsn(sandbox), "--replica", "mariadb-replica",
            "--recursion-method", "hosts", *base), sandbox)


# ----------------------------------------------------------------- --replicate


@pytest.fixture(scope="module")
def planted(sandbox: Sandbox, pt_user: None) -> Iterator[None]:
    """app.pt_rep_diff differs on the replica (one changed row), app.pt_rep_same does not."""
    execute(sandbox, "mariadb-primary", "DROP DATABASE IF EXISTS percona",
            "DROP TABLE IF EXISTS app.pt_rep_diff, app.pt_rep_same",
            "CREATE TABLE app.pt_rep_diff (id INT NOT NULL PRIMARY KEY, v VARCHAR(40))",
            "CREATE TABLE app.pt_rep_same (id INT NOT NULL PRIMARY KEY, v VARCHAR(40))",
            "INSERT INTO app.pt_rep_diff SELECT seq, MD5(seq) FROM app.seq_1_to_3000",
            "INSERT INTO app.pt_rep_same SELECT seq, MD5(seq) FROM app.seq_1_to_3000")
    caught_up(sandbox)
    execute(sandbox, "mariadb-replica", "UPDATE app.pt_rep_diff SET v = 'x' WHERE id = 1234",
            log_bin=False)
    try:
        yield
    finally:
        execute(sandbox, "mariadb-primary", "DROP DATABASE IF EXISTS percona",
                "DROP TABLE IF EXISTS app.pt_rep_diff, app.pt_rep_same")
        caught_up(sandbox)


def replicate_into(sandbox: Sandbox, *args: str) -> dict[str, Any]:
    """A replicated run over app.pt_rep_* (drift: exit 1), then the replica caught up."""
    proc = cli(sandbox, "--source", pt_dsn(sandbox), "--replica", "mariadb-replica",
               "--method", "replicated", "--tables", "app.pt_rep_*", "--whole-table-time",
               "0", "--format", "json", *args)
    d = doc(proc, 1)
    caught_up(sandbox)
    return d


def dbgauge_rows(sandbox: Sandbox) -> int:
    if not run(sandbox, "mariadb-primary", "SHOW TABLES FROM dbgauge LIKE 'checksums'"):
        return 0
    return int(run(sandbox, "mariadb-primary", "SELECT COUNT(*) AS n FROM dbgauge.checksums "
                   "WHERE tbl LIKE 'pt_rep_%'")[0]["n"])


def test_replicate_writes_pt_layout_read_by_pt_query(sandbox: Sandbox, planted: None) -> None:
    before = dbgauge_rows(sandbox)
    d = replicate_into(sandbox, "--replicate", "percona.checksums")
    by_table = {t["table"]: t for t in d["tables"]}
    assert by_table["app.pt_rep_same"]["status"] == "ok"
    assert by_table["app.pt_rep_diff"]["differences"] == [
        {"replica": "mariadb-replica", "kind": "changed", "key": {"id": 1234},
         "columns": ["v"]}]
    columns = [r["Field"] for r in run(sandbox, "mariadb-replica",
                                       "SHOW COLUMNS FROM percona.checksums")]
    assert columns == PT_LAYOUT
    differing = run(sandbox, "mariadb-replica", PT_QUERY)
    assert [(r["db"], r["tbl"]) for r in differing] == [("app", "pt_rep_diff")]
    assert differing[0]["chunks"] == 1 and 1 <= differing[0]["total_rows"] < 3000
    # the source's own values are there too, in pt's columns; dbgauge.checksums untouched
    assert run(sandbox, "mariadb-primary", PT_QUERY) == []
    assert run(sandbox, "mariadb-primary", "SELECT COUNT(*) AS n FROM percona.checksums "
               "WHERE master_cnt IS NULL")[0]["n"] == 0
    assert dbgauge_rows(sandbox) == before


def test_replicate_refuses_a_table_of_another_shape(sandbox: Sandbox, planted: None) -> None:
    proc = cli(sandbox, "--source", pt_dsn(sandbox), "--replica", "mariadb-replica",
               "--method", "replicated", "--replicate", "app.pt_rep_same",
               "--tables", "app.pt_rep_diff")
    assert "app.pt_rep_same on source" in error(proc, sandbox)
    assert "is not a checksum table" in proc.stderr
    proc = cli(sandbox, "--source", "mariadb-primary", "--replica", "mariadb-replica",
               "--method", "direct", "--replicate", "percona.checksums",
               "--tables", "app.pt_rep_diff")
    assert "the table is written by the replicated method only" in error(proc, sandbox)


@pytest.mark.parametrize("replicate", ["percona.checksums", None])
def test_replicate_check_only_reports_what_is_recorded(sandbox: Sandbox, planted: None,
                                                       replicate: str | None) -> None:
    extra = ["--replicate", replicate] if replicate else []
    replicate_into(sandbox, *extra)  # dbgauge.checksums (dbgauge's layout) or pt's
    proc = cli(sandbox, "--source", pt_dsn(sandbox), "--replica", "mariadb-replica",
               "--replicate-check-only", "--tables", "app.pt_rep_*", "--format", "json",
               *extra)
    d = doc(proc, 1)
    assert d["method"] == "replicate-check-only"
    by_table = {t["table"]: t for t in d["tables"]}
    assert sorted(by_table) == ["app.pt_rep_diff", "app.pt_rep_same"]
    assert by_table["app.pt_rep_diff"]["status"] == "drift"
    assert by_table["app.pt_rep_diff"]["differing_chunks"] == {"mariadb-replica": 1}
    assert by_table["app.pt_rep_same"]["status"] == "ok"
    assert by_table["app.pt_rep_same"]["rows"] == 3000
    text = cli(sandbox, "--source", pt_dsn(sandbox), "--replica", "mariadb-replica",
               "--replicate-check-only", "--tables", "app.pt_rep_same", *extra)
    assert text.returncode == 0, text.stdout + text.stderr


def test_replicate_check_only_writes_nothing(sandbox: Sandbox, planted: None) -> None:
    replicate_into(sandbox, "--replicate", "percona.checksums")
    stamp = run(sandbox, "mariadb-replica", "SELECT MAX(ts) AS t, COUNT(*) AS n "
                "FROM percona.checksums")[0]
    time.sleep(1.1)  # ts has one-second resolution: a rewrite would show a later one
    proc = cli(sandbox, "--source", pt_dsn(sandbox), "--replica", "mariadb-replica",
               "--replicate", "percona.checksums", "--replicate-check-only")
    assert proc.returncode == 1 and "app.pt_rep_diff" in proc.stdout, proc.stdout + proc.stderr
    assert run(sandbox, "mariadb-replica", "SELECT MAX(ts) AS t, COUNT(*) AS n "
               "FROM percona.checksums")[0] == stamp
    assert "has no table nope.checksums" in error(
        cli(sandbox, "--source", pt_dsn(sandbox), "--replica", "mariadb-replica",
            "--replicate", "nope.checksums", "--replicate-check-only"), sandbox)


# ----------------------------------------------------------------- PostgreSQL


@pytest.fixture(scope="module")
def pg_tables(sandbox: Sandbox) -> Iterator[None]:
    with pg_admin(sandbox, "pg-primary") as conn:
        conn.execute("DROP TABLE IF EXISTS pt_pg_a, pt_pg_b")
        for name in ("pt_pg_a", "pt_pg_b"):
            conn.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, v text)")
            conn.execute(f"INSERT INTO {name} SELECT g, md5(g::text) "  # noqa: S608
                         "FROM generate_series(1, 100) g")
            conn.execute(f"GRANT SELECT ON {name} TO dbgauge")
    deadline = time.monotonic() + 30
    with pg_admin(sandbox, "pg-standby") as conn:
        while conn.execute("SELECT count(*) FROM pg_tables WHERE tablename LIKE "
                           "'pt_pg_%'").fetchone() != (2,):
            assert time.monotonic() < deadline, "the standby did not replay the tables"
            time.sleep(0.1)
    try:
        yield
    finally:
        with pg_admin(sandbox, "pg-primary") as conn:
            conn.execute("DROP TABLE IF EXISTS pt_pg_a, pt_pg_b")


def test_postgres_patterns_and_max_load(sandbox: Sandbox, pg_tables: None) -> None:
    base = ["--source", "pg-primary", "--replica", "pg-standby", "--format", "json"]
    d = doc(cli(sandbox, *base, "--tables", "public.pt_pg_*", "--max-load",
                "Threads_running=50"), 0)
    assert tables_of(d) == ["public.pt_pg_a", "public.pt_pg_b"]
    d = doc(cli(sandbox, *base, "--databases", "public", "--tables-regex", "^pt_pg_b$"), 0)
    assert tables_of(d) == ["public.pt_pg_b"]
    assert "status variables are MySQL/MariaDB's" in error(
        cli(sandbox, *base, "--tables", "pt_pg_a", "--max-load", "Threads_connected=5"),
        sandbox)
    assert "--recursion-method finds MySQL/MariaDB replicas only" in error(
        cli(sandbox, "--source", "pg-primary", "--tables", "pt_pg_a"), sandbox)
