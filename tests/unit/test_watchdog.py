"""The one-thread watchdog that guards scrapes run in a request's own thread."""

from __future__ import annotations

import threading
import time

from dbgauge.toolkit.exporter.watchdog import Watchdog


def test_calls_at_its_time_unless_disarmed() -> None:
    dog = Watchdog()
    fired: list[str] = []
    done = threading.Event()
    kept = dog.arm(time.monotonic() + 0.05, lambda: (fired.append("kept"), done.set()))
    dropped = dog.arm(time.monotonic() + 0.01, lambda: fired.append("dropped"))
    dog.disarm(dropped)
    assert done.wait(5)
    assert fired == ["kept"]
    dog.disarm(kept)  # after the call: nothing happens


def test_an_earlier_deadline_wakes_the_thread_sleeping_towards_a_later_one() -> None:
    dog = Watchdog()
    late, early = threading.Event(), threading.Event()
    dog.arm(time.monotonic() + 60, late.set)
    dog.arm(time.monotonic() + 0.05, early.set)
    assert early.wait(5) and not late.is_set()


def test_one_thread_for_many_and_a_failing_call_does_not_stop_it() -> None:
    dog = Watchdog()
    before = threading.active_count()
    ran = threading.Event()

    def boom() -> None:
        raise RuntimeError("x")

    for _ in range(50):
        dog.disarm(dog.arm(time.monotonic() + 0.01, ran.set))
    dog.arm(time.monotonic(), boom)
    dog.arm(time.monotonic() + 0.02, ran.set)
    assert ran.wait(5)
    assert threading.active_count() <= before + 1
