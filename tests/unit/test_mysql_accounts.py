"""mysql_accounts and its mysqld_exporter translation (mysql.user, with and without
mysql.user.privileges) on rows captured from MariaDB 10.11 (tests/fixtures/mariadb-10.11/
accounts.tsv); the missing grant, the limit, and the peer's switches."""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.dialects.mysqld_exporter import DIALECT, SCRAPERS
from dbgauge.toolkit.errors import QueryError
from dbgauge.toolkit.metrics import Sample
from dbgauge.toolkit.peers.collectors import MYSQLD_EXPORTER, Switches
from tests.helpers.captured import FixtureConnection, tsv_rows

Key = tuple[str, frozenset[tuple[str, str]]]


def _read(options: dict[str, int], answers: Any = None) -> Any:
    conn = FixtureConnection("mariadb", (10, 11, 19), answers or {
        "accounts": tsv_rows("mariadb-10.11/accounts.tsv")})
    return registry()["mysql_accounts"].configured(options).read(conn)  # type: ignore[arg-type]


def _by(samples: Any) -> dict[Key, float]:
    out: dict[Key, float] = {}
    for s in samples:
        key = (s.name, frozenset(s.labels.items()))
        assert key not in out, key
        out[key] = s.value
    return out


ACCT = {"user": "compat_acct", "host": "10.%"}
PEER_ACCT = frozenset({("mysql_user", "compat_acct"), ("hostmask", "10.%")})


def test_limits_and_privileges_in_dbgauges_names() -> None:
    collector = registry()["mysql_accounts"]
    assert not collector.default_enabled
    got = _by(collector.samples(_read({"privileges": 1})))
    assert got[("dbgauge_mysql_account_max_user_connections", frozenset(ACCT.items()))] == 4
    assert got[("dbgauge_mysql_account_max_questions", frozenset(ACCT.items()))] == 100
    held = {dict(k)["privilege"]: v for n, k in got if n == "dbgauge_mysql_account_privilege"
            and dict(k)["user"] == "compat_acct" for v in [got[(n, k)]]}
    assert len(held) == 29 and held["file"] == 1 and held["show_db"] == 1 and held["super"] == 0
    assert got[("dbgauge_mysql_accounts_truncated", frozenset())] == 0
    plain = _by(collector.samples(_read({})))
    assert not any(n == "dbgauge_mysql_account_privilege" for n, _ in plain)


def test_the_peer_families() -> None:
    samples: list[Sample] = list(DIALECT.samples("mysql_accounts", _read({"privileges": 1})))
    types = {s.name: DIALECT.validate_sample(s).type for s in samples}
    got = _by(samples)
    assert set(types.values()) == {"gauge"} and len(types) == 29 + 4
    assert got[("mysql_mysql_max_updates", PEER_ACCT)] == 20
    assert got[("mysql_mysql_file_priv", PEER_ACCT)] == 1
    assert got[("mysql_mysql_create_tablespace_priv", PEER_ACCT)] == 0
    assert DIALECT.families.spec("mysql_mysql_file_priv").help == "File_priv by user."
    without = {s.name for s in DIALECT.samples("mysql_accounts", _read({}))}
    assert without == {"mysql_mysql_max_questions", "mysql_mysql_max_updates",
                       "mysql_mysql_max_connections", "mysql_mysql_max_user_connections"}
    assert SCRAPERS["mysql_accounts"] == ("mysql.user",)


def test_a_value_other_than_y_or_n_is_left_out_as_the_peer_does() -> None:
    rows = tsv_rows("mariadb-10.11/accounts.tsv")[:1]
    rows = [{**rows[0], "super_priv": None}]
    got = {s.name for s in DIALECT.samples("mysql_accounts",
                                           _read({"privileges": 1}, {"accounts": rows}))}
    assert "mysql_mysql_super_priv" not in got and "mysql_mysql_file_priv" in got


def test_the_limit_truncates() -> None:
    got = _by(registry()["mysql_accounts"].samples(_read({"limit": 2, "privileges": 1})))
    users = {dict(k)["user"] for n, k in got if n == "dbgauge_mysql_account_max_questions"}
    assert users == {"compat_acct", "dbgauge"}  # by user and host
    assert got[("dbgauge_mysql_accounts_truncated", frozenset())] == 1
    assert len([1 for n, _ in got if n == "dbgauge_mysql_account_privilege"]) == 2 * 29


class _Denied(FixtureConnection):
    def query(self, name: str, params: Any = None) -> list[Any]:
        raise QueryError("SELECT command denied to user 'x'@'%' for table `mysql`.`user`",
                         errno=1142)


def test_without_select_on_mysql_user_it_names_the_grant() -> None:
    with pytest.raises(QueryError, match=r"GRANT SELECT ON mysql\.user TO \.\.\., or "
                                         r"GRANT SELECT ON \*\.\*"):
        registry()["mysql_accounts"].configured({}).read(
            _Denied("mariadb", (10, 11, 19), {}))  # type: ignore[arg-type]


def test_the_privileges_switch_sets_the_option() -> None:
    on = Switches(MYSQLD_EXPORTER, {"mysql.user": True, "mysql.user.privileges": True})
    assert on.options() == {"mysql_accounts": {"privileges": 1}}
    assert not on.warnings()
    off = Switches(MYSQLD_EXPORTER, {"mysql.user": True, "mysql.user.privileges": False})
    assert off.options() == {"mysql_accounts": {"privileges": 0}}
    assert on.collectors([]) == ["mysql_accounts"]
