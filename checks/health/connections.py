"""check connections: connections in use against the server's limit, in percent.

MySQL/MariaDB: Threads_connected against max_connections (the mysql_status collector's
facts). PostgreSQL: client backends against the slots an ordinary role can get: max_connections
minus superuser_reserved_connections and, on PostgreSQL 16+, minus reserved_connections
(the slots kept for pg_use_reserved_connections), since the server refuses an ordinary
role once only reserved slots are left (the postgres_database collector's connections).
check_postgres' `backends` compares with max_connections alone, so it reports room that
applications do not have; dbgauge's percentage can pass 100 while superusers (or
pg_use_reserved_connections roles) use their reserved slots. PgBouncer: used client
connections (SHOW LISTS) against max_client_conn (SHOW CONFIG), the pgbouncer_lists and
pgbouncer_config collectors' facts.

Thresholds as check_postgres' `backends` reads them: a bare number is a count of
connections (`-w 200`: warn above 200 connections in use), `N%` a share of the limit
(`-w 80%`), `-N` the slots left (`-w -10`: warn when 10 or fewer are left; perfdata
`connections_left`); the defaults are 80% and 95%. As there, --warning alone keeps the
default critical, --critical alone sets no warning. Every form is held against dbgauge's
limit (above: the slots an ordinary role can get), not max_connections.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Share, Thresholds
from dbgauge.toolkit.errors import CheckFailed, NotVisible

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


# a bare number counts connections in use, `-N` the slots left (check_postgres' backends)
SHARE = Share("connections", "connections", left_metric="connections_left")


def _reported(value: float | None, what: str) -> float:
    if value is None:
        raise CheckFailed(f"the server did not report {what}")
    return value


def usage(conn: Connection) -> tuple[float, float, str]:
    """(used, limit, what the limit is) for any kind of target."""
    if conn.server.flavor in ("mysql", "mariadb"):
        from dbgauge.collectors.mysql_status import read_status

        status = read_status(conn)
        return (_reported(status.threads_connected, "Threads_connected"),
                _reported(status.max_connections, "max_connections"), "max_connections")
    if conn.server.flavor == "pgbouncer":
        from dbgauge.collectors.pgbouncer_config import read_config
        from dbgauge.collectors.pgbouncer_lists import read_lists

        clients = read_lists(conn).used_clients
        config = read_config(conn)
        return clients, _reported(config.max_client_conn, "max_client_conn"), "max_client_conn"
    from dbgauge.collectors.postgres_database import read_connections

    connections = read_connections(conn)
    if connections.unseen:  # a count of the sessions it sees is not the server's
        raise NotVisible(connections.unseen)
    return connections.used, connections.available, connections.limit_text


def _read(node: Target, conn: Connection) -> Measured:
    used, limit, what = usage(conn)
    percent = 100.0 * used / limit if limit > 0 else 100.0
    return Measured(percent, f"{used:.0f} of {limit:.0f} connections in use ({percent:.0f}% of "
                             f"{what})", extra=(("connections", used),
                                                ("connections_left", limit - used)))


CHECK = HealthCheck(
    name="connections",
    summary="Connections in use against the limit: a count (-w 200) or a share (-w 80%).",
    measures="connections in use, percent of the limit",
    kinds=frozenset({"mysql", "postgres", "pgbouncer"}), metric="connections_percent",
    read=_read, defaults=replace(Thresholds.above(80.0, 95.0, SHARE), keeps_critical=True),
    unit="percent",
    finding="connections")
