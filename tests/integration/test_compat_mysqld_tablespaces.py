"""mysqld_exporter's info_schema.innodb_tablespaces on MariaDB 10.11, beside Debian's
mysqld_exporter 0.14 itself.

0.14 asks INNODB_SYS_TABLESPACES for SPACE_TYPE, which MariaDB dropped in 10.5
(MDEV-19940): its scraper fails there and exports no family, which the test asserts (so a
peer that starts to answer is noticed). Upstream fixed it in 0.16
(prometheus/mysqld_exporter#860), and dbgauge speaks upstream's families: they are compared
with what upstream's MariaDB query returns when the sandbox admin runs it (the same SQL
text, formats as the scraper writes them), every family, series and value; a tablespace
made for the test is among them with the row format it was created with.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.daemon import collect_text, one_target_config
from tests.helpers.peers import Family, compare, mysqld_exporter, parse
from tests.helpers.servers import Sandbox, run
from tests.integration.test_compat_promtool import _lint, _only

pytestmark = pytest.mark.integration

OFF = ("--no-collect.global_status", "--no-collect.global_variables",
       "--no-collect.slave_status", "--no-collect.info_schema.query_response_time",
       "--no-collect.info_schema.innodb_cmp", "--no-collect.info_schema.innodb_cmpmem")
SCHEMA = "compat_tablespaces"
# upstream's innodbTablespacesQueryMariaDB with the table name filled in
UPSTREAM = """SELECT SPACE, NAME,
    ifnull((SELECT column_name FROM information_schema.COLUMNS
            WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = 'INNODB_SYS_TABLESPACES'
              AND COLUMN_NAME = 'FILE_FORMAT' LIMIT 1), 'NONE') AS FILE_FORMAT,
    ifnull(ROW_FORMAT, 'NONE') AS ROW_FORMAT, FILE_SIZE, ALLOCATED_SIZE
  FROM information_schema.`INNODB_SYS_TABLESPACES`"""
_P = "mysql_info_schema_innodb_tablespace_"


@pytest.fixture(scope="module")
def tablespace(sandbox: Sandbox) -> Iterator[None]:
    run(sandbox, "mariadb-primary", f"DROP DATABASE IF EXISTS {SCHEMA}",
        f"CREATE DATABASE {SCHEMA}",
        f"CREATE TABLE {SCHEMA}.c (id INT PRIMARY KEY, v VARCHAR(200)) ENGINE=InnoDB "
        "ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8")
    try:
        yield
    finally:
        run(sandbox, "mariadb-primary", f"DROP DATABASE IF EXISTS {SCHEMA}")


def _upstream(sandbox: Sandbox) -> dict[str, Family]:
    """Upstream's families from its own query, run as the sandbox admin."""
    out = {name: Family(f"{_P}{name}", "gauge") for name in (
        "space_info", "file_size_bytes", "allocated_size_bytes")}
    for row in run(sandbox, "mariadb-primary", UPSTREAM):
        name = str(row["NAME"])
        info = frozenset({("tablespace_name", name), ("file_format", str(row["FILE_FORMAT"])),
                          ("row_format", str(row["ROW_FORMAT"])), ("space_type", "")})
        out["space_info"].samples[(f"{_P}space_info", info)] = float(row["SPACE"])
        one = frozenset({("tablespace_name", name)})
        out["file_size_bytes"].samples[(f"{_P}file_size_bytes", one)] = float(row["FILE_SIZE"])
        out["allocated_size_bytes"].samples[(f"{_P}allocated_size_bytes", one)] = float(
            row["ALLOCATED_SIZE"])
    return {f.name: f for f in out.values()}


def _collect(sandbox: Sandbox, path: Path) -> str:
    return collect_text(one_target_config(
        sandbox, path, "mariadb-primary", collectors=["mysql_innodb_tablespaces"],
        compat=["mysqld_exporter"],
        collector_options={"mysql_innodb_tablespaces": {"limit": 100_000}}), "mariadb-primary")


def test_debian_0_14_fails_and_dbgauge_speaks_upstreams_families(
        sandbox: Sandbox, tablespace: None, tmp_path: Path) -> None:
    with mysqld_exporter(sandbox, "mariadb-primary", tmp_path,
                         ("--collect.info_schema.innodb_tablespaces", *OFF)) as peer:
        theirs = parse(peer.scrape())
    assert not [n for n in theirs if n.startswith(_P)]
    errors = theirs["mysql_exporter_scrape_errors_total"].samples
    assert errors[("mysql_exporter_scrape_errors_total", frozenset(
        {("collector", "collect.info_schema.innodb_tablespaces")}))] >= 1
    before = _upstream(sandbox)
    text = _collect(sandbox, tmp_path / "dbgauge.yaml")
    ours = parse(text)
    after = _upstream(sandbox)
    differences = compare(before, ours, after, set(before) & set(after))
    assert not differences, "\n".join(map(str, differences))
    rows = [dict(labels) for _, labels in ours[f"{_P}space_info"].samples]
    assert {"tablespace_name": f"{SCHEMA}/c", "file_format": "NONE",
            "row_format": "Compressed", "space_type": ""} in rows, rows
    assert ours["dbgauge_mysql_innodb_tablespaces_truncated"].samples
    # the peer has none to lint here: promtool finds nothing in dbgauge's
    assert not _lint(_only(text, set(before))), _lint(_only(text, set(before)))
