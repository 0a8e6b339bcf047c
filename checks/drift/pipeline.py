"""The direct walk's chunks with the sides pipelined: each side hashes its next chunk as
soon as it has finished the last one, instead of every chunk waiting for the slowest side.

A lock-step walk loses, on every chunk, what its fastest side waits for its slowest: about
0.25 s of a 4.5 s walk of 10M MariaDB rows. Here the source runs at most one chunk ahead
of the slowest replica, so every range is still read on all sides within about a chunk's
time (the re-checks settle what a write changed in between, as they do in lock-step).
Chunks are compared, counted and saved for --resume in key order, once every side has
hashed them.

Throttling keeps its meaning: right after a chunk, each side answers its own part of
`Context.throttle` on its own connection (the source its load, a replica its lag) when
THROTTLE_EVERY has passed for it. When one says wait, no new chunk starts; once every side
is idle, `Context.throttle` pauses as it does between lock-step chunks.

The calls run on `Runner`: the run's threads, one per connection (`PoolRunner`); the
unit tests pass one that decides on a single thread which call finishes next.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

from dbgauge.checks.drift.chunks import KeyRange, Span, bucket_width
from dbgauge.checks.drift.context import THROTTLE_EVERY, Context
from dbgauge.checks.drift.plan import TablePlan
from dbgauge.checks.drift.recheck import BucketHashes, bucket_hashes, differing_ranges
from dbgauge.checks.drift.sides import Side
from dbgauge.checks.drift.sql import TableQueries
from dbgauge.toolkit.db.values import text as _text
from dbgauge.toolkit.targets import FanOut

AHEAD = 1  # chunks the source may hash beyond the slowest replica
Observe = Callable[[int, float], None]  # (source rows, seconds) of a chunk: sizes the next
Ranges = Iterator[tuple[KeyRange, Observe, Span | None]]


@dataclass(frozen=True)
class Hashed:
    """One chunk hashed on every side: source rows and seconds, the replicas it differs
    on, and for each (over an integer key) the key buckets that differ: finding the rows
    reads those, not the chunk again."""

    rng: KeyRange
    rows: int
    seconds: float
    differing: list[str]
    pieces: Mapping[str, tuple[KeyRange, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Done:
    """What one side's call returns: a hash per query (the source may hash in two modes),
    the first query's seconds, and its pacing answer (None: not asked this time)."""

    hashes: list[BucketHashes]
    seconds: float
    waits: list[str] | None
    pos: str | None = None


class Runner(Protocol):
    """Where the sides' calls run, one at a time per connection."""

    def submit(self, call: Callable[[], _Done]) -> Future[_Done]:
        """Start `call` on its own connection's thread."""
        ...

    def wait_any(self, futures: Sequence[Future[_Done]]) -> None:
        """Return once at least one of `futures` is done."""
        ...


@dataclass(frozen=True)
class PoolRunner:
    """The run's pool: a thread per connection."""

    pool: FanOut[Any, Any]

    def submit(self, call: Callable[[], _Done]) -> Future[_Done]:
        return self.pool.submit(call)

    def wait_any(self, futures: Sequence[Future[_Done]]) -> None:
        wait(futures, return_when=FIRST_COMPLETED)


@dataclass
class _Chunk:
    rng: KeyRange
    observe: Observe
    span: Span | None
    width: int | None
    done: dict[int, _Done] = field(default_factory=dict)  # by lane


@dataclass
class _Lane:
    """One connection's queue position: the next chunk it hashes, and its call in flight."""

    side: Side
    queries: list[TableQueries]
    next: int = 0
    busy: Future[_Done] | None = None
    paced: float = 0.0  # when it last answered its part of throttling


def hash_chunk(side: Side, queries: Sequence[TableQueries], rng: KeyRange,
               width: int | None, span: Span | None) -> tuple[list[BucketHashes], float]:
    """`rng` hashed by every query of `side`, one after another on its connection: by key
    bucket over an integer key (`width` given), else as one bucket 0; and the first
    query's seconds."""
    out: list[BucketHashes] = []
    seconds: list[float] = []
    for q in queries:
        t0 = time.monotonic()
        if width is None or span is None:
            row = side.run(q.chunk(rng))[0]
            out.append({0: (int(row["cnt"]), _text(row["crc"]))})
        else:
            out.append(bucket_hashes(side.run(q.chunk_buckets(rng, width, span))))
        seconds.append(time.monotonic() - t0)
    return out, seconds[0]


def walk_direct(ctx: Context, plan: TablePlan, ranges: Ranges,
                runner: Runner | None = None) -> Iterator[Hashed]:
    """Every range of `ranges` hashed on every side, pipelined, in key order. Every call
    has ended when this returns or raises, so no connection is left busy."""
    pipe = _Pipeline(ctx, plan, ranges, runner or PoolRunner(ctx.pool))
    try:
        while True:
            ctx.check_run_time()
            pipe.feed()
            while pipe.window and len(pipe.window[0].done) == len(pipe.lanes):
                yield _compare(plan, pipe.modes, pipe.window.popleft(), pipe.lanes)
            if not pipe.collect():
                return
    finally:
        pipe.drain()


