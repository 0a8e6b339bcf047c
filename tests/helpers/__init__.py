"""Helpers shared by the tests: waiting for a state, reading samples (exposition text or a
collector's own), free ports.

Imported by test modules (`from tests.helpers import wait_for`); fixtures stay in
tests/conftest.py. Nothing here starts a server.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from prometheus_client.parser import text_string_to_metric_families

from dbgauge.toolkit.metrics import Sample

REPO = Path(__file__).resolve().parents[2]
DBGAUGE = [sys.executable, "-m", "dbgauge"]  # the checkout's own code, as a command
T = TypeVar("T")
Metrics = dict[tuple[str, frozenset[tuple[str, str]]], float]


def wait_for(check: Callable[[], T | None], timeout: float = 15.0, what: str = "",
             interval: float = 0.1) -> T:
    """Poll `check` until it returns something other than None/False, or fail naming `what`.

    Tests wait for the state they mean, with a generous deadline, instead of sleeping for a
    guessed time or asserting how long something took.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result is not None and result is not False:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or check}")
        time.sleep(interval)


def parse_metrics(text: str) -> Metrics:
    """Exposition text -> {(sample name, labels): value}."""
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def as_dict(collector: str, samples: Iterable[Sample]) -> Metrics:
    """A collector's samples as {(name, labels): value}, each checked against the
    collector's declared specs (name and label set); a series twice fails."""
    from dbgauge.app import registry

    checked = registry()[collector]
    out: Metrics = {}
    for sample in samples:
        checked.validate_sample(sample)
        key = (sample.name, frozenset(sample.labels.items()))
        assert key not in out, f"{collector} emitted {key} twice"
        out[key] = sample.value
    return out


def value(metrics: Metrics, name: str, **labels: str) -> float | None:
    """The value of the one sample of `name` whose labels include `labels` (all of a
    family's labels, or fewer when the rest are the same for every sample, like `target`)."""
    found = [v for (n, ls), v in metrics.items()
             if n == name and set(labels.items()) <= set(ls)]
    assert len(found) <= 1, f"{name}{labels} matches {len(found)} samples"
    return found[0] if found else None


def free_port() -> int:
    """A TCP port nothing listens on right now (the kernel's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
