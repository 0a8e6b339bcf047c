"""check locks: the oldest current lock wait, in seconds.

MySQL/MariaDB: the longer of the oldest row-lock wait and the oldest metadata-lock wait
(the mysql_lock_waits collector's facts); PostgreSQL: the oldest heavyweight-lock wait
(the postgres_locks collector's summary). Waiters and root blockers are in the message.
"""

from __future__ import annotations

from dbgauge.checks.health.model import Measured, NodeOutcome, Thresholds, judged
from dbgauge.collectors.mysql_lock_waits import LockWaitFacts, read_lock_waits
from dbgauge.collectors.postgres_locks import LockSummary, read_summary
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.targets import Target

NAME = "locks"
HELP = "The oldest current lock wait in seconds (row and metadata locks; PostgreSQL locks)."
KINDS = frozenset({"mysql", "postgres"})
DEFAULTS: Thresholds | None = Thresholds.above(10.0, 30.0)
METRIC = "lock_wait_seconds"


def judge(node: Target, waits: LockWaitFacts | LockSummary, limits: Thresholds | None
          ) -> NodeOutcome:
    """The outcome for lock waits already read (`dbgauge status` reads them once for this
    and for the oldest transaction)."""
    chosen = limits or DEFAULTS
    assert chosen is not None
    if isinstance(waits, LockWaitFacts):
        oldest = max(waits.transactions.oldest_wait_seconds,
                     waits.metadata.oldest_wait_seconds)
        waiting = float(waits.transactions.waiting) + waits.metadata.waiting
        roots = float(len(waits.graph.root_blockers))
    else:
        oldest, waiting = waits.oldest_wait_seconds, waits.waiting_backends
        roots = waits.root_blockers
    text = f"oldest lock wait {oldest:.0f} s ({waiting:.0f} waiting"
    text += f", {roots:.0f} root blocker(s))" if roots else ")"
    return judged(node, chosen, Measured(oldest, text), kind="lock-wait", metric=METRIC,
                  extra=(("lock_waiters", waiting),))


def evaluate(node: Target, conn: Connection, limits: Thresholds | None) -> NodeOutcome:
    waits = read_lock_waits(conn) if node.kind == "mysql" else read_summary(conn)
    return judge(node, waits, limits)