class _Pipeline:
    """The lanes (one per connection), the chunks in flight, and why to pause.

    Mutable on purpose: it is the walk's scheduler, advanced each time a side's call
    completes on its connection's thread; it lives as long as one table's walk."""

    def __init__(self, ctx: Context, plan: TablePlan, ranges: Ranges, runner: Runner
                 ) -> None:
        self.ctx = ctx
        self.ranges = ranges
        self.runner = runner
        self.modes = sorted(plan.source)
        self.lanes = [_Lane(ctx.source, [plan.source[m] for m in self.modes])]
        self.lanes += [_Lane(rep, [plan.replicas[rep.name]]) for rep in ctx.replicas]
        self.window: deque[_Chunk] = deque()  # not yet hashed by every side, in key order
        self.created = 0
        self.exhausted = False
        self.waits: list[str] = []  # why a side asked to pause: no new chunk starts
        self.pos: str | None = None  # the source's position at its last pacing answer

    def _chunk(self, lane: _Lane) -> _Chunk:
        return self.window[lane.next - (self.created - len(self.window))]

    def feed(self) -> None:
        """Start the next chunk on every idle side that may take one."""
        if self.waits:
            return
        source, replicas = self.lanes[0], self.lanes[1:]
        slowest = min((lane.next for lane in replicas), default=self.created)
        if source.busy is None and not self.exhausted and self.created <= slowest + AHEAD:
            item = next(self.ranges, None)  # the source is idle: a boundary query may run
            if item is None:
                self.exhausted = True
            else:
                rng, observe, span = item
                width = bucket_width(rng, span) if span is not None else None
                self.window.append(_Chunk(rng, observe, span, width))
                self.created += 1
        for lane in self.lanes:
            if lane.busy is None and lane.next < self.created:
                lane.busy = self.runner.submit(_call(self.ctx, lane, self._chunk(lane),
                                                     self.pos, lane is source))

    def drain(self) -> None:
        """Wait until no side has a call running (after the last chunk, a failure, or when
        the walk is closed early)."""
        while busy := [lane.busy for lane in self.lanes
                       if lane.busy is not None and not lane.busy.done()]:
            self.runner.wait_any(busy)

    def collect(self) -> bool:
        """Wait for a side to finish its chunk and record it (pausing first when a side
        asked to, once none is busy); False when the walk is over."""
        busy = [lane.busy for lane in self.lanes if lane.busy is not None]
        if not busy:
            if self.waits:
                self.ctx.throttle(force=True)  # pauses until the replicas and source allow
                self.waits = []
                for lane in self.lanes:
                    lane.paced = time.monotonic()
                return True
            return not (self.exhausted and not self.window)
        self.runner.wait_any(busy)
        for i, lane in enumerate(self.lanes):
            if lane.busy is None or not lane.busy.done():
                continue
            done = lane.busy.result()  # a side's error ends the walk (after draining)
            lane.busy = None
            chunk = self._chunk(lane)
            chunk.done[i] = done
            lane.next += 1
            if done.waits is not None:
                lane.paced = time.monotonic()
                self.waits += done.waits
            if i == 0:
                self.pos = done.pos or self.pos
                chunk.observe(sum(cnt for cnt, _ in done.hashes[0].values()), done.seconds)
        return True


def _call(ctx: Context, lane: _Lane, chunk: _Chunk, pos: str | None, source: bool
          ) -> Callable[[], _Done]:
    """`chunk` hashed on `lane`'s connection, with its part of throttling when it is due."""
    pace = time.monotonic() - lane.paced >= THROTTLE_EVERY

    def call() -> _Done:
        hashes, seconds = hash_chunk(lane.side, lane.queries, chunk.rng, chunk.width,
                                     chunk.span)
        if not pace:
            return _Done(hashes, seconds, None)
        if source:
            busy, now_pos = ctx.source_pace()
            return _Done(hashes, seconds, busy, now_pos)
        return _Done(hashes, seconds, ctx.replica_pace(ctx.links[lane.side.name], pos))

    return call


def _compare(plan: TablePlan, modes: Sequence[bool], chunk: _Chunk, lanes: list[_Lane]
             ) -> Hashed:
    """A chunk every side has hashed: which replicas differ, and in which key buckets."""
    source = chunk.done[0]
    by_mode = dict(zip(modes, source.hashes, strict=True))
    differing = []
    pieces: dict[str, tuple[KeyRange, ...]] = {}
    for i, lane in enumerate(lanes[1:], start=1):
        name = lane.side.name
        theirs = chunk.done[i].hashes[0]
        mine = by_mode[plan.replicas[name].portable]
        if mine == theirs:
            continue
        differing.append(name)
        if chunk.width is not None:
            pieces[name] = tuple(differing_ranges(mine, theirs, chunk.width, chunk.rng))
    rows = sum(cnt for cnt, _ in source.hashes[0].values())
    return Hashed(chunk.rng, rows, source.seconds, differing, pieces)
