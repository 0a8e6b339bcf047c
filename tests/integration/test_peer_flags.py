"""The rest of the peers' command lines, on the real sandbox: postgres_exporter's
--disable-*-metrics and --constantLabels beside Debian's postgres_exporter given the same
flags, --exclude/--include-databases; mysqld_exporter's session flags as the server sees
them; --web.systemd-socket under systemd-socket-activate; /-/reload."""

from __future__ import annotations

import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbgauge import app
from dbgauge.toolkit.db import connect
from dbgauge.toolkit.exporter.wiring import with_peers
from dbgauge.toolkit.peers.env import PeerFlags, read_startup
from dbgauge.toolkit.peers.targets import LOG_SLOW_FILTER
from tests.helpers import DBGAUGE, free_port, parse_metrics, value, wait_for
from tests.helpers.daemon import Daemon
from tests.helpers.peers import (
    POSTGRES_EXPORTER,
    POSTGRES_NOT_PRODUCED,
    compare,
    get,
    monitoring_dsn,
    my_cnf,
    parse,
    peer,
    postgres_exporter,
)
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

CUT = ("--disable-default-metrics", "--disable-settings-metrics",
       "--constantLabels=env=prod,dc=eu1")


@pytest.fixture
def daemons() -> Iterator[list[Daemon]]:
    started: list[Daemon] = []
    yield started
    for d in started:
        d.stop()


def start(daemons: list[Daemon], log: Path, *args: str, env: dict[str, str] | None = None
          ) -> Daemon:
    d = Daemon(None, log, args=args, env=env)
    daemons.append(d)
    return d


def pg_families(text: str) -> set[str]:
    return {n for n in parse(text) if n.startswith("pg_")}


def test_disable_flags_and_constant_labels_as_postgres_exporter(
        sandbox: Sandbox, tmp_path: Path, daemons: list[Daemon]) -> None:
    """With the same flags, dbgauge leaves out what the peer leaves out (its built-in
    queries' families and pg_settings_*), keeps what it keeps, and labels pg_up alike."""
    with postgres_exporter(sandbox, "pg-primary") as full:
        everything = pg_families(full.scrape())
    with peer([POSTGRES_EXPORTER, *CUT],
              {"DATA_SOURCE_NAME": monitoring_dsn(sandbox, "pg-primary")},
              ready='pg_up{dc="eu1",env="prod"} 1') as cut:
        peer_text = cut.scrape()
    kept = pg_families(peer_text)
    dropped = everything - kept
    assert any(n.startswith("pg_settings_") for n in dropped)
    assert {"pg_locks_count", "pg_stat_database_xact_commit", "pg_stat_activity_count"} \
        <= dropped
    d = start(daemons, tmp_path / "log", *CUT,
              env={"DATA_SOURCE_NAME": monitoring_dsn(sandbox, "pg-primary")})
    ours_text = d.get("/metrics")[1]
    ours = pg_families(ours_text)
    assert not dropped & ours, sorted(dropped & ours)
    assert kept - set(POSTGRES_NOT_PRODUCED) <= ours, sorted(kept - ours)
    assert value(parse_metrics(peer_text), "pg_up", env="prod", dc="eu1") == 1.0
    assert value(parse_metrics(ours_text), "pg_up", env="prod", dc="eu1") == 1.0
    assert value(parse_metrics(ours_text), "dbgauge_up", target="postgres", env="prod") == 1.0


def tables_by_database(d: Daemon) -> set[str]:
    m = d.metrics()
    return {dict(labels)["database"] for name, labels in m
            if name == "dbgauge_postgres_tables"}


@pytest.mark.parametrize("flag, expected", [
    ("--exclude-databases=drift", {"app", "postgres"}),
    ("--include-databases=drift", {"app", "drift"}),  # the DSN's own, and those named
])
def test_exclude_and_include_databases(sandbox: Sandbox, tmp_path: Path,
                                       daemons: list[Daemon], flag: str,
                                       expected: set[str]) -> None:
    d = start(daemons, tmp_path / "log", "--auto-discover-databases", flag,
              env={"DATA_SOURCE_NAME": monitoring_dsn(sandbox, "pg-primary")})
    assert wait_for(lambda: tables_by_database(d) or None,
                    what="per-table statistics") == expected, d.log_text()


def test_mysqld_session_flags_as_the_server_sees_them(sandbox: Sandbox,
                                                      tmp_path: Path) -> None:
    """--exporter.lock_wait_timeout and --exporter.log_slow_filter on the session dbgauge
    opens for the mysql target: read back from the server."""
    cnf = my_cnf(sandbox, "mariadb-primary", tmp_path / "my.cnf")
    flags = PeerFlags(my_cnf=str(cnf), lock_wait_timeout="7", log_slow_filter=True)
    wiring = with_peers(app.wiring(), app.parse_config, read_startup(flags, {}))
    target = wiring.load_config(None).target("mysql")
    conn = connect(target)
    try:
        row = conn.execute_sql("SELECT @@session.lock_wait_timeout AS lock_wait, "
                               "@@session.log_slow_filter AS slow_filter")[0]
    finally:
        conn.close()
    assert int(row["lock_wait"]) == 7
    assert set(str(row["slow_filter"]).split(",")) == set(LOG_SLOW_FILTER.split(","))


