"""The daemon's hygiene against the real sandbox: reloads under load, slow clients, the
listen backlog, bounded connects, compression, process metrics and headers.

Each test runs its own `dbgauge serve` (a subprocess) unless the shared one will do.
"""

from __future__ import annotations

import gzip
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from dbgauge.toolkit import __version__
from tests.helpers import parse_metrics, value, wait_for
from tests.helpers.daemon import Daemon, target_entry
from tests.helpers.servers import Sandbox
from tests.integration.test_reliability import Scrapers, daemon_for, proc_stats, scrape

pytestmark = pytest.mark.integration


def test_sighup_loop_while_scraping_drops_no_request(sandbox: Sandbox, tmp_path: Path,
                                                     silent_port: int) -> None:
    """30 reloads while 10 clients scrape: a reload retires the old scraper only when its
    last scrape ends, so no request fails (the pool was shut under queued scrapes, which
    died of CancelledError) and nothing is logged as a traceback. A silent target keeps
    the scrape pool busy to the deadline; every other reload drops a target, so its runner
    is closed under load too."""
    silent = {"name": "silent-pg", "kind": "postgres", "connect_timeout": 30,
              "dsn": f"postgresql://x@127.0.0.1:{silent_port}/x"}
    entries = [silent, target_entry(sandbox, "pg-primary"), target_entry(sandbox, "pgbouncer")]
    with daemon_for(sandbox, tmp_path, entries) as d:
        config = tmp_path / "c.yaml"
        full = yaml.safe_load(config.read_text())
        fewer = {**full, "targets": full["targets"][:2]}
        with Scrapers(d, ["/metrics"] * 10, timeout=1.5) as load:
            for n in range(30):
                config.write_text(yaml.safe_dump(fewer if n % 2 == 0 else full))
                d.proc.send_signal(signal.SIGHUP)
                wait_for(lambda n=n: d.log_text().count("config reloaded") > n or None,
                         timeout=15, what=f"reload {n + 1}")
                wait_for(lambda n=n: len(load.results) >= 3 * (n + 1) or None, timeout=15)
        assert not load.errors, load.errors[:5]
        assert len(load.results) >= 90
        bad = [(r.status, r.body[-300:]) for r in load.results
               if r.status != 200 or not {"silent-pg", "pg-primary"} <= set(r.up)]
        assert not bad, bad[:5]
        assert d.proc.poll() is None
    log = d.log_text()
    assert "Traceback" not in log and "CancelledError" not in log, log[-3000:]


def test_listen_backlog_is_at_least_128(daemon: Daemon) -> None:
    """A burst of quick connections is queued by the kernel: with a backlog of 5 every
    sixth one waited for a SYN retransmit (1 s)."""
    out = subprocess.run(["ss", "-ltnH", f"sport = :{daemon.port}"], capture_output=True,
                         text=True, check=True, timeout=10).stdout.split()
    # State Recv-Q Send-Q ...: for a listening socket Send-Q is its backlog
    assert out and out[0] == "LISTEN", out
    assert int(out[2]) >= 128, out


def _slow_clients(port: int, count: int) -> list[socket.socket]:
    clients = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finishes its headers
        clients.append(s)
    return clients


def _open(s: socket.socket) -> bool:
    """The server has not closed this connection."""
    s.setblocking(False)
    try:
        return s.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.setblocking(True)


