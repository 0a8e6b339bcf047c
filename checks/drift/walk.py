"""The chunk walk: one table compared range by range along its key, by either method.

- direct: each chunk is hashed on every side at once; a replica whose hash differs makes
  the chunk a suspect, re-checked after the walk (`checks.drift.verdict`).
- replicated: each chunk's count and hash are written into dbgauge.checksums by a
  statement-logged REPLACE ... SELECT, which every replica recomputes at the same point
  of the binlog; the replicas' values are compared after the walk.

Chunks follow the measured time towards --chunk-time; the walk pauses while replicas lag
or the source is busy (`Session.throttle`) and records its progress for --resume. A quiet
MariaDB table may be settled first by the whole-table pre-check.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

from dbgauge.checks.drift.chunks import (
    Bound,
    ChunkSizer,
    FixedSizer,
    IntRangePlanner,
    KeyRange,
    Span,
    decode_bound,
    encode_bound,
)
from dbgauge.checks.drift.model import TableResult
from dbgauge.checks.drift.pipeline import Observe, Ranges, walk_direct
from dbgauge.checks.drift.plan import TablePlan, plan_table
from dbgauge.checks.drift.session import Session
from dbgauge.checks.drift.verdict import Suspects, finish_table
from dbgauge.checks.drift.whole_table import whole_table
from dbgauge.toolkit.db.values import text as _text

_REPLICATED_MIN_CHUNKS = 16  # replicated method: a table is cut into at least this many


def check_table(run: Session, schema: str, table: str, estimate: int) -> TableResult:
    """Plan, pre-check or walk, and judge one table (continuing a saved walk)."""
    planned = plan_table(run.source, run.replicas, run.options, schema, table, estimate)
    if isinstance(planned, TableResult):
        return planned
    plan = planned
    saved = run.state.table(plan.name)
    started = time.monotonic()
    resume_after = decode_bound(saved.get("next_lower")) if saved else None
    rows = int(saved.get("rows", 0)) if saved else 0
    chunks = int(saved.get("chunks", 0)) if saved else 0
    suspects: Suspects = [
        (s[0], KeyRange(decode_bound(s[1]), decode_bound(s[2])))
        for s in (saved.get("suspects", []) if saved else [])]
    resumed_from = chunks + 1 if saved and chunks else None
    if resumed_from:
        run.reporter.note(f"{plan.name}: resuming at chunk {resumed_from}")
    elif (whole := whole_table(run, plan, started)) is not None:
        run.reporter.progress(plan.name, whole.rows, whole.rows)
        run.state.done(plan.name, whole)
        return whole
    run.catch_up()
    replicated = run.method == "replicated"
    if replicated and not saved:
        run.replicate.run(run.source, "checksum_clear_table", (plan.schema, plan.table))
    walked = bool(saved and saved.get("walked"))
    ranges: Ranges = iter([]) if walked else key_ranges(
        run, plan, resume_after, saved.get("chunk_rows") if saved else None)
    if replicated:
        for rng, observe, _ in ranges:
            run.throttle()
            chunks += 1
            cnt, seconds = replicate_chunk(run, plan, rng, chunks)
            observe(cnt, seconds)
            rows += cnt
            _walked(run, plan, rng, rows, chunks, suspects)
    else:  # the sides pipelined (checks.drift.pipeline); chunks come back in key order
        for hashed in walk_direct(run, plan, ranges):
            chunks += 1
            suspects += [(name, hashed.rng) for name in hashed.differing]
            rows += hashed.rows
            _walked(run, plan, hashed.rng, rows, chunks, suspects)
    run.reporter.progress(plan.name, rows, rows)  # walked: done, whatever the estimate said
    return finish_table(run, plan, rows, chunks, suspects, started, resumed_from)


def _walked(run: Session, plan: TablePlan, rng: KeyRange, rows: int, chunks: int,
            suspects: Suspects) -> None:
    """A chunk is done on every side: report it and save the walk's progress."""
    run.reporter.progress(plan.name, rows, max(plan.rows_estimate, rows))
    run.state.progress(plan.name, rng.upper, rows, chunks, suspects, run.current_sizer.rows)


def key_ranges(run: Session, plan: TablePlan, resume_after: Bound | None,
               chunk_rows: int | None) -> Iterator[tuple[KeyRange, Observe, Span | None]]:
    """Ranges covering the whole key space after `resume_after`, and for each a
    callback that reports (source rows, seconds) to size the next one, and for an integer
    key the table's lowest and highest keys (what an open-ended range covers)."""
    options = run.options
    initial = chunk_rows or options.initial_chunk_rows
    if options.chunk_size:  # pt's --chunk-size: fixed rows, no sizing to chunk_time
        sizer: ChunkSizer = FixedSizer(options.chunk_size)
    elif run.method == "replicated":
        # Replicas recompute a chunk only after the source has committed it, so they end
        # about one chunk after the source: many small chunks keep that tail short.
        cap = max(options.initial_chunk_rows, plan.rows_estimate // _REPLICATED_MIN_CHUNKS)
        sizer = ChunkSizer(options.chunk_time, min(initial, cap), max_rows=cap)
    else:
        sizer = ChunkSizer(options.chunk_time, initial)
    run.current_sizer = sizer
    q = plan.source[min(plan.source)]
    if plan.key is None or not plan.ranges_safe:
        yield KeyRange(resume_after, None), lambda rows, s: None, None
        return
    if plan.int_key:
        row = run.source.run(q.key_range())[0]
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
        found = run.source.run(q.next_boundary(lower, max(0, sizer.rows - 1)))
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


def replicate_chunk(run: Session, plan: TablePlan, rng: KeyRange, chunk: int
                    ) -> tuple[int, float]:
    """Write `rng`'s checksum into the replicate table for the replicas to recompute:
    (source rows, seconds)."""
    q = plan.source[False]
    lower = json.dumps(encode_bound(rng.lower)) if rng.lower is not None else None
    upper = json.dumps(encode_bound(rng.upper)) if rng.upper is not None else None
    t0 = time.monotonic()
    into = run.replicate
    run.source.run(q.replicate_chunk(rng, chunk, lower, upper, into.parts()["replicate"]))
    seconds = time.monotonic() - t0
    row = into.run(run.source, "checksum_source_values", (plan.schema, plan.table, chunk))[0]
    cnt, crc = int(row["this_cnt"]), _text(row["this_crc"])
    into.run(run.source, "checksum_update_source",
             (round(seconds, 6), cnt, crc, plan.schema, plan.table, chunk))
    return cnt, seconds
