"""check locks: the oldest current lock wait, in seconds.

MySQL/MariaDB: the longer of the oldest row-lock wait and the oldest metadata-lock wait
(the mysql_lock_waits collector's facts); PostgreSQL: the oldest heavyweight-lock wait
(the postgres_locks collector's summary). Waiters and root blockers are in the message.
"""

from __future__ import annotations

from checks.health.model import Measured, NodeOutcome, Thresholds, judged
from collectors.mysql_lock_waits import MySQLLockWaits
from collectors.postgres_locks import read_summary
from toolkit.db import Connection
from toolkit.targets import Target

NAME = "locks"
HELP = "The oldest current lock wait in seconds (row and metadata locks; PostgreSQL locks)."
KINDS = frozenset({"mysql", "postgres"})
DEFAULTS: Thresholds | None = Thresholds.above(10.0, 30.0)
METRIC = "lock_wait_seconds"


def evaluate(node: Target, conn: Connection, limits: Thresholds | None) -> NodeOutcome:
    chosen = limits or DEFAULTS
    assert chosen is not None
    if node.kind == "mysql":
        my = MySQLLockWaits().read(conn)
        oldest = max(my.transactions.oldest_wait_seconds, my.metadata.oldest_wait_seconds)
        waiting = float(my.transactions.waiting) + my.metadata.waiting
        roots = float(len(my.graph.root_blockers))
    else:
        pg = read_summary(conn)
        oldest, waiting = pg.oldest_wait_seconds, pg.waiting_backends
        roots = pg.root_blockers
    text = f"oldest lock wait {oldest:.0f} s ({waiting:.0f} waiting"
    text += f", {roots:.0f} root blocker(s))" if roots else ")"
    return judged(node, chosen, Measured(oldest, text), kind="lock-wait", metric=METRIC,
                  extra=(("lock_waiters", waiting),))
