"""Scrape targets: one runner per target owns its persistent connection.

Targets are scraped concurrently; each is bounded by the scrape deadline. A target that
has not answered by then is reported as down and its connection is aborted (socket
shut down) so its worker thread returns instead of piling up. Collectors of one target
run one after another on its single connection (drivers are not thread-safe, and one
connection per target keeps the exporter's footprint on the server predictable); each
statement is also bounded server-side (max_statement_time / statement_timeout).

At most one scrape per target is in flight (a lock per target): concurrent scrapes of the
same target (two Prometheus servers, a /probe during a /metrics) wait for it until their own
deadline instead of opening more connections, so a slow server never sees a pile-up. The
fleet's scrape (the pool, the deadline, reloads) is `fleet.Scraper`.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from dbgauge.toolkit.db import Connection, ServerInfo, connect
from dbgauge.toolkit.dialect import Dialect, ScrapeStats
from dbgauge.toolkit.errors import AuthError, DbgaugeError, Incomplete
from dbgauge.toolkit.exporter.series import SampleOut, SeriesMemo
from dbgauge.toolkit.metrics import AnyCollector, MetricSpec, Sample
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.targets import Target

log = logging.getLogger("dbgauge.scrape")
Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class CollectorRun:
    """How one collector did on one target."""

    collector: str
    success: bool
    duration: float
    error: str | None = None


@dataclass(frozen=True)
class TargetResult:
    """One target's scrape: `up` says whether dbgauge could talk to it at all."""

    target: str
    kind: str
    labels: Labels
    up: bool
    duration: float
    server: ServerInfo | None = None
    error: str | None = None
    collectors: tuple[CollectorRun, ...] = ()
    samples: tuple[SampleOut, ...] = field(default=(), repr=False)
    # The peer exporters' series (dialects): labels are the peer's and the target's extra
    # labels, without `target` (the renderer adds it where targets would collide), and
    # the `up` family of each dialect the target speaks.
    peer_samples: tuple[SampleOut, ...] = field(default=(), repr=False)
    peer_up: tuple[MetricSpec, ...] = ()


_SECONDS = re.compile(r"\d+(\.\d+)?\s?s\b")  # "in 2.7s": a stall is logged once, not per scrape


def labels_of(base: Labels, extra: Mapping[str, str] | None = None) -> Labels:
    """`base` (sorted) with `extra` merged in, sorted by name (the renderer relies on it)."""
    if not extra:
        return base
    merged = dict(base)
    merged.update(extra)
    return tuple(sorted(merged.items()))


