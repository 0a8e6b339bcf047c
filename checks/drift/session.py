"""One run's servers and pace: the connections, the replica links, the method, the
--resume state, and the throttling and synchronisation every comparison goes through.

The planning, the chunk walk, the re-checks and the whole-table pre-check are functions
that take a `Session`; it holds what they share and what changes as the run goes on (the
chunk sizer, the pre-check's measured speed, the time of the last throttle check).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import replace
from typing import Any

from dbgauge.checks.drift.chunks import ChunkSizer, KeyRange
from dbgauge.checks.drift.links import Link, link
from dbgauge.checks.drift.load import LoadLimits
from dbgauge.checks.drift.model import ChecksumOptions, DriftError, Interrupted, Reporter
from dbgauge.checks.drift.replicate import DEFAULT, ReplicateTable
from dbgauge.checks.drift.sides import Side
from dbgauge.checks.drift.sql import Statement
from dbgauge.checks.drift.state import RunState, endpoint
from dbgauge.toolkit.db import Row, connect
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.targets import FanOut, Target, unique_names

_QUERY_TIMEOUT = 120.0  # chunks aim at chunk_time; this only stops a runaway statement
THROTTLE_EVERY = 0.5  # seconds between checks of the replicas' lag and the source's load


class Session:
    """One checksum run: connections, the replica links, the state file, the pacing."""

    def __init__(self, source: Target, replicas: Sequence[Target],
                 options: ChecksumOptions, reporter: Reporter, stack: ExitStack) -> None:
        self.options = options
        self.reporter = reporter
        self.started = time.monotonic()
        names = unique_names([source, *replicas])
        self.source = self._open(source, names[0], "source", stack)
        self.replicas = [self._open(t, n, "replica", stack)
                         for t, n in zip(replicas, names[1:], strict=True)]
        self.links = {r.name: link(self.source, r) for r in self.replicas}
        for one in self.links.values():
            if one.detail:
                reporter.note(one.detail)
        self.notes: list[str] = [one.detail for one in self.links.values() if one.detail]
        self.method = self._method()
        self.load = LoadLimits.resolve(self.source, options)  # --max-load names, checked now
        self.replicate = ReplicateTable(*DEFAULT)  # replicated method: set by run_checksum
        self.pool: FanOut[Callable[[], Any], Any] = stack.enter_context(
            FanOut(1 + len(self.replicas), "checksum"))
        self.last_throttle = 0.0
        # (replica, chunk) -> the key buckets of the chunk that differed (checks.drift.walk)
        self.pieces: dict[tuple[str, KeyRange], list[KeyRange]] = {}
        self.whole_table_rate: float | None = options.whole_table_rate
        self.current_sizer = ChunkSizer(options.chunk_time, options.initial_chunk_rows)
        self.state = RunState.open(options, self.method, self.source.name,
                                   [r.name for r in self.replicas],
                                   [endpoint(t) for t in (source, *replicas)])
        if options.resume and not self.state.resumed:
            reporter.note("nothing to resume (no unfinished run with these arguments): "
                          "starting from the beginning")

    @staticmethod
    def _open(target: Target, name: str, role: str, stack: ExitStack) -> Side:
        target = replace(target, query_timeout=max(target.query_timeout, _QUERY_TIMEOUT))
        try:
            conn = connect(target)
        except DbgaugeError as exc:
            raise type(exc)(f"{role} {name}: {exc}") from None
        stack.callback(conn.close)
        side = Side(name, conn, role)
        side.q("checksum_session")
        return side

    def _method(self) -> str:
        method = self.options.method
        all_mysql = self.source.mysql and all(r.mysql for r in self.replicas)
        if method is None:
            follows = all(one.kind == "mysql" for one in self.links.values())
            method = "replicated" if all_mysql and follows else "direct"
        if method == "replicated":
            if not all_mysql:
                raise DriftError("--method replicated works within one MySQL/MariaDB "
                                 "replication topology only: use --method direct")
            for name, one in self.links.items():
                if one.kind != "mysql":
                    raise DriftError(f"--method replicated needs every replica to replicate "
                                     f"from the source, and {name} does not: use --method "
                                     "direct")
        return method

    # -- throttling and synchronisation

    def throttle(self, force: bool = False) -> None:
        """Pause while a replica lags more than max_lag or the source is busy."""
        self.check_run_time()
        now = time.monotonic()
        if not force and now - self.last_throttle < THROTTLE_EVERY:
            return
        self.last_throttle = now
        paused_at: float | None = None
        while True:
            busy, pos = self.source_pace()
            reasons = [why for one in self.links.values() for why in self.replica_pace(one, pos)]
            reasons += busy
            if not reasons:
                if paused_at is not None:
                    self.reporter.note("resuming")
                return
            if paused_at is None:
                paused_at = time.monotonic()
                self.reporter.note("pausing: " + "; ".join(reasons))
            elif time.monotonic() - paused_at > self.options.max_pause:
                raise DriftError("gave up after pausing " f"{self.options.max_pause:.0f} s: "
                                 + "; ".join(reasons))
            self.check_run_time()
            time.sleep(0.5)

    def source_pace(self) -> tuple[list[str], str | None]:
        """The source's part of throttling, on its connection: why it is too busy (empty:
        it is not), and its position when a logical subscriber is to apply it."""
        logical = any(one.kind == "pg-logical" for one in self.links.values())
        pos = self.source.position()[0] if logical else None
        return self.load.over(self.source), pos

    def replica_pace(self, one: Link, pos: str | None) -> list[str]:
        """One replica's part of throttling, on its connection: why to wait for it (empty:
        no need). Raises ReplicationStopped when it no longer replicates."""
        lag = one.check()
        if one.kind == "pg-logical":
            if pos is not None and not one.wait(pos, self.options.max_lag, fail=False):
                return [f"{one.replica.name} has not applied the source's changes of the "
                        f"last {self.options.max_lag:g} s"]
        elif lag is not None and lag > self.options.max_lag:
            return [f"{one.replica.name} is {lag:g} s behind"]
        return []

    def remaining(self) -> float | None:
        """Seconds left before --run-time (None without a limit)."""
        limit = self.options.run_time
        return None if limit is None else limit - (time.monotonic() - self.started)

    def pause(self, seconds: float) -> None:
        """Sleep `seconds` (a re-check's delay), cut short by --run-time, then stop if due."""
        left = self.remaining()
        time.sleep(max(0.0, seconds if left is None else min(seconds, left)))
        self.check_run_time()

    def check_run_time(self) -> None:
        """Stop, resumably, once the run has taken --run-time."""
        limit = self.options.run_time
        if limit is not None and time.monotonic() - self.started > limit:
            self.state.save(force=True)
            raise Interrupted(f"stopped after --run-time {limit:g} s; progress is saved in "
                              f"{self.state.path}: continue with --resume")

    def catch_up(self) -> None:
        """Wait for every following replica to apply what the source has now."""
        if not any(one.follows for one in self.links.values()):
            return
        pos = self.source.position()[0]
        for one in self.links.values():
            if one.follows:
                one.check()
                one.wait(pos, self.options.wait_timeout)

    def synced(self, replica: Side, src_stmt: Statement, rep_stmt: Statement
               ) -> tuple[list[Row], list[Row]]:
        """Run on the source, then on the replica once it has applied the source's
        position as of just after: a row that matches cannot be an in-flight write."""
        a = self.source.run(src_stmt)
        follow = self.links[replica.name]
        if follow.follows:
            pos, left = self.source.position()[0], self.remaining()
            # --run-time may end the wait first (then the run stops, resumably)
            if left is None or left >= self.options.wait_timeout \
                    or not follow.wait(pos, max(left, 0.001), fail=False):
                self.check_run_time()
                follow.wait(pos, self.options.wait_timeout)
        return a, replica.run(rep_stmt)

    def parallel(self, calls: Sequence[Callable[[], Any]]) -> list[Any]:
        """Run `calls` at once (one per connection); every call has ended when this returns
        or raises, so no connection is still busy with a statement."""
        outcomes = self.pool.map(calls, lambda call: call())
        for outcome in outcomes:
            if isinstance(outcome, Exception):
                raise outcome
        return outcomes
