"""Cumulative statistics in tests: making a session's counts reach the pg_stat_* views on
every major (13-18).

A backend keeps its counts (rows inserted, dead tuples, commits, rollbacks...) locally and
sends them on its own schedule, so another session (dbgauge, a peer) sees them late, and
before PostgreSQL 15 possibly never while the writing session idles. A test that made
counts flushes the session that made them (`flush`), then waits for the state it means
(`wait_for`), reading in autocommit: a transaction keeps the statistics it first read.
"""

from __future__ import annotations

from typing import Any

import psycopg

# PostgreSQL's PGSTAT_STAT_INTERVAL before 15: a backend sends its counts at the end of a
# transaction only when this long has passed since its last send.
STAT_INTERVAL = 0.5


def flush(conn: psycopg.Connection[Any]) -> None:
    """Send this session's pending statistics (those of its committed transactions).

    15+: pg_stat_force_next_flush() makes the backend flush when this transaction ends.
    13 and 14 have no such call: a transaction that ends more than STAT_INTERVAL after the
    backend's last send sends them, so the flush is a transaction that lasts longer than
    that (the wait happens on the server, which keeps the clock the interval is measured
    on). Either way the counts then travel asynchronously: poll for them.
    """
    if not conn.autocommit:
        conn.commit()  # the counts of a transaction still open are not sent
    if conn.info.server_version >= 150000:
        conn.execute("SELECT pg_stat_force_next_flush()")
    else:
        conn.execute("SELECT pg_sleep(%s)", (STAT_INTERVAL + 0.05,))
    if not conn.autocommit:
        conn.commit()
