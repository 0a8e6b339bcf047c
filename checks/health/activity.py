"""check query-time, txn-idle, txn-time: sessions that run, idle or stay open too long.

query-time (PostgreSQL): the client statement running longest. txn-idle (PostgreSQL): the
oldest session idle in transaction -- it holds locks and the vacuum horizon while doing
nothing. txn-time (PostgreSQL and MySQL/MariaDB): the oldest open transaction (PostgreSQL
client backends; InnoDB's INNODB_TRX). Seconds; dbgauge's own session is left out. The
postgres_locks and mysql_lock_waits collectors' facts where they have them.
"""

from __future__ import annotations

from dbgauge.checks.health.model import Measure, Measured, NodeOutcome, Thresholds
from dbgauge.collectors.mysql_lock_waits import read_transactions
from dbgauge.collectors.postgres_locks import read_summary
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.values import number
from dbgauge.toolkit.targets import Target


def _query_time(node: Target, conn: Connection) -> Measured | NodeOutcome:
    row = conn.query("check_query_time")[0]
    active = number(row.get("active")) or 0.0
    seconds = number(row.get("seconds")) or 0.0
    text = f"{active:.0f} statement(s) running"
    if row.get("pid") is not None:
        text += (f"; the longest {seconds:.1f} s (pid {row['pid']}, user {row.get('usename')},"
                 f" database {row.get('datname')})")
    return Measured(seconds, text, extra=(("active_statements", active),))


def _txn_idle(node: Target, conn: Connection) -> Measured | NodeOutcome:
    s = read_summary(conn)
    seconds = s.idle_in_transaction_oldest_seconds
    return Measured(seconds, f"{s.idle_in_transaction:.0f} session(s) idle in transaction"
                             + (f", the oldest for {seconds:.1f} s" if seconds else ""),
                    extra=(("idle_in_transaction", s.idle_in_transaction),))


def _txn_time(node: Target, conn: Connection) -> Measured | NodeOutcome:
    if node.kind == "mysql":
        trx = read_transactions(conn)
        seconds, count = trx.oldest_seconds, float(sum(trx.by_state.values()))
    else:
        seconds, count = read_summary(conn).oldest_xact_seconds, None
    text = f"oldest open transaction {seconds:.1f} s"
    return Measured(seconds, text + (f" ({count:.0f} open)" if count is not None else ""))


QUERY_TIME = Measure(
    NAME="query-time", HELP="The longest-running client statement, in seconds.",
    KINDS=frozenset({"postgres"}), DEFAULTS=Thresholds.above(120.0, 300.0),
    METRIC="query_seconds", KIND="long-query", read=_query_time)
TXN_IDLE = Measure(
    NAME="txn-idle", HELP="The oldest session idle in transaction, in seconds.",
    KINDS=frozenset({"postgres"}), DEFAULTS=Thresholds.above(60.0, 300.0),
    METRIC="idle_in_transaction_seconds", KIND="idle-in-transaction", read=_txn_idle)
TXN_TIME = Measure(
    NAME="txn-time", HELP="The oldest open transaction, in seconds.",
    KINDS=frozenset({"postgres", "mysql"}), DEFAULTS=Thresholds.above(300.0, 1800.0),
    METRIC="transaction_seconds", KIND="long-transaction", read=_txn_time)
