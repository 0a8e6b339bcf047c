"""One run's servers and pace, fixed once checking starts: the connections, the replica
links, the method, the limits, and the throttling and synchronisation every comparison
goes through.

Every step (planning, the pre-check, the walk, the re-checks) takes the `Context` and
returns what it found for its table; none writes into it. Two things in it change as the
run goes on, each in an object of its own that says why: the `Throttle` (when lag and load
were last asked) and the --resume `RunState` file.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any

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
from dbgauge.toolkit.write_guard import WriteState, check_writable

QUERY_TIMEOUT = 120.0  # chunks aim at chunk_time; this only stops a runaway statement
THROTTLE_EVERY = 0.5  # seconds between checks of the replicas' lag and the source's load
# how a user lets the replicated method write on a read_only source
ALLOW_READ_ONLY = "pass --allow-read-only (a checksums: job: allow_read_only: true)"

Pool = FanOut[Callable[[], Any], Any]


@dataclass
class Throttle:
    """When the replicas' lag and the source's load were last asked (monotonic seconds).

    Mutable on purpose: one clock for the whole run, advanced by whichever step throttles
    next (a pre-check, a replicated chunk, a direct walk's pause), so lag and load are
    asked at most every THROTTLE_EVERY whichever table or step is running."""

    last: float = 0.0


@dataclass(frozen=True)
class Context:
    """One checksum run as every step sees it: the sides, how each replica follows the
    source, what was asked, and when checking started (for --run-time)."""

    options: ChecksumOptions
    reporter: Reporter
    source: Side
    replicas: tuple[Side, ...]
    links: Mapping[str, Link]  # by replica name
    method: str  # replicated | direct
    load: LoadLimits
    pool: Pool  # a thread per connection, for statements run on every side at once
    state: RunState
    # the replicated method's table (dbgauge.checksums, or the one --replicate names)
    replicate: ReplicateTable = field(default_factory=lambda: ReplicateTable(*DEFAULT))
    started: float = field(default_factory=time.monotonic)
    throttled: Throttle = field(default_factory=Throttle)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the run says about the replicas' links (a copy compared as is, ...)."""
        return tuple(one.detail for one in self.links.values() if one.detail)

    def replica(self, name: str) -> Side:
        """The replica called `name`."""
        return self.links[name].replica

    def source_writable(self) -> WriteState:
        """Before each write on the source (the replicated method's table and chunks):
        WriteRefused when it is read-only -- a replica given as --source, or a primary
        demoted while the run goes on -- unless --allow-read-only."""
        return check_writable(self.source.conn, f"write checksum chunks into "
                              f"{self.replicate.name}", f"source {self.source.name}",
                              allow_read_only=self.options.allow_read_only,
                              override=ALLOW_READ_ONLY)

    # -- throttling and synchronisation

    def throttle(self, force: bool = False) -> None:
        """Pause while a replica lags more than max_lag or the source is busy."""
        self.check_run_time()
        now = time.monotonic()
        if not force and now - self.throttled.last < THROTTLE_EVERY:
            return
        self.throttled.last = now
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


def open_context(source: Target, replicas: Sequence[Target], options: ChecksumOptions,
                 reporter: Reporter, stack: ExitStack) -> Context:
    """Connect to every server (closed with `stack`), find how each replica follows the
    source, choose the method, resolve --max-load and open the --resume state."""
    names = unique_names([source, *replicas])
    limit = options.max_pause
    src = _open(source, names[0], "source", stack, limit)
    reps = tuple(_open(t, n, "replica", stack, limit)
                 for t, n in zip(replicas, names[1:], strict=True))
    links = {r.name: link(src, r) for r in reps}
    for one in links.values():
        if one.detail:
            reporter.note(one.detail)
    method = choose_method(options.method, src, reps, links)
    load = LoadLimits.resolve(src, options)  # --max-load names, checked now
    pool: Pool = stack.enter_context(FanOut(1 + len(reps), "checksum"))
    state = RunState.open(options, method, src.name, [r.name for r in reps],
                          [endpoint(t) for t in (source, *replicas)])
    if options.resume and not state.resumed:
        reporter.note("nothing to resume (no unfinished run with these arguments): "
                      "starting from the beginning")
    return Context(options=options, reporter=reporter, source=src, replicas=reps, links=links,
                   method=method, load=load, pool=pool, state=state)


def _open(target: Target, name: str, role: str, stack: ExitStack, max_wait: float) -> Side:
    """A side whose statements are bounded by QUERY_TIMEOUT (or the target's longer one),
    and never longer than --max-wait: a server that stops answering (SIGSTOP, a hung
    host) ends the run then, rather than holding it for as long as the socket lasts."""
    timeout = min(max(target.query_timeout, QUERY_TIMEOUT), max_wait)
    target = replace(target, query_timeout=timeout)
    try:
        conn = connect(target)
    except DbgaugeError as exc:
        raise type(exc)(f"{role} {name}: {exc}") from None
    stack.callback(conn.close)
    side = Side(name, conn, role, answer_within=timeout + 1.0)
    side.q("checksum_session")
    return side


def choose_method(asked: str | None, source: Side, replicas: Sequence[Side],
                  links: Mapping[str, Link]) -> str:
    """--method, or the default: replicated for MySQL-family replicas of the source."""
    method = asked
    all_mysql = source.mysql and all(r.mysql for r in replicas)
    if method is None:
        follows = all(one.kind == "mysql" for one in links.values())
        method = "replicated" if all_mysql and follows else "direct"
    if method == "replicated":
        if not all_mysql:
            raise DriftError("--method replicated works within one MySQL/MariaDB "
                             "replication topology only: use --method direct")
        for name, one in links.items():
            if one.kind != "mysql":
                raise DriftError(f"--method replicated needs every replica to replicate "
                                 f"from the source, and {name} does not: use --method "
                                 "direct")
    return method
