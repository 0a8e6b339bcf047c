"""The monitoring plugins' options without a server: the check_mysql / check_mysql_query /
check_pgsql -> dbgauge table against the registry and the plugins' --help (2.3.3), the
docs block, the plugin options' command lines (bad ones exit 3 before any node is
read), and check_mysql's -f/-g option-file reading."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from dbgauge.checks.health import health_checks
from dbgauge.checks.health.connection import query_limits
from dbgauge.checks.health.docs import PLUGIN_BEGIN, PLUGIN_END, plugins_table
from dbgauge.checks.health.plugins import PLUGINS
from dbgauge.cli import cli
from dbgauge.toolkit.clientcnf import client_settings
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.ranges import parse_range
from dbgauge.toolkit.result import Status
from dbgauge.toolkit.targets import with_defaults_file

# The options each plugin's --help lists (monitoring-plugins 2.3.3), -h and -V aside.
HELP_OPTIONS = {
    "check_mysql": "-H -P -n -s -d -f -g -u -p -S -w -c -l -C -a -k -D -L --extra-opts",
    "check_mysql_query": "-q -w -c -H -P -s -d -f -g -u -p --extra-opts",
    "check_pgsql": "-H -P -d -l -p -o -w -c -t -q --queryname -W -C -v --extra-opts",
}


def test_every_plugin_option_maps_to_registered_checks() -> None:
    checks = health_checks()
    for row in PLUGINS:
        assert row.provided in ("yes", "partly", "no"), row
        assert all(name in checks for name in row.checks), row
        assert bool(row.checks) == (row.provided != "no"), row
        assert row.provided == "yes" or row.note, row  # a gap says why
    for plugin, options in HELP_OPTIONS.items():
        listed = {row.option.split(",")[0] for row in PLUGINS if row.plugin == plugin}
        assert set(options.split()) <= listed, f"{plugin}: options without a row"


def test_docs_table_of_plugin_options_is_current() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "checks.md").read_text("utf-8")
    block = text[text.index(PLUGIN_BEGIN.split("(")[0]):text.index(PLUGIN_END)
                 + len(PLUGIN_END)]
    assert block == plugins_table(PLUGINS), "docs/checks.md is stale: run `make docs`"


def test_the_plugin_options_are_declared_by_the_checks_that_take_them() -> None:
    checks = health_checks()
    assert checks["connection"].plugin_options == {"query", "ignore-auth"}
    assert checks["lag"].plugin_options == {"replica"}
    for name, check in checks.items():
        if name not in ("connection", "lag"):
            assert not check.plugin_options, name


@pytest.mark.parametrize(("warning", "critical", "value", "state"), [
    ("10", "20", 5, Status.OK),
    ("3", "10", 5, Status.WARNING),
    ("10:", "~:20", 5, Status.WARNING),  # below 10
    (None, "@4:6", 5, Status.CRITICAL),  # inside 4..6
    (None, None, 1e9, Status.OK),  # no ranges: never alerts, as check_pgsql
])
def test_query_ranges_as_check_pgsql_reads_them(warning: str | None, critical: str | None,
                                                value: float, state: Status) -> None:
    limits = query_limits(parse_range(warning) if warning else None,
                          parse_range(critical) if critical else None)
    assert limits.status(value) is state


def test_query_ranges_that_contradict_are_refused() -> None:
    with pytest.raises(ConfigError, match="never warn"):
        query_limits(parse_range("20"), parse_range("10"))


@pytest.mark.parametrize(("args", "says"), [
    (["connection", "-W", "3"], "-W/-C judge the value of a query: give it with -q"),
    (["connection", "-q", "SELECT 1", "-W", "20", "-C", "10"], "never warn"),
    (["lag", "-n"], "No such option '-n'"),  # -n is connection's only
    (["custom-query", "-w", "1"], "Missing option '-q' / '--query'"),
])
def test_bad_plugin_options_exit_3_before_any_node_is_read(args: list[str], says: str
                                                          ) -> None:
    result = CliRunner().invoke(cli, ["check", *args, "--node", "mysql://u:p@127.0.0.1:1/"])
    assert result.exit_code == 3, result.output
    assert says in result.output


def test_defaults_group_is_read_beside_client(tmp_path: Path) -> None:
    cnf = tmp_path / "nagios.cnf"
    cnf.write_text("[client]\nuser=someone\nport=3307\n[nagios]\nuser=nagios\n"
                   "password=pw\n[other]\nuser=other\n")
    assert client_settings(str(cnf)) == {"user": "someone", "port": "3307"}
    assert client_settings(str(cnf), "nagios") == {"user": "nagios", "port": "3307",
                                                   "password": "pw"}


def test_defaults_group_goes_into_mysql_dsns_only() -> None:
    assert with_defaults_file("mysql://h/", None, "nagios") == \
        "mysql://h/?read_default_group=nagios"
    assert with_defaults_file("mysql://h/", "/f.cnf", "g") == \
        "mysql://h/?read_default_file=/f.cnf&read_default_group=g"
    assert with_defaults_file("postgresql://h/db", "/f.cnf", "g") == "postgresql://h/db"
