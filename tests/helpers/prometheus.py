"""A real Prometheus (Debian's 2.x) for the tests: started on a config the test writes,
queried through its HTTP API, stopped afterwards."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import free_port, wait_for

PROMETHEUS = "/usr/bin/prometheus"


@dataclass
class Prometheus:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}",
                                        timeout=10) as resp:
                doc = json.loads(resp.read())
        except urllib.error.HTTPError as exc:  # PromQL errors answer 400/422 with a reason
            raise AssertionError(f"{params}: HTTP {exc.code} {exc.read().decode()}") from None
        assert doc["status"] == "success", doc
        return doc["data"]

    def query(self, expr: str, **params: str) -> dict[tuple[tuple[str, str], ...], float]:
        data = self.api("query", query=expr, **params)
        if data["resultType"] == "scalar":
            return {(): float(data["result"][1])}
        return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in data["result"]}


@contextmanager
def prometheus(directory: Path, config: Mapping[str, Any]) -> Iterator[Prometheus]:
    """Prometheus on `config` (checked by promtool first), its data and log in
    `directory`; ready when /-/ready answers."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "prometheus.yml").write_text(yaml.safe_dump(dict(config)))
    check = subprocess.run(["promtool", "check", "config", str(directory / "prometheus.yml")],
                           capture_output=True, text=True, timeout=60, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    port = free_port()
    log = directory / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={directory / 'prometheus.yml'}",
             f"--storage.tsdb.path={directory / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}",
             "--storage.tsdb.retention.time=1h", "--log.level=warn"],
            stdout=out, stderr=subprocess.STDOUT)
    prom = Prometheus(f"http://127.0.0.1:{port}", proc, log)
    try:
        def ready() -> bool | None:
            assert proc.poll() is None, log.read_text()
            try:
                with urllib.request.urlopen(f"{prom.url}/-/ready", timeout=2) as resp:
                    return True if resp.status == 200 else None
            except OSError:
                return None

        wait_for(ready, timeout=30, what="Prometheus to be ready")
        yield prom
    finally:
        proc.kill()
        proc.wait(10)
