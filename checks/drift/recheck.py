"""Telling drift from writes in flight, and finding the rows: re-checks of a differing
chunk, bisection down to rows, and the confirmation rounds rows must survive.

Every comparison here is synchronised (`Session.synced`): the replica is read only once it
has applied the source's position as of just after the source was read, so a range or
row that matches on a re-check was a write in flight, not drift. A range that still
differs is cut at every n-th key and the pieces compared again (data-diff's bisection),
down to `leaf_rows`, where rows are compared by key and MD5.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from checks.drift.chunks import Bound, KeyRange, canonical_key, diff_rows, split_range
from checks.drift.plan import TablePlan
from checks.drift.session import Session
from checks.drift.sides import Side
from toolkit.db import Row
from toolkit.db.values import text as _text

KEY_BATCH = 500  # keys per re-check statement

Candidates = list[tuple[str, Bound]]  # (kind, key): missing, extra or changed


def hash_map(rows: list[Row], key: Sequence[str]) -> dict[Bound, str]:
    """Row hash by key, keys as both drivers agree on them."""
    return {canonical_key(r[k] for k in key): _text(r["dbgauge_row_hash"]) for r in rows}


def same(a: list[Row], b: list[Row]) -> bool:
    """Whether two chunk checksums (cnt, crc) are equal."""
    return (int(a[0]["cnt"]), _text(a[0]["crc"])) == (int(b[0]["cnt"]), _text(b[0]["crc"]))


def recheck(run: Session, plan: TablePlan, replica: Side, rng: KeyRange, *,
            delay_first: bool, attempts: int | None = None
            ) -> tuple[list[Row], list[Row]] | None:
    """None when the range matches on a synchronised re-check (it was in flight),
    else the last differing (source, replica) chunk rows."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    last: tuple[list[Row], list[Row]] | None = None
    for attempt in range(max(1, run.options.retries if attempts is None else attempts)):
        if attempt or delay_first:
            run.pause(run.options.retry_delay)
        run.check_run_time()
        a, b = run.synced(replica, src_q.chunk(rng), plan.replicas[replica.name].chunk(rng))
        if same(a, b):
            return None
        last = (a, b)
    return last


def locate(run: Session, plan: TablePlan, replica: Side, rng: KeyRange,
           counts: tuple[int, int]) -> Candidates:
    """Bisect a differing range down to rows; returns candidate (kind, key) pairs, to be
    confirmed by `confirm` (once for all of a table's candidates: it sleeps)."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    rep_q = plan.replicas[replica.name]
    size = max(counts)
    leaf = run.options.leaf_rows if plan.ranges_safe else max(run.options.leaf_rows, size)
    if size <= leaf or plan.key is None:
        return row_diff(run, plan, replica, rng)
    every = max(1, math.ceil(size / run.options.split_factor))
    side, queries = (run.source, src_q) if counts[0] >= counts[1] else (replica, rep_q)
    points = [tuple(r[k] for k in queries.key) for r in side.run(queries.split_points(rng,
                                                                                      every))]
    pieces = split_range(rng, points)
    if len(pieces) < 2:
        return row_diff(run, plan, replica, rng)
    found: Candidates = []
    for piece in pieces:
        run.check_run_time()
        # One synchronised look per piece: rows found in the end are re-read anyway.
        differing = recheck(run, plan, replica, piece, delay_first=False, attempts=1)
        if differing is not None:
            a, b = differing
            found += locate(run, plan, replica, piece, (int(a[0]["cnt"]), int(b[0]["cnt"])))
    return found


def row_diff(run: Session, plan: TablePlan, replica: Side, rng: KeyRange) -> Candidates:
    """The rows of `rng` that differ, by key and row hash (one synchronised read)."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    rep_q = plan.replicas[replica.name]
    run.check_run_time()
    a, b = run.synced(replica, src_q.rows(rng), rep_q.rows(rng))
    return diff_rows(hash_map(a, src_q.key), hash_map(b, rep_q.key))


def confirm(run: Session, plan: TablePlan, replica: Side, candidates: Candidates
            ) -> Candidates:
    """Keep the rows that still differ after each of `retries` synchronised re-reads."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    rep_q = plan.replicas[replica.name]
    for _ in range(max(1, run.options.retries)):
        if not candidates:
            break
        run.pause(run.options.retry_delay)
        keys = [key for _, key in candidates]
        still: Candidates = []
        for start in range(0, len(keys), KEY_BATCH):
            run.check_run_time()
            batch = keys[start:start + KEY_BATCH]
            a, b = run.synced(replica, src_q.hashes(batch), rep_q.hashes(batch))
            still += diff_rows(hash_map(a, src_q.key), hash_map(b, rep_q.key))
        candidates = still
    return candidates
