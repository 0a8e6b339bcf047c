"""PostgreSQL under least privilege: every check and collector is right or says it cannot see.

Three real roles on the sandbox (created on the primary, replicated to the standby, dropped
afterwards): one with CONNECT only, one with pg_read_all_stats only, one with pg_monitor.
PostgreSQL answers a role without pg_read_all_stats with what it may see (NULL states,
`<insufficient privilege>`): the checks must then be UNKNOWN and the collectors fail, with
the GRANT to run; never "0 standbys", "WAL receiver stopped" or "no long query".
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import psycopg
import pytest
import yaml

from tests.helpers import wait_for
from tests.helpers.daemon import Outcome, check, scraper, target_entry
from tests.helpers.servers import Sandbox, pg_admin, sleeping

pytestmark = pytest.mark.integration

ROLES = {"connect": "", "stats": "pg_read_all_stats", "monitor": "pg_monitor"}
NODES = ("pg-primary", "pg-standby")
GRANT = 'GRANT pg_monitor TO "dbgauge_lp_{}"'


def _user(kind: str) -> str:
    return f"dbgauge_lp_{kind}"


@pytest.fixture(scope="module")
def roles(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The three roles, and for each a dbgauge config naming both PostgreSQL nodes as it."""
    directory = tmp_path_factory.mktemp("least-privilege")
    password = f"lp-{sandbox.state.dbgauge_password}"
    (directory / "password").write_text(password)
    (directory / "password").chmod(0o600)
    configs = {}
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        for kind, granted in ROLES.items():
            user = _user(kind)
            conn.execute(f"DROP ROLE IF EXISTS {user}")
            conn.execute(f"CREATE ROLE {user} LOGIN PASSWORD '{password}'")
            conn.execute(f"GRANT CONNECT ON DATABASE app TO {user}")
            if granted:
                conn.execute(f"GRANT {granted} TO {user}")
            targets = []
            for node in NODES:
                entry = target_entry(sandbox, node)
                entry["dsn"] = str(entry["dsn"]).replace("//dbgauge@", f"//{user}@")
                entry["password_file"] = str(directory / "password")
                targets.append(entry)
            configs[kind] = directory / f"{kind}.yaml"
            configs[kind].write_text(yaml.safe_dump({"targets": targets}))
    for kind in ROLES:  # replicated: each can log in on the standby too
        wait_for(lambda k=kind: _can_log_in(sandbox, _user(k), password), timeout=30,
                 what=f"role {_user(kind)} on the standby")
    try:
        yield configs
    finally:
        with closing(pg_admin(sandbox, "pg-primary")) as conn:
            for kind in ROLES:
                conn.execute(f"DROP OWNED BY {_user(kind)}")
                conn.execute(f"DROP ROLE {_user(kind)}")


def _can_log_in(sandbox: Sandbox, user: str, password: str) -> bool:
    try:
        psycopg.connect(host="127.0.0.1", port=sandbox.state.port("pg-standby"), user=user,
                        password=password, dbname="app", connect_timeout=5).close()
        return True
    except psycopg.OperationalError:
        return False


def _check(config: Path, name: str, *args: str) -> Outcome:
    return check(name, "--config", str(config), "--target", "pg-primary",
                 "--target", "pg-standby", *args)


def _walsenders(sandbox: Sandbox) -> tuple[int, int]:
    """Streaming walsenders as the administrator sees them: (physical standbys, logical
    ones, which stream from a logical slot: pg-subscriber's)."""
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE r.slot_type IS DISTINCT FROM 'logical'), "
            "count(*) FILTER (WHERE r.slot_type = 'logical') FROM pg_stat_replication s "
            "LEFT JOIN pg_replication_slots r ON r.active_pid = s.pid "
            "WHERE s.state = 'streaming'").fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def test_replication_and_lag_unknown_without_stats_right_with_them(
        sandbox: Sandbox, roles: dict[str, Path]) -> None:
    """CONNECT only: replication and lag UNKNOWN on both nodes with the GRANT line, never
    "0 standby(s)" nor "WAL receiver is stopped"; split-brain does not compare a timeline
    it cannot read. pg_read_all_stats or pg_monitor: the
    walsenders the administrator sees, the standby streaming, lag measured."""
    streaming, logical = _walsenders(sandbox)
    assert streaming >= 1 and logical >= 1  # pg-standby, pg-subscriber's walsender
    got = _check(roles["connect"], "replication")
    assert got.code == 3, got.out
    assert "0 standby(s)" not in got.out and "stopped" not in got.out
    for node in NODES:
        assert f"UNKNOWN {node} [insufficient-privilege] the role dbgauge_lp_connect cannot " \
               f"see" in got.out
    assert got.out.count(GRANT.format("connect")) >= 2
    got = _check(roles["connect"], "lag")
    assert got.code == 3 and "lag_seconds" not in got.first, got.out
    assert got.out.count(GRANT.format("connect")) >= 2
    got = _check(roles["connect"], "split-brain")  # the standby's timeline may trail
    assert got.code == 3 and "UNKNOWN pg-standby [insufficient-privilege] timeline not " \
        "compared with pg-primary's" in got.out, got.out
    for kind in ("stats", "monitor"):
        got = _check(roles[kind], "replication")
        assert got.code == 0, got.out
        assert f"pg-primary: primary, {streaming} standby(s) streaming, {logical} of " \
               f"{logical} logical walsender(s) streaming to subscribers" in got.first
        assert "pg-standby: standby, streaming" in got.first
        got = _check(roles[kind], "lag")
        assert got.code == 0 and "'pg-standby:lag_seconds'=" in got.first, got.out
        assert "'pg-primary:lag_seconds'=" in got.first  # its standbys, seen from it
        got = _check(roles[kind], "split-brain")
        assert got.code == 0 and got.first.startswith("SPLIT-BRAIN OK - "), got.out


