"""The rest of the peers' command lines (toolkit/peers/env.py): postgres_exporter's
--disable-*-metrics, --constantLabels, --exclude/--include-databases, --metric-prefix and
--dumpmaps; mysqld_exporter's --exporter.*, --timeout-offset and --tls.insecure-skip-verify;
both peers' --web.systemd-socket and --version. Each is taken with the peer's meaning, or
refused in one line saying why. No server: targets are made, never contacted."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbgauge import app
from dbgauge.cli import cli
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.exporter.listener import systemd_listener
from dbgauge.toolkit.peers.env import PeerFlags, read_startup
from dbgauge.toolkit.peers.targets import BUILT_IN, BUILT_IN_FAMILIES, LOG_SLOW_FILTER
from tests.unit.test_peer_startup import error, load, refused, wiring

PG = {"DATA_SOURCE_NAME": "postgresql://u@h/app"}
MY = {"mysqld_address": "db1:3306", "mysqld_username": "u"}


def defaults(kind: str) -> list[str]:
    return [c.name for c in app.registry().for_kind(kind) if c.default_enabled]


@pytest.mark.parametrize("flags, env", [
    (PeerFlags(disable_default_metrics=True, disable_settings_metrics=True), PG),
    (PeerFlags(), {**PG, "PG_EXPORTER_DISABLE_DEFAULT_METRICS": "true",
                   "PG_EXPORTER_DISABLE_SETTINGS_METRICS": "1"}),
])
def test_disable_default_and_settings_metrics(flags: PeerFlags, env: dict[str, str]) -> None:
    """The built-in queries' collectors and the settings are not run; the collector
    package's (sizes, bgwriter) are, as for the peer."""
    running = load(flags, env).target("postgres").collectors
    assert running is not None
    assert not set(running) & {*BUILT_IN, "postgres_settings"}
    assert {"postgres_server", "postgres_checkpoints"} <= set(running)
    assert set(defaults("postgres")) - set(running) == {*BUILT_IN, "postgres_settings"}
    target = load(flags, env).target("postgres")
    assert target.compat_exclude == BUILT_IN_FAMILIES
    assert target.excludes_family("pg_static") and target.excludes_family(
        "pg_stat_archiver_failed_count") and not target.excludes_family("pg_up")


def test_compat_exclude_takes_names_and_prefixes_only() -> None:
    entry = "targets: [{name: a, kind: postgres, dsn: 'postgresql://u@h/db', compat_exclude: [%s]}]"
    assert app.parse_config(entry % "pg_static, 'pg_x_*'", "t").targets[0].compat_exclude \
        == ["pg_static", "pg_x_*"]
    with pytest.raises(ConfigError, match="'pg_\\*x' is not a metric name"):
        app.parse_config(entry % "'pg_*x'", "t")


def test_no_disable_flag_wins_over_the_variable() -> None:
    env = {**PG, "PG_EXPORTER_DISABLE_DEFAULT_METRICS": "true"}
    assert load(PeerFlags(disable_default_metrics=False), env).target("postgres").collectors \
        is None


def test_constant_labels_label_the_targets_series() -> None:
    target = load(PeerFlags(constant_labels=" env=prod , dc = eu1,"), PG).target("postgres")
    assert target.labels == {"env": "prod", "dc": "eu1"}
    by_variable = load(env={**PG, "PG_EXPORTER_CONSTANT_LABELS": "env=stage"})
    assert by_variable.target("postgres").labels == {"env": "stage"}


@pytest.mark.parametrize("value, says", [
    ("env", "'env' is not name=value"),
    ("env=a=b", "'env=a=b' is not name=value"),
    ("=prod", "'=prod' is not name=value"),
    ("env=", "'env=' is not name=value"),
])
def test_bad_constant_labels_are_refused(value: str, says: str) -> None:
    assert says in refused(PeerFlags(constant_labels=value), PG)


def test_a_constant_label_dbgauge_reserves_or_cannot_name_is_refused() -> None:
    assert "label 'target' is reserved" in refused(PeerFlags(constant_labels="target=x"), PG)
    assert "not a valid Prometheus label name" in refused(
        PeerFlags(constant_labels="1x=y"), PG)


def test_exclude_and_include_databases_with_auto_discovery() -> None:
    excluded = load(PeerFlags(auto_discover=True, exclude_databases="a, b"), PG)
    assert excluded.target("postgres").collector_options["postgres_tables"] == {
        "databases": "all", "exclude_databases": "a,b"}
    included = load(PeerFlags(auto_discover=True, include_databases="x,app,y"), PG)
    # the DSN's own database is read too, first, as the peer reads it
    assert included.target("postgres").collector_options["postgres_tables"] == {
        "databases": "app,x,y"}
    by_variable = load(env={**PG, "PG_EXPORTER_AUTO_DISCOVER_DATABASES": "true",
                            "PG_EXPORTER_EXCLUDE_DATABASES": "c"})
    assert by_variable.target("postgres").collector_options["postgres_tables"][
        "exclude_databases"] == "c"


def test_database_lists_without_auto_discovery_change_nothing_and_say_so() -> None:
    w = wiring(PeerFlags(exclude_databases="a"), PG)
    assert "postgres_tables" not in w.load_config(None).target("postgres").collector_options
    assert any("--exclude-databases applies with --auto-discover-databases only" in n
               for n in w.notes)


def test_metric_prefix_pg_only() -> None:
    assert read_startup(PeerFlags(metric_prefix="pg"), PG).postgres is not None
    message = error(read_startup, PeerFlags(metric_prefix="xx"), PG)
    assert "--metric-prefix 'xx': only pg" in message and "metric_relabel_configs" in message
    assert "only pg" in error(read_startup, PeerFlags(), {**PG,
                                                          "PG_EXPORTER_METRIC_PREFIX": "yy"})


