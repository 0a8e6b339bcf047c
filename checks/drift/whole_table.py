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

The speed is learnt table by table: `whole_table` takes what the tables before found and
returns it, updated, with its verdict (`Precheck`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dbgauge.checks.drift.chunks import KeyRange
from dbgauge.checks.drift.context import Context
from dbgauge.checks.drift.model import TableResult
from dbgauge.checks.drift.plan import TablePlan
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


@dataclass(frozen=True)
class Precheck:
    """What the pre-check found: the table's result when every side agreed (None: walk
    its chunks), and the speed to expect of CHECKSUM TABLE from now on (rows/s; None:
    nothing has measured it yet)."""

    result: TableResult | None
    rate: float | None


def whole_table(ctx: Context, plan: TablePlan, started: float, rate: float | None
                ) -> Precheck:
    """The whole-table pre-check: CHECKSUM TABLE on every side at once, each counting
    the rows it read, expected to read `rate` rows/s. A result when every side agrees;
    None to walk the chunks: the values differ (drift, or a write in flight), a side has
    no value or cannot run it, the table was written just now, or it is expected to take
    longer than --whole-table-time (or did, and was interrupted by the server)."""
    limit = ctx.options.whole_table_time
    if not plan.whole_table_ok or limit <= 0 or not _may_fit(plan, limit, rate):
        return Precheck(None, rate)
    idle = ctx.source.q("checksum_table_idle", (plan.schema, plan.table))
    if idle and idle[0]["idle_seconds"] is not None \
            and float(idle[0]["idle_seconds"]) < ctx.options.whole_table_idle:
        return Precheck(None, rate)
    ctx.throttle()
    if rate is None and plan.rows_estimate > ASSUMED_RATE * limit:
        rate = _probe(ctx, plan)  # unmeasured, and too large for the assumed speed
    if plan.rows_estimate > (ASSUMED_RATE if rate is None else rate) * limit:
        return Precheck(None, rate)
    t0 = time.monotonic()
    try:
        (value, rows), *others = _checksum_tables(ctx, plan, limit)
    except QueryError as exc:
        ctx.check_run_time()
        rate = _failed(ctx, plan, t0, rate)
        log.info("%s: no whole-table checksum (%s): comparing chunks", plan.name, exc)
        return Precheck(None, rate)
    if value is None or rows < 0 or any(v is None for v, _ in others):
        # MariaDB answers NULL rather than an error when max_statement_time strikes
        # while the table is being opened.
        ctx.check_run_time()
        return Precheck(None, _failed(ctx, plan, t0, rate))
    if rows >= PROBE_ROWS:
        rate = rows / max(time.monotonic() - t0, 1e-3)
    if any(other != (value, rows) for other in others):
        return Precheck(None, rate)
    if ctx.method == "replicated":  # chunk rows of an earlier run would read as current
        ctx.source_writable()
        ctx.replicate.run(ctx.source, "checksum_clear_table", (plan.schema, plan.table))
    return Precheck(TableResult(plan.name, "ok", rows=rows, chunks=1, whole_table=True,
                                seconds=time.monotonic() - started), rate)


def _checksum_tables(ctx: Context, plan: TablePlan, limit: float) -> list[tuple[Any, int]]:
    """CHECKSUM TABLE and the rows it read, on every side at once (the source first),
    each bounded by `limit` and by what is left of --run-time."""
    left = ctx.remaining()
    bounded = limit if left is None else max(0.001, min(limit, left))

    def side(who: Side, q: TableQueries) -> Callable[[], tuple[Any, int]]:
        return lambda: who.whole_table(q, bounded)

    return ctx.parallel([side(ctx.source, plan.source[False]),
                         *(side(rep, plan.replicas[rep.name]) for rep in ctx.replicas)])


def _may_fit(plan: TablePlan, limit: float, rate: float | None) -> bool:
    """Whether the table may take at most `limit`: at the speed measured so far; before
    any, at the assumed speed, or whatever a probe finds (an integer key)."""
    if rate is not None:
        return plan.rows_estimate <= rate * limit
    return plan.int_key or plan.rows_estimate <= ASSUMED_RATE * limit


def _probe(ctx: Context, plan: TablePlan) -> float | None:
    """The speed CHECKSUM TABLE can be expected to read this table at: the chunk hash of
    its first `PROBE_ROWS` keys, in two halves one after the other on every side at once
    (the faster half of each side counts: a read that stalled once would say nothing of
    the table), at the slowest side's speed, times `_CHECKSUM_SPEEDUP`. None when it
    cannot tell: too few rows there (sparse keys, an emptied table), or a side that cannot
    run it (the walk will say why)."""
    q = plan.source[False]
    try:
        low = ctx.source.run(q.key_range())[0]["lo"]
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

        sides: list[tuple[int, float]] = ctx.parallel(
            [side(ctx.source, q), *(side(rep, plan.replicas[rep.name]) for rep in ctx.replicas)])
    except QueryError as exc:
        log.info("%s: no speed probe (%s)", plan.name, exc)
        return None
    if sides[0][0] < PROBE_ROWS // 4:
        return None
    return min(rate for _, rate in sides) * _CHECKSUM_SPEEDUP


def _failed(ctx: Context, plan: TablePlan, t0: float, rate: float | None) -> float | None:
    """The speed to expect after a pre-check that failed: after one that ran into its time
    limit, at most half the speed it would have needed, so tables of that size are not
    tried again; else `rate` as it was."""
    limit = ctx.options.whole_table_time
    if time.monotonic() - t0 < limit:
        return rate
    slow = max(plan.rows_estimate, 1) / limit / 2
    return slow if rate is None else min(rate, slow)
