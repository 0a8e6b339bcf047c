"""Running dbgauge itself against the sandbox: the daemon as a subprocess, configs made
from the sandbox's, one direct run of collectors, and the `dbgauge check` command line."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dbgauge.app import load_config, parse_config, registry
from dbgauge.toolkit.db import connect
from dbgauge.toolkit.exporter.scrape import TargetRunner
from dbgauge.toolkit.heartbeat import HeartbeatWriter
from dbgauge.toolkit.targets import Target
from tests.helpers import DBGAUGE, REPO, Metrics, free_port, parse_metrics, wait_for
from tests.helpers.servers import Sandbox

# The peers' start-up variables (docs/compat.md): a daemon under test sees only those its
# test sets, never ones left in the environment that runs the tests.
PEER_VARIABLES = ("DATA_SOURCE_NAME", "DATA_SOURCE_URI", "DATA_SOURCE_URI_FILE",
                  "DATA_SOURCE_USER", "DATA_SOURCE_USER_FILE", "DATA_SOURCE_PASS",
                  "DATA_SOURCE_PASS_FILE", "MYSQLD_EXPORTER_PASSWORD",
                  "PG_EXPORTER_WEB_TELEMETRY_PATH", "PG_EXPORTER_EXTEND_QUERY_PATH",
                  "PG_EXPORTER_AUTO_DISCOVER_DATABASES", "PG_EXPORTER_DISABLE_DEFAULT_METRICS",
                  "PG_EXPORTER_DISABLE_SETTINGS_METRICS", "PG_EXPORTER_CONSTANT_LABELS",
                  "PG_EXPORTER_EXCLUDE_DATABASES", "PG_EXPORTER_INCLUDE_DATABASES",
                  "PG_EXPORTER_METRIC_PREFIX", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")


class Daemon:
    """A `dbgauge serve` subprocess with its log captured to a file: with `config` (None:
    no --config), more command-line `args` and environment variables `env` (the peers'
    start-up spellings), at most `max_fds` open files if given, ready once /healthz
    answers."""

    def __init__(self, config: Path | None, log: Path, *, args: Sequence[str] = (),
                 env: Mapping[str, str] | None = None, max_fds: int | None = None) -> None:
        self.port = free_port()
        self.log = log
        self._log_file = log.open("wb")
        environ = {k: v for k, v in os.environ.items() if k not in PEER_VARIABLES}
        self.proc = subprocess.Popen(
            [*DBGAUGE, "serve", *(["--config", str(config)] if config is not None else []),
             "--listen", f"127.0.0.1:{self.port}", *args],
            stdout=self._log_file, stderr=subprocess.STDOUT, cwd=REPO,
            env={**environ, **(env or {})},
            preexec_fn=None if max_fds is None else lambda: resource.setrlimit(
                resource.RLIMIT_NOFILE, (max_fds, max_fds)),
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

    def reload(self, expect: str) -> None:
        """SIGHUP, then wait for the log line `expect` (e.g. "config reloaded")."""
        seen = self.log_text().count(expect)
        self.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: self.log_text().count(expect) > seen, timeout=15,
                 what=f"{expect!r} in the log after SIGHUP")

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


def config_file(sandbox: Sandbox, path: Path, targets: list[dict[str, object]] | None = None,
                **daemon: object) -> Path:
    """The sandbox's dbgauge config at `path`, with other targets and daemon settings."""
    data = yaml.safe_load(sandbox.config.read_text())
    if targets is not None:
        data["targets"] = targets
    data["daemon"] = {**data.get("daemon", {}), **daemon}
    path.write_text(yaml.safe_dump(data))
    return path


def one_target_config(sandbox: Sandbox, path: Path, name: str, **entry: object) -> Path:
    """A config at `path` of the sandbox's target `name` alone, `entry` overriding its
    settings (collectors, collector_options, compat...), without its labels and heartbeat:
    a peer exporter compared with it has neither."""
    target = {**target_entry(sandbox, name), **entry}
    target.pop("labels", None)
    target.pop("heartbeat", None)
    path.write_text(yaml.safe_dump({"targets": [target]}))
    return path


