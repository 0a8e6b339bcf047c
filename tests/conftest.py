"""Shared fixtures: one real-server sandbox per test session, and a running daemon.

The sandbox uses its own directory and base port 10000 so a developer's `make demo`
sandbox (base 20000) is never disturbed. If it cannot start, every integration test
fails loudly: there is no skip for missing servers.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest
from prometheus_client.parser import text_string_to_metric_families

from toolkit import sandbox as sb

REPO = Path(__file__).resolve().parents[1]
# 10000: every sandbox port (base + 3306 ... base + 6432) stays below Linux's ephemeral
# range (32768-60999), so an outgoing connection's local port can never squat on one.
BASE_PORT = int(os.environ.get("DBGAUGE_TEST_BASE_PORT", "10000"))
# The base port is part of the default directory: a sandbox keeps the ports it was made with.
SANDBOX_DIR = Path(os.environ.get("DBGAUGE_TEST_SANDBOX_DIR",
                                  f"/tmp/dbgauge-test-{os.getuid()}-{BASE_PORT}"))
DBGAUGE = [sys.executable, "-m", "toolkit.cli"]


@dataclass(frozen=True)
class Sandbox:
    directory: Path
    config: Path
    state: sb.SandboxState


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    try:
        config = sb.up(SANDBOX_DIR, BASE_PORT)
    except sb.SandboxError as exc:
        pytest.fail(f"the real-server sandbox could not start: {exc}", pytrace=False)
    yield Sandbox(SANDBOX_DIR, config, sb.load_state(SANDBOX_DIR))
    if not os.environ.get("DBGAUGE_KEEP_SANDBOX"):
        sb.down(SANDBOX_DIR)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Daemon:
    """A `dbgauge serve` subprocess with its log captured to a file."""

    def __init__(self, config: Path, log: Path) -> None:
        self.port = free_port()
        self.log = log
        self._log_file = log.open("wb")
        self.proc = subprocess.Popen(
            [*DBGAUGE, "serve", "--config", str(config), "--listen", f"127.0.0.1:{self.port}"],
            stdout=self._log_file, stderr=subprocess.STDOUT, cwd=REPO,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dbgauge serve exited: {self.log_text()}")
            try:
                self.get("/healthz", timeout=1)
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"dbgauge serve did not come up: {self.log_text()}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str, timeout: float = 15, headers: dict[str, str] | None = None
            ) -> tuple[int, str]:
        req = urllib.request.Request(self.url + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return int(resp.status), resp.read().decode()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read().decode()

    def metrics(self, path: str = "/metrics", scrape_timeout: float | None = None
                ) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
        headers = {}
        if scrape_timeout is not None:
            headers["X-Prometheus-Scrape-Timeout-Seconds"] = str(scrape_timeout)
        status, body = self.get(path, headers=headers)
        assert status == 200, body
        return parse_metrics(body)

    def log_text(self) -> str:
        if not self._log_file.closed:
            self._log_file.flush()
        return self.log.read_text(errors="replace")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log_file.close()
        return int(self.proc.returncode)


def parse_metrics(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def value(metrics: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str,
          **labels: str) -> float | None:
    """The value of the one sample of `name` whose labels include `labels`."""
    found = [v for (n, ls), v in metrics.items()
             if n == name and set(labels.items()) <= set(ls)]
    assert len(found) <= 1, f"{name}{labels} matches {len(found)} samples"
    return found[0] if found else None


@pytest.fixture(scope="session")
def daemon(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(sandbox.config, tmp_path_factory.mktemp("daemon") / "serve.log")
    yield d
    d.stop()


T = TypeVar("T")
Metrics = dict[tuple[str, frozenset[tuple[str, str]]], float]


def wait_for(check: Callable[[], T | None], timeout: float = 15.0, what: str = "",
             interval: float = 0.1) -> T:
    """Poll `check` until it returns something other than None/False, or fail."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result is not None and result is not False:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or check}")
        time.sleep(interval)


def collect_direct(sandbox: Sandbox, target: str, *collectors: str) -> Metrics:
    """One run of each collector on `target` as the sandbox's monitoring user, every sample
    checked against its spec and for duplicates."""
    from toolkit.app import load_config, registry
    from toolkit.db import connect

    REGISTRY = registry()
    conn = connect(load_config(sandbox.config).target(target))
    try:
        out: Metrics = {}
        for name in collectors:
            c = REGISTRY[name]
            assert c.supports(conn.server), f"{name} does not support {conn.server}"
            for sample in c.collect(conn):
                c.validate_sample(sample)
                key = (sample.name, frozenset(sample.labels.items()))
                assert key not in out, f"duplicate series {key}"
                out[key] = sample.value
        return out
    finally:
        conn.close()


def val(m: Metrics, name: str, **labels: str) -> float | None:
    """The sample with exactly these labels."""
    return m.get((name, frozenset(labels.items())))
