"""Health checks without servers: captured replica status rows, the plugin renderer, node
selection from the command line, the CLI's contract (exit codes, defaults) and the
daemon's check samples. Against real servers: tests/integration/test_health.py."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dbgauge.app import check_jobs, parse_config, scheduled_checks
from dbgauge.checks.health import Thresholds, health_checks
from dbgauge.checks.health.model import NEVER, Measured, NodeOutcome
from dbgauge.checks.health.replication import channel_findings, primary_findings, standby_findings
from dbgauge.checks.health.run import run_health, summarize
from dbgauge.checks.schedule import result_samples, validate_check_job
from dbgauge.cli import cli
from dbgauge.collectors.mysql_replication import parse_replica_status
from dbgauge.collectors.postgres_replication import parse_local, parse_slots, parse_standbys
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.render.plugin import render_plugin, render_plugin_json
from dbgauge.toolkit.result import CheckResult, Finding, Status, perf_label, plugin_result, worst
from dbgauge.toolkit.targets import Selection, select, target_from_dsn
from tests.helpers.captured import json_rows, table_rows, vertical_rows


def test_replica_status_rows_from_captured_output() -> None:
    (stopped,) = vertical_rows("mariadb-10.11/show_all_slaves_status_sql_stopped.txt")
    (found,) = channel_findings("replica", parse_replica_status(stopped))
    assert (found.severity, found.kind) == (Status.CRITICAL, "sql-thread-stopped")
    assert found.detail == "replication: SQL thread stopped"
    (running,) = vertical_rows("mariadb-10.11/show_all_slaves_status.txt")
    assert channel_findings("replica", parse_replica_status(running)) == []
    for row in table_rows("mysql-8.0/show_replica_status.txt"):  # Replica_* names
        assert channel_findings("replica", parse_replica_status(row)) == []
    connecting = {**running, "Slave_IO_Running": "Connecting", "Last_IO_Errno": "2003",
                  "Last_IO_Error": "error connecting to master"}
    (found,) = channel_findings("replica", parse_replica_status(connecting))
    assert found.severity is Status.WARNING and "2003" in found.detail
    broken = {**running, "Slave_SQL_Running": "No", "Last_SQL_Errno": "1950",
              "Last_SQL_Error": "out-of-order sequence number"}
    (found,) = channel_findings("replica", parse_replica_status(broken))
    assert found.detail == ("replication: SQL thread stopped: error 1950: "
                            "out-of-order sequence number")


class Answers:
    """A connection answering named statements with captured rows; records what was asked."""

    def __init__(self, flavor: str, answers: dict[str, list[dict[str, Any]]]) -> None:
        self.server = ServerInfo(flavor, (15,) if flavor == "postgres" else (1, 18, 0), "")
        self.answers, self.asked = answers, []  # type: list[str]
        self.target = None

    def query(self, name: str, params: Any = None) -> list[dict[str, Any]]:
        self.asked.append(name)
        return self.answers[name]


def _evaluate(check: str, kind: str, conn: Answers) -> NodeOutcome:
    node = target_from_dsn("n=" + {"postgres": "postgresql://u@h:5432/app",
                                   "pgbouncer": "postgresql://u@h:6432/pgbouncer"}[kind])
    assert node.kind == kind
    return health_checks()[check].evaluate(node, conn, None)  # type: ignore[arg-type]


def test_checks_read_the_collectors_facts_with_their_statements_only() -> None:
    """Each check runs the statements of the collector facts it needs, nothing more."""
    conn = Answers("pgbouncer", {"show_lists": json_rows("pgbouncer-1.18/show_lists.json"),
                                 "show_config": json_rows("pgbouncer-1.18/show_config.json")})
    outcome = _evaluate("connections", "pgbouncer", conn)
    assert conn.asked == ["show_lists", "show_config"]
    assert outcome.note == "6 of 200 connections in use (3% of max_client_conn)"
    assert outcome.perfdata == (("n:connections_percent", 3.0), ("n:connections", 6.0),
                                ("n:connections_left", 194.0))
    conn = Answers("postgres", {"connections": json_rows("postgres-15/connections-wait.json")})
    outcome = _evaluate("connections", "postgres", conn)
    assert conn.asked == ["connections"]
    assert outcome.note == ("4 of 47 connections in use (9% of max_connections - "
                            "superuser_reserved_connections)")
    conn = Answers("postgres", {"lock_summary": json_rows("postgres-15/lock_summary-wait.json")})
    outcome = _evaluate("locks", "postgres", conn)
    assert conn.asked == ["lock_summary"]  # someone waits, but the waits by mode are not read
    assert outcome.note.endswith("(1 waiting, 1 root blocker(s))")
    conn = Answers("postgres", {
        "replication_local": json_rows("postgres-15/replication_local-primary.json"),
        "replication_standbys": json_rows("postgres-15/replication_standbys-replay-paused.json"),
        "replication_slots": json_rows("postgres-15/replication_slots-primary.json")})
    outcome = _evaluate("lag", "postgres", conn)  # on a primary: its standbys' lag
    assert conn.asked == ["replication_local", "replication_standbys", "replication_slots"]
    assert outcome.note.startswith("standby ") and "(seen from the primary)" in outcome.note
    conn.asked.clear()
    outcome = _evaluate("replication", "postgres", conn)
    assert conn.asked == ["replication_local", "replication_standbys", "replication_slots"]
    assert outcome.note == "primary, 1 standby(s) streaming" and outcome.findings == ()
    conn = Answers("pgbouncer", {"show_pools": json_rows("pgbouncer-1.18/show_pools.json")})
    outcome = _evaluate("pgbouncer-pools", "pgbouncer", conn)
    assert conn.asked == ["show_pools"]
    assert "1 client(s) waiting" in outcome.note
    assert "in pool app_tiny/sandbox_admin" in outcome.note


def test_postgres_replication_rows() -> None:
    # CONSTRUCTED rows with the columns of sql/postgres/replication_*.sql
    assert standby_findings("s", parse_local({"in_recovery": True,
                                              "wal_receiver_status": "streaming",
                                              "replay_paused": False})) == []
    kinds = [f.kind for f in standby_findings("s", parse_local({
        "in_recovery": True, "wal_receiver_status": None, "replay_paused": True}))]
    assert kinds == ["wal-receiver-not-streaming", "replay-paused"]
    found = primary_findings("p", parse_standbys([{"application_name": "s1",
                                                   "state": "catchup"}]),
                             parse_slots([{"slot_name": "a", "active": False,
                                           "retained_bytes": 1024},
                                          {"slot_name": "b", "active": True,
                                           "wal_status": "lost"},
                                          {"slot_name": "c", "active": True,
                                           "wal_status": "reserved"}]))
    assert [(f.kind, f.severity.name) for f in found] == [
        ("standby-not-streaming", "WARNING"), ("slot-inactive", "WARNING"),
        ("slot-lost", "CRITICAL")]
    assert "1024 bytes" in found[1].detail
    silent = primary_findings("p", parse_standbys([{
        "application_name": "s1", "state": "streaming", "reply_age_seconds": 40.0,
        "sender_timeout_seconds": 60.0}]), [])
    assert [(f.kind, f.severity.name) for f in silent] == [("standby-silent", "WARNING")]
    hidden = primary_findings("p", [], [], "the role r cannot see ...: GRANT pg_monitor TO r")
    assert [(f.kind, f.severity.name) for f in hidden] == [("insufficient-privilege", "UNKNOWN")]
    kinds = [f.kind for f in standby_findings("s", parse_local({
        "in_recovery": True, "wal_receiver_status": "streaming", "receive_replay_bytes": 0,
        "wal_receiver_last_message_age_seconds": 36.0, "wal_receiver_timeout_seconds": 60.0}))]
    assert kinds == ["wal-receiver-silent"]
    kinds = [f.kind for f in standby_findings("s", parse_local({
        "in_recovery": True, "wal_receiver_status": None, "wal_receiver_hidden": True}))]
    assert kinds == ["insufficient-privilege"]  # not "stopped"


def test_thresholds_and_state_order() -> None:
    limits = Thresholds.above(30, 120)
    # the guidelines' `N`: alert above N (N itself is still fine)
    assert [limits.status(v) for v in (0, 30, 30.1, 120, 120.5, -1)] == [
        Status.OK, Status.OK, Status.WARNING, Status.WARNING, Status.CRITICAL, Status.CRITICAL]
    with pytest.raises(ConfigError, match="less strict than --critical 1"):
        Thresholds.above(5, 1).validate("lag")
    # a level given alone leaves the other unset, as check_postgres: -c alone never warns
    assert limits.override(None, 1) == replace(Thresholds.above(1, 1), warning=NEVER)
    assert [limits.override(None, 200).status(v) for v in (31, 201)] == [
        Status.OK, Status.CRITICAL]
    assert limits.override(200, None) == replace(Thresholds.above(200, 1), critical=NEVER)
    assert limits.override("5", None).status(1e9) is Status.WARNING
    assert limits.override("5", None).perf("lag_seconds") == {"lag_seconds": ("5", None)}
    # check_postgres' backends keeps its default critical when only --warning is given
    kept = replace(limits, keeps_critical=True).override("5", None)
    assert (kept.warning.end, kept.critical.end) == (5, 120)
    assert limits.override(50, 10) == Thresholds.above(50, 10)  # both given: left to validate()
    uptime = Thresholds.below(3600, 300)
    assert [uptime.status(v) for v in (10, 300, 301, 3600, 9000)] == [
        Status.CRITICAL, Status.WARNING, Status.WARNING, Status.OK,
        Status.OK]
    assert uptime.override(None, "4000:") == replace(Thresholds.below(4000, 4000),
                                                     warning=NEVER)
    with pytest.raises(ConfigError, match="less strict"):
        Thresholds.below(10, 300).validate("restart")
    inside = limits.override("@10:20", "~:100")  # other forms are taken as given
    assert [inside.status(v) for v in (5, 15, 101)] == [
        Status.OK, Status.WARNING, Status.CRITICAL]
    with pytest.raises(ConfigError, match="is not a range"):
        limits.override("ten", None)
    assert worst([Status.OK, Status.WARNING, Status.UNKNOWN]) is Status.UNKNOWN
    assert worst([Status.UNKNOWN, Status.CRITICAL]) is Status.CRITICAL
    assert worst([]) is Status.OK


def test_plugin_text_and_json() -> None:
    result = plugin_result("lag", [
        Finding(Status.WARNING, "r1", "lag", "lag 40.00 s (heartbeat) (threshold 30)"),
        Finding(Status.UNKNOWN, "r2", "unreachable", "cannot connect to 10.0.0.2:3306: refused",
                fix="start it")],
        "r2: cannot connect; r1: lag 40.00 s",
        [(perf_label("r1", "lag_seconds"), 40.0), (perf_label("r1", "channels"), 1.0),
         (perf_label("r1", "connections_percent"), 12.5)])
    assert result.status is Status.UNKNOWN and result.findings[0].node == "r2"
    text = render_plugin(result, {"lag_seconds": ("30", "120")})
    first, second, third, fourth = text.splitlines()[:4]
    assert first == ("LAG UNKNOWN - r2: cannot connect; r1: lag 40.00 s | "
                     "'r1:lag_seconds'=40s;30;120 'r1:channels'=1 "
                     "'r1:connections_percent'=12.5%;;;0;100")
    assert second.startswith("UNKNOWN r2 [unreachable] cannot connect")
    assert third == "    fix (not run by dbgauge): start it"
    assert fourth.startswith("WARNING r1 [lag] lag 40.00 s")
    doc = json.loads(render_plugin_json(result))
    assert doc["status"] == "UNKNOWN" and doc["summary"].startswith("r2:")
    assert [set(f) >= {"severity", "node", "kind", "detail"} for f in doc["findings"]] == [
        True, True]
    assert doc["findings"][1]["severity"] == "WARNING"
    assert render_plugin_json(result) != render_plugin_json(result, {"lag_seconds": ("1", "2")})
    doc = json.loads(render_plugin_json(result, {"lag_seconds": ("30", "120")}))
    assert doc["perfdata"]["r1:lag_seconds"] == {
        "value": 40.0, "unit": "s", "warn": "30", "crit": "120", "min": None, "max": None}
    assert doc["perfdata"]["r1:connections_percent"] == {
        "value": 12.5, "unit": "%", "warn": None, "crit": None, "min": 0.0, "max": 100.0}
    assert doc["perfdata"]["r1:channels"]["unit"] == ""


def test_summary_names_problem_nodes_first() -> None:
    result = summarize("lag", [
        NodeOutcome("a", note="lag 0.10 s"),
        NodeOutcome("b", (Finding(Status.CRITICAL, "b", "lag", "lag 300 s"),
                          Finding(Status.WARNING, "b", "x", "y")), note="lag 300 s")])
    assert result.summary == "b: lag 300 s (+1 more); a: lag 0.10 s"
    assert result.status is Status.CRITICAL


def test_nodes_from_dsns() -> None:
    node = target_from_dsn("mysql://mon:s3cr3tpw@db2.example:3307/")
    assert (node.name, node.kind) == ("db2.example:3307", "mysql")
    named = target_from_dsn("orders=postgresql://mon@db3/app", password_env="PGPW")
    assert (named.name, named.kind, named.password_env) == ("orders", "postgres", "PGPW")
    assert target_from_dsn("postgresql://mon@db3:6432/pgbouncer").kind == "pgbouncer"
    hb = target_from_dsn("mysql://mon@db2/", heartbeat_table="percona.heartbeat")
    assert hb.heartbeat is not None and hb.heartbeat.mode == "read"
    with pytest.raises(ConfigError) as err:
        target_from_dsn("ftp://mon:s3cr3tpw@db2/")
    assert "s3cr3tpw" not in str(err.value)
    with pytest.raises(ConfigError, match="password_env or password_file, not both") as err:
        target_from_dsn("mysql://mon:s3cr3tpw@db2/", password_env="PW", password_file=Path("f"))
    assert "s3cr3tpw" not in str(err.value)
    with pytest.raises(ConfigError, match="nothing to check"):
        select((), (), None)
    with pytest.raises(ConfigError, match="named 'db:1'"):
        select((), ("mysql://u@db:1/", "postgresql://u@db:1/x"), None)
    configured = parse_config("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h:1/'}\n"
                              "  - {name: b, kind: postgres, dsn: 'postgresql://u@h:2/x'}\n"
                              ).all_targets()
    assert [n.name for n in select(("a,b",), (), configured).targets] == ["a", "b"]
    everything = select((), (), configured)
    assert [n.name for n in everything.targets] == ["a", "b"] and not everything.named
    mixed = select(("b",), ("c=mysql://u@h:3/",), configured)
    assert [n.name for n in mixed.targets] == ["b", "c"] and mixed.named == {"b", "c"}
    with pytest.raises(ConfigError, match="no target named 'x'"):
        select(("x",), (), configured)


# What `dbgauge check --help` and each command's --help said before the registry made them
# (name, short help, default thresholds): the generated text must not drift.
HEALTH_CHECKS: tuple[tuple[str, str, str | None], ...] = (
    ("replication", "Replication threads running and error-free.", None),
    ("connection", "Whether the server accepts a connection, and how fast (down: CRITICAL).",
     "2 and 8 seconds"),
    ("lag", "Replication lag in seconds (heartbeat when configured).", "30 and 120 seconds"),
    ("connections", "Connections in use against the limit: a count (-w 200) or a share "
     "(-w 80%).", "80 and 95 percent"),
    ("pgbouncer-pools", "Clients waiting in PgBouncer pools: the longest wait.",
     "1 and 5 seconds"),
    ("locks", "The oldest current lock wait, in seconds.", "10 and 30 seconds"),
    ("txn-wraparound", "Transaction-ID age: transactions (-c 1300000000) or percent of 2^31 "
     "(-c 75%) (PostgreSQL).", "50 and 75 percent"),
    ("last-vacuum", "Seconds since the least recently vacuumed table (PostgreSQL).",
     "86400 and 172800 seconds"),
    ("last-analyze", "Seconds since the least recently analyzed table (PostgreSQL).",
     "86400 and 172800 seconds"),
    ("sequence", "The sequence nearest its end, percent used (PostgreSQL).",
     "85 and 95 percent"),
    ("archiver", "WAL segments waiting to be archived; a failing archive_command.",
     "10 and 50 files"),
    ("query-time", "The longest-running statement, in seconds (PostgreSQL).",
     "120 and 300 seconds"),
    ("txn-idle", "The oldest session idle in transaction, in seconds (PostgreSQL).",
     "60 and 300 seconds"),
    ("txn-time", "The oldest open transaction, in seconds.", "300 and 1800 seconds"),
    ("uptime", "Seconds since the server started: a restart alerts (lower bounds).",
     "600: and 300: seconds"),
    ("history-list", "InnoDB history list length (MySQL/MariaDB).",
     "100000 and 1000000 entries"),
    ("group-replication", "Group Replication members online, quorum kept (MySQL 8).", None),
    # check_postgres' actions (tests/unit/test_check_postgres_actions.py); "none": -w or -c
    # must be given, as check_postgres asks
    *((name, health_checks()[name].summary, shown) for name, shown in (
        ("autovac-freeze", "90 and 95 percent"), ("checkpoint", "none"),
        ("bloat", "1073741824 and 5368709120 bytes"),
        ("commitratio", "none"), ("custom-query", "none"), ("database-size", "none"),
        ("disabled-triggers", "0 and 0 triggers"), ("hitratio", "none"),
        ("index-size", "none"), ("indexes-size", "none"),
        ("last-autoanalyze", "86400 and 172800 seconds"),
        ("last-autovacuum", "86400 and 172800 seconds"),
        ("lock-count", None), ("pgbouncer-pool", "none"), ("query-runtime", "none"),
        ("version", None), ("cluster-id", None), ("pgbouncer-checksum", None),
        ("time-sync", "2 and 5 seconds"), ("pgagent-jobs", "none"),
        ("prepared-txns", "1 and 30 seconds"), ("relation-size", "none"),
        ("replicate-row", "none"), ("replication-slots", "none"), ("same-schema", None),
        ("table-size", "none"), ("total-relation-size", "none"), ("settings-checksum", None),
        ("wal-files", "10 and 15 files"))),
)


def test_cli_defaults_match_the_checks() -> None:
    checks = health_checks()
    assert sorted(name for name, _, _ in HEALTH_CHECKS) == list(checks)
    listing = " ".join(CliRunner().invoke(cli, ["check", "--help"]).output.split())
    for name, short, shown in HEALTH_CHECKS:
        check = checks[name]
        assert check.summary == short
        assert f"{name} {short}" in listing
        text = " ".join(CliRunner().invoke(cli, ["check", name, "--help"]).output.split())
        assert f"check {name} [OPTIONS] {short.rstrip('.')}: see docs/checks.md for" in text
        defaults = check.defaults
        if check.takes_checksum:
            assert "-c/-w CHECKSUM: the checksum expected" in text
            continue
        if check.own_thresholds is not None:  # check_postgres' forms, read by the check
            own = check.own_thresholds
            assert f"Thresholds: --warning/--critical {own.metavar}, {own.help}." in text
            assert ("no default" in own.help) == (shown == "none")
            continue
        if check.takes_lock_spec:
            assert "-c/-w LOCKS: check_postgres' lock spec" in text
            assert "(default total=150)" in text and "(default total=100)" in text
            continue
        if defaults is None:
            assert shown is None
            assert "No thresholds: each problem it finds has its own severity." in text
            assert "--warning" not in text and "--critical" not in text
            continue
        assert shown is not None
        if shown == "none":
            assert check.needs_thresholds and "no default: give one or both" in text
            continue
        warning, _, critical, _ = shown.split()
        assert (warning, critical) == (defaults.warning.plain, defaults.critical.plain)
        assert f"Thresholds: --warning/--critical, default {shown}." in text
        # the options' help in the check's own unit: 80% where a bare number is a count
        assert f"(default {defaults.warning})" in text
        assert f"default {defaults.critical})" in text
    assert "--heartbeat-table SCHEMA.TABLE Read lag" in " ".join(CliRunner().invoke(
        cli, ["check", "lag", "--help"]).output.split())


def test_listing_the_checks_loads_no_collector_or_driver() -> None:
    """`dbgauge check --help` imports every check module (the registry) but none of what
    they read servers with: listing the checks stays as quick as it was."""
    code = ("import sys; from dbgauge.cli import cli\n"
            "try: cli(['check', '--help'], prog_name='dbgauge')\n"
            "except SystemExit: pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('dbgauge.collectors', "
            "'dbgauge.toolkit.db', 'dbgauge.toolkit.metrics', 'dbgauge.checks.nodes', "
            "'pymysql', 'psycopg', 'pydantic'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out == "[]"


def test_cli_usage_errors_and_failures_are_unknown(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["check", "lag", "--bogus"]).exit_code == 3
    result = runner.invoke(cli, ["check", "replication", "--node", "mysql://u@127.0.0.1:1/",
                                 "--warning", "1"])
    assert result.exit_code == 3 and "No such option '--warning'" in result.output
    with pytest.raises(ConfigError, match="takes no --warning"):
        run_health(health_checks()["replication"], Selection(()), Thresholds(1, 1))
    result = runner.invoke(cli, ["check", "split-brain", "--config", str(tmp_path / "no.yaml")])
    assert result.exit_code == 3 and "SPLIT-BRAIN UNKNOWN - " in result.output


def test_daemon_samples_and_job_config() -> None:
    result = CheckResult("split-brain", Status.CRITICAL, "x", (
        Finding(Status.CRITICAL, "r", "errant-transactions", "d", {"errant_count": "2"}),
        Finding(Status.WARNING, "r", "writable-replica", "d"),
        Finding(Status.UNKNOWN, "q", "unreachable", "d")))
    checks = scheduled_checks()
    samples = result_samples(checks["split-brain"], result, ["p", "r", "q"])
    status = {s.labels["target"]: s.value for s in samples if s.name == "dbgauge_check_status"}
    assert status == {"p": 0, "r": 2, "q": 3}
    findings = {(s.labels["kind"], s.labels["node"]): s.value for s in samples
                if s.name == "dbgauge_split_brain_findings"}
    assert findings[("errant-transactions", "r")] == 1
    assert findings[("unreachable", "q")] == 1 and findings[("multiple-primaries", "p")] == 0
    assert len(findings) == 3 * 12  # every kind for every node: no series comes and goes
    assert findings[("not-applicable", "p")] == 0
    errant = {s.labels["node"]: s.value for s in samples
              if s.name == "dbgauge_split_brain_errant_transactions"}
    assert errant == {"p": 0, "r": 2, "q": 0}
    with pytest.raises(ValueError, match="unknown check 'lagg'"):
        validate_check_job(checks, "lagg", None, None)
    with pytest.raises(ValueError, match="no warning"):
        validate_check_job(checks, "split-brain", 1, None)
    with pytest.raises(ValueError, match="less strict than --critical"):
        validate_check_job(checks, "lag", 200, 100)
    validate_check_job(checks, "lag", 200, None)  # critical follows: 200/200
    validate_check_job(checks, "lag", "@10:20", "~:300")  # ranges, as on the command line
    with pytest.raises(ValueError, match="'x' is not a range"):
        validate_check_job(checks, "lag", "x", None)
    config = parse_config("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h:1/'}\n"
                          "checks:\n  - {check: lag}\n  - {check: lag, warning: 5}\n"
                          "  - {check: split-brain}\n")
    jobs = check_jobs(config)
    assert [j.name for j in jobs] == ["check:lag", "check:lag#2", "check:split-brain"]
    assert [len(j.metrics) for j in jobs] == [1, 1, 3]
    for job in jobs:
        for spec in job.metrics:
            assert "cached" in spec.help.lower()


def test_a_node_that_was_not_checked_says_why_in_one_vocabulary() -> None:
    """Health checks, split-brain and status share `checks.nodes`: the same kinds of
    UNKNOWN finding for a node they could not check, and for a named node of a kind the
    check does not apply to (`not-applicable`, in split-brain too)."""
    from dbgauge.checks.nodes import NOT_CHECKED, failure
    from dbgauge.checks.split_brain import KINDS, check_split_brain
    from dbgauge.toolkit.errors import AuthError, ConnectError, QueryError
    from dbgauge.toolkit.targets import Deadline, Unfinished

    found = [failure("n", exc) for exc in (
        ConnectError("cannot connect to h:1: refused"), AuthError("authentication failed"),
        QueryError("no such table"), RuntimeError("boom"))]
    assert [f.kind for f in found] == ["unreachable", "auth-failed", "query-failed",
                                       "check-failed"]
    # down (refused, timed out, password refused) is CRITICAL, as the monitoring plugins
    # say it; what could not be told is UNKNOWN
    assert [f.severity for f in found] == [Status.CRITICAL, Status.CRITICAL, Status.UNKNOWN,
                                           Status.UNKNOWN]
    assert {f.node for f in found} == {"n"}
    assert found[3].detail == "could not be checked (RuntimeError: boom)"
    # a MySQL access-denied error (what privileges.query names the GRANT in) is a privilege
    refused = failure("n", QueryError("x needs the PROCESS privilege (GRANT PROCESS ON *.* "
                                      "TO ...): denied (error 1227)", errno=1227))
    assert (refused.severity, refused.kind) == (Status.UNKNOWN, "insufficient-privilege")
    assert refused.detail.startswith("x needs the PROCESS privilege (GRANT PROCESS ON *.*")
    assert failure("n", ConnectError("x"), down=Status.UNKNOWN).severity is Status.UNKNOWN
    late = failure("n", Unfinished("not finished"), deadline=Deadline(0, "3 s (-t/--timeout)"))
    assert (late.severity, late.kind, late.detail) == (
        Status.UNKNOWN, "no-answer", "did not answer within 3 s (-t/--timeout)")
    assert set(NOT_CHECKED) <= set(KINDS)  # every one is a label value of the daemon's metric
    bouncer = target_from_dsn("b=postgresql://u@h:6432/pgbouncer")
    named = Selection((bouncer,), frozenset({"b"}))
    (found,) = check_split_brain(named).findings
    assert (found.severity, found.node, found.kind, found.detail) == (
        Status.UNKNOWN, "b", "not-applicable",
        "check split-brain applies to kind mysql, postgres, not pgbouncer")
    (found,) = run_health(health_checks()["lag"], named).findings
    assert (found.kind, found.detail) == (
        "not-applicable", "check lag applies to kind mysql, postgres, not pgbouncer")
    assert check_split_brain(Selection((bouncer,))).findings == ()  # not named: left out


def test_docs_table_of_checks_is_current() -> None:
    """docs/checks.md's table is made from the registry: a new check, kind or default
    shows there once `make docs` ran (`dbgauge check --docs docs/checks.md`)."""
    from dbgauge.checks.health.docs import BEGIN, END, checks_table

    text = (Path(__file__).resolve().parents[2] / "docs" / "checks.md").read_text("utf-8")
    block = text[text.index(BEGIN): text.index(END) + len(END)]
    assert block == checks_table(health_checks().values()), \
        "docs/checks.md is stale: run `make docs` and commit"
    for check in health_checks().values():
        assert f"| `{check.name}` |" in block


def test_every_check_is_declared_whole() -> None:
    """What the CLI and the docs are made of is there for every check."""
    for name, check in health_checks().items():
        assert name == check.name and check.summary.endswith(".") and check.measures
        assert check.kinds and check.kinds <= {"mysql", "postgres", "pgbouncer"}
        assert (check.defaults is None) == (check.unit == "") == (check.finding == ""), name
    with pytest.raises(ValueError, match="need a unit and a finding kind"):
        replace(health_checks()["lag"], unit="")


def test_each_node_turns_a_failure_into_the_nodes_finding() -> None:
    """Nothing listens on port 1: the node is `unreachable` at the connection (not a
    failure of the work, which never runs), with its name and address, not its password."""
    from dbgauge.checks.nodes import Failed, each_node

    node = target_from_dsn("gone=mysql://u:pw@127.0.0.1:1/")
    ran: list[str] = []
    (got,) = each_node([node], lambda n, _c: ran.append(n.name))
    assert isinstance(got, Failed) and not got.connected and ran == []
    assert (got.finding.node, got.finding.kind, got.finding.severity) == (
        "gone", "unreachable", Status.CRITICAL)
    assert "127.0.0.1:1" in got.finding.detail and "pw" not in got.finding.detail
    assert each_node([], lambda n, _c: n) == []


def test_mysql_lag_is_threads_and_heartbeat() -> None:
    """The lag check's MySQL rule on captured SHOW ALL SLAVES STATUS rows and CONSTRUCTED
    heartbeat readings: a stopped thread is CRITICAL even with a fresh row; a fresh row is
    the lag; a stale row on a replica that applied all it received is no lag (UNKNOWN), but
    it is lag while the SQL thread is behind; no row at all is UNKNOWN too."""
    from dbgauge.checks.health.lag import replica_lag
    from dbgauge.toolkit.heartbeat import HeartbeatReading, HeartbeatRow

    node = target_from_dsn("r=mysql://u@h:3306/")
    (running,) = vertical_rows("mariadb-10.11/show_all_slaves_status.txt")
    (stopped,) = vertical_rows("mariadb-10.11/show_all_slaves_status_sql_stopped.txt")
    ok, halted = parse_replica_status(running), parse_replica_status(stopped)
    assert ok.seconds_behind == 0

    def reading(age: float) -> HeartbeatReading:
        return HeartbeatReading(HeartbeatRow(1, 1000.0), 1000.0 + age)

    got = replica_lag(node, [halted], reading(0.3))
    assert isinstance(got, Measured) and got.value == pytest.approx(0.3)
    assert [f.kind for f in got.findings] == ["replication-stopped"]
    assert replica_lag(node, [ok], reading(0.3)).value == pytest.approx(0.3)  # type: ignore[union-attr]
    stale = replica_lag(node, [ok], reading(192.0))
    assert isinstance(stale, NodeOutcome) and stale.status is Status.UNKNOWN
    assert stale.findings[0].kind == "no-heartbeat-writer"
    behind = replace(ok, seconds_behind=150.0)
    assert replica_lag(node, [behind], reading(192.0)).value == 192.0  # type: ignore[union-attr]
    missing = replica_lag(node, [ok], None, "no heartbeat row from another server")
    assert isinstance(missing, NodeOutcome) and missing.findings[0].kind == "no-heartbeat-writer"
    assert replica_lag(node, [halted], None, "no row").status is Status.CRITICAL  # type: ignore[union-attr]


def test_a_deadline_part_leaves_the_later_rounds_their_time() -> None:
    """One round of several gets a part of the time left (split-brain's connect round),
    never past the whole deadline. (What a fan-out does at a deadline is tested against
    a frozen server: tests/integration/test_health_plugin.py.)"""
    from dbgauge.toolkit.targets import Deadline

    part = Deadline.within(10, "10 s").part(0.5)
    assert 4 < part.left() <= 5 and part.said == "10 s"
    assert Deadline(0, "x").part(0.5).left() == 0


def test_a_scheduled_check_says_down_as_configured() -> None:
    """A `checks:` entry's target that is down (nothing listens on port 1) is CRITICAL in
    dbgauge_check_status, as on the command line; `unreachable_state: unknown` makes it
    UNKNOWN; anything else there is a config error."""
    config = parse_config(
        "targets:\n  - {name: gone, kind: mysql, dsn: 'mysql://u:pw@127.0.0.1:1/'}\n"
        "checks:\n  - {check: connection}\n"
        "  - {check: connections, warning: 200, unreachable_state: unknown}\n")
    states = [{s.labels["target"]: s.value for s in job.run()
               if s.name == "dbgauge_check_status"} for job in check_jobs(config)]
    assert states == [{"gone": 2.0}, {"gone": 3.0}]
    with pytest.raises(ConfigError, match="unreachable_state"):
        parse_config("targets:\n  - {name: gone, kind: mysql, dsn: 'mysql://u@h:1/'}\n"
                     "checks:\n  - {check: lag, unreachable_state: warning}\n")


def test_a_scheduled_check_ends_by_its_timeout() -> None:
    """A `checks:` entry's node that accepts TCP and never answers is UNKNOWN once the job's
    `timeout` passes (as `dbgauge check -t`), not CRITICAL after the target's 20 s connect
    timeout: a job never hangs on a frozen server. A `checksums:` entry's `max_wait` bounds
    its pauses and waits (`dbgauge checksum --max-wait`)."""
    import socket

    from dbgauge.app import checksum_jobs

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # the kernel completes the handshake; nothing ever answers
    port = listener.getsockname()[1]
    try:
        config = parse_config(
            f"targets:\n  - {{name: frozen, kind: postgres, connect_timeout: 20s,\n"
            f"      dsn: 'postgresql://u:pw@127.0.0.1:{port}/db'}}\n"
            "checks:\n  - {check: connection, timeout: 0.5s}\n")
        (job,) = check_jobs(config)
        states = {s.labels["target"]: s.value for s in job.run()
                  if s.name == "dbgauge_check_status"}
    finally:
        listener.close()
    assert states == {"frozen": 3.0}
    config = parse_config(
        "targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h:1/'}\n"
        "  - {name: b, kind: mysql, dsn: 'mysql://u@h:2/'}\n"
        "checksums:\n  - {source: a, replicas: [b], max_wait: 2m}\n")
    (checksum,) = checksum_jobs(config)
    assert checksum.options.max_pause == checksum.options.wait_timeout == 120.0  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="timeout"):
        parse_config("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h:1/'}\n"
                     "checks:\n  - {check: lag, timeout: 0}\n")


def test_pool_wording_counts_the_pools_that_queue() -> None:
    """Two clients waiting in one of two pools read as such, not as "in 2 pool(s)"."""
    from dbgauge.checks.health.pgbouncer_pools import pool_wait
    from dbgauge.collectors.pgbouncer_pools import Pool, PoolsFacts

    pools = (Pool("app", "u", {"waiting": 2.0}, {}, maxwait=3.0),
             Pool("other", "u", {"waiting": 0.0}, {}, maxwait=0.0))
    measured = pool_wait(PoolsFacts(pools))
    assert measured.text.startswith("2 client(s) waiting in 1 of 2 pool(s); longest wait 3.0 s")
    idle = pool_wait(PoolsFacts(pools[1:]))
    assert idle.text == "no client waiting in 1 pool(s)"
