"""check locks: the oldest current lock wait, in seconds.

MySQL/MariaDB: the longer of the oldest row-lock wait and the oldest metadata-lock wait
(the mysql_lock_waits collector); PostgreSQL: the oldest heavyweight-lock wait (the
postgres_locks collector's summary). Waiters and root blockers are in the message.
"""

from __future__ import annotations

from checks.health.model import Measured, NodeOutcome, Thresholds, judged, values
from collectors import mysql_lock_waits as my
from collectors import postgres_locks as pg
from toolkit.db import Connection
from toolkit.targets import Target

NAME = "locks"
HELP = "The oldest current lock wait in seconds (row and metadata locks; PostgreSQL locks)."
KINDS = frozenset({"mysql", "postgres"})
DEFAULTS: Thresholds | None = Thresholds(warning=10.0, critical=30.0)
METRIC = "lock_wait_seconds"


def evaluate(node: Target, conn: Connection, limits: Thresholds | None) -> NodeOutcome:
    chosen = limits or DEFAULTS
    assert chosen is not None
    if node.kind == "mysql":
        got = values(my.MySQLLockWaits().collect(conn))
        oldest = max(got[my.OLDEST_WAIT.name], got[my.MDL_OLDEST.name])
        waiting = got[my.WAITING.name] + got[my.MDL_WAITING.name]
        roots = got[my.ROOT_BLOCKERS.name]
    else:
        got = values(pg.summary_samples(conn.query("lock_summary")[0]))
        oldest, waiting = got[pg.OLDEST_WAIT.name], got[pg.WAITING.name]
        roots = got[pg.ROOT_BLOCKERS.name]
    text = f"oldest lock wait {oldest:.0f} s ({waiting:.0f} waiting"
    text += f", {roots:.0f} root blocker(s))" if roots else ")"
    return judged(node, chosen, Measured(oldest, text), kind="lock-wait", metric=METRIC,
                  extra=(("lock_waiters", waiting),))
