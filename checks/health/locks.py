"""check locks: the oldest current lock wait, in seconds.

MySQL/MariaDB: the longer of the oldest row-lock wait and the oldest metadata-lock wait
(the mysql_lock_waits collector's facts); PostgreSQL: the oldest heavyweight-lock wait
(the postgres_locks collector's summary). Waiters and root blockers are in the message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds

if TYPE_CHECKING:
    from dbgauge.collectors.mysql_lock_waits import LockWaitFacts
    from dbgauge.collectors.postgres_locks import LockSummary
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def lock_wait(waits: LockWaitFacts | LockSummary) -> Measured:
    """The oldest wait of lock waits already read (`dbgauge status` reads them once for
    this and for the oldest transaction)."""
    from dbgauge.collectors.postgres_locks import LockSummary

    if isinstance(waits, LockSummary):
        oldest, waiting = waits.oldest_wait_seconds, waits.waiting_backends
        roots = waits.root_blockers
    else:
        oldest = max(waits.transactions.oldest_wait_seconds,
                     waits.metadata.oldest_wait_seconds)
        waiting = float(waits.transactions.waiting) + waits.metadata.waiting
        roots = float(len(waits.graph.root_blockers))
    text = f"oldest lock wait {oldest:.0f} s ({waiting:.0f} waiting"
    text += f", {roots:.0f} root blocker(s))" if roots else ")"
    return Measured(oldest, text, extra=(("lock_waiters", waiting),))


def _read(node: Target, conn: Connection) -> Measured:
    if node.kind == "mysql":
        from dbgauge.collectors.mysql_lock_waits import read_lock_waits

        return lock_wait(read_lock_waits(conn))
    from dbgauge.collectors.postgres_locks import read_summary

    return lock_wait(read_summary(conn).seen())  # NotVisible: another role's wait unseen


CHECK = HealthCheck(
    name="locks", summary="The oldest current lock wait, in seconds.",
    measures="the oldest current lock wait, seconds", kinds=frozenset({"mysql", "postgres"}),
    metric="lock_wait_seconds", read=_read, defaults=Thresholds.above(10.0, 30.0),
    unit="seconds", finding="lock-wait")