def test_activity_checks_see_another_roles_session_or_say_they_cannot(
        sandbox: Sandbox, roles: dict[str, Path]) -> None:
    """An administrator's pg_sleep: CONNECT only cannot see it, so query-time (and the
    other checks reading pg_stat_activity) are UNKNOWN, not OK; with pg_read_all_stats or
    pg_monitor query-time finds that very session."""
    primary = ("--target", "pg-primary")
    with sleeping(sandbox) as pid:
        for kind in ("stats", "monitor"):
            got = wait_for(lambda k=kind: (o := check(
                "query-time", "--config", str(roles[k]), *primary, "-w", "1", "-c", "1000"))
                .code == 1 and o, timeout=30, what="the sleep to be seen running 1 s")
            assert f"(pid {pid}, user " in got.first
        for name in ("query-time", "txn-idle", "txn-time", "locks", "connections"):
            got = check(name, "--config", str(roles["connect"]), *primary)
            assert got.code == 3, (name, got.out)
            assert "UNKNOWN pg-primary [insufficient-privilege] the role dbgauge_lp_connect " \
                   "cannot see" in got.out and GRANT.format("connect") in got.out, got.out


def _scrape(sandbox: Sandbox, config: Path, kind: str, node: str, failing: frozenset[str]
            ) -> dict[str, tuple[bool, str]]:
    """One in-process scrape of `node` as role `kind`; the collectors that failed must be
    `failing`; every collector's (success, error)."""
    entry = target_entry(sandbox, node)
    with scraper(sandbox, node, dsn=str(entry["dsn"]).replace("//dbgauge@", f"//{_user(kind)}@"),
                 password_file=str(config.parent / "password")) as scrape:
        result = scrape.runner.scrape(time.monotonic() + 8, None)
    assert result.up, result.error
    runs = {r.collector: (r.success, r.error or "") for r in result.collectors}
    assert {name for name, (ok, _) in runs.items() if not ok} == failing, runs
    names = {s.name for s in result.samples}
    if "postgres_replication" in failing:  # a count of what it sees is not exported
        hidden = "dbgauge_postgres_replication_" + (
            "standbys" if node == "pg-primary" else "wal_receiver_status")
        assert hidden not in names
        assert "dbgauge_postgres_replication_in_recovery" in names  # what it sees stands
    elif node == "pg-standby":
        assert "dbgauge_postgres_replication_wal_receiver_status" in names
    if "postgres_database" in failing:
        assert "dbgauge_postgres_connections" not in names
        assert "pg_stat_activity_count" not in names
    return runs


ACTIVITY = frozenset({"postgres_database", "postgres_locks", "postgres_replication"})
SETTINGS = frozenset({"postgres_checkpoints", "postgres_statements"})  # pg_monitor's


def test_collectors_fail_naming_the_grant_and_export_no_partial_count(
        sandbox: Sandbox, roles: dict[str, Path]) -> None:
    """CONNECT only: the collectors reading activity and replication fail with the GRANT
    line and export no count of what they saw (success 0, no standbys 0); what is readable
    stands. pg_read_all_stats: only what needs pg_monitor's other roles fails, naming it.
    pg_monitor: every collector succeeds."""
    for node in NODES:
        runs = _scrape(sandbox, roles["connect"], "connect", node, ACTIVITY | SETTINGS)
        for name in ACTIVITY | SETTINGS:
            assert GRANT.format("connect") in runs[name][1], runs[name]
        runs = _scrape(sandbox, roles["stats"], "stats", node, SETTINGS)
        for name in SETTINGS:
            assert GRANT.format("stats") in runs[name][1], runs[name]
        _scrape(sandbox, roles["monitor"], "monitor", node, frozenset())
