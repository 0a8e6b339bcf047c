"""The status page's cache: one discovery per interval however many views, views during
a discovery share it, a crashing discovery answers UNKNOWN; and the checksum jobs' last
runs become per-node verdicts."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from dbgauge.checks.drift.schedule import DIFFERING_ROWS, DRIFT, TABLES_CHECKED
from dbgauge.checks.status.checksums import verdicts
from dbgauge.toolkit.exporter.status import StatusCache
from dbgauge.toolkit.jobs import JobSnapshot
from dbgauge.toolkit.metrics import Sample
from dbgauge.toolkit.targets import Target


class Source:
    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.calls: list[object] = []
        self.delay, self.fail = delay, fail

    def __call__(self, targets: Sequence[Target], previous: object,
                 jobs: Sequence[JobSnapshot]) -> tuple[dict[str, Any], object]:
        self.calls.append(previous)
        time.sleep(self.delay)
        if self.fail:
            raise RuntimeError("boom")
        return {"n": len(self.calls)}, f"topology {len(self.calls)}"


def test_one_discovery_per_interval() -> None:
    now = [100.0]
    source = Source()
    cache = StatusCache(source, clock=lambda: now[0])
    for _ in range(50):
        assert cache.get([], 10.0, list) == {"n": 1}
    now[0] += 9.9
    assert cache.get([], 10.0, list) == {"n": 1}
    now[0] += 0.1
    assert cache.get([], 10.0, list) == {"n": 2}
    assert source.calls == [None, "topology 1"]  # each discovery gets the last topology


def test_concurrent_views_share_one_discovery() -> None:
    source = Source(delay=0.3)
    cache = StatusCache(source)
    got: list[dict[str, Any]] = []
    threads = [threading.Thread(target=lambda: got.append(cache.get([], 60.0, list)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert got == [{"n": 1}] * 8 and cache.refreshes == 1


def test_a_crashing_discovery_is_unknown_not_a_traceback() -> None:
    doc = StatusCache(Source(fail=True)).get([], 10.0, list)
    assert doc["status"] == "UNKNOWN" and doc["exit_code"] == 3 and doc["nodes"] == []
    assert doc["error"] == "status discovery failed: RuntimeError: boom"


def test_checksum_verdicts_per_node() -> None:
    job = "checksum:mariadb-primary"
    base = {"dbgauge_job": job}
    samples = (Sample(DRIFT.name, 1.0, base),
               Sample(DIFFERING_ROWS.name, 2.0, {**base, "table": "a.t", "replica": "r1"}),
               Sample(DIFFERING_ROWS.name, 1.0, {**base, "table": "a.u", "replica": "r1"}),
               Sample(DIFFERING_ROWS.name, 0.0, {**base, "table": "a.t", "replica": "r2"}))
    at = 1_700_000_000.0  # 22:13 UTC
    found = verdicts([JobSnapshot(job, (), samples, True, at, 1.0),
                      JobSnapshot("check:lag", (), (), True, at, 1.0),
                      JobSnapshot("checksum:pg-primary", (), (), False, at, 1.0, "refused")])
    assert found == {"r1": "3 row(s) differ (22:13 UTC)", "r2": "in sync (22:13 UTC)",
                     "mariadb-primary": "source, drift (22:13 UTC)",
                     "pg-primary": "last run failed (22:13 UTC)"}


def test_a_checksum_that_compared_nothing_is_not_no_drift() -> None:
    at = 1_700_000_000.0
    def run(job: str, checked: float) -> JobSnapshot:
        base = {"dbgauge_job": job}
        return JobSnapshot(job, (), (Sample(DRIFT.name, 0.0, base),
                                     Sample(TABLES_CHECKED.name, checked, base)), True, at, 1.0)
    found = verdicts([run("checksum:empty", 0.0), run("checksum:full", 3.0)])
    assert found == {"empty": "source, nothing compared (22:13 UTC)",
                     "full": "source, no drift (22:13 UTC)"}
