"""The direct walk's pipeline (checks.drift.pipeline): its scheduling only, on one thread.

The walk runs its calls on a `Script`: a call runs when the pipeline submits it (its
statement "starts"), and finishes only when the script says which side finishes next, so
the order of events is decided here and not by timing. What reaches a server is the same
statement per chunk and side as in a lock-step walk (the integration tests run it against
MariaDB and PostgreSQL); this proves the pipeline's own promises: no side more than one
chunk ahead of the slowest, one statement at a time per connection, chunks compared in key
order, a differing replica named, a pause only once no statement runs, and no connection
left busy when a side fails or the walk is closed early.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any

import pytest

from dbgauge.checks.drift.chunks import KeyRange
from dbgauge.checks.drift.pipeline import AHEAD, walk_direct
from dbgauge.checks.drift.plan import TablePlan

Event = tuple[str, int]  # (side, chunk): chunk i is the range (i-1, i]; 99 the open last one


class Query:
    """The statements a TableQueries would build: here, just the range."""

    portable = False

    def chunk(self, rng: KeyRange) -> tuple[str, KeyRange]:
        return "chunk", rng


class FakeSide:
    """A connection that logs each chunk statement it starts and answers at once."""

    def __init__(self, name: str, started: list[Event], crc: dict[int, str]) -> None:
        self.name = name
        self.started = started
        self.crc = crc  # chunk number -> crc this side reports (default "a")
        self.fail_at: int | None = None

    def run(self, stmt: tuple[str, KeyRange]) -> list[dict[str, Any]]:
        chunk = int(stmt[1].upper[0]) if stmt[1].upper else 99
        self.started.append((self.name, chunk))
        if self.fail_at == chunk:
            raise RuntimeError(f"{self.name} failed on chunk {chunk}")
        return [{"cnt": 10, "crc": self.crc.get(chunk, "a")}]


class Script:
    """The pipeline's Runner on one thread: each call runs when submitted and its future
    completes when `wait_any` is next called, for the side the script names next (the
    oldest running call once the script is used up). Two calls at once on one side fail
    the test."""

    def __init__(self, started: list[Event], finishes: Sequence[str] = ()) -> None:
        self.started = started
        self.finishes = deque(finishes)
        self.running: list[tuple[Event, Future[Any], tuple[Any, Exception | None]]] = []
        self.finished: list[Event] = []
        self.at_wait: list[list[Event]] = []  # what had started, at each wait

    def submit(self, call: Callable[[], Any]) -> Future[Any]:
        before = len(self.started)
        try:
            outcome: tuple[Any, Exception | None] = (call(), None)
        except Exception as exc:
            outcome = (None, exc)
        event = self.started[before]
        assert not [e for e, _, _ in self.running if e[0] == event[0]], \
            f"{event[0]}: two statements at once on one connection"
        future: Future[Any] = Future()
        self.running.append((event, future, outcome))
        return future

    def wait_any(self, futures: Sequence[Future[Any]]) -> None:
        self.at_wait.append(list(self.started))
        side = self.finishes.popleft() if self.finishes else None
        for entry in self.running:
            event, future, (value, error) = entry
            if future in futures and side in (None, event[0]):
                self.running.remove(entry)
                self.finished.append(event)
                if error is None:
                    future.set_result(value)
                else:
                    future.set_exception(error)
                return
        raise AssertionError(f"the script finishes {side}, which runs nothing the walk "
                             f"waits for: running {[e for e, _, _ in self.running]}")


class FakeContext:
    """The parts of a run's Context the pipeline uses."""

    def __init__(self, source: FakeSide, replicas: list[FakeSide]) -> None:
        self.source = source
        self.replicas = replicas
        self.links = {r.name: None for r in replicas}
        self.observed: list[int] = []
        self.lag: list[list[str]] = []  # the replica's pacing answers, in turn (then none)
        self.paused_with: list[tuple[list[Event], int]] = []  # at each pause: what was
        # running, and how many statements had started
        self.script: Script | None = None

    def check_run_time(self) -> None:
        pass

    def throttle(self, force: bool = False) -> None:
        assert force and self.script is not None
        self.paused_with.append(([e for e, _, _ in self.script.running],
                                 len(self.script.started)))

    def source_pace(self) -> tuple[list[str], None]:
        return [], None

    def replica_pace(self, link: object, pos: object) -> list[str]:
        return self.lag.pop(0) if self.lag else []


def ranges(ctx: FakeContext, n: int) -> Iterator[tuple[KeyRange, Any, None]]:
    """Chunk i is the range (i-1, i]; the last one is open-ended (reported as 99)."""
    for i in range(1, n + 1):
        upper = None if i == n else (i,)
        yield (KeyRange(None if i == 1 else (i - 1,), upper),
               lambda rows, s, i=i: ctx.observed.append(i), None)


