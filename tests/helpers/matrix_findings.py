"""Regression cases for the six findings of the run on every major (issue 29), as data
for the matrix battery: each `Finding` names the majors it applies to and a function that
proves the fixed behaviour on a major's sandbox (tests/helpers/matrix.py). `Findings`,
mixed into a major's battery class, runs those that apply to its major.

They expect the fixes the issue describes: each fails until its fix is in.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner

from dbgauge.cli import cli
from dbgauge.toolkit import sandbox as sb
from dbgauge.toolkit.sandbox.model import SUBSCRIPTION
from tests.helpers import Metrics, parse_metrics, value, wait_for
from tests.helpers.servers import Sandbox, pg_admin

P = "dbgauge_postgres_"
ALL = (13, 14, 15, 16, 17, 18)


@dataclass(frozen=True)
class Finding:
    """One finding's regression test: on which majors it applies, and the proof."""

    name: str
    majors: tuple[int, ...]
    run: Callable[[Sandbox, int], None]


def _scrape(sandbox: Sandbox, target: str) -> Metrics:
    got = CliRunner().invoke(cli, ["collect", target, "--config", str(sandbox.config)])
    assert got.exit_code == 0, got.output
    return parse_metrics(got.stdout)


def _check(sandbox: Sandbox, *args: str) -> str:
    got = CliRunner().invoke(cli, ["check", *args, "--config", str(sandbox.config)])
    return str(got.output)


def _restart_primary_with(sandbox: Sandbox, setting: str, to: str | None) -> None:
    """ALTER SYSTEM SET (or RESET, `to` None) a postmaster setting, then restart."""
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        if to is None:
            conn.execute(f"ALTER SYSTEM RESET {setting}")
        else:
            conn.execute(f"ALTER SYSTEM SET {setting} = {to}")
    sb.stop_instance(sandbox.directory, "pg-primary")
    sb.start_instance(sandbox.directory, "pg-primary")


def reserved_connections(sandbox: Sandbox, major: int) -> None:
    """1. The limit an ordinary role meets is max_connections minus both reserves."""
    _restart_primary_with(sandbox, "reserved_connections", "10")
    try:
        out = _check(sandbox, "connections", "--target", "pg-primary")
        limit = 300 - 3 - 10
        assert f" of {limit} connections in use" in out, out
    finally:
        _restart_primary_with(sandbox, "reserved_connections", None)


def logical_walsender_is_no_standby(sandbox: Sandbox, major: int) -> None:
    """6. pg-subscriber's walsender is not a streaming standby of pg-primary."""
    # the primary may have just restarted (another finding): the standby and the
    # subscriber reconnect within wal_retrieve_retry_interval; wait for both senders
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        wait_for(lambda: conn.execute(
            "SELECT (SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming') = 2 "
            "AND (SELECT bool_and(active) FROM pg_replication_slots)").fetchone()[0],
            timeout=60, what="the standby and the subscriber connected to pg-primary")
    out = _check(sandbox, "replication", "--target", "pg-primary")
    assert "1 standby(s) streaming" in out, out
    assert value(_scrape(sandbox, "pg-primary"), P + "replication_standbys") == 1


def parallel_apply_is_one_subscription(sandbox: Sandbox, major: int) -> None:
    """2. A parallel apply worker (relid NULL too) is not a second subscription."""
    table = "matrix_parallel"
    with closing(pg_admin(sandbox, "pg-primary", dbname="drift")) as pub, \
            closing(pg_admin(sandbox, "pg-subscriber", dbname="drift")) as sub:
        for conn in (pub, sub):
            conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (id int PRIMARY KEY, v text)")
        sub.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} REFRESH PUBLICATION")
        # no parallel apply while a table is still being synchronised
        wait_for(lambda: sub.execute("SELECT count(*) = 0 FROM pg_subscription_rel "
                                     "WHERE srsubstate <> 'r'").fetchone()[0], timeout=30,
                 what="every subscribed table to be ready")
        row = sub.execute("SELECT substream FROM pg_subscription WHERE subname = %s",
                          (SUBSCRIPTION,)).fetchone()
        before = "parallel" if row and row[0] == "p" else ("on" if row and row[0] in (
            True, "t") else "off")
        sub.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} SET (streaming = parallel)")
        # the walsender decodes: past 64kB it streams the transaction in progress
        pub.execute("ALTER SYSTEM SET logical_decoding_work_mem = '64kB'")
        pub.execute("SELECT pg_reload_conf()")
        try:
            pub.execute(f"TRUNCATE {table}")
            pub.execute(f"INSERT INTO {table} SELECT g, repeat('x', 100) "  # noqa: S608 - constants
                        "FROM generate_series(1, 20000) g")
            wait_for(lambda: sub.execute(
                "SELECT count(*) >= 2 FROM pg_stat_subscription WHERE subname = %s "
                "AND relid IS NULL", (SUBSCRIPTION,)).fetchone()[0], timeout=30,
                what="a parallel apply worker beside the leader")
            m = _scrape(sandbox, "pg-subscriber")
            assert value(m, P + "replication_subscriptions") == 1
            out = _check(sandbox, "replication", "--target", "pg-subscriber")
            assert "1 of 1 subscription(s)" in out, out
        finally:
            sub.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} SET (streaming = {before})")
            pub.execute("ALTER SYSTEM RESET logical_decoding_work_mem")
            pub.execute("SELECT pg_reload_conf()")
            pub.execute(f"DROP TABLE IF EXISTS {table}")
            sub.execute(f"DROP TABLE IF EXISTS {table}")


