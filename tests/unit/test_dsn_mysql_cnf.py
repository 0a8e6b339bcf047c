"""mysql:// DSNs and the client option files: which groups, files and includes are read,
what fills what, and the errors (no server: the integration tests connect)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.targets import select, with_defaults_file


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MYSQL_HOME", raising=False)
    return tmp_path


def test_client_groups_in_file_order_not_the_mysql_group(tmp_path: Path) -> None:
    cnf = tmp_path / "c.cnf"
    cnf.write_text("[client]\nuser=a\nhost=h1\n[mysql]\nuser=mysql-only\n"
                   "[client-server]\nport=3310\n[dbgauge]\ndatabase=app\n"
                   "[client-mariadb]\nhost=h2\nssl-ca=/ca.pem\npassword='p w'\n")
    params = parse_dsn(f"mysql://?read_default_file={cnf}")
    assert (params.user, params.host, params.port, params.dbname) == ("a", "h2", 3310, "app")
    assert params.password is None and params.login_password == "p w"
    assert params.option("ssl_ca") == "/ca.pem"
    assert "p w" not in repr(params)


def test_the_dsn_wins_and_a_socket_serves_localhost(tmp_path: Path) -> None:
    (tmp_path / ".my.cnf").write_text("[client]\nuser=u\npassword=pw\nsocket=/run/m.sock\n"
                                      "port=3307\n")
    assert parse_dsn("mysql://").host == "/run/m.sock"
    given = parse_dsn("mysql://v:x@db9:3308/d")
    assert (given.user, given.host, given.port, given.login_password) == ("v", "db9", 3308, "x")
    assert parse_dsn("mysql://v@db9/").login_password == "pw"
    assert parse_dsn("mysql://v@db9/").port == 3307


def test_includes_are_followed(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "10.cnf").write_text("[client]\nuser=from-dir\n")
    (tmp_path / "d" / "skip.conf").write_text("[client]\nuser=not-cnf\n")
    (tmp_path / "pw.cnf").write_text("[client]\npassword=inc\n")
    main = tmp_path / "main.cnf"
    main.write_text(f"[client]\nhost=h\n!includedir {tmp_path / 'd'}\n!include pw.cnf\n")
    params = parse_dsn(f"mysql://?read_default_file={main}")
    assert (params.user, params.login_password) == ("from-dir", "inc")


@pytest.mark.parametrize(("dsn", "says"), [
    ("mysql://u@h/?ssl_mode=REQUIRED&foo=1", "unknown parameters foo, ssl_mode: a mysql:// DSN "
                                             "takes read_default_file, read_default_group, "
                                             "ssl_ca, unix_socket"),
    ("mysql://u@h/?read_default_file=/nonexistent/my.cnf", "cannot read option file"),
    ("mysql://h/", r"names no user: add user@ before the host, or user= under \[client\]"),
])
def test_errors_name_what_is_wrong(dsn: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        parse_dsn(dsn)


def test_a_bad_line_names_file_and_line(tmp_path: Path) -> None:
    cnf = tmp_path / "bad.cnf"
    cnf.write_text("[client]\nuser=u\n[oops\n")
    with pytest.raises(ConfigError, match=rf"{cnf}:3: group header without"):
        parse_dsn(f"mysql://?read_default_file={cnf}")


def test_defaults_file_on_the_command_line(tmp_path: Path) -> None:
    cnf = tmp_path / "x y.cnf"
    cnf.write_text("[client]\nuser=u\nhost=db5\n")
    assert with_defaults_file("mysql://u@h/", str(cnf)) == \
        f"mysql://u@h/?read_default_file={str(cnf).replace(' ', '%20')}"
    assert with_defaults_file("mysql://u@h/?read_default_file=/a", "/b").endswith("=/a")
    assert with_defaults_file("postgresql://u@h/", "/b") == "postgresql://u@h/"
    alone = select([], [], None, defaults_file=str(cnf))
    assert [t.name for t in alone.targets] == ["db5:3306"]


def test_a_5000_digit_port_in_the_option_file_is_a_clear_error(tmp_path: Path) -> None:
    """int() of more than 4,300 digits is a bare ValueError in Python: the port is
    refused by its length first, and the message shows a short excerpt only."""
    cnf = tmp_path / "c.cnf"
    cnf.write_text("[client]\nuser=u\nport=" + "9" * 5000 + "\n")
    with pytest.raises(ConfigError, match="from the option file is not a TCP port") as info:
        parse_dsn(f"mysql://?read_default_file={cnf}")
    assert len(str(info.value)) < 300
