"""The HTTP daemon: /metrics, /probe, /healthz and an index page.

Built on the standard library's threading HTTP server: the daemon's work is waiting
on databases, not serving HTTP, and this keeps the dependency list short.
"""

from __future__ import annotations

import html
import logging
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Protocol
from urllib.parse import parse_qs, urlsplit

from toolkit import __version__
from toolkit.config import Config, TargetConfig, load_config, parse_listen
from toolkit.errors import ConfigError, DbgaugeError
from toolkit.exporter.render import encode
from toolkit.exporter.scrape import Scraper, TargetResult
from toolkit.jobs import Job, JobRunner, JobSnapshot, build_jobs
from toolkit.logs import setup_logging

log = logging.getLogger("dbgauge.serve")
TIMEOUT_HEADER = "X-Prometheus-Scrape-Timeout-Seconds"


class BackgroundTask(Protocol):
    """A daemon-side loop (e.g. the heartbeat writer) bound to one target."""

    def start(self) -> None: ...

    def stop(self, timeout: float = 5.0) -> None: ...


class Exporter:
    """Holds the current config and scraper; swapped atomically on reload."""

    def __init__(self, config: Config, config_path: str | None = None) -> None:
        self.config_path = config_path
        self._lock = threading.Lock()
        self.config = config
        self.scraper = Scraper(config)
        self._writers: dict[str, tuple[TargetConfig, BackgroundTask]] = {}
        self._jobs: list[JobRunner] = []
        self._sync_background(config)
        self._start_jobs(config)

    def _start_jobs(self, config: Config, jobs: list[Job] | None = None) -> None:
        """(Re)start the scheduled checks and checksums."""
        runners = [JobRunner(job) for job in (build_jobs(config) if jobs is None else jobs)]
        old, self._jobs = self._jobs, runners
        for runner in old:
            runner.stop()
        for runner in runners:
            runner.start()

    def job_snapshots(self) -> list[JobSnapshot]:
        return [runner.snapshot() for runner in self._jobs]

    def _sync_background(self, config: Config) -> None:
        """Start heartbeat writers for `heartbeat: write` targets; stop stale ones."""
        wanted = {t.name: t for t in config.targets
                  if t.heartbeat is not None and t.heartbeat.mode == "write"}
        for name, (cfg, task) in list(self._writers.items()):
            if wanted.get(name) != cfg:
                task.stop()
                del self._writers[name]
        for name, cfg in wanted.items():
            if name not in self._writers:
                from toolkit.heartbeat import HeartbeatWriter

                task = HeartbeatWriter(cfg)
                task.start()
                self._writers[name] = (cfg, task)

    def deadline(self, header: str | None) -> float:
        """Monotonic deadline: Prometheus' scrape timeout (or ours) minus the offset."""
        timeout = self.config.daemon.scrape_timeout
        if header:
            try:
                timeout = min(timeout, float(header)) if float(header) > 0 else timeout
            except ValueError:
                pass
        budget = max(0.2, timeout - self.config.daemon.scrape_timeout_offset)
        return time.monotonic() + budget

    def scrape(self, names: list[str] | None, header: str | None,
               only: set[str] | None = None) -> list[TargetResult]:
        scraper = self.scraper
        return scraper.scrape(names or list(scraper.runners), self.deadline(header), only)

    def reload(self) -> bool:
        """Re-read the config file; on any error keep the running config and log why."""
        try:
            new = load_config(self.config_path)
            jobs_changed = (self.config.checks, self.config.checksums, self.config.targets) \
                != (new.checks, new.checksums, new.targets)
            jobs = build_jobs(new) if jobs_changed else None
        except DbgaugeError as exc:
            log.error("reload failed, keeping the previous config: %s", exc)
            return False
        with self._lock:
            old = self.scraper
            self.scraper = Scraper(new, previous=old)
            old.close(keep=self.scraper.runners.values())
            self._sync_background(new)
            self.config = new
            if jobs is not None:
                self._start_jobs(new, jobs)
        setup_logging(new.daemon.log_format, new.daemon.log_level)
        log.info("config reloaded: %d targets", len(new.targets))
        return True

    def close(self) -> None:
        for _cfg, task in self._writers.values():
            task.stop()
        self._writers.clear()
        for runner in self._jobs:
            runner.stop()
        self._jobs = []
        self.scraper.close()


