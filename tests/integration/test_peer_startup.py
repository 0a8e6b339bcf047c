"""`dbgauge serve` started the way postgres_exporter and mysqld_exporter are started (their
environment variables, flags and /probe?target=ADDRESS&auth_module=NAME), scraping the real
sandbox as the monitoring user, with its password never in the log or an answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from dbgauge import app
from dbgauge.toolkit.exporter import transient
from dbgauge.toolkit.exporter.transient import TransientTargets
from dbgauge.toolkit.exporter.wiring import with_peers
from dbgauge.toolkit.peers.env import PeerFlags, read_startup
from tests.helpers import parse_metrics, value, wait_for
from tests.helpers.daemon import Daemon
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration


def password(sandbox: Sandbox) -> str:
    return sandbox.state.dbgauge_password


def assert_no_password(d: Daemon, sandbox: Sandbox, *bodies: str) -> None:
    """The monitoring user's password is in none of the daemon's pages, nor its log."""
    pages = [d.get(path)[1] for path in ("/", "/status.json")]
    for text in (d.log_text(), *pages, *bodies):
        assert password(sandbox) not in text
        assert quote(password(sandbox), safe="") not in text


@pytest.fixture
def daemons() -> Iterator[list[Daemon]]:
    started: list[Daemon] = []
    yield started
    for d in started:
        d.stop()


def start(daemons: list[Daemon], log: Path, *, args: tuple[str, ...] = (),
          env: dict[str, str] | None = None) -> Daemon:
    d = Daemon(None, log, args=args, env=env)
    daemons.append(d)
    return d


def test_data_source_name_alone(sandbox: Sandbox, tmp_path: Path,
                                daemons: list[Daemon]) -> None:
    """postgres_exporter's DATA_SOURCE_NAME (two DSNs: a URI and a key=value string) is
    the whole configuration; its targets speak postgres_exporter's names too."""
    pw = password(sandbox)
    primary, standby = sandbox.state.port("pg-primary"), sandbox.state.port("pg-standby")
    dsns = (f"postgresql://dbgauge:{quote(pw, safe='')}@127.0.0.1:{primary}/app?sslmode=disable,"
            f"host=127.0.0.1 port={standby} user=dbgauge password={pw} dbname=app")
    d = start(daemons, tmp_path / "log", env={"DATA_SOURCE_NAME": dsns})
    m = d.metrics()
    assert value(m, "dbgauge_up", target="postgres") == 1.0, d.log_text()
    assert value(m, "dbgauge_up", target="postgres-2") == 1.0, d.log_text()
    assert value(m, "pg_up", target="postgres") == 1.0
    assert value(m, "dbgauge_postgres_replication_in_recovery", target="postgres-2") == 1.0
    assert_no_password(d, sandbox, d.get("/metrics")[1])


def test_data_source_uri_user_and_password_file_reloaded_on_sighup(
        sandbox: Sandbox, tmp_path: Path, daemons: list[Daemon]) -> None:
    """DATA_SOURCE_URI + DATA_SOURCE_USER + DATA_SOURCE_PASS_FILE, with
    --web.telemetry-path: a wrong password is a down target; the right one written to the
    file and SIGHUP bring it up (the file is read again, as at start)."""
    secret = tmp_path / "pass"
    secret.write_text("not-the-password\n")
    env = {"DATA_SOURCE_URI": f"127.0.0.1:{sandbox.state.port('pg-primary')}/app?sslmode=disable",
           "DATA_SOURCE_USER": "dbgauge", "DATA_SOURCE_PASS_FILE": str(secret)}
    d = start(daemons, tmp_path / "log", args=("--web.telemetry-path", "/pgmetrics"), env=env)
    assert d.get("/metrics")[0] == 404  # moved, as the peer moves it
    assert '<a href="/pgmetrics">' in d.get("/")[1]  # and the status page links there
    m = d.metrics("/pgmetrics")
    assert value(m, "dbgauge_up", target="postgres") == 0.0
    assert value(m, "pg_up") == 0.0
    secret.write_text(f"{password(sandbox)}\n")
    d.reload("config reloaded")
    wait_for(lambda: value(d.metrics("/pgmetrics"), "dbgauge_up", target="postgres") == 1.0,
             what="the postgres target up with the rotated password")
    assert "not-the-password" not in d.log_text()
    assert_no_password(d, sandbox, d.get("/pgmetrics")[1])


