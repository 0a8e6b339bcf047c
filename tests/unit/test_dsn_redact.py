"""DSN parsing and secret redaction."""

from __future__ import annotations

import pytest

from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.redact import redact, register_secret


def test_mysql_dsn() -> None:
    p = parse_dsn("mysql://mon:p%40ss@db.example:3307/app")
    assert (p.family, p.host, p.port, p.user, p.dbname, p.password) == (
        "mysql", "db.example", 3307, "mon", "app", "p@ss")
    assert "p@ss" not in repr(p)
    assert p.address == "db.example:3307"


def test_a_password_in_the_dsn_wins_over_one_from_a_file() -> None:
    assert parse_dsn("mysql://mon:own@db/").or_password("from-file").password == "own"
    assert parse_dsn("mysql://mon@db/").or_password("from-file").password == "from-file"
    assert parse_dsn("postgresql://mon@db/x").or_password(None).password is None
    assert parse_dsn("postgresql://mon@db/x").kind == "postgres"
    assert parse_dsn("postgresql://mon@db:6432/pgbouncer").kind == "pgbouncer"
    assert parse_dsn("mariadb://mon@db/").kind == "mysql"


def test_defaults_and_sockets() -> None:
    assert parse_dsn("mariadb://mon@db/").port == 3306
    assert parse_dsn("postgres://mon@db").port == 5432
    sock = parse_dsn("mysql://mon@localhost/?unix_socket=/run/mysqld/mysqld.sock")
    assert sock.host == "/run/mysqld/mysqld.sock"
    assert sock.address == "/run/mysqld/mysqld.sock"


@pytest.mark.parametrize(("dsn", "message"), [
    ("db.example:3306", "has no scheme"),
    ("oracle://u@h/", "unsupported scheme 'oracle'"),
    ("mysql://h:3306/", "names no user"),
    ("mysql://u:pw@h:99999/", "malformed"),
])
def test_bad_dsns(dsn: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_dsn(dsn)
    assert ":pw@" not in str(info.value)


def test_redact_masks_dsn_passwords_kv_pairs_and_registered_secrets() -> None:
    assert redact("cannot use mysql://mon:hunter2@db:3306/") == "cannot use mysql://mon:***@db:3306/"
    assert redact("host=db password=hunter2 user=x") == "host=db password=*** user=x"
    register_secret("Zx9-registered-secret")
    assert redact("error: bad Zx9-registered-secret here") == "error: bad *** here"