class TargetRunner:
    """Scrapes one target, reconnecting after any failure."""

    def __init__(self, cfg: Target, collectors: list[AnyCollector],
                 dialects: Sequence[Dialect] = ()) -> None:
        self.cfg = cfg
        self._lock = threading.Lock()
        self._conn: Connection | None = None
        self._collectors = collectors
        self._dialects = tuple(dialects)
        self.peer_up: tuple[MetricSpec, ...] = tuple(d.up for d in self._dialects)
        self._base_labels: Labels = labels_of((), {**cfg.labels, "target": cfg.name})
        self._peer_labels: Labels = labels_of((), cfg.labels)
        # what our samples and each dialect's resolve to (series.py): _own_out, _peer_out
        self._own = SeriesMemo()
        self._constant = {d.name: d.target_labels(cfg) for d in self._dialects}
        self._resolved = {d.name: SeriesMemo() for d in self._dialects}
        self._exclusions: dict[str, bool] = {}  # compat_exclude, by family name
        # --compat-only: collectors a dialect translates make the peer's samples only
        self._peer_only = frozenset(c for d in self._dialects for c in d.translate) \
            if cfg.compat_only else frozenset()
        self._last_error: str | None = None
        self._busy_until: float | None = None  # deadline of the scrape holding the lock
        # collector name -> (when, samples, peer samples) of collectors with a `refresh`
        self._cache: dict[str, tuple[float, tuple[SampleOut, ...], tuple[SampleOut, ...]]] = {}
        # collector name -> the statements it ran last time, read ahead next time
        self._statements: dict[str, tuple[str, ...]] = {}
        self._interrupted = False  # the daemon is stopping: no new connection, no retry
        self._connecting = False  # a connect is pending (the lock's holder is in connect())
        self._was_up = False  # how the last scrape that ran went
        self._last_try = float("-inf")  # when a scrape last ran here (monotonic)
        # for the dialects' self metrics (pg_exporter_scrapes_total, mysqld_exporter's
        # scrape_errors_total{collector})
        self._scrapes = 0
        self._failures: dict[str, int] = {}

    @property
    def rank(self) -> tuple[bool, float]:
        """Its place in a scrape's queue: up last time first, then the longest untried."""
        return (not self._was_up, self._last_try)

    @property
    def collectors(self) -> list[AnyCollector]:
        return list(self._collectors)

    def _fail(self, started: float, error: str, *, log_it: bool = True) -> TargetResult:
        if log_it and _SECONDS.sub("", error) != _SECONDS.sub("", self._last_error or ""):
            # Log each distinct failure once, not on every scrape while it persists.
            log.warning("target %s is down: %s", self.cfg.name, error,
                        extra={"target": self.cfg.name})
        self._last_error = error
        return TargetResult(self.cfg.name, self.cfg.kind, self._base_labels, False,
                            time.monotonic() - started, error=error, peer_up=self.peer_up,
                            peer_samples=self._self_samples(started, True, ()))

    def _self_samples(self, started: float, error: bool, runs: Sequence[CollectorRun],
                      connect_seconds: float = 0.0, up: bool = False
                      ) -> tuple[SampleOut, ...]:
        """The dialects' metrics about this scrape (see Dialect.self_samples)."""
        if not any(d.self_samples for d in self._dialects):
            return ()
        for run in runs:
            if not run.success:
                self._failures[run.collector] = self._failures.get(run.collector, 0) + 1
        stats = ScrapeStats(time.monotonic() - started, error, self._scrapes,
                            tuple((r.collector, r.success, r.duration) for r in runs),
                            up, connect_seconds, dict(self._failures))
        out: list[SampleOut] = []
        for dialect in self._dialects:
            if dialect.self_samples:
                self._peer_out(dialect, dialect.self_samples(stats), out)
        return tuple(out)

    def scrape(self, deadline: float, only: set[str] | None = None) -> TargetResult:
        """Collect everything enabled (or `only` these collectors) before `deadline`."""
        started = time.monotonic()
        if not self._lock.acquire(blocking=False):
            busy_until = self._busy_until
            if self._connecting and busy_until is not None and busy_until <= started:
                # stalled past its own scrape's deadline: down now, no thread waiting on it
                return self._fail(started, "a connect from an earlier scrape is still "
                                           "pending past its deadline")
            if not self._lock.acquire(timeout=max(0.0, deadline - started)):
                return self._fail(started, "previous scrape of this target is still running")
        self._scrapes += 1
        self._busy_until = deadline
        try:
            result = self._scrape_locked(started, deadline, only)
            self._was_up = result.up
            return result
        finally:
            self._busy_until = None
            self._lock.release()

    def _connection(self, deadline: float) -> Connection:
        if self._conn is not None and not self._conn.closed:
            return self._conn
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        remaining = deadline - time.monotonic()
        if self._interrupted:
            raise DbgaugeError("the daemon is stopping")
        if remaining <= 0:
            raise DbgaugeError("scrape deadline reached before connecting")
        self._connecting = True
        self._last_try = time.monotonic()
        try:
            self._conn = connect(self.cfg, min(self.cfg.connect_timeout, remaining))
        finally:
            self._connecting = False
        self._cache.clear()  # a new connection may be a restarted or failed-over server
        if self._last_error is not None:
            log.info("target %s is reachable again", self.cfg.name,
                     extra={"target": self.cfg.name})
            self._last_error = None
        return self._conn

    def _scrape_locked(self, started: float, deadline: float,
                       only: set[str] | None) -> TargetResult:
        reused = self._conn is not None and not self._conn.closed
        result = self._collect(started, deadline, only, quiet=reused)
        if not result.up and reused and self._conn is None and time.monotonic() < deadline \
                and not self._interrupted:
            # The kept connection died between scrapes (server restarted, idle timeout,
            # failover): retry once on a fresh one, so `up` is right on the first scrape
            # after the server is back rather than one scrape late.
            log.info("target %s: kept connection was lost (%s); reconnecting",
                     self.cfg.name, result.error, extra={"target": self.cfg.name})
            self._last_error = None
            result = self._collect(started, deadline, only)
        elif not result.up and reused and self._conn is None:
            self._last_error = None
            result = self._fail(started, result.error or "connection lost")
        return result

    def _collect(self, started: float, deadline: float, only: set[str] | None,
                 quiet: bool = False) -> TargetResult:
        """One attempt; `quiet` leaves logging a lost connection to the caller."""
        connecting = time.monotonic()
        try:
            conn = self._connection(deadline)
        except AuthError as exc:
            return self._fail(started, str(exc))
        except DbgaugeError as exc:
            return self._fail(started, str(exc))
        except Exception as exc:  # a driver bug must not take the daemon down
            log.exception("unexpected error connecting to %s", self.cfg.name)
            return self._fail(started, redact(f"{type(exc).__name__}: {exc}"))
        connected = time.monotonic() - connecting
        runs: list[CollectorRun] = []
        samples: list[SampleOut] = []
        peer: list[SampleOut] = []
        todo = [c for c in self._collectors if (only is None or c.name in only)
                and c.supports(conn.server)]
        self._read_ahead(conn, todo)
        try:
            for collector in todo:
                if time.monotonic() >= deadline:
                    runs.append(CollectorRun(collector.name, False, 0.0,
                                             "scrape deadline reached"))
                    continue
                runs.append(self._run(collector, conn, samples, peer))
                if ran := conn.ran():  # none when its samples came from `_cache`
                    self._statements[collector.name] = ran
                if conn.closed:
                    self._conn = None
                    conn.close()  # release the socket now, not at garbage collection
                    return self._fail(started, runs[-1].error or "connection lost",
                                      log_it=not quiet)
        finally:
            if not conn.closed:
                conn.read_ahead(())  # what no collector asked for is not kept
        peer.extend(self._self_samples(started, not all(r.success for r in runs), runs,
                                       connected, up=True))
        return TargetResult(self.cfg.name, self.cfg.kind, self._base_labels, True,
                            time.monotonic() - started, conn.server, None, tuple(runs),
                            tuple(samples), tuple(peer), self.peer_up)

    def _fresh(self, collector: AnyCollector, now: float) -> bool:
        """Whether `collector` has samples collected moments ago (its `refresh`)."""
        cached = self._cache.get(collector.name)
        return cached is not None and now - cached[0] < collector.refresh_seconds

    def _read_ahead(self, conn: Connection, todo: Sequence[AnyCollector]) -> None:
        """Have the statements the collectors that run now ran last time read together
        (toolkit/db/pipeline.py): they are short, and waiting for each answer in turn
        cost a scrape more than running them."""
        now = time.monotonic()
        conn.ran()  # start afresh: what ran before (identifying the server) is not theirs
        try:
            conn.read_ahead([name for c in todo if not self._fresh(c, now)
                             for name in self._statements.get(c.name, ())])
        except Exception:  # a speed-up only: the collectors then run each statement alone
            log.exception("reading ahead failed on %s", self.cfg.name)

    def _run(self, collector: AnyCollector, conn: Connection, out: list[SampleOut],
             peer_out: list[SampleOut]) -> CollectorRun:
        t0 = time.monotonic()
        if self._fresh(collector, t0):
            cached = self._cache[collector.name]
            out.extend(cached[1])  # a slow-changing family, collected moments ago
            peer_out.extend(cached[2])
            return CollectorRun(collector.name, True, 0.0)
        produced: list[SampleOut] = []
        peer: list[SampleOut] = []
        read: list[object] = []  # the facts, once read
        try:
            facts = collector.read_for_dialects(conn) if collector.name in self._peer_only \
                else collector.read(conn)
            read.append(facts)
            if collector.name not in self._peer_only:
                self._own_out(collector, collector.samples(facts), produced)
            self._translate(collector.name, facts, peer)
            if collector.name in self._peer_only and (why := collector.incomplete(facts)):
                raise Incomplete(why)
        except DbgaugeError as exc:
            log.warning("collector %s failed on %s: %s", collector.name, self.cfg.name, exc,
                        extra={"target": self.cfg.name, "collector": collector.name})
            if isinstance(exc, Incomplete):
                out.extend(produced)  # what the failed part did not touch still stands
                for facts in read:  # in the peers' names too
                    self._translate(collector.name, facts, peer_out)
            return CollectorRun(collector.name, False, time.monotonic() - t0, str(exc))
        except OSError as exc:  # the process is out of descriptors (EMFILE), not a bug
            log.warning("collector %s failed on %s: %s", collector.name, self.cfg.name,
                        exc.strerror or exc, extra={"target": self.cfg.name,
                                                    "collector": collector.name})
            return CollectorRun(collector.name, False, time.monotonic() - t0,
                                redact(f"OSError: {exc.strerror or exc}"))
        except Exception as exc:
            log.exception("collector %s crashed on %s", collector.name, self.cfg.name)
            return CollectorRun(collector.name, False, time.monotonic() - t0,
                                redact(f"{type(exc).__name__}: {exc}"))
        out.extend(produced)
        peer_out.extend(peer)
        if collector.refresh_seconds > 0:
            self._cache[collector.name] = (t0, tuple(produced), tuple(peer))
        return CollectorRun(collector.name, True, time.monotonic() - t0)

    def _translate(self, collector: str, facts: object, out: list[SampleOut]) -> None:
        """The peer exporters' samples of one collector's facts (see toolkit/dialect.py)."""
        for dialect in self._dialects:
            self._peer_out(dialect, dialect.samples(collector, facts), out)

    def _peer_out(self, dialect: Dialect, samples: Iterable[Sample],
                  out: list[SampleOut]) -> None:
        """A dialect's samples, checked against its families, with the target's extra
        labels and the constant ones their families declare (once per series: series.py)."""
        constant = self._constant[dialect.name]
        if self.cfg.compat_exclude:
            samples = [s for s in samples if not self._excluded(s.name)]

        def resolve(sample: Sample) -> tuple[Labels, MetricSpec | None]:
            labels, spec = dialect.resolve(sample, constant)
            return labels_of(self._peer_labels, labels), spec

        self._resolved[dialect.name].extend(out, samples, resolve)

    def _excluded(self, name: str) -> bool:
        """`compat_exclude`'s answer for a family name, remembered per name."""
        known = self._exclusions.get(name)
        if known is None:
            known = self._exclusions[name] = self.cfg.excludes_family(name)
        return known

    def _own_out(self, collector: AnyCollector, samples: Iterable[Sample],
                 out: list[SampleOut]) -> None:
        """A collector's samples, checked against its declarations, with the target's
        labels (`target` and its extra labels), once per series as `_peer_out`."""
        def resolve(sample: Sample) -> tuple[Labels, MetricSpec | None]:
            collector.validate_sample(sample)
            return labels_of(self._base_labels, sample.labels), None

        self._own.extend(out, samples, resolve)

    def abort_overdue(self) -> None:
        """Unblock a scrape stuck past its own deadline (called from another thread).

        Only the scrape holding the lock uses the connection; it is aborted only once *its*
        deadline has passed, never on behalf of a later request still waiting its turn.
        """
        busy_until = self._busy_until
        conn = self._conn
        if conn is not None and busy_until is not None and time.monotonic() >= busy_until:
            conn.abort()

    def interrupt(self) -> None:
        """The daemon is stopping: abort the scrape in flight now (another thread)."""
        self._interrupted = True
        conn = self._conn
        if conn is not None and self._busy_until is not None:
            conn.abort()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