def test_slow_header_flood_holds_no_threads_and_scrapes_are_answered(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """200 clients that never finish their request headers: they hold sockets, not
    threads, and a normal scrape is answered while they are all still connected."""
    entries = [target_entry(sandbox, "pg-primary")]
    with daemon_for(sandbox, tmp_path, entries, header_timeout="60s", max_requests=8) as d:
        assert scrape(d).up == {"pg-primary": 1.0}
        before = proc_stats(d.proc.pid)
        clients = _slow_clients(d.port, 200)
        try:
            # `before` may still count the first scrape's connection or a database socket
            # the daemon closes meanwhile: a few fds of slack, not 200 minus a few.
            wait_for(lambda: proc_stats(d.proc.pid)["fds"] >= before["fds"] + 197 or None,
                     timeout=15, what="the daemon to hold the 200 connections")
            answer = scrape(d, timeout=5.0)
            assert answer.status == 200 and answer.up == {"pg-primary": 1.0}, \
                (answer, d.log_text()[-2000:])
            during = proc_stats(d.proc.pid)
            closed = sum(not _open(s) for s in clients)
            assert closed == 0, (closed, d.log_text()[-2000:])  # the flood is still there
        finally:
            for s in clients:
                s.close()
    # one reader thread and at most max_requests workers, whatever the clients do
    assert during["threads"] <= before["threads"] + 8, (before, during, d.log_text()[-2000:])


def test_header_deadline_is_overall_not_per_read(sandbox: Sandbox, tmp_path: Path) -> None:
    """A client sending a byte every 0.2 s (each read succeeds) is still dropped when its
    headers are not complete by header_timeout."""
    entries = [target_entry(sandbox, "pg-primary")]
    with daemon_for(sandbox, tmp_path, entries, header_timeout="1s") as d:
        s = socket.create_connection(("127.0.0.1", d.port), timeout=5)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")

        def dropped() -> bool | None:
            try:
                s.sendall(b"a")  # one more byte of a header that never ends
            except OSError:
                return True
            return None if _open(s) else True

        try:
            wait_for(dropped, timeout=20, interval=0.2, what="the server to drop the client")
        finally:
            s.close()
        assert scrape(d).up == {"pg-primary": 1.0}


@pytest.fixture()
def silent_port() -> int:
    """A listening socket that never accepts: the kernel completes the TCP handshake and
    nobody ever answers the PostgreSQL startup message."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    yield int(server.getsockname()[1])
    server.close()


def test_postgres_connect_ends_at_the_scrape_deadline(sandbox: Sandbox, tmp_path: Path,
                                                      silent_port: int) -> None:
    """libpq rounds a connect timeout up to whole seconds of at least 2: with 0.7 s of
    scrape budget left the connect outlived the deadline and held the target's lock into
    the next scrape. Bounded by the deadline, the target itself reports the timeout."""
    targets = [{"name": "silent-pg", "kind": "postgres", "connect_timeout": 30,
                "dsn": f"postgresql://x@127.0.0.1:{silent_port}/x"},
               target_entry(sandbox, "pg-primary")]
    with daemon_for(sandbox, tmp_path, targets) as d:
        for _ in range(2):  # the second is not stuck behind the first's connect
            m = d.metrics(scrape_timeout=1.2)  # budget 0.7 s (offset 0.5 s)
            assert value(m, "dbgauge_up", target="silent-pg") == 0.0
            assert value(m, "dbgauge_up", target="pg-primary") == 1.0
            took = value(m, "dbgauge_target_scrape_duration_seconds", target="silent-pg")
            assert took is not None and took < 0.7 + 0.2, took
    log = d.log_text()
    assert f"target silent-pg is down: cannot connect to 127.0.0.1:{silent_port}: " \
           "connection timeout expired" in log, log[-2000:]
    assert "did not answer in time" not in log and "still running" not in log, log[-2000:]


def test_gzip_process_metrics_and_server_header(daemon: Daemon) -> None:
    req = urllib.request.Request(daemon.url + "/metrics", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=15) as resp:
        assert resp.headers["Content-Encoding"] == "gzip"
        server = resp.headers["Server"]
        text = gzip.decompress(resp.read()).decode()
    assert server == f"dbgauge/{__version__}", server  # no Python version
    m = parse_metrics(text)
    assert value(m, "dbgauge_up", target="pg-primary") == 1.0
    assert (value(m, "process_resident_memory_bytes") or 0) > 10 * 2**20
    assert (value(m, "process_open_fds") or 0) > 3
    assert (value(m, "process_max_fds") or 0) >= (value(m, "process_open_fds") or 0)
    assert (value(m, "process_cpu_seconds_total") or 0) > 0
    started = value(m, "process_start_time_seconds")
    assert started is not None and time.time() - 86400 < started < time.time()
    assert (value(m, "process_virtual_memory_bytes") or 0) > 0
    # without Accept-Encoding: plain text; per-target /probe has no process metrics
    with urllib.request.urlopen(daemon.url + "/probe?target=pg-primary", timeout=15) as resp:
        assert resp.headers["Content-Encoding"] is None
        probe = resp.read().decode()
    assert "dbgauge_up" in probe and not re.search(r"(?m)^(# (HELP|TYPE) )?process_", probe)


def test_daemon_answers_keep_alive_requests_on_one_connection(daemon: Daemon) -> None:
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=15) as s:
        reader = s.makefile("rb")
        for _ in range(3):
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            status = reader.readline()
            headers = {}
            while (line := reader.readline()) not in (b"\r\n", b""):
                key, _, val = line.decode().partition(":")
                headers[key.strip().lower()] = val.strip()
            assert status.startswith(b"HTTP/1.1 200"), status
            assert reader.read(int(headers["content-length"])) == b"ok\n"
