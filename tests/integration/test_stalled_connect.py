"""Targets that accept TCP and never answer (a server frozen before its greeting, a
half-dead load balancer): every scrape tries each of them again, gives up at its deadline,
and leaves nothing behind: the daemon's sockets and threads stay flat, and the listener
sees each abandoned connection closed by the daemon.

The listener is a Python socket in the test (no sandbox needed), one per engine, so each
engine's connects are counted apart.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import wait_for
from tests.helpers.daemon import Daemon

pytestmark = pytest.mark.integration

ENGINES = ("postgres", "pgbouncer", "mysql")
SCRAPES = 8


class SilentListener:
    """Accepts every connection, never sends a byte; keeps the accepted sockets."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def closed_by_peer(self) -> int:
        """Accepted connections the daemon has closed: what it sent read and dropped,
        then end of file (or a reset)."""
        n = 0
        for conn in list(self.accepted):
            conn.setblocking(False)
            try:
                while chunk := conn.recv(65536):
                    del chunk
                n += 1
            except BlockingIOError:
                pass
            except OSError:
                n += 1  # reset by the peer: closed too
        return n

    def close(self) -> None:
        self.sock.close()
        for conn in self.accepted:
            conn.close()


@contextmanager
def listeners() -> Iterator[dict[str, SilentListener]]:
    made = {engine: SilentListener() for engine in ENGINES}
    try:
        yield made
    finally:
        for listener in made.values():
            listener.close()


def _config(path: Path, ports: dict[str, int], copies: int = 1) -> Path:
    lines = ["daemon:", "  scrape_timeout_offset: 0.1", "targets:"]
    for i, (engine, port) in enumerate([*ports.items()] * copies):
        scheme, db = ("mysql", "") if engine == "mysql" else \
            ("postgresql", "pgbouncer" if engine == "pgbouncer" else "postgres")
        lines += [f"  - name: stalled-{engine}" + (f"-{i}" if copies > 1 else ""),
                  f"    kind: {engine}",
                  f"    dsn: {scheme}://dbgauge@127.0.0.1:{port}/{db}",
                  "    password_env: STALLED_PASSWORD"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _all_closed(silent: dict[str, SilentListener]) -> bool:
    open_ = {e: len(x.accepted) - x.closed_by_peer() for e, x in silent.items()}
    return not any(open_.values())


def _fds_and_threads(pid: int) -> tuple[int, int]:
    return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


def test_timed_out_connects_close_their_sockets_and_threads(tmp_path: Path) -> None:
    with listeners() as silent:
        config = _config(tmp_path / "dbgauge.yaml",
                         {engine: listener.port for engine, listener in silent.items()})
        d = Daemon(config, tmp_path / "daemon.log", env={"STALLED_PASSWORD": "x"})
        try:
            def scrape() -> None:
                status, body = d.get("/metrics", headers={
                    "X-Prometheus-Scrape-Timeout-Seconds": "0.6"})
                assert status == 200, body
                for engine in ENGINES:
                    assert f'dbgauge_up{{target="stalled-{engine}"}} 0.0' in body, body

            scrape()  # the first scrape starts the worker threads a scrape needs
            wait_for(lambda: _all_closed(silent), what="the first scrape's connections closed")
            fds, threads = _fds_and_threads(d.proc.pid)
            for _ in range(SCRAPES):
                scrape()
            # every scrape tried every target again (none "still running" past its deadline)
            for engine, listener in silent.items():
                assert len(listener.accepted) >= SCRAPES + 1, (engine, len(listener.accepted))
            # ... and closed each attempt: the listener sees EOF on all of them
            wait_for(lambda: _all_closed(silent), what="every abandoned connection closed")
            after = _fds_and_threads(d.proc.pid)
            assert after[0] <= fds + 1 and after[1] <= threads + 1, \
                f"fds {fds} -> {after[0]}, threads {threads} -> {after[1]}"
        finally:
            d.stop()
        log = d.log_text()
        assert "Traceback" not in log, log[-3000:]
        assert "still running" not in log, log[-3000:]
        assert "accepted the connection but did not complete the handshake" in log, log[-3000:]


def test_out_of_descriptors_is_a_down_target_not_a_traceback(tmp_path: Path) -> None:
    """30 stalled targets with 26 descriptors for the whole daemon: connects fail with
    "Too many open files" as their reason (the target down, a warning), never a
    traceback, and the descriptors come back once the scrape has given up."""
    with listeners() as silent:
        config = _config(tmp_path / "dbgauge.yaml",
                         {engine: listener.port for engine, listener in silent.items()}, 10)
        d = Daemon(config, tmp_path / "daemon.log", env={"STALLED_PASSWORD": "x"},
                   max_fds=26)
        try:
            for _ in range(3):
                status, body = d.get("/metrics", headers={
                    "X-Prometheus-Scrape-Timeout-Seconds": "0.6"})
                assert status == 200, body
                assert body.count("dbgauge_up{") == 30 and " 1.0\n" not in \
                    "".join(line + "\n" for line in body.splitlines()
                            if line.startswith("dbgauge_up{")), body
            wait_for(lambda: _all_closed(silent), what="every abandoned connection closed")
        finally:
            d.stop()
        log = d.log_text()
        assert "Too many open files" in log, log[-3000:]  # the limit was really reached
        assert "Traceback" not in log, log[-3000:]
