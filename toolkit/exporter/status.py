"""The status page's document, refreshed at most once per `daemon.status_refresh`.

A page view never queries a database itself: it gets the cached document, and only the
first view after the interval has passed runs one discovery (views arriving meanwhile
wait for it and share it). With nobody looking, nothing runs. A discovery that fails as
a whole (a bug) is logged and answered as an UNKNOWN document, never a traceback.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from dbgauge.toolkit.exporter.wiring import StatusSource
from dbgauge.toolkit.jobs import JobSnapshot
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.targets import Target

log = logging.getLogger("dbgauge.serve")


class StatusCache:
    """One status document, refreshed on demand no more than once per interval."""

    def __init__(self, source: StatusSource, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self._source = source
        self._clock = clock
        self._lock = threading.Lock()
        self._doc: dict[str, Any] | None = None
        self._previous: object = None
        self._at = 0.0
        self.refreshes = 0  # discoveries run so far (tests and logs read it)

    def get(self, targets: Sequence[Target], interval: float,
            jobs: Callable[[], Sequence[JobSnapshot]]) -> dict[str, Any]:
        """The document, refreshed first if it is older than `interval` seconds."""
        with self._lock:  # one discovery at a time; views meanwhile wait and share it
            if self._doc is None or self._clock() - self._at >= interval:
                self._refresh(targets, jobs())
            assert self._doc is not None
            return self._doc

    def _refresh(self, targets: Sequence[Target], jobs: Sequence[JobSnapshot]) -> None:
        self.refreshes += 1
        try:
            self._doc, self._previous = self._source(targets, self._previous, jobs)
        except Exception as exc:  # a bug must not take the page (or the daemon) down
            log.exception("status discovery failed")
            self._doc = {"schema": "dbgauge.status/1", "status": "UNKNOWN", "exit_code": 3,
                         "taken_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         "clusters": [], "apart": [], "links": [], "nodes": [],
                         "error": redact(f"status discovery failed: {type(exc).__name__}: "
                                         f"{exc}")}
        self._at = self._clock()