def setup(n_chunks: int, finishes: Sequence[str] = (), crc: dict[int, str] | None = None
          ) -> tuple[FakeContext, Script, FakeSide, FakeSide, Iterator[Any]]:
    started: list[Event] = []
    source = FakeSide("src", started, {})
    replica = FakeSide("rep", started, crc or {})
    ctx = FakeContext(source, [replica])
    script = ctx.script = Script(started, finishes)
    plan = TablePlan("s.t", "s", "t", None, {False: Query()},  # type: ignore[dict-item]
                     {"rep": Query()}, False, 0, True)  # type: ignore[dict-item]
    walk = walk_direct(ctx, plan, ranges(ctx, n_chunks), script)  # type: ignore[arg-type]
    return ctx, script, source, replica, walk


def test_the_source_runs_one_chunk_ahead_of_a_slow_replica_and_no_further() -> None:
    assert AHEAD == 1
    # the source finishes chunks 1 and 2 while the replica is still on chunk 1
    ctx, script, _, _, walk = setup(4, finishes=["src", "src", "rep"], crc={2: "b"})
    out = list(walk)
    assert script.at_wait[0] == [("src", 1), ("rep", 1)]
    assert script.at_wait[1] == [("src", 1), ("rep", 1), ("src", 2)]  # went on at once
    # chunk 3 would put the source two ahead of the replica: it did not start ...
    assert script.at_wait[2] == [("src", 1), ("rep", 1), ("src", 2)]
    # ... until the replica finished chunk 1
    assert script.started[3:5] == [("src", 3), ("rep", 2)]
    assert sorted(script.started) == sorted(script.finished) == sorted(
        (side, chunk) for side in ("src", "rep") for chunk in (1, 2, 3, 99))
    assert [h.rng.upper for h in out] == [(1,), (2,), (3,), None]  # key order
    assert [h.differing for h in out] == [[], ["rep"], [], []]
    assert [h.rows for h in out] == [10] * 4
    assert ctx.observed == [1, 2, 3, 4]  # every source chunk sized the next one


def test_a_slow_source_lets_the_replica_take_every_chunk_it_has_started() -> None:
    # the replica is fast: it may finish each chunk the source has begun, never more
    _, script, _, _, walk = setup(3, finishes=["rep", "src", "rep", "src"])
    out = list(walk)
    for seen in script.at_wait:
        src = [c for s, c in seen if s == "src"]
        rep = [c for s, c in seen if s == "rep"]
        assert rep == src[:len(rep)]  # never a chunk the source has not begun
    assert [h.rng.upper for h in out] == [(1,), (2,), None]


def test_a_failing_side_ends_the_walk_only_when_no_statement_is_running() -> None:
    _, script, _, replica, walk = setup(3, finishes=["rep"])
    replica.fail_at = 1
    with pytest.raises(RuntimeError, match="rep failed on chunk 1"):
        list(walk)
    assert script.running == []  # the source's chunk 1 was waited for
    assert script.finished == [("rep", 1), ("src", 1)]
    assert ("src", 2) not in script.started  # nothing new started after the failure


def test_closing_the_walk_early_waits_for_running_statements() -> None:
    _, script, _, _, walk = setup(5)
    first = next(walk)  # chunk 1 compared; chunk 2 is running on both sides
    assert first.rng.upper == (1,)
    assert [e for e, _, _ in script.running] == [("src", 2), ("rep", 2)]
    walk.close()  # type: ignore[attr-defined]
    assert script.running == []
    assert ("src", 3) not in script.started


def test_a_pause_waits_until_no_side_runs_a_statement_and_starts_nothing_before() -> None:
    ctx, script, _, _, walk = setup(4, finishes=["src", "rep"])
    ctx.lag = [["rep is 9 s behind"]]  # the replica's first pacing answer: wait
    out = list(walk)
    # the replica asked to wait when it finished chunk 1, with the source on chunk 2: the
    # walk let chunk 2 end, started nothing, and paused once nothing ran
    assert script.started[:3] == [("src", 1), ("rep", 1), ("src", 2)]
    assert script.finished[:3] == [("src", 1), ("rep", 1), ("src", 2)]
    assert ctx.paused_with == [([], 3)]
    assert script.started[3] == ("src", 3)  # after the pause, on it went
    assert [h.rng.upper for h in out] == [(1,), (2,), (3,), None]


@pytest.mark.parametrize("n", [1, 2, 7])
def test_every_chunk_comes_back_once(n: int) -> None:
    _, script, _, _, walk = setup(n)
    assert [h.rng.upper for h in walk] == [*((i,) for i in range(1, n)), None]
    assert script.running == []
