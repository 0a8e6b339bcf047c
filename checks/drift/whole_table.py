"""The whole-table pre-check (MariaDB pairs, both methods): CHECKSUM TABLE on every side
at once, before any chunk is walked.

A quiet table expected to take at most --whole-table-time is compared whole; equal values
(and equal row counts, read from each session's scan counter) prove it equal in one pass.
Anything else -- values that differ, a side without a value, a table written just now, a
statement the server interrupted -- falls through to the chunk walk, which decides.

The expected time is the table's estimated rows at the speed of the last pre-check that
read enough rows to tell one. Before there is one, a table too large for the assumed
speed has its first keys hashed on every side at once (a probe: 0.03 s in memory, 0.15 s
from disk): in memory CHECKSUM TABLE reads several million rows a second, and an
assumption low enough to be safe for tables read from disk would never let it compare
them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from dbgauge.checks.drift.chunks import KeyRange
from dbgauge.checks.drift.model import TableResult
from dbgauge.checks.drift.plan import TablePlan
from dbgauge.checks.drift.session import Session
from dbgauge.checks.drift.sides import Side
from dbgauge.checks.drift.sql import TableQueries
from dbgauge.toolkit.errors import QueryError

log = logging.getLogger("dbgauge.checksum")

ASSUMED_RATE = 1_000_000.0  # rows/s expected of CHECKSUM TABLE before anything is measured
# Keys a probe hashes; a pre-check of fewer rows says more about latency than speed, so only
# one that read at least this many sets the rate.
PROBE_ROWS = 131_072
# CHECKSUM TABLE against the chunk hash of the same rows (MariaDB 10.11, the 10M-row
# benchmark table): 1.7x as fast in memory, 1.33x read from disk with O_DIRECT. Between the
# two: a table read from disk is expected about a tenth faster than it reads, so only one
# taking up to 1.13x --whole-table-time is tried in vain (and that costs the limit, once).
_CHECKSUM_SPEEDUP = 1.5


def whole_table(run: Session, plan: TablePlan, started: float) -> TableResult | None:
    """The whole-table pre-check: CHECKSUM TABLE on every side at once, each counting
    the rows it read. A result when every side agrees; None to walk the chunks: the
    values differ (drift, or a write in flight), a side has no value or cannot run it,
    the table was written just now, or it is expected to take longer than
    --whole-table-time (or did, and was interrupted by the server)."""
    limit = run.options.whole_table_time
    if not plan.whole_table_ok or limit <= 0 or not _may_fit(run, plan, limit):
        return None
    idle = run.source.q("checksum_table_idle", (plan.schema, plan.table))
    if idle and idle[0]["idle_seconds"] is not None \
            and float(idle[0]["idle_seconds"]) < run.options.whole_table_idle:
        return None
    run.throttle()
    if not _fits(run, plan, limit):
        return None
    left = run.remaining()
    bounded = limit if left is None else max(0.001, min(limit, left))  # --run-time too

    def side(who: Side, q: TableQueries) -> Callable[[], tuple[Any, int]]:
        return lambda: who.whole_table(q, bounded)

    t0 = time.monotonic()
    try:
        (value, rows), *others = run.parallel(
            [side(run.source, plan.source[False]),
             *(side(rep, plan.replicas[rep.name]) for rep in run.replicas)])
    except QueryError as exc:
        run.check_run_time()
        _failed(run, plan, t0)
        log.info("%s: no whole-table checksum (%s): comparing chunks", plan.name, exc)
        return None
    if value is None or rows < 0 or any(v is None for v, _ in others):
        # MariaDB answers NULL rather than an error when max_statement_time strikes
        # while the table is being opened.
        run.check_run_time()
        _failed(run, plan, t0)
        return None
    if rows >= PROBE_ROWS:
        run.whole_table_rate = rows / max(time.monotonic() - t0, 1e-3)
    if any(other != (value, rows) for other in others):
        return None
    if run.method == "replicated":  # chunk rows of an earlier run would read as current
        run.replicate.run(run.source, "checksum_clear_table", (plan.schema, plan.table))
    return TableResult(plan.name, "ok", rows, 1, seconds=time.monotonic() - started,
                       whole_table=True)


def _may_fit(run: Session, plan: TablePlan, limit: float) -> bool:
    """Whether the table may take at most `limit`: at the speed measured so far; before
    any, at the assumed speed, or whatever a probe finds (an integer key: `_fits`)."""
    rate = run.whole_table_rate
    if rate is not None:
        return plan.rows_estimate <= rate * limit
    return plan.int_key or plan.rows_estimate <= ASSUMED_RATE * limit


def _fits(run: Session, plan: TablePlan, limit: float) -> bool:
    """Whether the table is expected to take at most `limit`, probing the speed first
    when nothing has measured it and the assumed speed would not let it."""
    if run.whole_table_rate is None and plan.rows_estimate > ASSUMED_RATE * limit:
        run.whole_table_rate = _probe(run, plan)
    rate = run.whole_table_rate
    return plan.rows_estimate <= (ASSUMED_RATE if rate is None else rate) * limit


def _probe(run: Session, plan: TablePlan) -> float | None:
    """The speed CHECKSUM TABLE can be expected to read this table at: the chunk hash of
    its first `PROBE_ROWS` keys, in two halves one after the other on every side at once
    (the faster half of each side counts: a read that stalled once would say nothing of
    the table), at the slowest side's speed, times `_CHECKSUM_SPEEDUP`. None when it
    cannot tell: too few rows there (sparse keys, an emptied table), or a side that cannot
    run it (the walk will say why)."""
    q = plan.source[False]
    try:
        low = run.source.run(q.key_range())[0]["lo"]
        if low is None:
            return None
        half = PROBE_ROWS // 2
        halves = [KeyRange(None, (int(low) + half - 1,)),
                  KeyRange((int(low) + half - 1,), (int(low) + PROBE_ROWS - 1,))]

        def side(who: Side, tq: TableQueries) -> Callable[[], tuple[int, float]]:
            def call() -> tuple[int, float]:
                rows, rates = 0, []
                for rng in halves:
                    t0 = time.monotonic()
                    cnt = int(who.run(tq.chunk(rng))[0]["cnt"])
                    rows += cnt
                    rates.append(cnt / max(time.monotonic() - t0, 1e-4))
                return rows, max(rates)
            return call

        sides: list[tuple[int, float]] = run.parallel(
            [side(run.source, q), *(side(rep, plan.replicas[rep.name]) for rep in run.replicas)])
    except QueryError as exc:
        log.info("%s: no speed probe (%s)", plan.name, exc)
        return None
    if sides[0][0] < PROBE_ROWS // 4:
        return None
    return min(rate for _, rate in sides) * _CHECKSUM_SPEEDUP


def _failed(run: Session, plan: TablePlan, t0: float) -> None:
    """After a pre-check that ran into its time limit, expect at most half the speed it
    would have needed, so tables of that size are not tried again."""
    limit = run.options.whole_table_time
    if time.monotonic() - t0 >= limit:
        rate = max(plan.rows_estimate, 1) / limit / 2
        run.whole_table_rate = rate if run.whole_table_rate is None \
            else min(run.whole_table_rate, rate)
