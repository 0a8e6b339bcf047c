"""The matrix battery: what `make test` proves on every PostgreSQL major besides 15.

A test module per major (tests/integration/test_matrix_pg<N>.py) subclasses `Battery` with
its `major`; the battery then runs on that major's own sandbox (tests/helpers/matrix.py):
every PostgreSQL collector on the primary, the standby and the subscriber (every family
that exists on that major present, none that does not, `promtool check metrics` clean), a
few values against the catalog, every PostgreSQL check in OK and in its alerting state,
`status`, `pgtap run`, and the replication collectors on a standby and a subscriber.
What differs between majors is data: `FAMILY_MAJORS` and `CHECK_CASES`; the regression
cases of issue 29's findings are data too (tests/helpers/matrix_findings.py, mixed in).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner, Result

from dbgauge.app import registry
from dbgauge.cli import cli
from dbgauge.toolkit.sandbox.model import SUBSCRIPTION
from tests.helpers import Metrics, parse_metrics, value, wait_for
from tests.helpers.majors import FAMILY_MAJORS
from tests.helpers.matrix import (
    WORKLOAD_SEQUENCE,
    WORKLOAD_TABLE,
    Condition,
    disabled_subscription,
    failing_archiver,
    idle_transaction,
    make_workload,
    matrix_sandbox,
    no_condition,
    promoted_standby,
    running_statement,
    waiting_lock,
)
from tests.helpers.servers import Sandbox, pg_admin

P = "dbgauge_postgres_"
# Families that need a state the battery does not make on every scrape: a failed archive,
# a custom query file, a checksum failure, a lock wait, a running VACUUM, a stats reset,
# autovacuum having visited the table (or working), an idle or transaction-holding session.
CONDITIONAL = frozenset({
    P + "archiver_last_failed_age_seconds", P + "custom_query_success",
    P + "database_checksum_last_failure_timestamp_seconds", P + "lock_waits",
    P + "database_stats_reset_timestamp_seconds",
    P + "table_last_autovacuum_age_seconds", P + "table_last_autoanalyze_age_seconds",
    # postgres_queries over several databases; an autovacuum worker at work, an idle
    # session, an open transaction (postgres_activity, opt-in: run here as every collector)
    P + "custom_query_database_success", P + "autovacuum_worker_seconds",
    P + "idle_session_seconds", P + "open_transactions_oldest_seconds",
    *(P + "vacuum_" + f for f in (
        "dead_tuple_bytes", "dead_tuples", "heap_blocks", "heap_blocks_scanned",
        "heap_blocks_vacuumed", "index_passes", "max_dead_tuple_bytes", "max_dead_tuples",
        "phase")),
})


@dataclass(frozen=True)
class CheckCase:
    """A `dbgauge check` in its OK state (`ok` arguments) and alerting state (`alert`
    arguments, while `condition` holds): the alert exits `code` and prints `expect`."""

    check: str
    ok: tuple[str, ...]
    alert: tuple[str, ...]
    code: int
    expect: str
    condition: Condition = no_condition


PRIMARY = ("--target", "pg-primary")
ZERO = ("-w", "0", "-c", "0")  # any positive value alerts
CHECK_CASES = (
    CheckCase("archiver", PRIMARY, PRIMARY, 2, "[archive-failing]", failing_archiver),
    CheckCase("connection", PRIMARY, ("--node", "postgresql://dbgauge@127.0.0.1:1/app"), 2,
              "cannot connect"),
    CheckCase("connections", PRIMARY, (*PRIMARY, *ZERO), 2, "connections"),
    CheckCase("lag", ("--target", "pg-standby"), ("--target", "pg-standby", "-c", "@0:1e9"),
              2, "lag"),
    CheckCase("last-analyze", PRIMARY, (*PRIMARY, *ZERO), 2, WORKLOAD_TABLE),
    CheckCase("last-vacuum", PRIMARY, (*PRIMARY, *ZERO), 2, WORKLOAD_TABLE),
    CheckCase("locks", PRIMARY, (*PRIMARY, *ZERO), 2, "[lock-wait]", waiting_lock),
    CheckCase("query-time", PRIMARY, (*PRIMARY, *ZERO), 2, "[long-query]", running_statement),
    CheckCase("replication", ("--target", "pg-subscriber"), ("--target", "pg-subscriber"), 2,
              "[subscription-disabled]", disabled_subscription),
    CheckCase("sequence", PRIMARY, (*PRIMARY, "-w", "10", "-c", "40"), 2, WORKLOAD_SEQUENCE),
    CheckCase("txn-idle", PRIMARY, (*PRIMARY, *ZERO), 2, "[idle-in-transaction]",
              idle_transaction),
    CheckCase("txn-time", PRIMARY, (*PRIMARY, *ZERO), 2, "[long-transaction]",
              idle_transaction),
    CheckCase("txn-wraparound", PRIMARY, (*PRIMARY, "-w", "0%", "-c", "0%"), 2,
              "xid age"),
    CheckCase("uptime", (*PRIMARY, "-w", "0:", "-c", "0:"),
              (*PRIMARY, "-w", "1e9:", "-c", "1e9:"), 2, "up "),
    CheckCase("split-brain", ("--targets", "pg-primary,pg-standby"),
              ("--targets", "pg-primary,pg-standby"), 2, "[multiple-primaries]",
              promoted_standby),
)


def invoke(sandbox: Sandbox, *args: str) -> Result:
    """A dbgauge command in-process (no interpreter start per call) on the sandbox."""
    return CliRunner().invoke(cli, [*args, "--config", str(sandbox.config)])


def check(sandbox: Sandbox, name: str, *args: str) -> Result:
    return invoke(sandbox, "check", name, *args)


def scrape(sandbox: Sandbox, target: str) -> str:
    got = invoke(sandbox, "collect", target)
    assert got.exit_code == 0, got.output
    return got.stdout  # the log lines of a failing collector are on stderr


def families(metrics: Metrics) -> set[str]:
    return {name for name, _ in metrics}


def declared_families() -> set[str]:
    return {spec.name for c in registry().for_kind("postgres") for spec in c.metrics}


def catalog(sandbox: Sandbox, query: str, *params: Any, name: str = "pg-primary") -> Any:
    with closing(pg_admin(sandbox, name)) as conn:
        row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


class Battery:
    """The battery on one major: a subclass named Test... sets `major`."""

    major: ClassVar[int]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "case" in metafunc.fixturenames:
            metafunc.parametrize("case", CHECK_CASES, ids=[c.check for c in CHECK_CASES])

    @pytest.fixture(scope="class")
    @classmethod
    def pg(cls) -> Iterator[Sandbox]:
        with matrix_sandbox(cls.major) as sandbox:
            make_workload(sandbox)
            yield sandbox

    def test_the_sandbox_runs_its_major(self, pg: Sandbox) -> None:
        for name in ("pg-primary", "pg-standby", "pg-subscriber"):
            version = catalog(pg, "SELECT current_setting('server_version_num')::int", name=name)
            assert version // 10000 == self.major, (name, version)
        assert pg.state.pg_version == self.major

    def test_every_collector_every_family_promtool_clean(self, pg: Sandbox) -> None:
        seen: set[str] = set()
        lint: list[str] = []
        for target in ("pg-primary", "pg-standby", "pg-subscriber"):
            text = scrape(pg, target)
            metrics = parse_metrics(text)
            failed = [dict(ls)["collector"] for (n, ls), v in metrics.items()
                      if n == "dbgauge_collector_success" and v != 1]
            assert not failed, f"collectors failed on {target}: {failed}"
            done = subprocess.run(["promtool", "check", "metrics"], input=text,
                                  capture_output=True, text=True, timeout=60, check=False)
            if done.returncode != 0:
                lint.append(f"promtool on {target}: {done.stdout}{done.stderr}")
            seen |= families(metrics)
        on_major = {f for f, (lo, hi) in FAMILY_MAJORS.items() if lo <= self.major <= hi}
        off_major = set(FAMILY_MAJORS) - on_major
        expected = declared_families() - CONDITIONAL - off_major
        assert not expected - seen, f"missing on {self.major}: {sorted(expected - seen)}"
        assert not off_major & seen, f"not on {self.major}, yet seen: {sorted(off_major & seen)}"
        assert not lint, "\n".join(lint)

    def test_values_match_the_catalog(self, pg: Sandbox) -> None:
        m = parse_metrics(scrape(pg, "pg-primary"))
        assert value(m, P + "max_connections") == catalog(
            pg, "SELECT current_setting('max_connections')::int")
        assert value(m, P + "replication_slots") == catalog(
            pg, "SELECT count(*) FROM pg_replication_slots")
        size = catalog(pg, "SELECT pg_database_size('app')")
        assert value(m, P + "database_size_bytes", database="app") == pytest.approx(size, 0.2)
        assert value(m, P + "sequence_used_ratio", sequence=WORKLOAD_SEQUENCE) == \
            pytest.approx(49 / 99)  # (last - min) / (max - min)
        started = catalog(pg, "SELECT extract(epoch FROM pg_postmaster_start_time())")
        assert value(m, P + "start_time_seconds") == pytest.approx(float(started), abs=1)
        info = next(dict(ls) for (n, ls) in m if n == "dbgauge_target_info")
        assert info["version"].split(".")[0] == str(self.major)

        def dead_tuples_agree() -> bool:
            m = parse_metrics(scrape(pg, "pg-primary"))
            dead = catalog(pg, "SELECT n_dead_tup FROM pg_stat_user_tables "
                               "WHERE relname = %s", WORKLOAD_TABLE)
            return dead == 10 and value(m, P + "table_dead_tuples", table=WORKLOAD_TABLE) == 10

        wait_for(dead_tuples_agree, timeout=30, what="10 dead tuples in the catalog and scrape")

    def test_check_ok_then_alerting(self, pg: Sandbox, case: CheckCase) -> None:
        got = check(pg, case.check, *case.ok)
        assert got.exit_code == 0, got.output
        with case.condition(pg):
            got = wait_for(lambda: (lambda r: r if r.exit_code == case.code else None)(
                check(pg, case.check, *case.alert)), timeout=60,
                what=f"check {case.check} to exit {case.code}")
            assert case.expect in got.output, got.output
        wait_for(lambda: check(pg, case.check, *case.ok).exit_code == 0, timeout=90,
                 what=f"check {case.check} to be OK again")

    def test_status(self, pg: Sandbox) -> None:
        got = wait_for(lambda: (lambda r: r if r.exit_code == 0 else None)(
            invoke(pg, "status")), timeout=30, what="status OK")
        assert got.output.startswith("STATUS OK - 4 node(s): 4 OK"), got.output
        for line in ("standby: pg-standby [OK]", "subscriber: pg-subscriber [OK]",
                     "pooler: pgbouncer [OK]"):
            assert line in got.output, got.output

    def test_pgtap_run(self, pg: Sandbox, tmp_path: Path) -> None:
        test = tmp_path / "major.sql"
        test.write_text(
            "SELECT plan(3);\n"  # noqa: S608 - constants
            "SELECT has_extension('pgtap');\n"
            "SELECT has_extension('pg_stat_statements');\n"
            "SELECT is(current_setting('server_version_num')::int / 10000, "
            f"{self.major}, 'PostgreSQL {self.major}');\n"
            "SELECT * FROM finish();\n")
        got = CliRunner().invoke(cli, ["pgtap", "run", "--dsn", pg.admin_dsn("pg-primary"),
                                       str(test)])
        assert got.exit_code == 0, got.output
        assert "Result: PASS" in got.output

    def test_replication_collectors_on_standby_and_subscriber(self, pg: Sandbox) -> None:
        r = P + "replication_"
        s = parse_metrics(scrape(pg, "pg-standby"))
        assert value(s, r + "in_recovery") == 1
        assert value(s, r + "wal_receiver_status", status="streaming") == 1
        wait_for(lambda: value(parse_metrics(scrape(pg, "pg-standby")), r + "lag_seconds") == 0,
                 timeout=30, what="the caught-up standby's lag to be 0")
        sub = parse_metrics(scrape(pg, "pg-subscriber"))
        assert value(sub, r + "subscriptions") == 1
        assert value(sub, r + "subscription_enabled", subscription=SUBSCRIPTION) == 1
        assert value(sub, r + "subscription_worker_running", subscription=SUBSCRIPTION) == 1
        p = parse_metrics(scrape(pg, "pg-primary"))
        assert value(p, r + "in_recovery") == 0
