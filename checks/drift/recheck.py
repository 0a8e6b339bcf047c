"""Telling drift from writes in flight, and finding the rows: re-checks of a differing
chunk, bisection down to rows, and the confirmation rounds rows must survive.

Every comparison here is synchronised (`Context.synced`): the replica is read only once it
has applied the source's position as of just after the source was read, so a range or
row that matches on a re-check was a write in flight, not drift. A range that still
differs is cut at every n-th key and the pieces compared again (data-diff's bisection),
down to `leaf_rows`, where rows are compared by key and MD5.

Re-checks cost only what differs: a keyed chunk is re-checked once (its rows are confirmed
afterwards anyway), and a row is reported as soon as two synchronised reads in a row found
the same values on both sides (a row being written would not hold still); only rows whose
values moved are read again after `retry_delay`, up to `retries` times.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dbgauge.checks.drift.chunks import (
    Bound,
    KeyRange,
    Span,
    bucket_range,
    bucket_width,
    canonical_key,
    diff_rows,
    sort_items,
    split_range,
)
from dbgauge.checks.drift.context import Context
from dbgauge.checks.drift.plan import TablePlan
from dbgauge.checks.drift.sides import Side
from dbgauge.toolkit.db import Row
from dbgauge.toolkit.db.values import text as _text
from dbgauge.toolkit.errors import QueryError

KEY_BATCH = 500  # keys per re-check statement
_LOCK_WAIT_TIMEOUT = 1205  # ER_LOCK_WAIT_TIMEOUT: the source's confirming read waited 2 s
_LOCKED = "locked"  # what a row held by a writer counts as among its source values

Candidates = list[tuple[str, Bound]]  # (kind, key): missing, extra or changed
Seen = dict[Bound, tuple[str | None, str | None]]  # key: (source, replica) row hash last read


def hash_map(rows: list[Row], key: Sequence[str]) -> dict[Bound, str]:
    """Row hash by key, keys as both drivers agree on them."""
    return {canonical_key(r[k] for k in key): _text(r["dbgauge_row_hash"]) for r in rows}


def same(a: list[Row], b: list[Row]) -> bool:
    """Whether two chunk checksums (cnt, crc) are equal."""
    return (int(a[0]["cnt"]), _text(a[0]["crc"])) == (int(b[0]["cnt"]), _text(b[0]["crc"]))


def recheck(ctx: Context, plan: TablePlan, replica: Side, rng: KeyRange, attempts: int = 1
            ) -> tuple[list[Row], list[Row]] | None:
    """None when the range matches on a synchronised re-check (it was in flight),
    else the last differing (source, replica) chunk rows. `attempts` > 1 (tables without
    a key, whose rows cannot be confirmed one by one) pause `retry_delay` between them."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    last: tuple[list[Row], list[Row]] | None = None
    for attempt in range(max(1, attempts)):
        if attempt:
            ctx.pause(ctx.options.retry_delay)
        ctx.check_run_time()
        a, b = ctx.synced(replica, src_q.chunk(rng), plan.replicas[replica.name].chunk(rng))
        if same(a, b):
            return None
        last = (a, b)
    return last


BucketHashes = dict[int, tuple[int, str]]  # key bucket: (cnt, crc)


FINE_KEYS = 4096  # a differing bucket wider than this is read again in finer buckets ...
FINE_BUCKETS = 64  # ... this many (about 512 keys each for a 32768-key bucket)


def bucket_hashes(rows: list[Row]) -> BucketHashes:
    """A bucketed chunk's rows (`TableQueries.chunk_buckets`) by bucket; empty buckets
    (which a range read per bucket reports and a GROUP BY does not) are left out."""
    return {int(r["dbgauge_bucket"]): (int(r["cnt"]), _text(r["crc"])) for r in rows
            if int(r["cnt"])}


