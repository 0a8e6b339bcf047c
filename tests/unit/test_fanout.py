"""FanOut.map: results in item order, an exception in its item's place, and at the
deadline what has not finished is `Unfinished` (running) or cancelled (never started)."""

from __future__ import annotations

import threading

from dbgauge.toolkit.targets import FanOut, Unfinished


def test_results_in_item_order_with_exceptions_in_place() -> None:
    def work(n: int) -> int:
        if n == 3:
            raise ValueError("three")
        return n * n

    seen: list[int] = []
    with FanOut[int, int](4, "t") as pool:
        out = pool.map(list(range(6)), work, on_done=lambda i, _o: seen.append(i))
    assert [o for i, o in enumerate(out) if i != 3] == [0, 1, 4, 16, 25]
    assert isinstance(out[3], ValueError)
    assert sorted(seen) == list(range(6))


def test_thousands_of_items_all_collected() -> None:
    with FanOut[int, int](8, "t") as pool:
        assert pool.map(list(range(5000)), lambda n: n + 1) == list(range(1, 5001))


def test_deadline_leaves_the_running_unfinished_and_the_queued_cancelled() -> None:
    release = threading.Event()
    started = threading.Event()

    def work(n: int) -> int:
        if n == 0:
            started.set()
            release.wait(30)  # blocks the pool's only thread past the deadline
        return n

    pool = FanOut[int, int](1, "t")
    try:
        out = pool.map([0, 1, 2], work, deadline_in=0.3)
        assert started.is_set()
        assert all(isinstance(o, Unfinished) for o in out), out
    finally:
        release.set()
        pool.close()