def test_mysqld_address_username_and_password_variable(sandbox: Sandbox, tmp_path: Path,
                                                       daemons: list[Daemon]) -> None:
    """mysqld_exporter's --mysqld.address, --mysqld.username and MYSQLD_EXPORTER_PASSWORD;
    --no-collect.binlog_size turns off what only it maps to (dbgauge's mysql_binlog)."""
    d = start(daemons, tmp_path / "log",
              args=("--mysqld.address", f"127.0.0.1:{sandbox.state.port('mariadb-primary')}",
                    "--mysqld.username", "dbgauge", "--no-collect.binlog_size",
                    "--log.level", "debug"),
              env={"MYSQLD_EXPORTER_PASSWORD": password(sandbox)})
    m = d.metrics()
    assert value(m, "dbgauge_up", target="mysql") == 1.0, d.log_text()
    assert value(m, "mysql_up") == 1.0
    assert value(m, "mysql_global_status_uptime") is not None
    assert value(m, "dbgauge_collector_success", collector="mysql_status") == 1.0
    assert value(m, "dbgauge_collector_success", collector="mysql_binlog") is None
    assert not [n for n, _ in m if n.startswith("dbgauge_mysql_binlog")]
    assert_no_password(d, sandbox, d.get("/metrics")[1])


def test_mysqld_exporter_014s_data_source_name(sandbox: Sandbox, tmp_path: Path,
                                               daemons: list[Daemon]) -> None:
    """Debian's mysqld_exporter (0.14) is configured with DATA_SOURCE_NAME holding a Go
    MySQL DSN (its /etc/default file says so): that unit moves over too."""
    port = sandbox.state.port("mariadb-replica")
    d = start(daemons, tmp_path / "log",
              env={"DATA_SOURCE_NAME": f"dbgauge:{password(sandbox)}@(127.0.0.1:{port})/"})
    m = d.metrics()
    assert value(m, "dbgauge_up", target="mysql") == 1.0, d.log_text()
    assert value(m, "mysql_up") == 1.0
    assert value(m, "dbgauge_mysql_replication_configured") == 1.0  # the replica it named
    assert_no_password(d, sandbox, d.get("/metrics")[1])


def test_mysql_probe_of_an_address_with_an_auth_module(sandbox: Sandbox, tmp_path: Path,
                                                       daemons: list[Daemon]) -> None:
    """mysqld_exporter's multi-target mode: /probe?target=HOST:PORT&auth_module=SECTION of
    the --config.my-cnf; [client.servers] takes [client]'s password; an unknown section
    is a 400, a wrong password a down target; configured names still work."""
    pw = password(sandbox)
    primary, replica = (sandbox.state.port(n) for n in ("mariadb-primary", "mariadb-replica"))
    cnf = tmp_path / "my.cnf"
    cnf.write_text(f"[client]\nuser = dbgauge\npassword = \"{pw}\"\nhost = 127.0.0.1\n"
                   f"port = {primary}\n[client.servers]\nuser = dbgauge\n"
                   "[client.wrong]\npassword = wrong-password\n")
    d = start(daemons, tmp_path / "log", args=("--config.my-cnf", str(cnf)))
    assert value(d.metrics(), "mysql_up") == 1.0, d.log_text()
    status, body = d.get(f"/probe?target=127.0.0.1:{replica}&auth_module=client.servers")
    assert status == 200, body
    m = parse_metrics(body)
    assert value(m, "dbgauge_up", target=f"127.0.0.1:{replica}") == 1.0
    assert value(m, "mysql_up") == 1.0
    assert value(m, "dbgauge_mysql_replication_configured") == 1.0  # it is the replica
    status, body = d.get(f"/probe?target=127.0.0.1:{replica}&collect[]=mysql_status")
    assert status == 200 and {c for (n, ls) in parse_metrics(body).items()
                              if n[0] == "dbgauge_collector_success"
                              for k, c in n[1] if k == "collector"} == {"mysql_status"}
    assert d.get(f"/probe?target=127.0.0.1:{replica}&collect[]=nope")[0] == 400
    status, body = d.get(f"/probe?target=127.0.0.1:{replica}&auth_module=nosuch")
    assert (status, body) == (400, "Could not find config section [nosuch] (with a user)\n")
    status, body = d.get(f"/probe?target=127.0.0.1:{replica}&auth_module=client.wrong")
    assert status == 200 and value(parse_metrics(body), "mysql_up") == 0.0
    assert d.get("/probe?target=127.0.0.1")[0] == 400  # no port: the peer refuses it too
    status, body = d.get("/probe?target=mysql")  # the configured target, by its name
    assert status == 200 and value(parse_metrics(body), "mysql_up") == 1.0
    assert "wrong-password" not in d.log_text()
    assert_no_password(d, sandbox)


