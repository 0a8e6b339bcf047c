"""Scheduled work in the daemon: checks and checksums that run on an interval.

A scrape must stay cheap and bounded, so anything slow (a split-brain check across nodes,
a table checksum) runs as a job in its own thread on its own schedule; the daemon keeps the
last run's samples and serves them on /metrics, labelled as cached in their HELP. Each job
also gets `dbgauge_job_success`, `dbgauge_job_last_run_timestamp_seconds` and
`dbgauge_job_duration_seconds`, so a job that stopped running is visible.

Which jobs exist is not known here: the composition root (`dbgauge.app`) hands the
daemon its job builders (checks, checksums), each turning part of the config into jobs.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from dbgauge.toolkit.config import Config
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.metrics import MetricSpec, Sample
from dbgauge.toolkit.redact import redact

log = logging.getLogger("dbgauge.jobs")


class Job(ABC):
    """Work the daemon runs every `interval` seconds; `run` yields the samples to serve."""

    name: str
    interval: float
    metrics: tuple[MetricSpec, ...]

    @abstractmethod
    def run(self) -> Iterable[Sample]:
        """Do the work once; raise DbgaugeError for an expected failure."""

    def close(self) -> None:  # noqa: B027 - optional hook, most jobs hold nothing
        """Release connections; called when the daemon stops or reloads."""


@dataclass(frozen=True)
class JobSnapshot:
    """A job's last run as the exporter serves it."""

    name: str
    metrics: tuple[MetricSpec, ...]
    samples: tuple[Sample, ...] = ()
    success: bool = False
    last_run: float = 0.0
    duration: float = 0.0
    error: str | None = field(default=None, repr=False)


class JobRunner:
    """Runs one job in a daemon thread, first right away, then every interval."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"job:{job.name}", daemon=True)
        self._snapshot = JobSnapshot(job.name, job.metrics)
        self._last_error: str | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        try:
            self.job.close()
        except Exception:
            log.exception("job %s failed to close", self.job.name)

    @property
    def running(self) -> bool:
        """True while the job's thread is alive (between start() and stop())."""
        return self._thread.is_alive()

    def snapshot(self) -> JobSnapshot:
        return self._snapshot

    def run_once(self) -> JobSnapshot:
        """Run the job now (also used by tests); never raises."""
        started = time.monotonic()
        error: str | None = None
        samples: tuple[Sample, ...] = ()
        try:
            specs = {s.name: s for s in self.job.metrics}
            samples = tuple(self.job.run())
            for sample in samples:
                spec = specs.get(sample.name)
                if spec is None or sorted(sample.labels) != sorted(spec.labels):
                    raise ValueError(f"job {self.job.name} emitted undeclared {sample.name}"
                                     f"{sorted(sample.labels)}")
        except DbgaugeError as exc:
            error = str(exc)
        except Exception as exc:  # a bug in one job must not stop the others or the daemon
            log.exception("job %s crashed", self.job.name)
            error = redact(f"{type(exc).__name__}: {exc}")
        if error is not None and error != self._last_error:
            log.warning("job %s failed: %s", self.job.name, error, extra={"job": self.job.name})
        elif error is None and self._last_error is not None:
            log.info("job %s succeeded again", self.job.name, extra={"job": self.job.name})
        self._last_error = error
        previous = self._snapshot
        self._snapshot = JobSnapshot(
            self.job.name, self.job.metrics,
            samples if error is None else previous.samples,  # keep the last good data
            error is None, time.time(), time.monotonic() - started, error)
        return self._snapshot

    def _loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            self.run_once()
            wait = max(0.0, self.job.interval - (time.monotonic() - started))
            self._stop.wait(wait)


JobBuilder = Callable[[Config], list[Job]]


def build_jobs(config: Config, builders: Sequence[JobBuilder]) -> list[Job]:
    """Every job the builders make of the config; names must be unique."""
    jobs = [job for builder in builders for job in builder(config)]
    names = [j.name for j in jobs]
    if len(names) != len(set(names)):
        raise DbgaugeError(f"two scheduled jobs share a name: {sorted(names)}")
    return jobs
