"""The fleet's scrape: every target of one config, concurrently, under one deadline.

Targets run on a bounded pool of threads (`MAX_SCRAPE_WORKERS`), those up last time first;
one target alone (a /probe) runs in the request's own thread. A reload replaces the
Scraper while scrapes may still use the old one: the old one is closed (its pool shut, its
dropped runners' connections closed) when its last scrape ends.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence

from dbgauge.toolkit.config import Config
from dbgauge.toolkit.db import load_drivers
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.exporter.scrape import TargetResult, TargetRunner, labels_of
from dbgauge.toolkit.exporter.watchdog import WATCHDOG
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.registry import Registry
from dbgauge.toolkit.targets import FanOut, Unfinished

log = logging.getLogger("dbgauge.scrape")


# Scrape threads, however many targets: a stalled one holds a thread until the deadline,
# and 2,000 of them waking at once kept two cores busy seconds past it (TargetRunner.rank).
MAX_SCRAPE_WORKERS = 128

# Runners end at the deadline by themselves (connects and statements are bounded by it);
# the pool waits this much longer before calling a target's scrape overdue and aborting it.
_OVERDUE_AFTER = 0.2


def _alone(runner: TargetRunner, deadline: float,
           only: set[str] | None) -> TargetResult | Exception:
    """One target (a /probe) scraped in the request's own thread, not the shared pool: a
    /metrics over thousands of stalled targets holds every pool thread until its deadline,
    and a /probe queued behind them missed its own. The request threads are bounded
    (daemon.max_requests); the watchdog aborts a scrape overdue past its deadline, as the
    pool does."""
    token = WATCHDOG.arm(deadline + _OVERDUE_AFTER, runner.abort_overdue)
    try:
        return runner.scrape(deadline, only)
    except Exception as exc:  # as the pool hands back: reported as the target down
        return exc
    finally:
        WATCHDOG.disarm(token)


class Scraper:
    """All targets of one config; scrapes them concurrently under a deadline."""

    def __init__(self, config: Config, registry: Registry,
                 previous: Scraper | None = None) -> None:
        self.config = config
        self.registry = registry
        self.runners: dict[str, TargetRunner] = {}
        load_drivers(t.kind for t in config.all_targets())
        for target in config.all_targets():
            old = previous.runners.get(target.name) if previous else None
            # Keep a runner (and its connection) across reloads when its config is equal.
            self.runners[target.name] = old if old is not None and old.cfg == target \
                else TargetRunner(target, registry.for_target(target),
                                  registry.dialects_for(target))
        self._pool = FanOut[TargetRunner, TargetResult](
            min(MAX_SCRAPE_WORKERS, max(4, 2 * len(self.runners))), "scrape")
        self._state = threading.Lock()
        self._users = 0
        self._retired: set[int] | None = None  # ids of runners kept by the next Scraper

    def acquire(self) -> None:
        """A scrape starts using this Scraper (see close)."""
        with self._state:
            self._users += 1

    def release(self) -> None:
        with self._state:
            self._users -= 1
            last = self._users == 0 and self._retired is not None
        if last:
            self._close_now()

    def collector_names(self, names: Sequence[str]) -> list[str]:
        """The collectors the targets `names` run: what collect[] and --collect may name."""
        return sorted({c.name for n in names for c in self.runners[n].collectors})

    def scrape(self, names: Sequence[str], deadline: float,
               only: set[str] | None = None) -> list[TargetResult]:
        started = time.monotonic()
        runners = [self.runners[n] for n in names]
        if len(runners) == 1:
            outcomes = [_alone(runners[0], deadline, only)]
        else:
            queue = sorted(range(len(runners)), key=lambda i: runners[i].rank)
            queued = self._pool.map([runners[i] for i in queue],
                                    lambda r: r.scrape(deadline, only),
                                    deadline_in=max(0.0, deadline - time.monotonic())
                                    + _OVERDUE_AFTER)
            outcomes = [*queued]
            for i, outcome in zip(queue, queued, strict=True):  # back in the order asked
                outcomes[i] = outcome
        results: list[TargetResult] = []
        for runner, outcome in zip(runners, outcomes, strict=True):
            if isinstance(outcome, TargetResult):
                results.append(outcome)
                continue
            if isinstance(outcome, Unfinished):
                runner.abort_overdue()
                error = "scrape deadline exceeded"
            else:
                error = redact(str(outcome))
            log.warning("target %s did not answer in time: %s", runner.cfg.name, error,
                        extra={"target": runner.cfg.name})
            results.append(TargetResult(
                runner.cfg.name, runner.cfg.kind, labels_of((), {**runner.cfg.labels,
                                                               "target": runner.cfg.name}),
                False, time.monotonic() - started, error=error, peer_up=runner.peer_up))
        return results

    def interrupt(self) -> None:
        """Abort every scrape in flight (the daemon is stopping)."""
        for runner in self.runners.values():
            runner.interrupt()

    def close(self, keep: Iterable[TargetRunner] = ()) -> None:
        """Close runners not carried over into a new Scraper (`keep`), and the pool: now,
        or when the last scrape still using this Scraper ends (a reload mid-scrape)."""
        with self._state:
            self._retired = {id(r) for r in keep}
            now = self._users == 0
        if now:
            self._close_now()

    def _close_now(self) -> None:
        kept = self._retired or set()
        for runner in self.runners.values():
            if id(runner) not in kept:
                runner.close()
        self._pool.close()


def scrape_once(config: Config, registry: Registry, names: Sequence[str], timeout: float,
                only: set[str] | None = None) -> list[TargetResult]:
    """One scrape of the targets `names` within `timeout` seconds, by a Scraper made for it
    and closed after (`dbgauge collect`). ConfigError when `only` names a collector none
    of them runs: a typo must not turn into a scrape that collected nothing and said OK."""
    deadline = time.monotonic() + timeout
    scraper = Scraper(config, registry)
    try:
        if only:
            _check_only(scraper, registry, names, only)
        return scraper.scrape(names, deadline, only)
    finally:
        scraper.close()


def _check_only(scraper: Scraper, registry: Registry, names: Sequence[str],
                only: set[str]) -> None:
    """ConfigError naming each collector in `only` that the targets `names` do not run
    (no such collector, or one off for them) and the ones they do."""
    valid = scraper.collector_names(names)
    kinds = {scraper.runners[n].cfg.kind for n in names}

    def why(name: str) -> str:
        if any(name in registry.names(kind) for kind in kinds):
            return f"{name} (off for this target: turn it on in its collectors: list)"
        return f"{name} (no such collector)"

    missing = [why(n) for n in sorted(only - set(valid))]
    if missing:
        raise ConfigError(f"--collect {', '.join(missing)}; the collectors "
                          f"{', '.join(names)} runs are {', '.join(valid)}")
