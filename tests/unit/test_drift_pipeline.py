"""The direct walk's pipeline (checks.drift.pipeline): its scheduling only, with sides whose
statements wait on the test, so the order of events is decided here and not by timing.

What reaches a server is the same statement per chunk and side as in a lock-step walk
(the integration tests run it against MariaDB and PostgreSQL); this proves the pipeline's
own promises: no side more than one chunk ahead of the slowest, chunks compared in key
order, a differing replica named, and no connection left busy when a side fails.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from checks.drift.chunks import KeyRange
from checks.drift.pipeline import AHEAD, walk_direct
from checks.drift.plan import TablePlan
from toolkit.targets import FanOut

WAIT = 10.0  # a hung pipeline fails the test instead of hanging the suite


class Query:
    """The statements a TableQueries would build: here, just the range."""

    portable = False

    def chunk(self, rng: KeyRange) -> tuple[str, KeyRange]:
        return "chunk", rng


class GatedSide:
    """A side whose every chunk statement waits until the test opens its gate."""

    def __init__(self, name: str, log: list[tuple[str, int]], crc: dict[int, str]) -> None:
        self.name = name
        self.log = log
        self.crc = crc  # chunk number -> crc this side reports (default "a")
        self.gates: dict[int, threading.Event] = {}
        self.started: dict[int, threading.Event] = {}
        self.busy = 0  # statements running on this "connection" at once
        self.fail_at: int | None = None
        self.lock = threading.Lock()

    def gate(self, chunk: int) -> threading.Event:
        with self.lock:
            return self.gates.setdefault(chunk, threading.Event())

    def began(self, chunk: int) -> threading.Event:
        with self.lock:
            return self.started.setdefault(chunk, threading.Event())

    def run(self, stmt: tuple[str, KeyRange]) -> list[dict[str, Any]]:
        chunk = int(stmt[1].upper[0]) if stmt[1].upper else 99
        with self.lock:
            self.busy += 1
            assert self.busy == 1, f"{self.name}: two statements at once on one connection"
            self.log.append((self.name, chunk))
        self.began(chunk).set()
        try:
            assert self.gate(chunk).wait(WAIT), f"{self.name}: chunk {chunk} never released"
            if self.fail_at == chunk:
                raise RuntimeError(f"{self.name} failed on chunk {chunk}")
            return [{"cnt": 10, "crc": self.crc.get(chunk, "a")}]
        finally:
            with self.lock:
                self.busy -= 1


class FakeRun:
    """The parts of a Session the pipeline uses."""

    def __init__(self, source: GatedSide, replicas: list[GatedSide],
                 pool: FanOut[Any, Any]) -> None:
        self.source = source
        self.replicas = replicas
        self.links = {r.name: None for r in replicas}
        self.pool = pool
        self.pieces: dict[Any, Any] = {}
        self.observed: list[int] = []

    def check_run_time(self) -> None:
        pass

    def throttle(self, force: bool = False) -> None:
        pass

    def source_pace(self) -> tuple[list[str], None]:
        return [], None

    def replica_pace(self, link: object, pos: object) -> list[str]:
        return []


def ranges(run: FakeRun, n: int) -> Iterator[tuple[KeyRange, Any, None]]:
    """Chunk i is the range (i-1, i]; the last one is open-ended (reported as 99)."""
    for i in range(1, n + 1):
        upper = None if i == n else (i,)
        yield (KeyRange(None if i == 1 else (i - 1,), upper),
               lambda rows, s, i=i: run.observed.append(i), None)


def setup(n_chunks: int, crc: dict[int, str] | None = None
          ) -> tuple[FakeRun, GatedSide, GatedSide, list[tuple[str, int]], Any]:
    log: list[tuple[str, int]] = []
    source = GatedSide("src", log, {})
    replica = GatedSide("rep", log, crc or {})
    pool: FanOut[Any, Any] = FanOut(2, "test")
    run = FakeRun(source, [replica], pool)
    plan = TablePlan("s.t", "s", "t", None, {False: Query()},  # type: ignore[dict-item]
                     {"rep": Query()}, False, 0, True)  # type: ignore[dict-item]
    return run, source, replica, log, walk_direct(run, plan, ranges(run, n_chunks))  # type: ignore[arg-type]


def consume(walk: Any, out: list[Any]) -> threading.Thread:
    def go() -> None:
        try:
            out.extend(walk)
        except Exception as exc:
            out.append(exc)
    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread


def test_the_source_runs_one_chunk_ahead_of_a_slow_replica_and_no_further() -> None:
    run, source, replica, log, walk = setup(4, crc={2: "b"})
    out: list[Any] = []
    thread = consume(walk, out)
    assert AHEAD == 1
    source.gate(1).set()  # the source finishes chunk 1 while the replica is still on it
    assert source.began(2).wait(WAIT)  # ... and goes on to chunk 2 at once
    source.gate(2).set()
    assert replica.began(1).wait(WAIT)
    # chunk 3 would put the source two ahead of the replica: it must not start
    assert not source.began(3).wait(0.3)
    assert log == [("src", 1), ("rep", 1), ("src", 2)] or \
        log == [("rep", 1), ("src", 1), ("src", 2)]
    replica.gate(1).set()  # the replica catches up one chunk: the source may go on
    assert source.began(3).wait(WAIT) and replica.began(2).wait(WAIT)
    for chunk in (3, 99):
        source.gate(chunk).set()
    for chunk in (2, 3, 99):
        replica.gate(chunk).set()
    thread.join(WAIT)
    assert not thread.is_alive()
    assert [h.rng.upper for h in out] == [(1,), (2,), (3,), None]  # key order
    assert [h.differing for h in out] == [[], ["rep"], [], []]
    assert [h.rows for h in out] == [10] * 4
    assert run.observed == [1, 2, 3, 4]  # every source chunk sized the next one
    run.pool.close()


def test_a_failing_side_ends_the_walk_only_when_no_statement_is_running() -> None:
    run, source, replica, _, walk = setup(3)
    replica.fail_at = 1
    out: list[Any] = []
    thread = consume(walk, out)
    replica.gate(1).set()  # the replica fails at once; the source is still on chunk 1
    assert source.began(1).wait(WAIT)
    thread.join(0.3)
    assert thread.is_alive()  # it waits for the source's statement to end
    source.gate(1).set()
    thread.join(WAIT)
    assert not thread.is_alive()
    assert len(out) == 1 and isinstance(out[0], RuntimeError)
    assert source.busy == 0 and replica.busy == 0
    assert not source.began(2).is_set()  # nothing new started after the failure
    run.pool.close()


def test_closing_the_walk_early_waits_for_running_statements() -> None:
    run, source, replica, _, walk = setup(5)
    for side in (source, replica):
        side.gate(1).set()
    first = next(walk)  # chunk 1 compared; chunk 2 is running on both sides
    assert first.rng.upper == (1,)
    assert source.began(2).wait(WAIT) and replica.began(2).wait(WAIT)
    closer = threading.Thread(target=walk.close, daemon=True)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive()
    for side in (source, replica):
        side.gate(2).set()
    closer.join(WAIT)
    assert not closer.is_alive() and source.busy == 0 and replica.busy == 0
    run.pool.close()


@pytest.mark.parametrize("n", [1, 2, 7])
def test_every_chunk_comes_back_once(n: int) -> None:
    run, source, replica, _, walk = setup(n)
    for side in (source, replica):
        for chunk in [*range(1, n), 99]:
            side.gate(chunk).set()
    assert len(list(walk)) == n
    run.pool.close()