def test_postgres_probe_with_postgres_exporters_auth_modules(sandbox: Sandbox, tmp_path: Path,
                                                             daemons: list[Daemon]) -> None:
    """postgres_exporter's multi-target mode: no DATA_SOURCE_*, --config.file with
    auth_modules; /probe?target=HOST:PORT/DB&auth_module=NAME; an unknown module is a 400
    with the peer's message; a target may carry its own credentials (no module)."""
    pw = password(sandbox)
    auth = tmp_path / "postgres_exporter.yml"
    auth.write_text("auth_modules:\n  monitoring:\n    type: userpass\n    userpass:\n"
                    f"      username: dbgauge\n      password: '{pw}'\n"
                    "    options:\n      sslmode: disable\n")
    d = start(daemons, tmp_path / "log",
              args=("--config.file", str(auth), "--log.level", "debug"))
    assert d.get("/metrics")[0] == 200  # no target of its own: /probe only
    for name in ("pg-primary", "pg-standby"):
        port = sandbox.state.port(name)
        status, body = d.get(f"/probe?target=127.0.0.1:{port}/app&auth_module=monitoring")
        assert status == 200, body
        m = parse_metrics(body)
        assert value(m, "pg_up") == 1.0 and value(m, "dbgauge_up") == 1.0, body
    port = sandbox.state.port("pg-primary")
    status, body = d.get(f"/probe?target=127.0.0.1:{port}/app&auth_module=nosuch")
    assert (status, body) == (400, "auth_module nosuch not found\n")
    own = quote(f"postgresql://dbgauge:{quote(pw, safe='')}@127.0.0.1:{port}/app", safe="")
    status, body = d.get(f"/probe?target={own}")
    assert status == 200 and value(parse_metrics(body), "pg_up") == 1.0
    assert "GET /probe?target=postgresql://dbgauge:***@" in d.log_text()  # logged, redacted
    assert_no_password(d, sandbox, body)


def test_a_dropped_transient_target_closes_its_connection(sandbox: Sandbox,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    """Past the cap, the least recently probed address is dropped and its connection to
    the server closed (here with a cap of 1, in-process)."""
    monkeypatch.setattr(transient, "MAX_TRANSIENT", 1)
    cnf = tmp_path / "my.cnf"
    cnf.write_text(f"[client]\nuser = dbgauge\npassword = \"{password(sandbox)}\"\n")
    wiring = with_peers(app.wiring(), app.parse_config,
                        read_startup(PeerFlags(my_cnf=str(cnf)), {}))
    source = wiring.probe()
    assert source is not None
    targets = TransientTargets(source, wiring.load_config(None), app.registry())
    try:
        addresses = [f"127.0.0.1:{sandbox.state.port(n)}"
                     for n in ("mariadb-primary", "mariadb-replica")]
        scraper, name = targets.checkout(addresses[0], None)
        runner = scraper.runners[name]
        assert scraper.scrape([name], time.monotonic() + 8)[0].up
        scraper.release()
        conn = runner._conn
        assert conn is not None and not conn.closed
        other, second = targets.checkout(addresses[1], None)
        assert set(other.runners) == {second}
        other.release()
        assert conn.closed and runner._conn is None  # the first address's, closed
    finally:
        targets.close()
