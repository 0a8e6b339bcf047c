"""check query-time, txn-idle, txn-time: sessions that run, idle or stay open too long.

query-time (PostgreSQL): the client statement running longest. txn-idle (PostgreSQL): the
oldest session idle in transaction -- it holds locks and the vacuum horizon while doing
nothing. txn-time (PostgreSQL and MySQL/MariaDB): the oldest open transaction (PostgreSQL
client backends; InnoDB's INNODB_TRX). Seconds; dbgauge's own session is left out. The
postgres_locks and mysql_lock_waits collectors' facts where they have them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Thresholds
from dbgauge.toolkit.errors import NotVisible

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _query_time(node: Target, conn: Connection) -> Measured:
    from dbgauge.toolkit.db.privileges import pg_cannot_see
    from dbgauge.toolkit.db.values import number
    from dbgauge.toolkit.db.values import text as as_text

    row = conn.query("check_query_time")[0]
    if hidden := number(row.get("hidden")):  # the longest may be one it cannot see
        raise NotVisible(pg_cannot_see(f"{hidden:.0f} other session(s) (pg_stat_activity)",
                                       as_text(row.get("role"))))
    active = number(row.get("active")) or 0.0
    seconds = number(row.get("seconds")) or 0.0
    text = f"{active:.0f} statement(s) running"
    if row.get("pid") is not None:
        text += (f"; the longest {seconds:.1f} s (pid {row['pid']}, user {row.get('usename')},"
                 f" database {row.get('datname')})")
    return Measured(seconds, text, extra=(("active_statements", active),))


def _txn_idle(node: Target, conn: Connection) -> Measured:
    from dbgauge.collectors.postgres_locks import read_summary

    s = read_summary(conn).seen()
    seconds = s.idle_in_transaction_oldest_seconds
    return Measured(seconds, f"{s.idle_in_transaction:.0f} session(s) idle in transaction"
                             + (f", the oldest for {seconds:.1f} s" if seconds else ""),
                    extra=(("idle_in_transaction", s.idle_in_transaction),))


def _txn_time(node: Target, conn: Connection) -> Measured:
    from dbgauge.collectors.mysql_lock_waits import read_transactions
    from dbgauge.collectors.postgres_locks import read_summary

    if node.kind == "mysql":
        trx = read_transactions(conn)
        seconds, count = trx.oldest_seconds, float(sum(trx.by_state.values()))
    else:
        seconds, count = read_summary(conn).seen().oldest_xact_seconds, None
    text = f"oldest open transaction {seconds:.1f} s"
    return Measured(seconds, text + (f" ({count:.0f} open)" if count is not None else ""))


QUERY_TIME = HealthCheck(
    name="query-time", summary="The longest-running statement, in seconds (PostgreSQL).",
    measures="the longest-running client statement, seconds",
    kinds=frozenset({"postgres"}), metric="query_seconds", read=_query_time,
    defaults=Thresholds.above(120.0, 300.0), unit="seconds", finding="long-query")
TXN_IDLE = HealthCheck(
    name="txn-idle",
    summary="The oldest session idle in transaction, in seconds (PostgreSQL).",
    measures="the oldest session idle in transaction, seconds",
    kinds=frozenset({"postgres"}), metric="idle_in_transaction_seconds", read=_txn_idle,
    defaults=Thresholds.above(60.0, 300.0), unit="seconds", finding="idle-in-transaction")
TXN_TIME = HealthCheck(
    name="txn-time", summary="The oldest open transaction, in seconds.",
    measures="the oldest open transaction, seconds",
    kinds=frozenset({"postgres", "mysql"}), metric="transaction_seconds", read=_txn_time,
    defaults=Thresholds.above(300.0, 1800.0), unit="seconds", finding="long-transaction")
