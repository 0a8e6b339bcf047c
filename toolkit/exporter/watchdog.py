"""One thread that calls a function at a given time unless disarmed first: the deadline
guard of a scrape run in a request's own thread. A threading.Timer per scrape started a
thread per request (a sixth of a small /probe's CPU); this one thread serves them all."""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable


class Watchdog:
    """Calls each armed function at its monotonic time, in its own daemon thread (started
    on first use); `disarm` before that time and it is never called."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, Callable[[], None]]] = []
        self._armed: set[int] = set()
        self._ids = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, when: float, call: Callable[[], None]) -> int:
        with self._wake:
            token = next(self._ids)
            heapq.heappush(self._due, (when, token, call))
            self._armed.add(token)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="watchdog",
                                                daemon=True)
                self._thread.start()
            elif self._due[0][1] == token:
                self._wake.notify()  # earlier than what the thread sleeps towards
            return token

    def disarm(self, token: int) -> None:
        with self._wake:
            self._armed.discard(token)

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._due and self._due[0][1] not in self._armed:
                    heapq.heappop(self._due)  # disarmed: dropped without waiting for it
                if not self._due:
                    self._wake.wait()
                    continue
                when, token, call = self._due[0]
                left = when - time.monotonic()
                if left > 0:
                    self._wake.wait(left)
                    continue
                heapq.heappop(self._due)
                self._armed.discard(token)
            try:
                call()
            except Exception:  # a guard must not die with the function it calls
                pass


WATCHDOG = Watchdog()
