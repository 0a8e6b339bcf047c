"""What every bench script needs to run exporters side by side: the exporter processes
(started on loopback, their CPU and RSS read from /proc), one checked scrape, and the raw
numbers of a series of scrapes. Used by scrape.py and the scripts built on it."""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import socket
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
TIMEOUT_HEADER = {"X-Prometheus-Scrape-Timeout-Seconds": "10",
                  "Accept": "text/plain;version=0.0.4"}
HTTP_TIMEOUT = 12.0      # seconds per scrape; the exporters are told 10
START_TIMEOUT = 20.0     # seconds for an exporter to answer HTTP at all
LOG_PROBLEM = re.compile(r"\b(WARNING|ERROR|CRITICAL|level=(warn|error))\b")


class BenchError(Exception):
    """A failure that makes the numbers meaningless: reported in one line, no traceback."""


@dataclass
class Spec:
    """How to start one exporter and how to tell that its target is up."""

    name: str
    target: str
    port: int
    argv: list[str]
    path: str
    is_up: Callable[[str], bool]
    up_text: str
    collectors: Callable[[str], str]
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Result:
    """Raw numbers of one exporter over the measured scrapes."""

    exporter: str
    target: str
    version: str
    scrapes: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    cpu_seconds: float = 0.0
    rss_mib: float = 0.0
    series: int = 0
    self_series: int = 0
    collectors: str = ""
    warnings: list[str] = field(default_factory=list)

    def pct(self, q: int) -> float:
        """q-th percentile (inclusive method), ms."""
        if len(self.latencies_ms) < 2:
            return self.latencies_ms[0] if self.latencies_ms else float("nan")
        return statistics.quantiles(self.latencies_ms, n=100, method="inclusive")[q - 1]

    @property
    def cpu_ms(self) -> float:
        return 1000.0 * self.cpu_seconds / self.scrapes if self.scrapes else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {
            "exporter": self.exporter, "target": self.target, "version": self.version,
            "scrapes": self.scrapes, "series": self.series, "self_series": self.self_series,
            "p50_ms": self.pct(50), "p95_ms": self.pct(95),
            "mean_ms": statistics.fmean(self.latencies_ms) if self.latencies_ms else None,
            "max_ms": max(self.latencies_ms, default=None),
            "cpu_seconds_total": self.cpu_seconds, "cpu_ms_per_scrape": self.cpu_ms,
            "rss_mib": self.rss_mib, "collectors": self.collectors,
            "warnings": self.warnings, "latencies_ms": self.latencies_ms,
        }


# --------------------------------------------------------------------- /proc and processes

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    """All live descendants of pid (an exporter may fork helpers; none of these do today)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                rest = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(rest[1])
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        todo += kids
    return found


def cpu_seconds(pid: int) -> float:
    """utime+stime of pid and its descendants (live ones, and reaped ones via cutime/cstime)."""
    total = 0
    for i, p in enumerate([pid, *_children(pid)]):
        rest = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        fields = rest[11:15] if i == 0 else rest[11:13]  # utime stime [cutime cstime]
        total += sum(int(f) for f in fields)
    return total / CLK_TCK


def rss_mib(pid: int) -> float:
    """VmRSS of pid and its descendants, MiB."""
    kib = 0
    for p in [pid, *_children(pid)]:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                kib += int(line.split()[1])
    return kib / 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def version_of(argv: list[str]) -> str:
    """First line of `--version` (Go exporters print it on stderr)."""
    try:
        out = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    text = (out.stdout + out.stderr).strip().splitlines()
    return text[0].split(" (")[0].split("version ")[-1].split()[-1] if text else "?"


class Running:
    """One exporter subprocess on a free loopback port; its output goes to a log file."""

    def __init__(self, spec: Spec, log: Path) -> None:
        self.spec, self.port, self.log = spec, spec.port, log
        with log.open("wb") as out:
            self.proc = subprocess.Popen(spec.argv, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL,
                                         env={**os.environ, **spec.env},
                                         start_new_session=True)

    def tail(self, lines: int = 8) -> str:
        try:
            text = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return "\n    ".join(["", *text[-lines:]]) if text else " (empty log)"

    def log_problems(self) -> list[str]:
        """Warnings and errors the exporter logged during the run (counted, last one shown)."""
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return []
        bad = [ln for ln in text if LOG_PROBLEM.search(ln)]
        return [f"{len(bad)} warning/error log lines, last: {bad[-1].strip()}"] if bad else []

    def fail(self, why: str) -> BenchError:
        return BenchError(f"{self.spec.name} on {self.spec.target}: {why}; its log ends with:"
                          f"{self.tail()}")

    def wait_ready(self) -> None:
        """Until the HTTP server answers anything (an early exit is reported with its log)."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise self.fail(f"exited with status {self.proc.returncode} at start")
            try:
                get(self.port, "/", 1.0)
                return
            except OSError:
                time.sleep(0.1)
        raise self.fail(f"did not answer HTTP on {HOST}:{self.port} within {START_TIMEOUT:.0f} s")

    def scrape(self) -> tuple[float, str]:
        """One checked scrape: (latency ms, body); raises BenchError unless 200 and up."""
        try:
            status, body, seconds = get(self.port, self.spec.path, HTTP_TIMEOUT)
        except OSError as exc:
            raise self.fail(f"scrape failed: {exc}") from None
        if status != 200:
            raise self.fail(f"scrape returned HTTP {status}: {body[:200]!r}")
        if not self.spec.is_up(body):
            raise self.fail(f"target is not reported up (expected {self.spec.up_text})")
        return seconds * 1000.0, body

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def get(port: int, path: str, timeout: float) -> tuple[int, str, float]:
    """GET on a fresh connection (like every exporter sees it): status, body, seconds."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        started = time.perf_counter()
        conn.request("GET", path, headers=TIMEOUT_HEADER)
        resp = conn.getresponse()
        body = resp.read()
        elapsed = time.perf_counter() - started
        return resp.status, body.decode("utf-8", "replace"), elapsed
    finally:
        conn.close()
