"""mysqld_exporter's sys.user_summary on MariaDB 10.11. Debian's 0.14 has no such scraper
(upstream added it in 0.15), so there is no peer binary to run: dbgauge's families are
compared with what upstream's own query (collector/sys_user_summary.go) returns when the
sandbox admin runs it, turned into upstream's families as its scraper does (latencies /
1e12, the types it declares): every family, series and value, each between two such
readings taken around dbgauge's (statements keep running: the admin's, the scrapes'); the
gauges that move both ways (connections and memory now) by series only. A family fails only
if it fails in each of three rounds. promtool finds in them only what upstream's names
have (`mysql_sys_statement_latency`, a counter without `_total`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.daemon import collect_text, one_target_config
from tests.helpers.peers import Family, compare, parse
from tests.helpers.servers import Sandbox, run
from tests.integration.test_compat_promtool import _lint, _only

pytestmark = pytest.mark.integration

UPSTREAM = """SELECT user, statements, statement_latency, table_scans, file_ios,
    file_io_latency, current_connections, total_connections, unique_hosts, current_memory,
    total_memory_allocated FROM sys.x$user_summary"""
# upstream's family, type, and scale of each column
FAMILIES = {
    "statements": ("statements_total", "counter", 1.0),
    "statement_latency": ("statement_latency", "counter", 1e-12),
    "table_scans": ("table_scans_total", "counter", 1.0),
    "file_ios": ("file_ios_total", "counter", 1.0),
    "file_io_latency": ("file_io_seconds_total", "counter", 1e-12),
    "current_connections": ("current_connections", "gauge", 1.0),
    "total_connections": ("connections_total", "counter", 1.0),
    "unique_hosts": ("unique_hosts_total", "counter", 1.0),
    "current_memory": ("current_memory_bytes", "gauge", 1.0),
    "total_memory_allocated": ("memory_allocated_bytes_total", "counter", 1.0),
}
MOVING = frozenset({"mysql_sys_current_connections", "mysql_sys_current_memory_bytes"})


def _upstream(sandbox: Sandbox) -> dict[str, Family]:
    out = {f"mysql_sys_{name}": Family(f"mysql_sys_{name}", type_)
           for name, type_, _ in FAMILIES.values()}
    for row in run(sandbox, "mariadb-primary", UPSTREAM):
        labels = frozenset({("user", str(row["user"]))})
        for column, (name, _, scale) in FAMILIES.items():
            family = f"mysql_sys_{name}"
            out[family].samples[(family, labels)] = float(row[column]) * scale
    return out


def _collect(sandbox: Sandbox, path: Path) -> str:
    return collect_text(one_target_config(
        sandbox, path, "mariadb-primary", collectors=["mysql_sys_user_summary"],
        compat=["mysqld_exporter"]), "mariadb-primary")


def test_sys_user_summary_matches_upstreams_query(sandbox: Sandbox, tmp_path: Path) -> None:
    failing: set[str] | None = None
    for _ in range(3):
        before = _upstream(sandbox)
        text = _collect(sandbox, tmp_path / "dbgauge.yaml")
        ours, after = parse(text), _upstream(sandbox)
        differences = compare(before, ours, after, set(before),
                              values=lambda family: family not in MOVING)
        failed = {d.family for d in differences}
        failing = failed if failing is None else failing & failed
        if not failing:
            break
    assert not failing, "\n".join(str(d) for d in differences if d.family in failing)
    users = {dict(k)["user"] for _, k in ours["mysql_sys_statements_total"].samples}
    assert {"dbgauge", "background", sandbox.state.mariadb.admin_user} <= users
    # upstream's own name has the one finding (no binary here to lint: named instead)
    assert _lint(_only(text, set(before))) == {
        'mysql_sys_statement_latency counter metrics should have "_total" suffix'}