def test_postgres_flags_without_a_postgres_target_are_refused() -> None:
    message = error(read_startup, PeerFlags(disable_default_metrics=True), {})
    assert "--disable-default-metrics applies to the postgres targets" in message


def test_mysqld_session_flags() -> None:
    """--exporter.lock_wait_timeout is the target's lock_timeout; --exporter.log_slow_filter
    sets the session's log_slow_filter, in the DSN the target connects with."""
    target = load(PeerFlags(**MY, lock_wait_timeout="7", log_slow_filter=True)).target("mysql")
    assert target.lock_timeout == 7.0
    assert parse_dsn(target.dsn).option("log_slow_filter") == LOG_SLOW_FILTER
    plain = load(PeerFlags(**MY)).target("mysql")
    assert plain.lock_timeout == 2.0 and parse_dsn(plain.dsn).option("log_slow_filter") is None


@pytest.mark.parametrize("value", ["0", "-1", "x", "nan", "1" * 5000])
def test_bad_lock_wait_timeout_is_refused(value: str) -> None:
    message = error(read_startup, PeerFlags(**MY, lock_wait_timeout=value), {})
    assert "--exporter.lock_wait_timeout" in message and "a number of seconds" in message
    assert len(message) < 200


def test_mysqld_session_flags_without_a_mysql_target_are_refused() -> None:
    message = error(read_startup, PeerFlags(log_slow_filter=True), {})
    assert "--exporter.log_slow_filter applies to the mysql target" in message


def test_a_bad_log_slow_filter_in_a_dsn_is_refused() -> None:
    with pytest.raises(ConfigError, match="log_slow_filter 'x;drop' is not a list"):
        parse_dsn("mysql://u:p@h/?log_slow_filter=x;drop")


def test_timeout_offset_is_the_daemons(tmp_path: Path) -> None:
    config = load(PeerFlags(**MY, timeout_offset="0.25"))
    assert config.daemon.scrape_timeout_offset == 0.25
    assert "--timeout-offset" in error(read_startup, PeerFlags(timeout_offset="-1"), {})


def test_insecure_skip_verify_only_where_it_changes_nothing(tmp_path: Path) -> None:
    """Without ssl-ca, dbgauge's TLS to MySQL is unverified already: the flag is taken.
    With ssl-ca dbgauge verifies, and has no switch to stop: refused, not ignored."""
    assert load(PeerFlags(**MY, tls_insecure_skip_verify=True)).target("mysql") is not None
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nuser=u\npassword=p\nssl-ca=/etc/ca.pem\n")
    message = refused(PeerFlags(my_cnf=str(cnf), tls_insecure_skip_verify=True))
    assert "--tls.insecure-skip-verify" in message and "ssl-ca" in message


def test_systemd_socket_needs_systemds_variables() -> None:
    for env in ({}, {"LISTEN_PID": "1", "LISTEN_FDS": "1"},
                {"LISTEN_PID": str(os.getpid()), "LISTEN_FDS": "0"}):
        with pytest.raises(ConfigError, match="systemd passed no socket"):
            systemd_listener(dict(env))
    with pytest.raises(ConfigError, match="passed 2 sockets"):
        systemd_listener({"LISTEN_PID": str(os.getpid()), "LISTEN_FDS": "2"})


def test_systemd_socket_takes_fd_3_and_clears_the_variables() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    saved = os.dup(3) if _is_open(3) else None
    os.dup2(listener.fileno(), 3)
    try:
        env = {"LISTEN_PID": str(os.getpid()), "LISTEN_FDS": "1", "LISTEN_FDNAMES": "x"}
        sock = systemd_listener(env)
        assert sock.getsockname() == listener.getsockname() and env == {}
        sock.detach()
    finally:
        if saved is not None:
            os.dup2(saved, 3)
            os.close(saved)
        else:
            os.close(3)
        listener.close()


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_dumpmaps_is_refused_and_version_answers() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["serve", "--dumpmaps"])
    assert result.exit_code == 2 and "dbgauge collectors" in result.output
    assert "Traceback" not in result.output
    version = runner.invoke(cli, ["serve", "--version"])
    assert version.exit_code == 0 and version.output.startswith("dbgauge, version ")


def test_switch_tables_agree_with_the_dialects() -> None:
    """Every peer collector a dialect says a dbgauge collector gives (its self metrics'
    names) is switched by the flag table to that collector, and the other way round for
    every collector that exists: one mapping, not two that drift."""
    from dbgauge.collectors.dialects.mysqld_exporter import SCRAPERS
    from dbgauge.collectors.dialects.postgres_exporter import PEER_COLLECTORS
    from dbgauge.toolkit.peers.collectors import MYSQLD_EXPORTER, POSTGRES_EXPORTER

    for table, dialect in ((MYSQLD_EXPORTER, SCRAPERS), (POSTGRES_EXPORTER, PEER_COLLECTORS)):
        known = {c.name for c in app.registry().for_kind(table.kind)}
        for ours, peers in dialect.items():
            for peer in peers:
                assert ours in table.collectors.get(peer, ()), (table.peer, peer, ours)
        for peer, ours_all in table.collectors.items():
            assert set(ours_all) <= known, (table.peer, peer, ours_all)


def test_a_second_listen_address_is_refused_not_dropped() -> None:
    result = CliRunner().invoke(cli, ["serve", "--web.listen-address", ":9187",
                                      "--web.listen-address", "[::1]:9187"])
    assert result.exit_code == 2 and "given 2 times" in result.output
