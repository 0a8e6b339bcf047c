"""What a MySQL/MariaDB statement needs to be allowed, named in the error when it is not.

A monitoring account usually lacks one privilege or another; the useful error says which
GRANT fixes it. Access-denied errors are recognised by their server error number.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dbgauge.toolkit.db.base import Connection, Row
from dbgauge.toolkit.errors import QueryError

# 1227 needs a global privilege, 1142/1143 table/column denied, 1044 database denied,
# 1370 routine denied.
DENIED = frozenset({1227, 1142, 1143, 1044, 1370})

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


def denied(exc: QueryError) -> bool:
    """True when the server refused the statement for lack of a privilege."""
    return exc.errno in DENIED


def query(conn: Connection, name: str, needs: Mapping[str, str] | str, params: Any = None,
          sql: str | None = None) -> list[Row]:
    """Run the named statement (or `sql`, text dbgauge filled in itself, labelled `name`);
    an access-denied error names the privilege to grant."""
    try:
        return conn.query(name, params) if sql is None else conn.execute_sql(sql, params)
    except QueryError as exc:
        if not denied(exc):
            raise
        what = needs if isinstance(needs, str) else needs.get(conn.server.flavor, "")
        raise exc.again(f"{name} needs {what}: {exc}") from None
