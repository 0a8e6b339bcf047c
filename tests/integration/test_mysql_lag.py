"""MySQL/MariaDB lag is lag: the replication threads and the heartbeat's age together.

A stopped SQL thread is CRITICAL at once (the lag grows, whatever the heartbeat's age says
yet: before, the check stayed OK until the warning level); a heartbeat row that no writer
updates on a replica that has applied all it received is UNKNOWN "no heartbeat writer",
not a growing lag (before: CRITICAL after 120 s on a healthy replica). And each account of
the issue's list -- USAGE, PROCESS, REPLICATION CLIENT, SLAVE MONITOR without the heartbeat
table, the documented minimum -- gets the lag or the GRANT to run, never a wrong value.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from tests.helpers import wait_for
from tests.helpers.daemon import Outcome, check, heartbeat, target_entry
from tests.helpers.servers import (
    Sandbox,
    documented_grants,
    execute,
    mariadb_account,
    replica_caught_up,
    run,
)

pytestmark = pytest.mark.integration


# The first test's own heartbeat table: the session daemon (tests/conftest.py) keeps the
# sandbox's default one fresh whenever it runs, so no row of that one ever goes stale.
LAG_TABLE = "dbgauge.lag_heartbeat"


def _config(sandbox: Sandbox, directory: Path, user: str = "dbgauge",
            password: str | None = None, table: str | None = None) -> Path:
    entry = target_entry(sandbox, "mariadb-replica")
    entry["heartbeat"] = {"mode": "read", **({"table": table} if table else {})}
    if password is not None:
        entry["dsn"] = str(entry["dsn"]).replace("//dbgauge@", f"//{user}@")
        (directory / f"{user}.password").write_text(password)
        (directory / f"{user}.password").chmod(0o600)
        entry["password_file"] = str(directory / f"{user}.password")
    path = directory / f"{user}.yaml"
    path.write_text(yaml.safe_dump({"targets": [entry]}))
    return path


def _lag(config: Path) -> Outcome:
    return check("lag", "--config", str(config), "--target", "mariadb-replica")


def test_a_stopped_thread_is_critical_at_once_and_an_unwritten_heartbeat_is_no_lag(
        sandbox: Sandbox, tmp_path: Path) -> None:
    config = _config(sandbox, tmp_path, table=LAG_TABLE)
    execute(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS {LAG_TABLE}")
    try:
        _stopped_thread_then_stale_row(sandbox, config)
    finally:
        execute(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS {LAG_TABLE}")


def _stopped_thread_then_stale_row(sandbox: Sandbox, config: Path) -> None:
    with heartbeat(sandbox, LAG_TABLE):
        ok = wait_for(lambda: (o := _lag(config)).code == 0 and o, timeout=30,
                      what="lag OK with the writer running")
        assert "(heartbeat of server_id " in ok.first
        run(sandbox, "mariadb-replica", "STOP SLAVE SQL_THREAD")
        try:
            got = _lag(config)  # at once: the row is still fresh, the lag 0.x s
            assert got.code == 2 and "[replication-stopped]" in got.out, got.out
            assert "SQL thread stopped: the lag grows" in got.out
        finally:
            run(sandbox, "mariadb-replica", "START SLAVE SQL_THREAD")
        wait_for(lambda: _lag(config).code == 0, timeout=30, what="lag OK again")
    replica_caught_up(sandbox)
    got = wait_for(lambda: (o := _lag(config)).code == 3 and o, timeout=60, interval=1,
                   what="the stale heartbeat to be UNKNOWN")
    assert "[no-heartbeat-writer] no heartbeat writer: the row of server_id " in got.out
    assert "its age is not lag" in got.out and "lag_seconds" not in got.first


@contextmanager
def _documented(sandbox: Sandbox, user: str, password: str) -> Iterator[None]:
    execute(sandbox, "mariadb-primary", f"DROP USER IF EXISTS '{user}'@'%'",
            *documented_grants("mariadb", user, password))
    try:
        yield
    finally:
        execute(sandbox, "mariadb-primary", f"DROP USER IF EXISTS '{user}'@'%'")


ACCOUNTS = [  # (global privileges, databases with ALL, what the check must name)
    ("USAGE", (), "GRANT SLAVE MONITOR ON *.*"),
    ("PROCESS", (), "GRANT SLAVE MONITOR ON *.*"),
    ("REPLICATION CLIENT", (), "GRANT SLAVE MONITOR ON *.*"),  # BINLOG MONITOR on MariaDB
    ("SLAVE MONITOR", (), "GRANT SELECT ON"),  # the heartbeat table: denied, not "no writer"
]


def test_each_account_gets_the_lag_or_the_grant(sandbox: Sandbox, tmp_path: Path) -> None:
    password = f"lag-{sandbox.state.dbgauge_password}"
    with heartbeat(sandbox):
        wait_for(lambda: _lag(_config(sandbox, tmp_path)).code == 0, timeout=30,
                 what="lag OK as the sandbox's monitoring user")
        for i, (privileges, databases, named) in enumerate(ACCOUNTS):
            user = f"dbgauge_lag{i}"
            with mariadb_account(sandbox, user, password, privileges, *databases):
                replica_caught_up(sandbox)
                got = _lag(_config(sandbox, tmp_path, user, password))
                assert got.code == 3 and named in got.out, (privileges, got.out)
                assert "lag_seconds" not in got.first, got.out
        with _documented(sandbox, "dbgauge_lagmin", password):
            replica_caught_up(sandbox)
            got = _lag(_config(sandbox, tmp_path, "dbgauge_lagmin", password))
            assert got.code == 0 and "(heartbeat of server_id " in got.first, got.out
