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
from dbgauge.toolkit.mycnf import my_cnf_target

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
    for flag in ("--web.listen-address", "--listen", "--web.config.file", "--config.my-cnf"):
        assert flag in out


def test_my_cnf_client_section_is_one_mysql_target() -> None:
    text = """\
# deployed for mysqld_exporter
[mysqld]
port = 3307
[client]
user = exporter
password = "p@ss:w/rd#1"
host = db1.example
port = 3307
"""
    entry = my_cnf_target(text, "/etc/.my.cnf")
    assert entry == {"name": "mysql", "kind": "mysql",
                     "dsn": "mysql://exporter:p%40ss%3Aw%2Frd%231@db1.example:3307/"}
    target = app.parse_config(f"targets: [{{name: mysql, kind: mysql, dsn: '{entry['dsn']}'}}]"
                              ).all_targets()[0]
    params = target.connection_params()
    assert (params.user, params.password, params.host, params.port) == \
        ("exporter", "p@ss:w/rd#1", "db1.example", 3307)
    sock = my_cnf_target("[client]\nuser=u\nsocket=/run/mysqld/mysqld.sock\n", "x")
    assert app.parse_config(f"targets: [{{name: m, kind: mysql, dsn: '{sock['dsn']}'}}]"
                            ).all_targets()[0].connection_params().host \
        == "/run/mysqld/mysqld.sock"


@pytest.mark.parametrize(("text", "says"), [
    ("[mysqld]\nuser = u\n", "no [client] section"),
    ("[client]\npassword = x\n", "client.user: [client] names no user"),
    ("[client]\nuser = u\nport = 99999\n", "client.port"),
    ("user = u\n", "not a MySQL option file"),
])
def test_bad_my_cnf_is_a_clear_config_error(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "my.cnf"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["serve", "--config.my-cnf", str(path),
                                      "--listen", "127.0.0.1:1"])
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and says in result.output, result.output


def test_the_my_cnf_target_joins_every_config_load(tmp_path: Path) -> None:
    """--config.my-cnf: its target alone without --config, added to --config's targets
    (on start and on each reload: the loader is the daemon's), refused on a name clash."""
    from dbgauge.toolkit.exporter.wiring import with_my_cnf

    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nuser=exporter\nhost=db1\nport=3307\n")
    wiring = with_my_cnf(app.wiring(), app.parse_config, cnf)
    assert [t.name for t in wiring.load_config(None).targets] == ["mysql"]
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    loaded = wiring.load_config(str(config))
    assert [t.name for t in loaded.targets] == ["db", "mysql"]
    assert loaded.target("mysql").dsn == "mysql://exporter@db1:3307/"
    config.write_text("targets:\n  - {name: mysql, kind: mysql, dsn: 'mysql://u@h/'}\n")
    with pytest.raises(ConfigError, match=r"makes a target named 'mysql'.*rename that one"):
        wiring.load_config(str(config))
