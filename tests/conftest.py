"""Shared fixtures: one real-server sandbox per test session, and a running daemon.

The sandbox uses its own directory and base port 10000 so a developer's `make demo`
sandbox (base 20000) is never disturbed. If it cannot start, every integration test
fails loudly: there is no skip for missing servers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import Metrics, free_port, parse_metrics, val, value, wait_for
from toolkit import sandbox as sb

# Re-exported for test modules that still import these from here (tests.helpers is their
# home).
__all__ = ["DBGAUGE", "REPO", "Daemon", "Metrics", "Sandbox", "collect_direct", "free_port",
           "parse_metrics", "val", "value", "wait_for"]

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


# Fixtures that start real servers (the sandbox) or a daemon: a test using one, directly or
# through another fixture, is an integration test.
SERVER_FIXTURES = frozenset({"sandbox", "daemon"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse a test that needs a server without the `integration` mark, and an unmarked test
    in tests/integration/: `pytest -m "not integration"` must run with no server at all."""
    wrong = []
    for item in items:
        marked = item.get_closest_marker("integration") is not None
        needs = SERVER_FIXTURES & set(getattr(item, "fixturenames", ()))
        in_integration = "integration" in Path(str(item.fspath)).parts
        if not marked and (needs or in_integration):
            why = f"uses {', '.join(sorted(needs))}" if needs else "is in tests/integration"
            wrong.append(f"{item.nodeid} {why} but is not marked integration")
    if wrong:
        raise pytest.UsageError("\n".join(wrong))


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    try:
        config = sb.up(SANDBOX_DIR, BASE_PORT)
    except sb.SandboxError as exc:
        pytest.fail(f"the real-server sandbox could not start: {exc}", pytrace=False)
    yield Sandbox(SANDBOX_DIR, config, sb.load_state(SANDBOX_DIR))
    if not os.environ.get("DBGAUGE_KEEP_SANDBOX"):
        sb.down(SANDBOX_DIR)


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


@pytest.fixture(scope="session")
def daemon(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(sandbox.config, tmp_path_factory.mktemp("daemon") / "serve.log")
    yield d
    d.stop()




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