class Handler(BaseHTTPRequestHandler):
    server: DaemonServer
    server_version = f"dbgauge/{__version__}"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8",
              ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        exporter = self.server.exporter
        try:
            if url.path == "/metrics":
                self._metrics(exporter, None, query)
            elif url.path == "/probe":
                names = query.get("target", [])
                if len(names) != 1 or not names[0]:
                    self._send(400, b"/probe needs exactly one target=NAME parameter\n")
                    return
                if names[0] not in exporter.scraper.runners:
                    body = f"unknown target {names[0]!r}: see / for configured targets\n"
                    self._send(404, body.encode())
                    return
                self._metrics(exporter, names, query)
            elif url.path == "/healthz":
                self._send(200, b"ok\n")
            elif url.path == "/":
                self._send(200, index_page(exporter).encode(), "text/html; charset=utf-8")
            else:
                self._send(404, b"not found: try /metrics, /probe?target=NAME or /healthz\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _metrics(self, exporter: Exporter, names: list[str] | None,
                 query: dict[str, list[str]]) -> None:
        only = set(query.get("collect[]", [])) or None
        results = exporter.scrape(names, self.headers.get(TIMEOUT_HEADER), only)
        # Scheduled jobs are fleet-wide, not per target: only /metrics serves them.
        jobs = exporter.job_snapshots() if names is None else []
        body, content_type = encode(results, self.headers.get("Accept"), jobs)
        self._send(200, body, content_type)


def index_page(exporter: Exporter) -> str:
    rows = "".join(
        f'<li><a href="/probe?target={html.escape(n)}">{html.escape(n)}</a> '
        f"({html.escape(r.cfg.kind)}: {html.escape(', '.join(c.name for c in r.collectors))})"
        "</li>"
        for n, r in exporter.scraper.runners.items()
    )
    return (
        "<!doctype html><html><head><title>dbgauge</title></head><body>"
        f"<h1>dbgauge {html.escape(__version__)}</h1>"
        '<p><a href="/metrics">/metrics</a> (all targets) · '
        '<a href="/healthz">/healthz</a></p>'
        f"<h2>Targets</h2><ul>{rows}</ul></body></html>"
    )


class DaemonServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], exporter: Exporter) -> None:
        self.exporter = exporter
        super().__init__(address, Handler)


def serve(config_path: str | None, listen: str | None = None,
          ready: threading.Event | None = None) -> int:
    """Run the daemon until SIGTERM/SIGINT; SIGHUP reloads the config."""
    config = load_config(config_path)
    setup_logging(config.daemon.log_format, config.daemon.log_level)
    try:
        host, port = parse_listen(listen or config.daemon.listen)
    except ValueError as exc:
        raise ConfigError(str(exc), path="--listen") from None
    exporter = Exporter(config, config_path)
    try:
        server = DaemonServer((host, port), exporter)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}",
                          path="daemon.listen") from None
    stopping = threading.Event()

    def stop(signum: int, _frame: FrameType | None) -> None:
        if not stopping.is_set():
            stopping.set()
            log.info("received %s, shutting down", signal.Signals(signum).name)
            threading.Thread(target=server.shutdown, daemon=True).start()

    def reload(_signum: int, _frame: FrameType | None) -> None:
        log.info("received SIGHUP, reloading %s", config_path)
        threading.Thread(target=exporter.reload, daemon=True).start()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGHUP, reload)
    log.info("dbgauge %s listening on http://%s:%d/ with %d targets", __version__,
             host, server.server_address[1], len(config.targets))
    if ready is not None:
        ready.set()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        exporter.close()
        log.info("stopped")
    return 0
