"""Which candidate rows the re-checks report (checks.drift.recheck.confirm), on scripted
synchronised reads: the rule only, one read after another, no server.

A synchronised read guarantees the replica is not behind the source's read; it may be
ahead (it goes on applying). So a row differs for certain only when the source held still
around a replica read: two reads in a row with the same values on both sides, or, after
the last re-read, source values that never changed while the replica's differed each time
(rows rewritten on the replica alone). A row whose source values changed in between is
being written, and its differences may all have been writes in flight: it is returned
apart, not reported (issue 16: no false positives under a writer; a 4,000 commits/s
writer on 30 rows once had a row differ in all four reads, moving every time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from dbgauge.checks.drift.chunks import Bound
from dbgauge.checks.drift.model import ChecksumOptions
from dbgauge.checks.drift.plan import TablePlan
from dbgauge.checks.drift.recheck import confirm
from dbgauge.toolkit.errors import QueryError

Reads = dict[int, tuple[str | None, str | None]]  # id -> (source hash, replica hash)
LOCKED: Reads = {}  # a read whose source statement waited 2 s for a row lock and gave up


class Query:
    key = ("id",)
    portable = False

    def __init__(self, side: str) -> None:
        self.side = side

    def hashes(self, keys: Sequence[Bound]) -> tuple[str, list[Bound]]:
        return self.side, list(keys)

    def confirm_hashes(self, keys: Sequence[Bound]) -> tuple[str, list[Bound]]:
        return f"{self.side} (confirming)", list(keys)


class FakeContext:
    """The parts of a run's Context confirm uses: each synced call answers the next
    read."""

    def __init__(self, reads: list[Reads], retries: int = 3) -> None:
        self.reads = reads
        self.options = ChecksumOptions(retries=retries, retry_delay=0.0)
        self.synced_calls = 0
        self.pauses = 0
        self.statements: list[tuple[str, str]] = []

    def check_run_time(self) -> None:
        pass

    def pause(self, seconds: float) -> None:
        self.pauses += 1

    def synced(self, replica: Any, src: tuple[str, list[Bound]], rep: tuple[str, list[Bound]]
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        read = self.reads[self.synced_calls]
        self.synced_calls += 1
        self.statements.append((src[0], rep[0]))
        if read is LOCKED:
            raise QueryError("Lock wait timeout exceeded", errno=1205)
        wanted = {int(key[0]) for key in src[1]}

        def rows(i: int) -> list[dict[str, Any]]:
            return [{"id": k, "dbgauge_row_hash": v[i]} for k, v in read.items()
                    if k in wanted and v[i] is not None]
        return rows(0), rows(1)


class Replica:
    name = "rep"


PLAN = TablePlan("s.t", "s", "t", None, {False: Query("src")},  # type: ignore[dict-item]
                 {"rep": Query("rep")}, True, 0, True)  # type: ignore[dict-item]


def run_confirm(first: Reads, rereads: list[Reads], retries: int = 3
                ) -> tuple[list[tuple[str, Bound]], list[tuple[str, Bound]], FakeContext]:
    """Candidates found by the read `first` (what locate saw), then the re-reads."""
    ctx = FakeContext(rereads, retries)
    seen = {(k,): v for k, v in first.items()}
    candidates = [("changed" if s and r else "missing" if s else "extra", (k,))
                  for k, (s, r) in first.items()]
    kept, written = confirm(ctx, PLAN, Replica(), candidates, seen)  # type: ignore[arg-type]
    return kept, written, ctx


def test_a_row_that_holds_still_on_both_sides_is_reported_at_once() -> None:
    kept, written, ctx = run_confirm({1: ("a", "x")}, [{1: ("a", "x")}])
    assert (kept, written, ctx.synced_calls) == ([("changed", (1,))], [], 1)
    # the source confirms with its confirming read (a locking read on MariaDB); the
    # replica, which a lock would hold up in applying, with the plain one
    assert ctx.statements == [("src (confirming)", "rep")]


def test_a_row_that_matches_in_a_re_read_was_in_flight() -> None:
    kept, written, _ = run_confirm({1: ("a", "x")}, [{1: ("b", "b")}])
    assert (kept, written) == ([], [])


def test_a_row_rewritten_on_the_replica_alone_differs() -> None:
    # the source holds still; the replica's values move and never match: drift
    reads: list[Reads] = [{1: ("a", f"x{i}")} for i in range(3)]
    kept, written, ctx = run_confirm({1: ("a", "x")}, reads)
    assert (kept, written, ctx.synced_calls, ctx.pauses) == ([("changed", (1,))], [], 3, 2)


def test_a_row_written_on_the_source_throughout_is_not_reported() -> None:
    # both sides move and differ in every read: each may be a write in flight
    reads: list[Reads] = [{1: (f"a{i}", f"x{i}")} for i in range(3)]
    kept, written, _ = run_confirm({1: ("a", "x")}, reads)
    assert (kept, written) == ([], [("changed", (1,))])


def test_one_source_change_is_enough_to_leave_a_row_unconfirmed() -> None:
    reads: list[Reads] = [{1: ("a", "x1")}, {1: ("b", "x2")}, {1: ("b", "x3")}]
    kept, written, _ = run_confirm({1: ("a", "x")}, reads)
    assert (kept, written) == ([], [("changed", (1,))])


def test_missing_and_extra_rows_follow_the_same_rule() -> None:
    # 2: missing on the replica, source still (drift); 3: extra on the replica, the source
    # inserting and deleting it meanwhile (in flight); 4: extra, the source never had it
    first: Reads = {2: ("a", None), 3: (None, "y"), 4: (None, "z")}
    reads: list[Reads] = [{2: ("a", None), 3: ("n", "y2"), 4: (None, "z1")},
                          {2: ("a", None), 3: (None, "y3"), 4: (None, "z2")},
                          {2: ("a", None), 3: ("m", "y4"), 4: (None, "z3")}]
    kept, written, _ = run_confirm(first, reads)
    assert kept == [("missing", (2,)), ("extra", (4,))]
    assert written == [("changed", (3,))]


def test_a_row_a_writer_holds_locked_is_being_written() -> None:
    # the source's confirming read gave up waiting for the row's lock: that read tells
    # nothing, and a row whose writer held it is not reported on the reads around it
    reads: list[Reads] = [LOCKED, {1: ("a", "x1")}, {1: ("a", "x2")}]
    kept, written, ctx = run_confirm({1: ("a", "x")}, reads)
    assert (kept, written, ctx.synced_calls) == ([], [("changed", (1,))], 3)


def test_other_errors_end_the_run() -> None:
    class Failing(FakeContext):
        def synced(self, *args: Any) -> Any:
            raise QueryError("Access denied", errno=1142)
    with pytest.raises(QueryError, match="Access denied"):
        confirm(Failing([]), PLAN, Replica(), [("changed", (1,))],  # type: ignore[arg-type]
                {(1,): ("a", "x")})