def differing_buckets(ctx: Context, plan: TablePlan, replica: Side, rng: KeyRange,
                      span: Span, width: int | None = None) -> list[KeyRange]:
    """The key buckets of `rng` (an integer key; `width` keys each, else the walk's) whose
    hashes differ, both sides read at once: the pieces to re-check in lock-step instead of
    re-reading and bisecting the whole range (none: the range matches now)."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    rep_q = plan.replicas[replica.name]
    width = width or bucket_width(rng, span)
    a, b = ctx.parallel([lambda: ctx.source.run(src_q.chunk_buckets(rng, width, span)),
                         lambda: replica.run(rep_q.chunk_buckets(rng, width, span))])
    return differing_ranges(bucket_hashes(a), bucket_hashes(b), width, rng)


def finer(ctx: Context, plan: TablePlan, replica: Side, pieces: Sequence[KeyRange]
          ) -> list[KeyRange]:
    """Differing buckets of more than FINE_KEYS keys read again in FINE_BUCKETS buckets each,
    both sides at once, keeping only the finer ones that differ: a walk's bucket (32768 keys
    or more) would otherwise be bisected in 16 lock-step reads before its rows are compared."""
    out: list[KeyRange] = []
    for piece in pieces:
        if piece.lower is None or piece.upper is None:
            out.append(piece)
            continue
        low, high = int(piece.lower[0]) + 1, int(piece.upper[0])
        if high - low + 1 <= FINE_KEYS:
            out.append(piece)
            continue
        ctx.check_run_time()  # a bounded piece covers its own keys: it is its own span
        out += differing_buckets(ctx, plan, replica, piece, (low, high),
                                 width=-(-(high - low + 1) // FINE_BUCKETS))
    return out


def differing_ranges(source: BucketHashes, replica: BucketHashes, width: int, rng: KeyRange
                     ) -> list[KeyRange]:
    """The key ranges of the buckets of `rng` whose (cnt, crc) differ between the sides."""
    return [bucket_range(x, width, rng) for x in sorted(source.keys() | replica.keys())
            if source.get(x) != replica.get(x)]


def locate(ctx: Context, plan: TablePlan, replica: Side, rng: KeyRange,
           counts: tuple[int, int], seen: Seen) -> Candidates:
    """Bisect a differing range down to rows; returns candidate (kind, key) pairs, to be
    confirmed by `confirm` (once for all of a table's candidates), and records the row
    hashes read in `seen`."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    rep_q = plan.replicas[replica.name]
    size = max(counts)
    leaf = ctx.options.leaf_rows if plan.ranges_safe else max(ctx.options.leaf_rows, size)
    if size <= leaf or plan.key is None:
        return row_diff(ctx, plan, replica, rng, seen)
    every = max(1, math.ceil(size / ctx.options.split_factor))
    side, queries = (ctx.source, src_q) if counts[0] >= counts[1] else (replica, rep_q)
    points = [tuple(r[k] for k in queries.key) for r in side.run(queries.split_points(rng,
                                                                                      every))]
    pieces = split_range(rng, points)
    if len(pieces) < 2:
        return row_diff(ctx, plan, replica, rng, seen)
    found: Candidates = []
    for piece in pieces:
        ctx.check_run_time()
        # One synchronised look per piece: rows found in the end are re-read anyway.
        differing = recheck(ctx, plan, replica, piece)
        if differing is not None:
            a, b = differing
            found += locate(ctx, plan, replica, piece, (int(a[0]["cnt"]), int(b[0]["cnt"])),
                            seen)
    return found


def row_diff(ctx: Context, plan: TablePlan, replica: Side, rng: KeyRange, seen: Seen
             ) -> Candidates:
    """The rows of `rng` that differ, by key and row hash (one synchronised read)."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    rep_q = plan.replicas[replica.name]
    ctx.check_run_time()
    a, b = ctx.synced(replica, src_q.rows(rng), rep_q.rows(rng))
    return _differing(hash_map(a, src_q.key), hash_map(b, rep_q.key), seen)


def _differing(source: dict[Bound, str], replica: dict[Bound, str], seen: Seen
               ) -> Candidates:
    found = diff_rows(source, replica)
    for _, key in found:
        seen[key] = (source.get(key), replica.get(key))
    return found


def confirm(ctx: Context, plan: TablePlan, replica: Side, candidates: Candidates,
            seen: Seen) -> tuple[Candidates, Candidates]:
    """(the candidates that differ, those that cannot be told from writes in flight).

    A row is kept once two synchronised reads in a row (the one that found it, in `seen`,
    and a re-read) saw the same values on each side. A row whose values moved is read
    again after `retry_delay`, up to `retries` re-reads. If it differed in every read
    while its source values never changed, it differs (the replica, read between two
    source reads that agree, can only hold other values by drift: rows rewritten on the
    replica alone). If its source values changed too, it is being written, and every
    difference may have been a write in flight (the replica is read once it has applied
    the source's position, and may have applied more): it is returned apart, unconfirmed.
    A row that matches in any read was in flight."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    rep_q = plan.replicas[replica.name]
    last = dict(seen)
    sources = {key: {values[0]} for key, values in seen.items()}  # source hashes read
    kept: Candidates = []
    pending = candidates
    for attempt in range(max(1, ctx.options.retries)):
        if not pending:
            break
        if attempt:
            ctx.pause(ctx.options.retry_delay)
        moved: Candidates = []
        for start in range(0, len(pending), KEY_BATCH):
            ctx.check_run_time()
            items = pending[start:start + KEY_BATCH]
            batch = [key for _, key in items]
            try:
                a, b = ctx.synced(replica, src_q.confirm_hashes(batch), rep_q.hashes(batch))
            except QueryError as exc:
                if exc.errno != _LOCK_WAIT_TIMEOUT:
                    raise
                for _, key in items:  # a transaction holds one of them: being written
                    sources.setdefault(key, set()).add(_LOCKED)
                moved += items
                continue
            now: Seen = {}
            for kind, key in _differing(hash_map(a, src_q.key), hash_map(b, rep_q.key), now):
                sources.setdefault(key, set()).add(now[key][0])
                (kept if last.get(key) == now[key] else moved).append((kind, key))
            last.update(now)
        pending = moved
    still = [item for item in pending if len(sources.get(item[1], ())) == 1]
    written = [item for item in pending if len(sources.get(item[1], ())) != 1]
    return sort_items(kept + still), sort_items(written)
