"""Basic auth under a flood of wrong passwords: bcrypt checks of unknown credentials
hold at most a few workers (the rest are refused at once with 429), so a scrape with the
right, already checked credentials still gets a worker and its answer.

No sandbox: the one target is a closed port, down at once; what is measured is the
daemon's HTTP side.
"""

from __future__ import annotations

import base64
import os
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import bcrypt
import pytest

from tests.helpers import free_port, wait_for
from tests.helpers.daemon import Daemon

pytestmark = pytest.mark.integration

PASSWORD = "right-horse-battery"
FLOODERS = 120


def _basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def _status(d: Daemon, headers: dict[str, str], timeout: float) -> int:
    req = urllib.request.Request(d.url + "/metrics", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            resp.read()
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_wrong_password_flood_does_not_starve_a_cached_valid_credential(
        tmp_path: Path) -> None:
    config = tmp_path / "dbgauge.yaml"
    config.write_text("targets:\n  - name: closed\n    kind: postgres\n"
                      f"    dsn: postgresql://dbgauge@127.0.0.1:{free_port()}/postgres\n"
                      "    password_env: CLOSED_PASSWORD\n")
    web = tmp_path / "web.yml"
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(10)).decode()
    web.write_text(f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    d = Daemon(config, tmp_path / "daemon.log", args=["--web.config.file", str(web)],
               env={"CLOSED_PASSWORD": "x"})
    good = _basic("prometheus", PASSWORD)
    stop = threading.Event()
    seen: dict[int, int] = {}
    lock = threading.Lock()

    def flood() -> None:
        deadline = time.monotonic() + 60  # bounded even if the test fails early
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                code = _status(d, _basic("prometheus", os.urandom(8).hex()), 30)
            except OSError:
                code = 0
            with lock:
                seen[code] = seen.get(code, 0) + 1

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(FLOODERS)]
    try:
        assert _status(d, good, 10) == 200  # checked once: cached from now on
        for t in threads:
            t.start()
        # the flood is under way: wrong passwords are being refused
        wait_for(lambda: sum(seen.values()) >= 20, timeout=30,
                 what="the flood's first answers")
        for _ in range(3):
            # normally 0.1 s; before the gate, 15 s timeouts with 120 flooders
            assert _status(d, good, 10) == 200
    finally:
        stop.set()
        for t in threads:
            t.join(40)
        d.stop()
    assert set(seen) <= {401, 429}, seen
    assert seen.get(429, 0) > 0, seen  # the gate refused at once rather than queueing
    assert "Traceback" not in d.log_text()
