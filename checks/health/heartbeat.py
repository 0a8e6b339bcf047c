"""The heartbeat reading of `dbgauge heartbeat monitor`: the same reading `check lag`
makes on a target with heartbeat settings (the mysql_heartbeat collector's facts), for a
command that prints it every interval instead of judging it once."""

from __future__ import annotations

from dbgauge.collectors.mysql_heartbeat import HeartbeatReading, MySQLHeartbeat
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.errors import CheckFailed


def heartbeat_reading(conn: Connection) -> HeartbeatReading:
    """The source's heartbeat row as read on `conn` (whose target has heartbeat
    settings); QueryError when the table or the row is missing."""
    reading = MySQLHeartbeat().read(conn).reading
    if reading is None:
        raise CheckFailed("no heartbeat settings on the connection")
    return reading
