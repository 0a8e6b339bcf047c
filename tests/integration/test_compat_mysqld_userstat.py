"""mysqld_exporter's user-statistics scrapers (info_schema.userstats, clientstats,
tablestats, schemastats) against Debian's mysqld_exporter 0.14 itself, on mariadb-primary.

userstat is set ON as the sandbox admin for the test (the sandbox starts with it on; the
value found is put back after), a workload in a schema of its own makes table statistics,
then the peer with the four `--collect.*` flags and `dbgauge collect --compat
mysqld_exporter` with mysql_user_statistics are read as the same monitoring user. Every
family the peer exports must match (name, type, labels, every series, each value between
two peer readings taken around dbgauge's). Connections come and go on a shared server (the
sandbox admin's, the scrapes' own), so a family fails only if it fails in each of three
rounds. With userstat OFF the peer exports nothing and says nothing; dbgauge's collector
fails naming the setting, and exports no series of it (no zeros).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import DBGAUGE, REPO
from tests.helpers.daemon import collect_text, one_target_config
from tests.helpers.peers import compare_rounds, mysqld_exporter, parse
from tests.helpers.servers import Sandbox, run
from tests.integration.test_compat_promtool import _lint, _only

pytestmark = pytest.mark.integration

FLAGS = (
    "--collect.info_schema.userstats", "--collect.info_schema.clientstats",
    "--collect.info_schema.tablestats", "--collect.info_schema.schemastats",
    # the defaults test_compat_mysqld.py compares
    "--no-collect.global_status", "--no-collect.global_variables",
    "--no-collect.slave_status", "--no-collect.info_schema.query_response_time",
    "--no-collect.info_schema.innodb_cmp", "--no-collect.info_schema.innodb_cmpmem",
)
SCHEMA = "compat_userstat"
WORKLOAD = (
    f"DROP DATABASE IF EXISTS {SCHEMA}",
    f"CREATE DATABASE {SCHEMA}",
    f"USE {SCHEMA}",
    "CREATE TABLE t (id INT PRIMARY KEY, k INT, KEY k (k)) ENGINE=InnoDB",
    "INSERT INTO t SELECT seq, seq FROM seq_1_to_200",
    "UPDATE t SET k = k + 1 WHERE id <= 20",
    "SELECT COUNT(*) FROM t WHERE k > 10",
)


@pytest.fixture(scope="module")
def userstat(sandbox: Sandbox) -> Iterator[None]:
    was = run(sandbox, "mariadb-primary", "SELECT @@GLOBAL.userstat AS v")[0]["v"]
    run(sandbox, "mariadb-primary", "SET GLOBAL userstat = ON", *WORKLOAD)
    try:
        yield
    finally:
        run(sandbox, "mariadb-primary", f"DROP DATABASE IF EXISTS {SCHEMA}",
            f"SET GLOBAL userstat = {'ON' if was else 'OFF'}")


def _config(sandbox: Sandbox, path: Path) -> Path:
    return one_target_config(
        sandbox, path, "mariadb-primary", collectors=["mysql_user_statistics"],
        compat=["mysqld_exporter"],
        collector_options={"mysql_user_statistics": {"limit": 100_000}})


def _collect(config: Path) -> str:
    return collect_text(config, "mariadb-primary")


def _peer_families(names: set[str]) -> set[str]:
    return {n for n in names if n.startswith("mysql_info_schema_")}


def test_every_user_statistics_family_matches_the_peer(
        sandbox: Sandbox, userstat: None, tmp_path: Path) -> None:
    config = _config(sandbox, tmp_path / "dbgauge.yaml")
    with mysqld_exporter(sandbox, "mariadb-primary", tmp_path, FLAGS) as peer:
        got = compare_rounds(
            peer.scrape, lambda: _collect(config),
            lambda before, after: _peer_families(set(before)) & _peer_families(set(after)))
    assert not got.failing, got.report()
    theirs, before, our_text, text = got.theirs, got.before, got.our_text, got.peer_text
    i_s = "mysql_info_schema_"
    expected = {
        *(f"{i_s}{who}_statistics_{s}" for who in ("user", "client") for s in (
            "total_connections", "concurrent_connections", "connected_time_seconds_total",
            "busy_seconds_total", "cpu_time_seconds_total", "bytes_received_total",
            "bytes_sent_total", "binlog_bytes_written_total", "rows_read_total",
            "rows_sent_total", "rows_deleted_total", "rows_inserted_total",
            "rows_updated_total", "select_commands_total", "update_commands_total",
            "other_commands_total", "commit_transactions_total",
            "rollback_transactions_total", "denied_connections_total",
            "lost_connections_total", "access_denied_total", "empty_queries_total",
            "total_ssl_connections_total")),
        f"{i_s}user_statistics_max_statement_time_exceeded",  # untyped: not in its user map
        f"{i_s}client_statistics_max_statement_time_exceeded_total",
        *(f"{i_s}{what}_statistics_{s}" for what in ("table", "schema") for s in (
            "rows_read_total", "rows_changed_total", "rows_changed_x_indexes_total")),
    }
    assert expected <= theirs, sorted(expected - theirs)
    assert before[f"{i_s}user_statistics_max_statement_time_exceeded"].type == "untyped"
    # the workload's table is among the series compared, with what it did
    changed = before[f"{i_s}table_statistics_rows_changed_total"].samples
    key = (f"{i_s}table_statistics_rows_changed_total",
           frozenset({("schema", SCHEMA), ("table", "t")}))
    assert changed[key] >= 220, changed  # 200 inserted, 20 updated
    users = {dict(labels)["user"] for _, labels in
             before[f"{i_s}user_statistics_total_connections"].samples}
    assert {"dbgauge", sandbox.state.mariadb.admin_user} <= users
    # promtool finds nothing in dbgauge's output of these families the peer's lacks
    extra = _lint(_only(our_text, theirs)) - _lint(_only(text, theirs))
    assert not extra, sorted(extra)
    print(f"{len(theirs)} peer families matched")


def test_userstat_off_fails_the_collector_naming_the_setting(
        sandbox: Sandbox, userstat: None, tmp_path: Path) -> None:
    """The peer exports nothing with userstat OFF and says nothing; dbgauge's collector
    fails, says what to set, and exports none of its series in either dialect."""
    run(sandbox, "mariadb-primary", "SET GLOBAL userstat = OFF")
    try:
        proc = subprocess.run(
            [*DBGAUGE, "collect", "--config", str(_config(sandbox, tmp_path / "off.yaml")),
             "mariadb-primary"], capture_output=True, text=True, timeout=60, cwd=REPO,
            check=False)
    finally:
        run(sandbox, "mariadb-primary", "SET GLOBAL userstat = ON")
    families = parse(proc.stdout)
    success = {dict(labels)["collector"]: value for (_, labels), value
               in families["dbgauge_collector_success"].samples.items()}
    assert success["mysql_user_statistics"] == 0
    assert "SET GLOBAL userstat=ON" in proc.stdout + proc.stderr
    leaked = {name for name in families if "_statistics_" in name or "_stats_" in name}
    assert not leaked, leaked
    assert families["mysql_exporter_last_scrape_error"].samples
