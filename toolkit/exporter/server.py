"""The HTTP daemon: /metrics, /probe, /healthz and an index page.

Built on the standard library's threading HTTP server: the daemon's work is waiting
on databases, not serving HTTP, and this keeps the dependency list short. TLS and basic
auth come from an exporter-toolkit web-config file (webconfig.py); the TLS handshake runs
in the connection's own thread, so a slow or silent client never stalls the accept loop.

/healthz policy: it answers `ok` whenever the process serves HTTP, without basic auth (a
liveness probe needs no credentials, and the answer reveals nothing), and it does not
depend on the databases: restarting the exporter never fixes a database, so a down
target is `dbgauge_up 0`, not a failing health check.
"""

from __future__ import annotations

import logging
import signal
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Protocol
from urllib.parse import parse_qs, urlsplit

from toolkit import __version__
from toolkit.config import Config, parse_listen
from toolkit.errors import ConfigError, DbgaugeError
from toolkit.exporter.scrape import Scraper, TargetResult
from toolkit.exporter.webconfig import load_web_config
from toolkit.exporter.wiring import Wiring
from toolkit.heartbeat import HeartbeatWriter
from toolkit.jobs import Job, JobRunner, JobSnapshot, build_jobs
from toolkit.logs import setup_logging
from toolkit.render.page import index_page
from toolkit.render.prometheus import encode
from toolkit.targets import Target

log = logging.getLogger("dbgauge.serve")
TIMEOUT_HEADER = "X-Prometheus-Scrape-Timeout-Seconds"
HANDSHAKE_TIMEOUT = 10.0  # seconds a client gets to complete the TLS handshake
IDLE_TIMEOUT = 120.0  # a keep-alive connection idle this long is closed (frees its thread)
AUTH_LOG_INTERVAL = 60.0  # failed logins are summed up in one log line per interval


class BackgroundTask(Protocol):
    """A daemon-side loop (e.g. the heartbeat writer) bound to one target."""

    def start(self) -> None: ...

    def stop(self, timeout: float = 5.0) -> None: ...


class Exporter:
    """Holds the current config and scraper; swapped atomically on reload."""

    def __init__(self, config: Config, wiring: Wiring, config_path: str | None = None,
                 web_config_path: str | None = None) -> None:
        self.wiring = wiring
        self.config_path = config_path
        # --web.config.file wins over daemon.web_config_file, on start and on reload.
        self.web_config_path = web_config_path
        self._lock = threading.Lock()
        self.config = config
        self.web = load_web_config(self._web_path(config))
        self.scraper = Scraper(config, wiring.registry)
        self._writers: dict[str, tuple[Target, BackgroundTask]] = {}
        self._jobs: list[JobRunner] = []
        self._sync_background(config)
        self._start_jobs(config)

    def _start_jobs(self, config: Config, jobs: list[Job] | None = None) -> None:
        """(Re)start the scheduled checks and checksums."""
        if jobs is None:
            jobs = build_jobs(config, self.wiring.job_builders)
        runners = [JobRunner(job) for job in jobs]
        old, self._jobs = self._jobs, runners
        for runner in old:
            runner.stop()
        for runner in runners:
            runner.start()

    def job_snapshots(self) -> list[JobSnapshot]:
        return [runner.snapshot() for runner in self._jobs]

    def _sync_background(self, config: Config) -> None:
        """Start heartbeat writers for `heartbeat: write` targets; stop stale ones."""
        wanted = {t.name: t for t in config.all_targets()
                  if t.heartbeat is not None and t.heartbeat.mode == "write"}
        for name, (cfg, task) in list(self._writers.items()):
            if wanted.get(name) != cfg:
                task.stop()
                del self._writers[name]
        for name, cfg in wanted.items():
            if name not in self._writers:
                task = HeartbeatWriter(cfg)
                task.start()
                self._writers[name] = (cfg, task)

    def _web_path(self, config: Config) -> str | None:
        if self.web_config_path is not None:
            return self.web_config_path
        key = config.daemon.web_config_file
        return None if key is None else str(key)

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
            new = self.wiring.load_config(self.config_path)
            web = load_web_config(self._web_path(new))
            jobs_changed = (self.config.checks, self.config.checksums, self.config.targets) \
                != (new.checks, new.checksums, new.targets)
            jobs = build_jobs(new, self.wiring.job_builders) if jobs_changed else None
        except DbgaugeError as exc:
            log.error("reload failed, keeping the previous config: %s", exc)
            return False
        with self._lock:
            old = self.scraper
            self.scraper = Scraper(new, self.wiring.registry, previous=old)
            old.close(keep=self.scraper.runners.values())
            self._sync_background(new)
            self.config = new
            self.web = web
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
    timeout = IDLE_TIMEOUT

    def log_message(self, format: str, *args: object) -> None:
        # The request line and status only: never headers (Authorization).
        log.debug("%s %s", self.address_string(), format % args)

    def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8",
              headers: tuple[tuple[str, str], ...] = ()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, content in (*self.server.exporter.web.headers, *headers):
            self.send_header(name, content)
        if self.server.stopping.is_set():
            self.close_connection = True
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        with self.server.in_flight():
            self._route()

    def _authorized(self, path: str) -> bool:
        if path == "/healthz" or self.server.exporter.web.check(self.headers.get("Authorization")):
            return True
        self.server.auth_failed(self.client_address[0])
        self._send(401, b"Unauthorized\n",
                   headers=(("WWW-Authenticate", 'Basic realm="dbgauge", charset="UTF-8"'),))
        return False

    def _route(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        exporter = self.server.exporter
        try:
            if not self._authorized(url.path):
                return
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
                page = index_page([(name, runner.cfg.kind, [c.name for c in runner.collectors])
                                   for name, runner in exporter.scraper.runners.items()])
                self._send(200, page.encode(), "text/html; charset=utf-8")
            else:
                self._send(404, b"not found: try /metrics, /probe?target=NAME or /healthz\n")
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, TimeoutError):
            self.close_connection = True

    def _metrics(self, exporter: Exporter, names: list[str] | None,
                 query: dict[str, list[str]]) -> None:
        only = set(query.get("collect[]", [])) or None
        results = exporter.scrape(names, self.headers.get(TIMEOUT_HEADER), only)
        # Scheduled jobs are fleet-wide, not per target: only /metrics serves them.
        jobs = exporter.job_snapshots() if names is None else []
        body, content_type = encode(results, self.headers.get("Accept"), jobs,
                                    exporter.wiring.registry.specs())
        self._send(200, body, content_type)


class DaemonServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], exporter: Exporter) -> None:
        self.exporter = exporter
        self.stopping = threading.Event()
        self._busy = 0
        self._idle = threading.Condition()
        self._auth_failures = 0
        self._auth_logged = 0.0
        self._auth_lock = threading.Lock()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)

    def finish_request(self, request: socket.socket,  # type: ignore[override]
                       client_address: tuple[str, int]) -> None:
        """Runs in the connection's thread: TLS handshake first (bounded), then HTTP."""
        context = self.exporter.web.ssl_context()
        if context is None:
            Handler(request, client_address, self)
            return
        request.settimeout(HANDSHAKE_TIMEOUT)
        try:
            tls = context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            log.debug("TLS handshake with %s failed: %s", client_address[0], exc)
            return
        try:
            if not self.exporter.web.allowed_peer(tls.getpeercert()):
                log.warning("client certificate of %s has no SAN in client_allowed_sans",
                            client_address[0])
                return
            Handler(tls, client_address, self)
        finally:
            self.shutdown_request(tls)

    def in_flight(self) -> _InFlight:
        return _InFlight(self)

    def _enter(self) -> None:
        with self._idle:
            self._busy += 1

    def _leave(self) -> None:
        with self._idle:
            self._busy -= 1
            self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait for requests being answered (not idle keep-alive connections)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._busy > 0:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True

    def auth_failed(self, address: str) -> None:
        """Log failed logins as one summary line per interval (no log flood, no secrets)."""
        with self._auth_lock:
            self._auth_failures += 1
            now = time.monotonic()
            if now - self._auth_logged < AUTH_LOG_INTERVAL:
                return
            count, self._auth_failures, self._auth_logged = self._auth_failures, 0, now
        log.warning("%d request(s) refused: missing or wrong basic-auth credentials "
                    "(latest from %s)", count, address)


class _InFlight:
    def __init__(self, server: DaemonServer) -> None:
        self._server = server

    def __enter__(self) -> None:
        self._server._enter()

    def __exit__(self, *_exc: object) -> None:
        self._server._leave()


def serve(wiring: Wiring, config_path: str | None, listen: str | None = None,
          ready: threading.Event | None = None, web_config_path: str | None = None) -> int:
    """Run the daemon until SIGTERM/SIGINT; SIGHUP reloads the config and web config.

    On SIGTERM the listener closes at once; requests being answered get up to the scrape
    timeout to finish (their scrapes are bounded by it anyway), then the process exits.
    """
    config = wiring.load_config(config_path)
    setup_logging(config.daemon.log_format, config.daemon.log_level)
    try:
        host, port = parse_listen(listen or config.daemon.listen)
    except ValueError as exc:
        raise ConfigError(str(exc), path="--listen") from None
    exporter = Exporter(config, wiring, config_path, web_config_path)
    try:
        server = DaemonServer((host, port), exporter)
    except OSError as exc:
        exporter.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}",
                          path="daemon.listen") from None
    stopping = server.stopping

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
    log.info("dbgauge %s listening on %s://%s:%d/ with %d targets%s", __version__,
             exporter.web.scheme, host, server.server_address[1], len(config.targets),
             ", basic auth on" if exporter.web.users else "")
    if ready is not None:
        ready.set()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()  # refuse new connections while the last answers go out
        grace = exporter.config.daemon.scrape_timeout + 1.0
        if not server.wait_idle(grace):
            log.warning("requests still running after %.1fs; exiting anyway", grace)
        exporter.close()
        log.info("stopped")
    return 0
