"""The whole-table pre-check (MariaDB pairs, both methods): CHECKSUM TABLE on every side
at once, before any chunk is walked.

A quiet table expected to take at most --whole-table-time is compared whole; equal values
(and equal row counts, read from each session's scan counter) prove it equal in one pass.
Anything else -- values that differ, a side without a value, a table written just now, a
statement the server interrupted -- falls through to the chunk walk, which decides.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from checks.drift.model import TableResult
from checks.drift.plan import TablePlan
from checks.drift.session import Session
from checks.drift.sides import Side
from checks.drift.sql import TableQueries
from toolkit.errors import QueryError

log = logging.getLogger("dbgauge.checksum")


def whole_table(run: Session, plan: TablePlan, started: float) -> TableResult | None:
    """The whole-table pre-check: CHECKSUM TABLE on every side at once, each counting
    the rows it read. A result when every side agrees; None to walk the chunks: the
    values differ (drift, or a write in flight), a side has no value or cannot run it,
    the table was written just now, or it is expected to take longer than
    --whole-table-time (or did, and was interrupted by the server)."""
    limit = run.options.whole_table_time
    if not plan.whole_table_ok or limit <= 0 \
            or plan.rows_estimate > run.whole_table_rate * limit:
        return None
    idle = run.source.q("checksum_table_idle", (plan.schema, plan.table))
    if idle and idle[0]["idle_seconds"] is not None \
            and float(idle[0]["idle_seconds"]) < run.options.whole_table_idle:
        return None
    run.throttle()
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
    run.whole_table_rate = max(rows, 1) / max(time.monotonic() - t0, 1e-3)
    if any(other != (value, rows) for other in others):
        return None
    if run.method == "replicated":  # chunk rows of an earlier run would read as current
        run.replicate.run(run.source, "checksum_clear_table", (plan.schema, plan.table))
    return TableResult(plan.name, "ok", rows, 1, seconds=time.monotonic() - started,
                       whole_table=True)


def _failed(run: Session, plan: TablePlan, t0: float) -> None:
    """After a pre-check that ran into its time limit, expect at most half the speed it
    would have needed, so tables of that size are not tried again."""
    limit = run.options.whole_table_time
    if time.monotonic() - t0 >= limit:
        run.whole_table_rate = min(run.whole_table_rate,
                                   max(plan.rows_estimate, 1) / limit / 2)
