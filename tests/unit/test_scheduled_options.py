"""A `checks:` entry's warning, critical and `options:` mean what `dbgauge check NAME`'s
command line means: the same options by their long names, the same reading, the same
refusals (checks/health/options.py)."""

from __future__ import annotations

from typing import Any

import click
import pytest

from dbgauge.app import check_jobs, parse_config, scheduled_checks
from dbgauge.checks.health import health_checks
from dbgauge.checks.health.options import CheckInput, check_input, entry_input, entry_options
from dbgauge.checks.schedule import validate_check_job
from dbgauge.cli.check import check_group
from dbgauge.toolkit.errors import ConfigError

# every check's command takes these; an entry has its own ways to say them (targets:,
# timeout:, unreachable_state:) or, for lag's heartbeat table, the targets' settings
COMMON = {"config_path", "targets", "node_dsns", "password_file", "password_env", "fmt",
          "timeout", "verbosity", "down", "warning", "critical", "heartbeat_table",
          "source_server_id", "defaults_file", "defaults_group", "help"}


def _command(name: str) -> click.Command:
    command = check_group.get_command(click.Context(check_group), name)
    assert command is not None
    return command


def _from_command_line(name: str, args: list[str]) -> CheckInput:
    """What `dbgauge check NAME ARGS` runs with (the command's own parsing)."""
    command = _command(name)
    with command.make_context(name, ["--node", "postgresql://u@h/db", *args]) as ctx:
        params: dict[str, Any] = dict(ctx.params)
    return check_input(health_checks()[name], params)


@pytest.mark.parametrize("name", sorted(health_checks()))
def test_an_entry_takes_every_option_of_the_command_and_no_other(name: str) -> None:
    params = {p.name: p for p in _command(name).params if isinstance(p, click.Option)}
    command_line = {p.opts[-1].removeprefix("--"): p.name for p in params.values()
                    if p.name not in COMMON}
    entry = {option: spec.dest for option, spec in entry_options(health_checks()[name]).items()}
    assert entry == command_line


# (check, command line, the same as an entry's warning, critical and options)
SAME = [
    ("table-size", ["--include", "orders,~^audit_", "--exclude", "pg_catalog.",
                    "--excludeuser", "postgres", "-w", "1GB", "-c", "2 GB"],
     "1GB", "2 GB", {"include": ["orders,~^audit_"], "exclude": "pg_catalog.",
                     "excludeuser": "postgres"}),
    ("custom-query", ["-q", "SELECT count(*) AS result FROM jobs", "--valtype", "integer",
                      "--reverse", "-w", "20", "-c", "10"],
     20, 10, {"query": "SELECT count(*) AS result FROM jobs", "valtype": "integer",
              "reverse": True}),
    ("pgbouncer-pool", ["--stat", "maxwait", "--include", "app", "-c", "30"],
     None, "30", {"stat": "maxwait", "include": ["app"]}),
    ("lock-count", ["-w", "total=100;waiting=5", "-c", "total=150;exclusive=2"],
     "total=100;waiting=5", "total=150;exclusive=2", {}),
    ("txn-idle", ["-w", "+3", "-c", "2 for 30s", "--includeuser", "app"],
     "+3", "2 for 30s", {"includeuser": "app"}),
    ("connection", ["-q", "SELECT 1", "-W", "5", "-C", "10:", "--queryname", "one"],
     None, None, {"query": "SELECT 1", "query-warning": 5, "query-critical": "10:",
                  "queryname": "one"}),
    ("version", ["-c", "15"], None, "15", {}),
    ("query-runtime", ["--queryname", "v_orders", "-w", "1s", "-c", "3s"],
     "1s", "3s", {"queryname": "v_orders"}),
    ("sequence", ["--dbname", "app,crm", "-w", "80%"], "80%", None, {"dbname": ["app", "crm"]}),
    ("connections", ["-w", "-10"], -10, None, {}),
    ("lag", ["--replica", "-w", "30s"], "30s", None, {"replica": True}),
]


@pytest.mark.parametrize("name, args, warning, critical, options", SAME,
                         ids=[s[0] for s in SAME])
def test_an_entry_means_what_the_command_line_means(
        name: str, args: list[str], warning: Any, critical: Any,
        options: dict[str, object]) -> None:
    wanted = _from_command_line(name, args)
    got = entry_input(health_checks()[name], warning, critical, options)
    if name == "sequence":  # two words as one comma list or as a list: the same names
        assert got.dbnames == ("app", "crm") and wanted.dbnames == ("app,crm",)
        got = CheckInput(got.limits, got.scope, wanted.dbnames)
    assert got == wanted
    assert got.scope is not None or got.limits is not None


