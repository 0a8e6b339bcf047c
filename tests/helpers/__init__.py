"""Helpers shared by the tests: waiting for a state, reading samples (exposition text or a
collector's own), free ports.

Imported by test modules (`from tests.helpers import wait_for`); fixtures stay in
tests/conftest.py. Nothing here starts a server.
"""

from __future__ import annotations

import re
import socket
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from dbgauge.toolkit.metrics import Sample

REPO = Path(__file__).resolve().parents[2]
DBGAUGE = [sys.executable, "-m", "dbgauge"]  # the checkout's own code, as a command
T = TypeVar("T")
Metrics = dict[tuple[str, frozenset[tuple[str, str]]], float]


_FIRST_POLL, _LAST_POLL = 0.1, 0.3  # wait_for's pauses: the first, and the longest


def wait_for(check: Callable[[], T | None], timeout: float = 15.0, what: str = "",
             interval: float | None = None) -> T:
    """Poll `check` until it returns something other than None/False, or fail naming `what`.

    Tests wait for the state they mean, with a generous deadline, instead of sleeping for a
    guessed time or asserting how long something took. Without `interval` the polls start
    0.1 s apart and back off to 0.3 s: a poll is often a scrape of every target or a dbgauge
    process, and on two cores a long wait polling ten times a second took the CPU the
    servers and the other tests needed. A given `interval` is kept as it is.
    """
    deadline = time.monotonic() + timeout
    pause = interval if interval is not None else _FIRST_POLL
    while True:
        result = check()
        if result is not None and result is not False:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or check}")
        time.sleep(pause)
        if interval is None:
            pause = min(pause * 1.5, _LAST_POLL)


_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+-?\d+)?[ \t]*")
_LABEL = re.compile(r'[ \t]*([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"((?:[^"\\]|\\.)*)"[ \t]*(?:,|$)')
_ESCAPE = re.compile(r"\\(.)")
_ESCAPED = {"n": "\n", "\\": "\\", '"': '"'}


def parse_metrics(text: str) -> Metrics:
    """Exposition text -> {(sample name, labels): value}.

    Sample lines only, read with two regular expressions, strictly (a line that is not a
    sample fails). prometheus_client's parser, which test_exporter still runs on the
    daemon's output as the format's check, reads a character at a time: 0.3 s for one
    /metrics of the sandbox, and the tests poll /metrics until a state shows."""
    out: Metrics = {}
    seen: dict[str, frozenset[tuple[str, str]]] = {}  # most label sets recur across families
    for line in text.split("\n"):
        if not line or line[0] == "#":
            continue
        m = _SAMPLE.fullmatch(line)
        assert m is not None, f"not an exposition sample line: {line!r}"
        name, labels, number = m.groups()
        if not labels:
            out[(name, frozenset())] = float(number)
            continue
        parsed = seen.get(labels)
        if parsed is None:
            parsed = seen[labels] = _labels(labels, line)
        out[(name, parsed)] = float(number)
    return out


def _labels(labels: str, line: str) -> frozenset[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    matched = 0
    for m in _LABEL.finditer(labels):
        assert m.start() == matched, f"malformed labels in {line!r}"
        matched = m.end()
        text_value = m.group(2)
        if "\\" in text_value:
            text_value = _ESCAPE.sub(lambda e: _ESCAPED.get(e.group(1), e.group(0)), text_value)
        pairs.append((m.group(1), text_value))
    assert matched == len(labels), f"malformed labels in {line!r}"
    return frozenset(pairs)


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
