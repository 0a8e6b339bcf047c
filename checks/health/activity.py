"""check query-time, txn-idle, txn-time: sessions that run, idle or stay open too long.

query-time (PostgreSQL): the client statement running longest. txn-idle (PostgreSQL): the
oldest session idle in transaction -- it holds locks and the vacuum horizon while doing
nothing. txn-time (PostgreSQL and MySQL/MariaDB): the oldest open transaction (PostgreSQL
client backends; InnoDB's INNODB_TRX). Seconds; dbgauge's own session is left out. The
postgres_locks and mysql_lock_waits collectors' facts where they have them.

On PostgreSQL they take check_postgres' filters of these actions: `--include` /
`--exclude` match the session's database, `--includeuser` / `--excludeuser` its user
(exactly; --includeuser wins). Filtered, every client session is read with its database
and user (`check_sessions`); a session the role cannot see that the filters keep makes
the check UNKNOWN, as unfiltered. MySQL's txn-time takes no filter (UNKNOWN if given).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.model import (
    HealthCheck,
    Measured,
    NodeOutcome,
    Thresholds,
    cannot_tell,
)
from dbgauge.toolkit.errors import NotVisible
from dbgauge.toolkit.result import Finding, Status

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


def _filtered(column: str, what: str, counted: str, kind: str
              ) -> Callable[[Target, Connection, Scope], Measured]:
    """A read of the sessions the filters keep: the oldest `column` among them (and
    how many have one, as the perfdata `counted`, as unfiltered)."""
    def read(node: Target, conn: Connection, scope: Scope) -> Measured:
        from dbgauge.toolkit.db.privileges import pg_cannot_see
        from dbgauge.toolkit.db.values import number, text

        rows = [r for r in conn.query("check_sessions")
                if not scope.skips(text(r.get("datname"))) and
                not scope.skips_user(text(r.get("usename")))]
        if hidden := sum(1 for r in rows if r.get("hidden")):
            raise NotVisible(pg_cannot_see(f"{hidden} other session(s) the filters keep "
                                           "(pg_stat_activity)", ""))
        ages = sorted(((number(r.get(column)), r) for r in rows
                       if number(r.get(column)) is not None), key=lambda a: -(a[0] or 0))
        extra = ((counted, float(len(ages))),) if counted else ()
        found = _counted(node, [a or 0.0 for a, _ in ages], scope, what, kind)
        kept = "the sessions the filters keep" if scope.filtered or scope.users_filtered \
            else "the client sessions"
        if not ages:
            return Measured(0.0, f"no {what} among {len(rows)} session(s)", extra=extra)
        seconds, top = ages[0][0] or 0.0, ages[0][1]
        return Measured(seconds, f"{len(ages)} {what} among {kept}; "
                                 f"the oldest {seconds:.1f} s (pid {top.get('pid')}, user "
                                 f"{top.get('usename')}, database {top.get('datname')})",
                        extra=extra, findings=found)
    return read


def _counted(node: Target, ages: list[float], scope: Scope, what: str, kind: str
             ) -> tuple[Finding, ...]:
    """The finding of check_postgres' count forms (`+N`, `N for T`), the worse first."""
    for status, spec in ((Status.CRITICAL, scope.critical_count),
                         (Status.WARNING, scope.warning_count)):
        if spec is not None and (hits := spec.hits(ages)) >= spec.count:
            older = f" for {spec.seconds:g} s or longer" if spec.seconds is not None else ""
            return (Finding(status, node.name, kind, f"{hits} {what}{older} (threshold "
                                                     f"{spec.text})"),)
    return ()


def _scoped(read: Callable[[Target, Connection], Measured], column: str, what: str,
            kind: str, counted: str = ""
            ) -> Callable[[Target, Connection, Scope], Measured | NodeOutcome]:
    """`read` unfiltered; the read of every PostgreSQL session when filters or count forms
    (`+N`, `N for T`) are given."""
    filtered = _filtered(column, what, counted, kind)

    def scoped(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
        counts = scope.warning_count is not None or scope.critical_count is not None
        if not (scope.filtered or scope.users_filtered or counts):
            return read(node, conn)
        if node.kind != "postgres":
            return cannot_tell(node, "filter-not-applicable", "--include/--exclude, "
                               "--includeuser/--excludeuser and the count forms (+N, N for "
                               "T) apply to PostgreSQL sessions only")
        return filtered(node, conn, scope)
    return scoped


QUERY_TIME = HealthCheck(
    name="query-time", summary="The longest-running statement, in seconds (PostgreSQL).",
    measures="the longest-running client statement, seconds",
    kinds=frozenset({"postgres"}), metric="query_seconds",
    scoped=_scoped(_query_time, "query_seconds", "statement(s) running", "long-query",
                   "active_statements"),
    filters="database", user_filters="session user",
    defaults=Thresholds.above(120.0, 300.0), unit="seconds", finding="long-query",
    count_forms=True)
TXN_IDLE = HealthCheck(
    name="txn-idle",
    summary="The oldest session idle in transaction, in seconds (PostgreSQL).",
    measures="the oldest session idle in transaction, seconds",
    kinds=frozenset({"postgres"}), metric="idle_in_transaction_seconds",
    scoped=_scoped(_txn_idle, "idle_seconds", "session(s) idle in transaction",
                   "idle-in-transaction", "idle_in_transaction"),
    filters="database", user_filters="session user",
    defaults=Thresholds.above(60.0, 300.0), unit="seconds", finding="idle-in-transaction",
    count_forms=True)
TXN_TIME = HealthCheck(
    name="txn-time", summary="The oldest open transaction, in seconds.",
    measures="the oldest open transaction, seconds",
    kinds=frozenset({"postgres", "mysql"}), metric="transaction_seconds",
    scoped=_scoped(_txn_time, "xact_seconds", "open transaction(s)", "long-transaction"),
    filters="database", user_filters="session user",
    defaults=Thresholds.above(300.0, 1800.0), unit="seconds", finding="long-transaction",
    count_forms=True)