@pytest.mark.parametrize("name, warning, critical, options, why", [
    ("table-size", "1GB", None, {"includ": ["x"]},
     r"unknown option\(s\) includ \(it takes dbname, exclude, excludeuser, include, "
     "includeuser; spelled as the command's long options, without --\\)"),
    ("uptime", None, None, {"stat": "x"}, r"unknown option\(s\) stat \(it takes dbname"),
    ("history-list", None, None, {"x": 1}, r"\(it takes none;"),
    ("pgbouncer-pool", "5", None, {}, r"needs options: \{stat: \.\.\.\} \(its --stat"),
    ("query-runtime", "1s", None, {}, r"needs options: \{queryname: \.\.\.\}"),
    ("pgbouncer-pool", "5", None, {"stat": "maxwaits"}, "'maxwaits' is not one of"),
    ("custom-query", 5, None, {"query": "SELECT 1", "reverse": "yes"},
     "option reverse: give true or false"),
    ("custom-query", 5, None, {"query": 10**5000}, "option query: give text"),
    ("connection", None, None, {"query": "SELECT 1", "query-warning": 10**5000},
     "option query-warning: a number of more than 18 digits"),
    ("connection", None, None, {"query": "SELECT 1", "query-warning": "x:"},
     "option query-warning: "),
    ("connection", None, None, {"query-warning": "5"}, "give it with -q/--query"),
    ("table-size", "1GB", None, {"include": [""]}, "give a name, a comma list"),
    ("table-size", "1GB", None, {"include": "~("}, "not a regular expression"),
    ("version", None, None, {}, "expected value: give it as critical"),
    ("cluster-id", None, "abc", {}, "not a system identifier"),
    ("txn-idle", "x for 5s", None, {}, "whole number of sessions"),
    ("replication", 5, None, {}, "takes no warning/critical thresholds"),
])
def test_an_entry_is_refused_naming_what_is_wrong(name: str, warning: Any, critical: Any,
                                                  options: dict[str, object],
                                                  why: str) -> None:
    with pytest.raises(ConfigError, match=why):
        entry_input(health_checks()[name], warning, critical, options)


def test_split_brain_takes_neither_thresholds_nor_options() -> None:
    checks = scheduled_checks()
    with pytest.raises(ValueError, match="split-brain takes no options"):
        validate_check_job(checks, "split-brain", None, None, {"include": "x"})
    with pytest.raises(ValueError, match="takes no warning/critical"):
        validate_check_job(checks, "split-brain", 1, None)
    validate_check_job(checks, "split-brain", None, None, {})


def test_a_config_entry_with_options_becomes_a_job_that_runs_with_them() -> None:
    config = parse_config(
        "targets:\n  - {name: bouncer, kind: pgbouncer, dsn: 'postgresql://u@h:6432/pgbouncer'}\n"
        "  - {name: pg, kind: postgres, dsn: 'postgresql://u@h/app'}\n"
        "checks:\n"
        "  - check: pgbouncer-pool\n    critical: 30\n"
        "    options: {stat: maxwait, include: [app, crm]}\n"
        "  - check: table-size\n    warning: 10GB\n"
        "    options: {exclude: pg_catalog., dbname: [app, crm]}\n", "t.yaml")
    pool, size = check_jobs(config)
    assert pool.given.scope is not None  # type: ignore[attr-defined]
    assert pool.given.scope.option("stat") == "maxwait"  # type: ignore[attr-defined]
    assert pool.given.scope.include == ("app", "crm")  # type: ignore[attr-defined]
    assert size.given.dbnames == ("app", "crm")  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"t.yaml.*checks.*0.*unknown option\(s\) stats"):
        parse_config("targets:\n  - {name: b, kind: pgbouncer, dsn: 'postgresql://u@h/pgbouncer'}\n"
                     "checks:\n  - {check: pgbouncer-pool, critical: 3, options: {stats: x}}\n",
                     "t.yaml")
    with pytest.raises(ConfigError, match="options"):
        parse_config("targets:\n  - {name: b, kind: pgbouncer, dsn: 'postgresql://u@h/pgbouncer'}\n"
                     "checks:\n  - {check: pgbouncer-pool, critical: 3, options: {stat: {a: 1}}}\n",
                     "t.yaml")


def test_text_thresholds_give_their_perfdata_levels_once_read() -> None:
    """lock-count's specs become perfdata levels in the input both the command line and
    a scheduled entry read (what the command prints after the value)."""
    got = entry_input(health_checks()["lock-count"], "total=100;waiting=5", "total=150", {})
    assert got.text_perf == {"total_locks": ("@100:", "@150:"), "waiting_locks": ("@5:", None)}
    assert _from_command_line("lock-count", ["-w", "total=100;waiting=5", "-c", "total=150"]
                              ).text_perf == got.text_perf
