"""Scheduled jobs: cached results, failure handling, rendering."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from dbgauge import app
from dbgauge.app import parse_config
from dbgauge.toolkit.errors import QueryError
from dbgauge.toolkit.jobs import Job, JobRunner, build_jobs
from dbgauge.toolkit.metrics import MetricSpec, Sample
from dbgauge.toolkit.render.prometheus import encode
from tests.helpers import parse_metrics, value, wait_for

SPEC = MetricSpec("dbgauge_test_job_items", "gauge", "Items (cached from the last run).",
                  ("thing",))


class CountingJob(Job):
    name = "test:count"
    interval = 0.05
    metrics = (SPEC,)

    def __init__(self) -> None:
        self.calls = 0
        self.mode = "ok"

    def run(self) -> Iterable[Sample]:
        self.calls += 1
        if self.mode == "expected":
            raise QueryError("server went away")
        if self.mode == "bug":
            raise RuntimeError("boom")
        if self.mode == "undeclared":
            return [Sample("dbgauge_test_job_other", 1.0)]
        return [Sample(SPEC.name, float(self.calls), {"thing": "a"})]


def test_successful_run_is_cached_and_rendered() -> None:
    runner = JobRunner(CountingJob())
    snap = runner.run_once()
    assert snap.success and snap.last_run > 0 and snap.samples[0].value == 1.0
    m = parse_metrics(encode([], None, [runner.snapshot()])[0].decode())
    assert value(m, "dbgauge_test_job_items", thing="a") == 1.0
    assert value(m, "dbgauge_job_success", dbgauge_job="test:count") == 1.0
    assert (value(m, "dbgauge_job_last_run_timestamp_seconds", dbgauge_job="test:count") or 0) > 0


@pytest.mark.parametrize("mode", ["expected", "bug", "undeclared"])
def test_failed_run_keeps_last_good_samples(mode: str, caplog: pytest.LogCaptureFixture) -> None:
    job = CountingJob()
    runner = JobRunner(job)
    runner.run_once()
    job.mode = mode
    snap = runner.run_once()
    assert not snap.success and snap.error
    assert [s.value for s in snap.samples] == [1.0]  # the last good data stays served
    assert "job test:count failed" in caplog.text or "job test:count crashed" in caplog.text


def test_runner_thread_repeats_and_stops() -> None:
    job = CountingJob()
    runner = JobRunner(job)
    runner.start()
    try:
        wait_for(lambda: job.calls >= 3, what="three runs")
        assert runner.running
    finally:
        runner.stop()
    assert not runner.running  # stop() returns once the thread has ended: no run after it


def test_no_scheduled_work_builds_no_jobs() -> None:
    cfg = parse_config("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h/'}\n")
    assert build_jobs(cfg, app.wiring().job_builders) == []


def test_no_family_uses_prometheus_own_job_label() -> None:
    """Prometheus keeps `job` for the scrape job and would rename ours `exported_job`:
    scheduled jobs are named in `dbgauge_job`, on every family that names one."""
    from dbgauge.checks import schedule
    from dbgauge.checks.drift import schedule as drift_schedule
    from dbgauge.toolkit.metrics import JOB_METRICS, SELF_METRICS

    specs = [*JOB_METRICS, *SELF_METRICS, *drift_schedule.METRICS,
             *app.registry().specs().values()]
    specs += [v for v in vars(schedule).values() if isinstance(v, MetricSpec)]
    assert not [s.name for s in specs if "job" in s.labels]
    assert all("dbgauge_job" in s.labels for s in (*JOB_METRICS, *drift_schedule.METRICS))
    m = parse_metrics(encode([], None, [JobRunner(CountingJob()).snapshot()])[0].decode())
    assert not [n for n, labels in m if "job" in dict(labels)]
