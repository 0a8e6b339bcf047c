"""pt-table-checksum's option syntax, parsed without a server: table filters,
--max-load, --recursion-method and pt DSNs."""

from __future__ import annotations

import pytest

from dbgauge.checks.drift.discover import dsn_table, parse_recursion_method
from dbgauge.checks.drift.load import parse_max_load
from dbgauge.checks.drift.model import ChecksumOptions, DriftError
from dbgauge.checks.drift.replicate import parse_replicate
from dbgauge.checks.drift.select import select_tables
from dbgauge.toolkit.dsn import parse_pt_dsn
from dbgauge.toolkit.errors import ConfigError

FOUND = {("shop", "orders"): (10, True), ("shop", "items"): (5, True),
         ("app", "log_1"): (1, True), ("app", "orders"): (3, True),
         ("percona", "checksums"): (9, True)}


def pick(**options: object) -> list[str]:
    chosen = select_tables(FOUND, ChecksumOptions(**options), "db1",  # type: ignore[arg-type]
                           lambda n: "GRANT")
    return [f"{s}.{t}" for s, t in chosen]


def test_names_patterns_and_regexes() -> None:
    assert pick(tables=("shop.*",)) == ["shop.orders", "shop.items"]
    assert pick(tables=("orders",)) == ["shop.orders", "app.orders"]  # bare: any schema
    assert pick(tables=("app.*", "shop.items")) == ["app.log_1", "app.orders", "shop.items"]
    assert pick(databases=("app",), exclude=("log_*",)) == ["app.orders"]
    assert pick(tables_regex="^it", databases_regex="sh") == ["shop.items"]
    assert pick(ignore_databases=("shop", "app")) == ["percona.checksums"]
    assert pick(replicate="percona.checksums", ignore_databases_regex="^(shop|app)$") == []


def test_unmatched_names_are_errors() -> None:
    with pytest.raises(DriftError, match=r"--tables 'shop\.x\*' matches no table on source db1"):
        pick(tables=("shop.x*",))
    with pytest.raises(DriftError, match=r"table shop\.nope does not exist on source db1"):
        pick(tables=("shop.nope",))
    with pytest.raises(DriftError, match="--databases 'nope' matches no database"):
        pick(databases=("nope",))
    with pytest.raises(DriftError, match="passes all the filters"):
        pick(databases=("shop",), tables=("log_1",))
    with pytest.raises(ConfigError, match="not a valid regular expression"):
        pick(tables_regex="(")


def test_max_load() -> None:
    assert parse_max_load(["Threads_running=25,Threads_connected:100", "Questions"]) == (
        ("Threads_running", 25.0), ("Threads_connected", 100.0), ("Questions", None))
    for bad in ("=5", "Threads_running=-1", "Threads_running=x", "a b=1"):
        with pytest.raises(ConfigError, match="--max-load"):
            parse_max_load([bad])


def test_recursion_method_and_pt_dsns() -> None:
    assert parse_recursion_method(["processlist,hosts"]) == ("processlist", "hosts")
    assert parse_recursion_method(["dsn=D=percona,t=dsns"]) == ("dsn=D=percona,t=dsns",)
    assert parse_recursion_method(["hosts,dsn=t=percona.dsns"]) == (
        "hosts", "dsn=t=percona.dsns")
    assert dsn_table("t=percona.dsns") == ("percona", "dsns")
    assert parse_pt_dsn("h=10.0.0.2,P=3307,u=me,p=pw", "row") == {
        "h": "10.0.0.2", "P": "3307", "u": "me", "p": "pw"}
    for bad in (["cluster"], ["dsn"], ["dsn=D=percona"], ["dsn=h=x,D=a,t=b"]):
        with pytest.raises(ConfigError, match="--recursion-method"):
            parse_recursion_method(bad)
    with pytest.raises(ConfigError, match="'x' is not a pt DSN part"):
        parse_pt_dsn("h=a,x=1", "row")


def test_replicate_names() -> None:
    assert parse_replicate(None) == ("dbgauge", "checksums")
    assert parse_replicate("percona.checksums") == ("percona", "checksums")
    for bad in ("checksums", "a.b.c", "a.b;c"):
        with pytest.raises(ConfigError, match="--replicate"):
            parse_replicate(bad)
