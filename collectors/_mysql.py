"""Helpers shared by the MySQL/MariaDB collectors (a private module: no collector here).

The registry skips modules whose name starts with an underscore.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit.db import Connection, Row
from toolkit.errors import QueryError

# Server errors that mean "this account may not do that": 1227 needs a global privilege,
# 1142/1143 table/column denied, 1044 database denied, 1370 routine denied.
_DENIED = ("(error 1227)", "(error 1142)", "(error 1143)", "(error 1044)", "(error 1370)")

# What each statement needs, per flavor; named in the error so the log line says what to grant.
PROCESS = {"mysql": "the PROCESS privilege (GRANT PROCESS ON *.* TO ...)",
           "mariadb": "the PROCESS privilege (GRANT PROCESS ON *.* TO ...)"}
REPLICA_MONITOR = {
    "mysql": "the REPLICATION CLIENT privilege (GRANT REPLICATION CLIENT ON *.* TO ...)",
    "mariadb": "the SLAVE MONITOR privilege (GRANT SLAVE MONITOR ON *.* TO ...)",
}
PS_SELECT = {
    "mysql": "SELECT on performance_schema (GRANT SELECT ON performance_schema.* TO ...)",
    "mariadb": "SELECT on performance_schema (GRANT SELECT ON performance_schema.* TO ...)",
}


def query(conn: Connection, name: str, needs: Mapping[str, str] | str, params: Any = None,
          sql: str | None = None) -> list[Row]:
    """Run the named statement (or `sql`, text dbgauge filled in itself, labelled `name`);
    an access-denied error names the privilege to grant."""
    try:
        return conn.query(name, params) if sql is None else conn.execute_sql(sql, params)
    except QueryError as exc:
        if not any(code in str(exc) for code in _DENIED):
            raise
        what = needs if isinstance(needs, str) else needs.get(conn.server.flavor, "")
        raise QueryError(f"{name} needs {what}: {exc}") from None


def text(value: object) -> str:
    """A server value as str ('' for NULL); bytes are decoded."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
