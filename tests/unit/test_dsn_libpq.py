"""PostgreSQL DSNs as libpq reads them (URI, key=value, service=, PG* defaults), parsed by
libpq through psycopg; no server involved (the integration tests connect)."""

from __future__ import annotations

import pytest

from dbgauge.toolkit.dsn import libpq_dsn, parse_dsn
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.targets import split_named, split_names, target_from_dsn

PG_VARS = ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGSERVICE", "PGPASSWORD")


@pytest.fixture(autouse=True)
def _no_pg_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in PG_VARS:
        monkeypatch.delenv(var, raising=False)


def test_key_value_and_uri_mean_the_same() -> None:
    kv = parse_dsn("host=db1 port=6543 user=ci dbname=app sslmode=require password='s e'")
    uri = parse_dsn("postgresql://ci:s%20e@db1:6543/app?sslmode=require")
    assert kv == uri
    assert (kv.host, kv.port, kv.user, kv.dbname, kv.password) == ("db1", 6543, "ci", "app",
                                                                  "s e")
    assert kv.options == (("sslmode", "require"),)
    assert "s e" not in repr(kv)


def test_what_the_dsn_leaves_out_comes_from_the_pg_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGHOST", "envhost")
    monkeypatch.setenv("PGPORT", "7777")
    monkeypatch.setenv("PGUSER", "envuser")
    monkeypatch.setenv("PGDATABASE", "envdb")
    params = parse_dsn("postgresql://")
    assert (params.host, params.port, params.user, params.dbname) == \
        ("envhost", 7777, "envuser", "envdb")
    assert parse_dsn("dbname=other").dbname == "other"
    assert target_from_dsn("postgresql://").name == "envhost:7777"


def test_a_service_is_left_to_libpq() -> None:
    params = parse_dsn("service=sbx")
    assert (params.host, params.port, params.user, params.dbname) == ("", 0, "", None)
    assert params.option("service") == "sbx"
    assert params.address == "service sbx"
    assert parse_dsn("service=sbx host=db9").address == "db9"


def test_named_conninfo_on_the_command_line() -> None:
    assert split_named("replica=host=db2 port=5") == ("replica", "host=db2 port=5")
    assert split_named("host=db2 port=5") == (None, "host=db2 port=5")
    assert split_named("pg=service=sbx") == ("pg", "service=sbx")
    assert split_named("password=a=b host=x") == (None, "password=a=b host=x")
    assert split_named("db1=mysql://u@h/") == ("db1", "mysql://u@h/")
    assert split_names(["a,b"]) == ["a", "b"]


@pytest.mark.parametrize(("dsn", "says"), [
    ("host=db1 sslmod=require password=hunter22", 'invalid connection option "sslmod"'),
    ("host=db1 port=x password=hunter22", "port 'x' is not a TCP port"),
    ("postgresql://u:hunter22@db1:5432/app?nosuch=1", 'invalid URI query parameter: "nosuch"'),
])
def test_libpq_refusals_are_config_errors_without_the_password(dsn: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as info:
        parse_dsn(dsn)
    assert "hunter22" not in str(info.value)


def test_pg_prove_flags_over_a_dsn() -> None:
    assert libpq_dsn(None) == "postgresql://"
    merged = parse_dsn(libpq_dsn("postgresql://ci@db1:5432/app", host="db2", dbname="t"))
    assert (merged.host, merged.port, merged.user, merged.dbname) == ("db2", 5432, "ci", "t")
    assert parse_dsn(libpq_dsn(None, user="u", port="6")).port == 6
    with pytest.raises(ConfigError, match="-h, -p, -U and -d are libpq's"):
        libpq_dsn("mysql://u@h/", host="x")