def restartpoints_on_a_standby(sandbox: Sandbox, major: int) -> None:
    """3. A requested restartpoint on a 17+ standby is counted (pg_stat_checkpointer's
    restartpoints_*), as 16 and before count it among the checkpoints."""
    def requested(m: Metrics) -> float:
        return sum(v for (n, _), v in m.items() if n in (
            P + "checkpoints_requested_total", P + "restartpoints_requested_total",
            P + "restartpoints_done_total"))

    before = requested(_scrape(sandbox, "pg-standby"))
    with closing(pg_admin(sandbox, "pg-primary")) as primary:
        primary.execute("CHECKPOINT")  # a checkpoint record for the standby to restart at
        lsn = primary.execute("SELECT pg_current_wal_lsn()").fetchone()
    with closing(pg_admin(sandbox, "pg-standby")) as standby:
        assert lsn is not None
        wait_for(lambda: standby.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn",
                                         (lsn[0],)).fetchone()[0], timeout=30)
        standby.execute("CHECKPOINT")  # on a standby: a restartpoint
    wait_for(lambda: requested(_scrape(sandbox, "pg-standby")) > before, timeout=15,
             what="the standby's requested restartpoint to be counted")


def stat_io(sandbox: Sandbox, major: int) -> None:
    """4. pg_stat_io (16+) read, by backend type, object and context."""
    m = _scrape(sandbox, "pg-primary")
    io = {n: dict(ls) for (n, ls) in m if n.startswith(P + "io_")}
    assert io, "no dbgauge_postgres_io_* family"
    for what in ("reads", "writes", "extends", "hits", "evictions", "fsyncs"):
        assert any(what in n for n in io), f"no pg_stat_io {what} family in {sorted(io)}"
    assert all({"backend_type", "object", "context"} <= set(ls) for ls in io.values())


def pgtap_generate_runs_here(sandbox: Sandbox, major: int) -> None:
    """5. `pgtap generate` output runs on the major it came from and leaves
    extension-owned objects (pg_stat_statements' views) out."""
    dsn = sandbox.admin_dsn("pg-primary")
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        conn.execute("CREATE OR REPLACE VIEW matrix_v AS SELECT id, v FROM matrix_t")
    snapshot = Path(sandbox.directory) / "snapshot.sql"
    try:
        got = CliRunner().invoke(cli, ["pgtap", "generate", "--dsn", dsn, "--schema", "public",
                                       "-o", str(snapshot)])
        assert got.exit_code == 0, got.output
        text = snapshot.read_text()
        assert "pg_stat_statements" not in text, "extension-owned objects in the snapshot"
        ran = CliRunner().invoke(cli, ["pgtap", "run", "--dsn", dsn, str(snapshot)])
        assert ran.exit_code == 0, ran.output
    finally:
        with closing(pg_admin(sandbox, "pg-primary")) as conn:
            conn.execute("DROP VIEW IF EXISTS matrix_v")


FINDINGS = (
    Finding("reserved-connections", (16, 17, 18), reserved_connections),
    Finding("parallel-apply-worker", (16, 17, 18), parallel_apply_is_one_subscription),
    Finding("restartpoints", (16, 17, 18), restartpoints_on_a_standby),  # 16: as before
    Finding("pg-stat-io", (16, 17, 18), stat_io),
    Finding("pgtap-generate", ALL, pgtap_generate_runs_here),
    Finding("logical-walsender", ALL, logical_walsender_is_no_standby),
)


class Findings:
    """Mixed into a major's test class (before `Battery`, which has the `pg` fixture)."""

    major: ClassVar[int]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "finding" in metafunc.fixturenames:
            cases = [f for f in FINDINGS if self.major in f.majors]
            metafunc.parametrize("finding", cases, ids=[f.name for f in cases])
        super().pytest_generate_tests(metafunc)  # type: ignore[misc]

    def test_finding(self, pg: Sandbox, finding: Finding) -> None:
        finding.run(pg, self.major)
