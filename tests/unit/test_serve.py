"""`dbgauge serve` start-up order and command line, without servers: a port that is
taken (by this test's own socket) and a config whose targets are never contacted."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbgauge import app
from dbgauge.cli import cli
from dbgauge.toolkit.config import Config
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.exporter import server, state
from dbgauge.toolkit.jobs import Job
from dbgauge.toolkit.targets import Target

CONFIG = """\
targets:
  - {name: db, kind: mysql, dsn: 'mysql://u@127.0.0.1:1/', heartbeat: {mode: write}}
"""


def test_nothing_starts_when_the_port_is_taken(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The listener is bound before heartbeat writers and scheduled jobs start: a daemon
    that cannot listen has run no job and written no heartbeat."""
    monkeypatch.setattr(server, "setup_logging", lambda *_a: None)  # keep pytest's handlers
    started: list[str] = []
    monkeypatch.setattr(state.HeartbeatWriter, "start", lambda self: started.append("hb"))
    built: list[Config] = []

    def builder(config: Config) -> list[Job]:
        built.append(config)
        return []

    path = tmp_path / "c.yaml"
    path.write_text(CONFIG)
    wiring = replace(app.wiring(), job_builders=(builder,))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{port}"):
            server.serve(wiring, str(path), f"127.0.0.1:{port}")
    assert started == [] and built == []


def test_go_exporter_spellings_are_accepted() -> None:
    out = CliRunner().invoke(cli, ["serve", "--help"]).output
    for flag in ("--web.listen-address", "--listen", "--web.config.file", "--config.my-cnf",
                 "--web.telemetry-path", "--mysqld.address", "--mysqld.username",
                 "--extend.query-path", "--auto-discover-databases", "--config.file",
                 "--log.level", "--log.format", "--[no-]collect.NAME", "--[no-]collector.NAME",
                 "MYSQLD_EXPORTER_PASSWORD", "DATA_SOURCE_NAME", "DATA_SOURCE_URI"):
        assert flag in out


def test_my_cnf_client_section_is_one_mysql_target(tmp_path: Path) -> None:
    from dbgauge.toolkit.exporter.wiring import with_peers
    from dbgauge.toolkit.peers.env import PeerFlags, read_startup

    def target(text: str) -> Target:
        cnf = tmp_path / "my.cnf"
        cnf.write_text(text)
        startup = read_startup(PeerFlags(my_cnf=str(cnf)), {})
        return with_peers(app.wiring(), app.parse_config, startup).load_config(None
                                                                               ).target("mysql")

    made = target("""\
# deployed for mysqld_exporter
[mysqld]
port = 3307
[client]
user = exporter
password = "p@ss:w/rd#1"
host = db1.example
port = 3307
""")
    assert (made.name, made.kind, made.dsn) == \
        ("mysql", "mysql", "mysql://exporter:p%40ss%3Aw%2Frd%231@db1.example:3307/")
    params = made.connection_params()
    assert (params.user, params.password, params.host, params.port) == \
        ("exporter", "p@ss:w/rd#1", "db1.example", 3307)
    assert target("[client]\nuser=u\nsocket=/run/mysqld/mysqld.sock\n"
                  ).connection_params().host == "/run/mysqld/mysqld.sock"


@pytest.mark.parametrize(("content", "says"), [
    (b"[mysqld]\nuser = u\n", "no user: set user= under [client] or --mysqld.username"),
    (b"[client]\npassword = x\n", "no user: set user= under [client]"),
    (b"[client]\nuser = u\nport = 99999\n", "client.port"),
    (b"[client]\nuser = u\nport = " + b"9" * 5000 + b"\n", "client.port: port '99999"),
    (b"user = u\n", "not a MySQL option file"),
    (b"[client]\nuser = u\npassword = p\xc3\x28w\n", "not UTF-8 text (byte 0xc3)"),
])
def test_bad_my_cnf_is_a_clear_config_error(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "my.cnf"
    path.write_bytes(content)
    result = CliRunner().invoke(cli, ["serve", "--config.my-cnf", str(path),
                                      "--listen", "127.0.0.1:1"])
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and says in result.output, result.output
    assert result.output.count("\n") == 1 and len(result.output) < 400


def test_the_my_cnf_target_joins_every_config_load(tmp_path: Path) -> None:
    """--config.my-cnf: its target alone without --config, added to --config's targets
    (on start and on each reload: the loader is the daemon's, and reads the file again),
    refused on a name clash."""
    from dbgauge.toolkit.exporter.wiring import with_peers
    from dbgauge.toolkit.peers.env import PeerFlags, read_startup

    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nuser=exporter\nhost=db1\nport=3307\n")
    startup = read_startup(PeerFlags(my_cnf=str(cnf)), {})
    wiring = with_peers(app.wiring(), app.parse_config, startup)
    assert [t.name for t in wiring.load_config(None).targets] == ["mysql"]
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    loaded = wiring.load_config(str(config))
    assert [t.name for t in loaded.targets] == ["db", "mysql"]
    assert loaded.target("mysql").dsn == "mysql://exporter@db1:3307/"
    cnf.write_text("[client]\nuser=exporter\nhost=db2\nport=3307\n")
    assert wiring.load_config(str(config)).target("mysql").dsn == "mysql://exporter@db2:3307/"
    config.write_text("targets:\n  - {name: mysql, kind: mysql, dsn: 'mysql://u@h/'}\n")
    with pytest.raises(ConfigError, match=r"make a target named 'mysql'.*rename that one"):
        wiring.load_config(str(config))
