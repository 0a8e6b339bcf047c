"""The chunk walk: one table compared range by range along its key, by either method.

- direct: each chunk is hashed on every side at once; a replica whose hash differs makes
  the chunk a suspect, re-checked after the walk (`checks.drift.verdict`).
- replicated: each chunk's count and hash are written into dbgauge.checksums by a
  statement-logged REPLACE ... SELECT, which every replica recomputes at the same point
  of the binlog; the replicas' values are compared after the walk.

Chunks follow the measured time towards --chunk-time; the walk pauses while replicas lag
or the source is busy (`Context.throttle`) and records its progress for --resume. It
returns what it counted and the chunks that differed (`Walked`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass

from dbgauge.checks.drift.chunks import (
    Bound,
    ChunkSizer,
    FixedSizer,
    IntRangePlanner,
    KeyRange,
    Span,
    encode_bound,
)
from dbgauge.checks.drift.context import Context
from dbgauge.checks.drift.model import Suspect
from dbgauge.checks.drift.pipeline import Observe, Ranges, walk_direct
from dbgauge.checks.drift.plan import TablePlan
from dbgauge.checks.drift.state import SavedWalk
from dbgauge.toolkit.db.values import text as _text

_REPLICATED_MIN_CHUNKS = 16  # replicated method: a table is cut into at least this many


@dataclass(frozen=True)
class Walked:
    """What a table's walk found: the source's rows and the chunks, counted from the
    first chunk even when resumed, and the chunks that differed (the replicated method's
    are read from the replicas afterwards, `checks.drift.verdict`)."""

    rows: int
    chunks: int
    suspects: tuple[Suspect, ...]
    resumed_from: int | None  # the chunk a resumed walk went on with


def walk_table(ctx: Context, plan: TablePlan, saved: SavedWalk | None) -> Walked:
    """Walk `plan`'s table chunk by chunk (continuing `saved`, a resumed run's walk)."""
    ctx.catch_up()
    replicated = ctx.method == "replicated"
    if replicated and saved is None:
        ctx.source_writable()
        ctx.replicate.run(ctx.source, "checksum_clear_table", (plan.schema, plan.table))
    rows = saved.rows if saved else 0
    chunks = saved.chunks if saved else 0
    suspects = list(saved.suspects) if saved else []
    sizer = chunk_sizer(ctx, plan, saved.chunk_rows if saved else None)
    ranges: Ranges = iter([]) if saved and saved.walked else key_ranges(
        ctx, plan, sizer, saved.next_lower if saved else None)

    def chunk_done(rng: KeyRange) -> None:
        """A chunk is done on every side: report it and save the walk's progress."""
        ctx.reporter.progress(plan.name, rows, max(plan.rows_estimate, rows))
        ctx.state.progress(plan.name, rng.upper, rows, chunks, suspects, sizer.rows)

    if replicated:
        for rng, observe, _ in ranges:
            ctx.throttle()
            chunks += 1
            cnt, seconds = replicate_chunk(ctx, plan, rng, chunks)
            observe(cnt, seconds)
            rows += cnt
            chunk_done(rng)
    else:  # the sides pipelined (checks.drift.pipeline); chunks come back in key order
        for hashed in walk_direct(ctx, plan, ranges):
            chunks += 1
            suspects += [Suspect(name, hashed.rng, hashed.pieces.get(name))
                         for name in hashed.differing]
            rows += hashed.rows
            chunk_done(hashed.rng)
    ctx.reporter.progress(plan.name, rows, rows)  # walked: done, whatever the estimate said
    return Walked(rows=rows, chunks=chunks, suspects=tuple(suspects),
                  resumed_from=saved.chunks + 1 if saved and saved.chunks else None)


def chunk_sizer(ctx: Context, plan: TablePlan, chunk_rows: int | None) -> ChunkSizer:
    """How many rows the table's chunks hold: fixed (--chunk-size), else sized towards
    --chunk-time from `chunk_rows` (a resumed walk's last size) or the initial size."""
    options = ctx.options
    initial = chunk_rows or options.initial_chunk_rows
    if options.chunk_size:  # pt's --chunk-size: fixed rows, no sizing to chunk_time
        return FixedSizer(options.chunk_size)
    if ctx.method == "replicated":
        # Replicas recompute a chunk only after the source has committed it, so they end
        # about one chunk after the source: many small chunks keep that tail short.
        cap = max(options.initial_chunk_rows, plan.rows_estimate // _REPLICATED_MIN_CHUNKS)
        return ChunkSizer(options.chunk_time, min(initial, cap), max_rows=cap)
    return ChunkSizer(options.chunk_time, initial)


def key_ranges(ctx: Context, plan: TablePlan, sizer: ChunkSizer, resume_after: Bound | None
               ) -> Iterator[tuple[KeyRange, Observe, Span | None]]:
    """Ranges covering the whole key space after `resume_after`, sized by `sizer`, and for
    each a callback that reports (source rows, seconds) to size the next one, and for an
    integer key the table's lowest and highest keys (what an open-ended range covers)."""
    q = plan.source[min(plan.source)]
    if plan.key is None or not plan.ranges_safe:
        yield KeyRange(resume_after, None), lambda rows, s: None, None
        return
    if plan.int_key:
        row = ctx.source.run(q.key_range())[0]
        if row["lo"] is None:
            yield KeyRange(resume_after, None), lambda rows, s: None, None
            return
        span = (int(row["lo"]), int(row["hi"]))
        after = None if resume_after is None else int(resume_after[0])
        planner = IntRangePlanner(span[0], span[1], sizer, after)
        while (rng := planner.next()) is not None:
            yield rng, _observer(planner, rng), span
        return
    lower = resume_after
    while True:
        found = ctx.source.run(q.next_boundary(lower, max(0, sizer.rows - 1)))
        if not found:
            yield KeyRange(lower, None), sizer.observe, None
            return
        upper = tuple(found[0][k] for k in plan.key.columns)
        yield KeyRange(lower, upper), sizer.observe, None
        lower = upper


def _observer(planner: IntRangePlanner, rng: KeyRange) -> Observe:
    def observe(rows: int, seconds: float) -> None:
        planner.observe(rng, rows, seconds)
    return observe


def replicate_chunk(ctx: Context, plan: TablePlan, rng: KeyRange, chunk: int
                    ) -> tuple[int, float]:
    """Write `rng`'s checksum into the replicate table for the replicas to recompute:
    (source rows, seconds)."""
    q = plan.source[False]
    lower = json.dumps(encode_bound(rng.lower)) if rng.lower is not None else None
    upper = json.dumps(encode_bound(rng.upper)) if rng.upper is not None else None
    ctx.source_writable()
    t0 = time.monotonic()
    into = ctx.replicate
    ctx.source.run(q.replicate_chunk(rng, chunk, lower, upper, into.parts()["replicate"]))
    seconds = time.monotonic() - t0
    row = into.run(ctx.source, "checksum_source_values", (plan.schema, plan.table, chunk))[0]
    cnt, crc = int(row["this_cnt"]), _text(row["this_crc"])
    into.run(ctx.source, "checksum_update_source",
             (round(seconds, 6), cnt, crc, plan.schema, plan.table, chunk))
    return cnt, seconds
