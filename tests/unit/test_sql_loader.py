"""Named SQL selection by flavor and version (nearest lower version wins)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbgauge.toolkit import sql
from dbgauge.toolkit.errors import DbgaugeError


@pytest.fixture()
def fake_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "mysql").mkdir()
    (tmp_path / "mariadb").mkdir()
    (tmp_path / "mysql" / "replica.sql").write_text("-- provenance\nSHOW SLAVE STATUS;\n")
    (tmp_path / "mysql" / "replica@8.0.22.sql").write_text("SHOW REPLICA STATUS")
    (tmp_path / "mysql" / "only_mysql.sql").write_text("SELECT 1")
    (tmp_path / "mariadb" / "replica.sql").write_text("SHOW ALL SLAVES STATUS")
    (tmp_path / "mariadb" / "replica@10.5.1.sql").write_text("SHOW ALL REPLICAS STATUS")
    monkeypatch.setattr(sql, "sql_root", lambda: tmp_path)
    sql._candidates.cache_clear()
    sql._read.cache_clear()
    return tmp_path


def test_version_selection(fake_root: Path) -> None:
    assert sql.load_sql("mysql", "replica", (8, 0, 21)) == "SHOW SLAVE STATUS"
    assert sql.load_sql("mysql", "replica", (8, 0, 22)) == "SHOW REPLICA STATUS"
    assert sql.load_sql("mysql", "replica", (8, 4, 0)) == "SHOW REPLICA STATUS"
    assert sql.load_sql("mariadb", "replica", (10, 4)) == "SHOW ALL SLAVES STATUS"
    assert sql.load_sql("mariadb", "replica", (10, 11, 6)) == "SHOW ALL REPLICAS STATUS"


def test_mariadb_falls_back_to_mysql(fake_root: Path) -> None:
    assert sql.load_sql("mariadb", "only_mysql", (10, 11)) == "SELECT 1"
    with pytest.raises(DbgaugeError, match="no SQL named 'missing'"):
        sql.load_sql("postgres", "missing", (15,))


def test_parse_version() -> None:
    assert sql.parse_version("10.11.6-MariaDB-0+deb12u1") == (10, 11, 6)
    assert sql.parse_version("15.4 (Debian 15.4-1)") == (15, 4)


def test_every_shipped_statement_loads() -> None:
    """Every file in sql/ is non-empty after comment stripping."""
    root = sql.sql_root()
    files = [p for p in root.rglob("*.sql") if p.parent.name in sql.FLAVOR_SEARCH]
    assert files
    for path in files:
        assert sql._clean(path.read_text()), path


def test_quote_ident_refuses_anything_unusual() -> None:
    assert sql.quote_ident("heartbeat", "mysql") == "`heartbeat`"
    assert sql.quote_ident("app_1", "postgres") == '"app_1"'
    assert sql.quote_qualified("dbgauge.heartbeat", "mariadb") == "`dbgauge`.`heartbeat`"
    for bad in ("a`b", 'a"b', "a b", "x;drop", "", "a" * 64):
        with pytest.raises(DbgaugeError):
            sql.quote_ident(bad, "mysql")
