"""mysqld_exporter's mysql.user scraper (`--collect.mysql.user`, with and without
`--collect.mysql.user.privileges`) against Debian's mysqld_exporter 0.14 itself, on
mariadb-primary, beside `dbgauge collect --compat mysqld_exporter` with mysql_accounts
(its `privileges` option following the switch), both as the monitoring user.

An account with resource limits and a few global privileges is made first (dropped after),
so that the families carry values other than 0. Every family the peer exports must match:
name, type, labels, every series and value; without the switch neither exports a privilege
family. `promtool check metrics` finds nothing in dbgauge's output of them that it does not
find in the peer's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.daemon import collect_text, one_target_config
from tests.helpers.peers import compare, mysqld_exporter, parse
from tests.helpers.servers import Sandbox, execute
from tests.integration.test_compat_promtool import _lint, _only

pytestmark = pytest.mark.integration

OFF = ("--no-collect.global_status", "--no-collect.global_variables",
       "--no-collect.slave_status", "--no-collect.info_schema.query_response_time",
       "--no-collect.info_schema.innodb_cmp", "--no-collect.info_schema.innodb_cmpmem")
ACCOUNT = "compat_acct"


@pytest.fixture(scope="module")
def account(sandbox: Sandbox) -> Iterator[None]:
    execute(sandbox, "mariadb-primary",
            f"CREATE OR REPLACE USER {ACCOUNT}@'10.%' IDENTIFIED BY 'x-unused-1' WITH "
            "MAX_QUERIES_PER_HOUR 100 MAX_UPDATES_PER_HOUR 20 MAX_CONNECTIONS_PER_HOUR 30 "
            "MAX_USER_CONNECTIONS 4",
            f"GRANT PROCESS, FILE, SHOW DATABASES ON *.* TO {ACCOUNT}@'10.%'")
    try:
        yield
    finally:
        execute(sandbox, "mariadb-primary", f"DROP USER IF EXISTS {ACCOUNT}@'10.%'")


def _collect(sandbox: Sandbox, path: Path, privileges: int) -> str:
    return collect_text(one_target_config(
        sandbox, path, "mariadb-primary", collectors=["mysql_accounts"],
        compat=["mysqld_exporter"],
        collector_options={"mysql_accounts": {"privileges": privileges}}), "mariadb-primary")


@pytest.mark.parametrize("privileges", [1, 0])
def test_every_mysql_user_family_matches_the_peer(
        sandbox: Sandbox, account: None, tmp_path: Path, privileges: int) -> None:
    flags = ("--collect.mysql.user", *(("--collect.mysql.user.privileges",) * privileges),
             *OFF)
    with mysqld_exporter(sandbox, "mariadb-primary", tmp_path, flags) as peer:
        text = peer.scrape()
        our_text = _collect(sandbox, tmp_path / "dbgauge.yaml", privileges)
        after = parse(peer.scrape())
    before, ours = parse(text), parse(our_text)
    theirs = {n for n in before if n.startswith("mysql_mysql_")} & set(after)
    limits = {f"mysql_mysql_{c}" for c in (
        "max_questions", "max_updates", "max_connections", "max_user_connections")}
    privilege_families = {n for n in theirs if n.endswith("_priv")}
    assert theirs == limits | privilege_families
    assert len(privilege_families) == (29 if privileges else 0)
    assert not {n for n in ours if n.endswith("_priv")} - privilege_families
    differences = compare(before, ours, after, theirs)
    assert not differences, "\n".join(map(str, differences))
    labels = frozenset({("mysql_user", ACCOUNT), ("hostmask", "10.%")})
    assert before["mysql_mysql_max_user_connections"].samples[
        ("mysql_mysql_max_user_connections", labels)] == 4
    if privileges:
        assert before["mysql_mysql_file_priv"].samples[("mysql_mysql_file_priv", labels)] == 1
        assert before["mysql_mysql_super_priv"].samples[("mysql_mysql_super_priv", labels)] == 0
    extra = _lint(_only(our_text, theirs)) - _lint(_only(text, theirs))
    assert not extra, sorted(extra)
