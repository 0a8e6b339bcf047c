"""check connections: connections in use against the server's limit, in percent.

MySQL/MariaDB: Threads_connected against max_connections (the mysql_status collector).
PostgreSQL: client backends against max_connections minus the superuser-reserved slots,
the ones applications can actually get (the postgres_database collector's statement).
PgBouncer: used client connections (SHOW LISTS) against max_client_conn (SHOW CONFIG).
"""

from __future__ import annotations

from checks.health.model import Measured, NodeOutcome, Thresholds, judged, values
from collectors.mysql_status import MySQLStatus
from collectors.pgbouncer_config import SETTINGS, config_samples
from collectors.pgbouncer_lists import parse_lists
from collectors.postgres_database import connection_samples
from toolkit.db import Connection
from toolkit.db.values import number
from toolkit.targets import Target

NAME = "connections"
HELP = ("Connections in use against the limit, in percent (max_connections; PostgreSQL "
        "minus reserved slots; PgBouncer max_client_conn).")
KINDS = frozenset({"mysql", "postgres", "pgbouncer"})
DEFAULTS: Thresholds | None = Thresholds(warning=80.0, critical=95.0)
METRIC = "connections_percent"


def usage(conn: Connection) -> tuple[float, float, str]:
    """(used, limit, what the limit is) for any kind of target."""
    if conn.server.flavor in ("mysql", "mariadb"):
        got = values(MySQLStatus().collect(conn))
        return (got["dbgauge_mysql_threads_connected"], got["dbgauge_mysql_max_connections"],
                "max_connections")
    if conn.server.flavor == "pgbouncer":
        clients = parse_lists(conn.query("show_lists")).get("used_clients", 0.0)
        config = values(config_samples(conn.query("show_config")))
        return clients, config[SETTINGS["max_client_conn"].name], "max_client_conn"
    rows = conn.query("connections")
    used = float(sum(s.value for s in connection_samples(rows)))
    settings = rows[0] if rows else conn.query("max_connections")[0]
    limit = (number(settings["max_connections"]) or 0.0) - (
        number(settings["reserved_connections"]) or 0.0)
    return used, limit, "max_connections - superuser_reserved_connections"


def evaluate(node: Target, conn: Connection, limits: Thresholds | None) -> NodeOutcome:
    chosen = limits or DEFAULTS
    assert chosen is not None
    used, limit, what = usage(conn)
    percent = 100.0 * used / limit if limit > 0 else 100.0
    return judged(node, chosen, Measured(
        percent, f"{used:.0f} of {limit:.0f} connections in use ({percent:.0f}% of {what})"),
        kind="connections", metric=METRIC, extra=(("connections", used),))