def collect_text(config: Path, name: str, *args: str) -> str:
    """`dbgauge collect --config CONFIG NAME ARGS`'s exposition text (asserted to succeed)."""
    proc = subprocess.run([*DBGAUGE, "collect", "--config", str(config), name, *args],
                          capture_output=True, text=True, timeout=60, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def target_entry(sandbox: Sandbox, name: str) -> dict[str, object]:
    """One target of the sandbox's config, as its YAML mapping."""
    data = yaml.safe_load(sandbox.config.read_text())
    return next(dict(t) for t in data["targets"] if t["name"] == name)


def target_config(sandbox: Sandbox, name: str, **overrides: Any) -> Target:
    """The sandbox's target (monitoring user, password file) with `overrides` applied."""
    entry = {**target_entry(sandbox, name), **overrides}
    return parse_config(yaml.safe_dump({"targets": [entry]})).all_targets()[0]


def collect_direct(sandbox: Sandbox, target: str | Target, *collectors: str,
                   options: Mapping[str, Mapping[str, object]] | None = None) -> Metrics:
    """One run of each collector (with its `options`) on `target` (a sandbox target's
    name, or a Target) as the sandbox's monitoring user, every sample checked against its
    spec and for duplicates."""
    REGISTRY = registry()
    conn = connect(load_config(sandbox.config).target(target) if isinstance(target, str)
                   else target)
    try:
        out: Metrics = {}
        for name in collectors:
            c = REGISTRY[name].configured((options or {}).get(name, {}))
            assert c.supports(conn.server), f"{name} does not support {conn.server}"
            for sample in c.collect(conn):
                c.validate_sample(sample)
                key = (sample.name, frozenset(sample.labels.items()))
                assert key not in out, f"duplicate series {key}"
                out[key] = sample.value
        return out
    finally:
        conn.close()


@contextmanager
def heartbeat(sandbox: Sandbox, table: str | None = None) -> Iterator[HeartbeatWriter]:
    """A fast heartbeat writer on the primary (as the daemon runs one), for lag checks; in
    `table` for a test that must be its only writer (the session daemon writes the
    sandbox's default table whenever it runs)."""
    settings: dict[str, object] = {"mode": "write", "interval": 0.2}
    if table is not None:
        settings["table"] = table
    writer = HeartbeatWriter(target_config(sandbox, "mariadb-primary", heartbeat=settings))
    writer.start()
    try:
        yield writer
    finally:
        writer.stop()


@dataclass(frozen=True)
class Outcome:
    """What a `dbgauge check` run printed and exited with."""

    code: int
    out: str
    err: str

    @property
    def first(self) -> str:
        return self.out.split("\n", 1)[0]

    def json(self) -> dict[str, object]:
        doc: dict[str, object] = json.loads(self.out)
        return doc


def check(*args: str) -> Outcome:
    """`dbgauge check ARGS...` as a monitoring system runs it."""
    proc = subprocess.run([*DBGAUGE, "check", *args], capture_output=True, text=True,
                          timeout=60, cwd=REPO, check=False)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def cfg(sandbox: Sandbox, *args: str) -> list[str]:
    """--config of the sandbox, then `args`."""
    return ["--config", str(sandbox.config), *args]


class InProcessScrape:
    """In-process scrapes of one target through the daemon's own TargetRunner (not the
    daemon's Scraper of every target): each call is one scrape, checked."""

    def __init__(self, cfg: Target) -> None:
        self.runner = TargetRunner(cfg, registry().for_target(cfg))

    def __call__(self, only: set[str] | None = None,
                 failing: frozenset[str] = frozenset()) -> Metrics:
        """The samples of one scrape; every collector must succeed but those `failing`,
        which must fail (a file with a broken query keeps the other queries' samples)."""
        result = self.runner.scrape(time.monotonic() + 8, only)
        assert result.up, result.error
        failed = [r for r in result.collectors if not r.success]
        assert {r.collector for r in failed} == failing, failed
        return {(sample.name, frozenset(sample.labels)): sample.value
                for sample in result.samples}

    def close(self) -> None:
        self.runner.close()


@contextmanager
def scraper(sandbox: Sandbox, name: str, **overrides: Any) -> Iterator[InProcessScrape]:
    """In-process scrapes of one sandbox target, closed afterwards."""
    s = InProcessScrape(target_config(sandbox, name, **overrides))
    try:
        yield s
    finally:
        s.close()