def test_web_systemd_socket(sandbox: Sandbox, tmp_path: Path) -> None:
    """Started by systemd-socket-activate (what a .socket unit does): the first connection
    starts dbgauge on the socket it was handed, which answers /healthz and /metrics."""
    activate = shutil.which("systemd-socket-activate")
    assert activate, "systemd-socket-activate (package systemd) is installed by install-deps"
    port = free_port()
    cnf = my_cnf(sandbox, "mariadb-primary", tmp_path / "my.cnf")
    log = (tmp_path / "log").open("wb")
    proc = subprocess.Popen([activate, "-l", f"127.0.0.1:{port}", *DBGAUGE, "serve",
                             "--web.systemd-socket", "--config.my-cnf", str(cnf)],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        body = wait_for(lambda: _get(port, "/healthz"), timeout=30,
                        what="dbgauge started on systemd's socket")
        assert body == "ok\n"
        assert value(parse_metrics(get(port)), "mysql_up") == 1.0
        assert "(systemd's socket)" in (tmp_path / "log").read_text()
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def _get(port: int, path: str) -> str | None:
    try:
        return get(port, path)
    except OSError:
        return None


def post(d: Daemon, path: str) -> tuple[int, str]:
    request = urllib.request.Request(f"{d.url}{path}", method="POST", data=b"")
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_reload_endpoint_rereads_the_my_cnf(sandbox: Sandbox, tmp_path: Path,
                                            daemons: list[Daemon]) -> None:
    """mysqld_exporter's /-/reload: a fixed my.cnf is read again and the target comes up;
    a broken one is answered 500 and the running config kept."""
    cnf = my_cnf(sandbox, "mariadb-primary", tmp_path / "my.cnf")
    good = cnf.read_text()
    cnf.write_text(good.replace(sandbox.state.dbgauge_password, "wrong-password"))
    d = start(daemons, tmp_path / "log", "--config.my-cnf", str(cnf))
    assert value(d.metrics(), "mysql_up") == 0.0
    cnf.write_text(good)
    assert post(d, "/-/reload") == (200, "ok\n")
    assert value(d.metrics(), "mysql_up") == 1.0
    cnf.write_text("[client\nuser=dbgauge\n")
    status, body = post(d, "/-/reload")
    assert status == 500 and "previous config is kept" in body
    assert value(d.metrics(), "mysql_up") == 1.0
    assert value(d.metrics(), "dbgauge_config_last_reload_successful") == 0.0
    assert d.get("/-/reload")[0] == 500  # any method, as mysqld_exporter
    assert post(d, "/metrics")[0] == 405


QUERIES = """\
pg_dbgauge_tables:
  query: "SELECT current_database() AS datname, count(*) AS tables FROM pg_class
    WHERE relkind = 'r'"
  metrics:
    - datname: {usage: LABEL, description: "database"}
    - tables: {usage: GAUGE, description: "relations of kind r"}
pg_dbgauge_once:
  query: "SELECT current_database() AS datname, 1 AS here"
  master: true
  metrics:
    - datname: {usage: LABEL, description: "database"}
    - here: {usage: GAUGE, description: "1"}
"""


def test_queries_on_every_database_as_postgres_exporter(
        sandbox: Sandbox, tmp_path: Path, daemons: list[Daemon]) -> None:
    """--auto-discover-databases with a queries.yaml: each query runs on every database
    (the one marked master: true on the DSN's only), the same series as Debian's
    postgres_exporter 0.11 given the same file and flags."""
    queries = tmp_path / "queries.yaml"
    queries.write_text(QUERIES)
    flags = (f"--extend.query-path={queries}", "--auto-discover-databases")
    env = {"DATA_SOURCE_NAME": monitoring_dsn(sandbox, "pg-primary")}
    names = ("pg_dbgauge_tables_tables", "pg_dbgauge_once_here")
    d = start(daemons, tmp_path / "log", *flags, env=env)
    with postgres_exporter(sandbox, "pg-primary", flags=flags) as peer_exporter:
        before = parse(peer_exporter.scrape())
        ours = parse(d.get("/metrics")[1], drop_labels=("target",))
        after = parse(peer_exporter.scrape())
    assert compare(before, ours, after, names) == []
    per_database = {dict(labels)["datname"] for _, labels in ours[names[0]].samples}
    assert per_database == {"app", "postgres", "drift"}
    assert [dict(labels)["datname"] for _, labels in ours[names[1]].samples] == ["app"]
    assert value(parse_metrics(d.get("/metrics")[1]),
                 "dbgauge_postgres_custom_query_database_success", database="drift") == 1.0


def test_the_peers_opt_in_collectors_switched_on(sandbox: Sandbox, tmp_path: Path,
                                                 daemons: list[Daemon]) -> None:
    """A unit file's --collect.perf_schema.eventswaits and --collect.auto_increment.columns
    run dbgauge's opt-in collectors behind them: the peer's families are there."""
    cnf = my_cnf(sandbox, "mariadb-primary", tmp_path / "my.cnf")
    d = start(daemons, tmp_path / "log", "--config.my-cnf", str(cnf),
              "--collect.perf_schema.eventswaits", "--collect.auto_increment.columns")
    m = d.metrics()
    assert value(m, "dbgauge_collector_success", collector="mysql_perf_schema_waits") == 1.0
    assert value(m, "dbgauge_collector_success", collector="mysql_auto_increment") == 1.0
    names = {name for name, _ in m}
    assert "mysql_perf_schema_events_waits_total" in names
    assert "mysql_info_schema_auto_increment_column" in names
    assert "has no equivalent" not in d.log_text()
