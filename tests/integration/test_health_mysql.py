"""MySQL-family checks and authentication failures against the real sandbox (MariaDB
10.11; Group Replication, MySQL 8 only, is unit-tested on captured outputs): a restart
seen as a low uptime, purge held back by an open snapshot growing the InnoDB history
list, a transaction held open, and a wrong password reported as `[auth-failed]` on
both engines. Every test restores what it changed."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

from dbgauge.toolkit import sandbox as sb
from tests.helpers import wait_for
from tests.helpers.daemon import Outcome, cfg, check
from tests.helpers.servers import Sandbox, admin, run

pytestmark = pytest.mark.integration


def when(name: str, code: int, *args: str, what: str = "", timeout: float = 30) -> Outcome:
    return wait_for(lambda: (lambda got: got if got.code == code else None)(check(name, *args)),
                    timeout=timeout, what=what or f"check {name} to exit {code}")


def test_restart_shows_as_low_uptime(sandbox: Sandbox) -> None:
    target = cfg(sandbox, "--target", "mariadb-replica")
    sb.stop_instance(sandbox.directory, "mariadb-replica")
    sb.start_instance(sandbox.directory, "mariadb-replica")
    got = when("uptime", 2, *target, "-w", "3600:", "-c", "120:")
    assert got.first.startswith("UPTIME CRITICAL - mariadb-replica: up "), got.out
    assert "CRITICAL mariadb-replica [restarted] up " in got.out and "(threshold 120:)" in got.out
    assert "s;3600:;120:" in got.first
    got = check("uptime", *target, "-w", "@100000:", "-c", "@200000:")  # inside: alert
    assert got.code == 0, got.out  # it was up less than 100000 s: outside both ranges
    # PostgreSQL too; -c as well: the default critical (300:) fires on a sandbox younger than
    # 5 minutes, as in CI.
    got = check("uptime", *cfg(sandbox, "--target", "pg-primary"), "-w", "999999999:",
                "-c", "1:")
    assert got.code == 1 and "WARNING pg-primary [restarted] up " in got.out, got.out


def test_history_list_grows_behind_an_open_snapshot(sandbox: Sandbox) -> None:
    target = cfg(sandbox, "--target", "mariadb-primary")
    run(sandbox, "mariadb-primary", "CREATE TABLE IF NOT EXISTS app.hc_history "
        "(id INT PRIMARY KEY, n INT) ENGINE=InnoDB", "REPLACE INTO app.hc_history VALUES (1, 0)")
    with closing(admin(sandbox, "mariadb-primary")) as snapshot:
        snapshot.cursor().execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        try:
            for _ in range(60):  # 60 committed updates purge may not remove
                run(sandbox, "mariadb-primary", "UPDATE app.hc_history SET n = n + 1")
            got = when("history-list", 1, *target, "-w", "30", "-c", "100000",
                       what="the history list to pass 30")
            assert "WARNING mariadb-primary [history-list] InnoDB history list length " \
                in got.out
            got = when("txn-time", 1, *target, "-w", "1", what="the snapshot to age 1 s")
            assert "WARNING mariadb-primary [long-transaction] oldest open transaction " \
                in got.out and "(1 open)" in got.out
        finally:
            snapshot.rollback()
    run(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.hc_history")
    when("txn-time", 0, *target, "-w", "1")


def test_group_replication_on_mariadb_says_there_is_none(sandbox: Sandbox) -> None:
    got = check("group-replication", *cfg(sandbox, "--target", "mariadb-primary"))
    assert got.code == 0 and "no Group Replication on 10." in got.first, got.out


def test_wrong_password_is_auth_failed_not_unreachable(sandbox: Sandbox,
                                                       tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.password"
    wrong.write_text("not-the-password-4711\n")
    for name in ("mariadb-replica", "pg-primary"):
        got = check("connections", "--node", f"{name}={sandbox.state.dbgauge_dsn(name)}",
                    "--password-file", str(wrong))
        assert got.code == 2, got.out  # the server is up, but nothing can be checked
        assert f"CRITICAL {name} [auth-failed] authentication failed for user 'dbgauge' at " \
               f"127.0.0.1:{sandbox.state.port(name)}" in got.out, got.out
        assert "check the password source" in got.out  # the hint
        assert "[unreachable]" not in got.out and "not-the-password-4711" not in got.out


def test_version_compares_the_servers_dotted_parts(sandbox: Sandbox) -> None:
    """check version on MariaDB: the major.minor it runs is OK, another is WARNING."""
    running = run(sandbox, "mariadb-primary", "SELECT VERSION() AS v")[0]["v"].split("-")[0]
    major_minor = ".".join(running.split(".")[:2])
    assert check("version", *cfg(sandbox, "--target", "mariadb-primary", "-c",
                                 major_minor)).code == 0
    other = check("version", *cfg(sandbox, "--target", "mariadb-primary", "-w", "5.5"))
    assert other.code == 1 and f"version {running}, expected 5.5" in other.out, other.out
