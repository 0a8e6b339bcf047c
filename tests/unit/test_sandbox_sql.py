"""The sandbox's statements: named files in sql/, identifiers filled by quote_ident."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dbgauge.toolkit.db import Row, ServerInfo
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.sandbox.core import run_sql
from dbgauge.toolkit.sql import load_sql, sql_root
from dbgauge.toolkit.targets import Target


class Recorder:
    """Just enough of a Connection to see what run_sql sends."""

    def __init__(self, flavor: str) -> None:
        self.server = ServerInfo(flavor, (10, 11) if flavor == "mariadb" else (15, 4), "")
        self.target: Target | None = None
        self.sent: list[tuple[str, Any]] = []

    def query(self, name: str, params: Any = None) -> list[Row]:
        return self.execute_sql(load_sql(self.server.flavor, name), params)

    def execute_sql(self, sql: str, params: Any = None) -> list[Row]:
        self.sent.append((sql, params))
        return []

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass

    @property
    def closed(self) -> bool:
        return False


def test_identifiers_are_quoted_per_flavor_and_values_stay_parameters() -> None:
    pg = Recorder("postgres")
    run_sql(pg, "sandbox_create_database", database="drift", owner="sandbox_admin")
    run_sql(pg, "sandbox_role_login", ("s3cret",), role="dbgauge")
    assert pg.sent == [
        ('CREATE DATABASE "drift" OWNER "sandbox_admin"', None),
        ('ALTER ROLE "dbgauge" WITH LOGIN PASSWORD %s', ("s3cret",)),
    ]
    maria = Recorder("mariadb")
    run_sql(maria, "sandbox_grant_database", ("dbgauge",), database="dbgauge")
    assert maria.sent == [("GRANT ALL PRIVILEGES ON `dbgauge`.* TO %s@'%%'", ("dbgauge",))]


def test_a_missing_or_unsafe_identifier_is_refused() -> None:
    with pytest.raises(DbgaugeError, match=r"\{database\}"):
        run_sql(Recorder("postgres"), "sandbox_create_database", owner="x")
    with pytest.raises(DbgaugeError):
        run_sql(Recorder("postgres"), "sandbox_create_role", role='x"; DROP')


def test_every_sandbox_statement_loads_with_known_placeholders() -> None:
    known = {"database", "owner", "role", "schema", "extension", "publication", "subscription"}
    files = sorted(sql_root().glob("*/sandbox_*.sql"))
    assert {p.parent.name for p in files} == {"mariadb", "postgres"}
    for path in files:
        text = load_sql(path.parent.name, path.stem)
        assert set(re.findall(r"\{([a-z_]+)\}", text)) <= known, path
