"""pt's DSNs (h=host,P=3306,u=user,p=pass,S=socket,D=db,F=file) read where a MySQL DSN is
taken: the mysql:// DSN each one means, pt's defaults, and no password in any message."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbgauge.toolkit.dsn import parse_dsn, pt_as_mysql, pt_table
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.targets import target_from_dsn
from tests.helpers.dsns import no_known_secrets


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MYSQL_HOME", raising=False)
    return tmp_path


@pytest.mark.parametrize(("dsn", "means"), [
    ("h=127.0.0.1,P=3307,u=root,p=s3cret", "mysql://root:s3cret@127.0.0.1:3307/"),
    ("h=db1,u=me,p=a@b/c,D=shop", "mysql://me:a%40b%2Fc@db1/shop"),
    ("S=/run/mysqld/mysqld.sock,u=root", "mysql://root@/?unix_socket=/run/mysqld/mysqld.sock"),
    ("h=::1,u=x", "mysql://x@[::1]/"),
    ("h=db1,u=x,A=utf8", "mysql://x@db1/"),
])
def test_each_pt_dsn_means_a_mysql_dsn(dsn: str, means: str) -> None:
    assert pt_as_mysql(dsn) == means


def test_pt_defaults_port_option_files_and_os_user(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """P defaults to 3306; what the DSN leaves out comes from F= (a defaults file, ~
    expanded) or ~/.my.cnf, the user last from the OS login, as DBD::mysql does."""
    monkeypatch.setattr("getpass.getuser", lambda: "osuser")
    params = parse_dsn("h=db1")
    assert (params.host, params.port, params.user) == ("db1", 3306, "osuser")
    (tmp_path / "pt.cnf").write_text("[client]\nuser=cnfuser\npassword=cnfpw\nport=3310\n")
    params = parse_dsn("h=db1,F=~/pt.cnf")
    assert (params.user, params.port, params.login_password) == ("cnfuser", 3310, "cnfpw")
    assert "cnfpw" not in repr(params)
    (tmp_path / ".my.cnf").write_text("[client]\nuser=home\n")
    assert parse_dsn("h=db1").user == "home"


def test_a_pt_dsn_target_is_the_mysql_dsn_it_means() -> None:
    """One spelling downstream (replica discovery, --defaults-file): the target holds the
    mysql:// DSN and is named by its address."""
    target = target_from_dsn("r1=h=127.0.0.1,P=3307,u=root,p=pw")
    assert (target.name, target.kind, target.dsn) == ("r1", "mysql",
                                                      "mysql://root:pw@127.0.0.1:3307/")
    assert target_from_dsn("h=db2,P=3306,u=x").name == "db2:3306"


@pytest.mark.parametrize(("dsn", "says"), [
    ("h=db1,u=x,x=1", "'x' is not a pt DSN part"),
    ("h=db1,u=x,P=port", "P='port' is not a TCP port"),
    ("h=db1,u=x,t=heartbeat", "t= names a table, not a server"),
    ("h=db1,u=x,p=Qzq7,kMark", "the password \\(p=\\) holds a comma"),
    ("h=db1,u=x,F=/nonexistent.cnf", "cannot read option file"),
])
def test_errors_say_what_and_show_no_password(dsn: str, says: str) -> None:
    with no_known_secrets(), pytest.raises(ConfigError, match=says) as caught:
        parse_dsn(dsn)
    assert "Qzq7" not in str(caught.value) and "kMark" not in str(caught.value)


def test_pt_table_splits_d_and_t_for_commands_that_take_a_table() -> None:
    assert pt_table("h=db1,D=percona,t=heartbeat,u=x") == ("percona", "heartbeat",
                                                           "h=db1,D=percona,u=x")
    assert pt_table("mysql://x@db1/") == (None, None, "mysql://x@db1/")
