"""The HTTP daemon: /metrics, /probe, /healthz and the status page (/, /status.json).

Built on the standard library's HTTP server: the daemon's work is waiting on databases,
not serving HTTP, and this keeps the dependency list short. TLS and basic auth come from
an exporter-toolkit web-config file (webconfig.py). Connections are read by one thread
and answered by a bounded pool (connections.py): slow or silent clients hold a socket
until their header deadline, never a thread, so a scrape is answered during a flood.

/healthz policy: it answers `ok` whenever the process serves HTTP, without basic auth (a
liveness probe needs no credentials, and the answer reveals nothing), and it does not
depend on the databases: restarting the exporter never fixes a database, so a down
target is `dbgauge_up 0`, not a failing health check.
"""

from __future__ import annotations

import gc
import gzip
import io
import json
import logging
import resource
import signal
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import FrameType
from urllib.parse import parse_qs, unquote_plus, urlsplit

from dbgauge.toolkit import __version__
from dbgauge.toolkit.config import parse_listen
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.exporter.connections import Connections
from dbgauge.toolkit.exporter.fleet import Scraper
from dbgauge.toolkit.exporter.listener import systemd_listener
from dbgauge.toolkit.exporter.state import Exporter
from dbgauge.toolkit.exporter.wiring import Wiring
from dbgauge.toolkit.logs import setup_logging
from dbgauge.toolkit.peers.probe import ProbeRefused
from dbgauge.toolkit.redact import redact, redact_data, redact_dsn
from dbgauge.toolkit.render.page import status_page
from dbgauge.toolkit.render.prometheus import encode

log = logging.getLogger("dbgauge.serve")
TIMEOUT_HEADER = "X-Prometheus-Scrape-Timeout-Seconds"
RELOAD_PATH = "/-/reload"
IDLE_TIMEOUT = 120.0  # a keep-alive connection idle this long is closed
AUTH_LOG_INTERVAL = 60.0  # failed logins are summed up in one log line per interval
STOP_GRACE = 0.3  # on SIGTERM, scrapes in flight get this long, then are cut short
LISTEN_BACKLOG = 1024  # a burst of scrapers is queued by the kernel, not refused or delayed


class Handler(BaseHTTPRequestHandler):
    """Answers one request whose head the reader has already read (connections.py)."""

    server: DaemonServer
    server_version = f"dbgauge/{__version__}"
    sys_version = ""  # the Server header names dbgauge, not the Python version under it
    protocol_version = "HTTP/1.1"

    def __init__(self, request: socket.socket, client_address: tuple[str, int],
                 server: DaemonServer, head: bytes) -> None:
        self._head = head
        super().__init__(request, client_address, server)

    def setup(self) -> None:
        self.connection = self.request
        self.rfile = io.BytesIO(self._head)
        self.wfile = _Writer(self.connection)

    def handle(self) -> None:
        self.close_connection = True
        self.handle_one_request()
        headers = getattr(self, "headers", None)
        if headers is not None and (headers.get("Content-Length", "0").strip() not in ("", "0")
                                    or headers.get("Transfer-Encoding")):
            self.close_connection = True  # a body is never read: do not parse it as a request

    def finish(self) -> None:
        pass  # the connection goes back to the reader, or is closed, by connections.py

    def version_string(self) -> str:
        return self.server_version

    def log_message(self, format: str, *args: object) -> None:
        # The request line and status only: never headers (Authorization). A /probe of an
        # address may carry a DSN with a password: decoded, so the redaction sees it.
        log.debug("%s %s", self.address_string(), redact(unquote_plus(format % args)))

    def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8",
              headers: tuple[tuple[str, str], ...] = ()) -> None:
        if len(body) > 512 and _wants_gzip(self.headers.get("Accept-Encoding")):
            body = gzip.compress(body, compresslevel=6)
            headers = (*headers, ("Content-Encoding", "gzip"))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        for name, content in (*self.server.exporter.web.headers, *headers):
            self.send_header(name, content)
        if self.server.stopping.is_set():
            self.close_connection = True
            self.send_header("Connection", "close")
        if self.request_version == "HTTP/0.9" or not hasattr(self, "_headers_buffer"):
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            return
        # end_headers() and the body in one send: two cost a syscall and a TCP segment each
        self._headers_buffer.append(b"\r\n")
        if self.command != "HEAD":
            self._headers_buffer.append(body)
        self.flush_headers()

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        with self.server.in_flight():
            self._route()

    def do_POST(self) -> None:
        """Only /-/reload takes POST (or PUT), as Prometheus' and mysqld_exporter's."""
        with self.server.in_flight():
            if urlsplit(self.path).path == RELOAD_PATH:
                self._route()
            else:
                self._send(405, b"method not allowed: only /-/reload takes POST\n",
                           headers=(("Allow", "GET, HEAD"),))

    do_PUT = do_POST

    def _authorized(self, path: str) -> bool:
        if path == "/healthz":
            return True
        ok = self.server.exporter.web.check(self.headers.get("Authorization"))
        if ok:
            return True
        if ok is None:  # too many uncached credentials being checked: fail fast
            self._send(429, b"Too many authentication attempts; retry later\n",
                       headers=(("Retry-After", "1"),))
            return False
        self.server.auth_failed(self.client_address[0])
        self._send(401, b"Unauthorized\n",
                   headers=(("WWW-Authenticate", 'Basic realm="dbgauge", charset="UTF-8"'),))
        return False

    def _route(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        exporter = self.server.exporter
        metrics_path = self.server.telemetry_path
        try:
            if not self._authorized(url.path):
                return
            if url.path == metrics_path:
                self._metrics(exporter, None, query)
            elif url.path == "/probe":
                self._probe(exporter, query)
            elif url.path == "/healthz":
                self._send(200, b"ok\n")
            elif url.path in ("/", "/status.json"):
                self._status(exporter, url.path)
            elif url.path == RELOAD_PATH:
                self._reload(exporter)
            else:
                self._send(404, f"not found: try /, /status.json, {metrics_path}, "
                                "/probe?target=NAME or /healthz\n".encode())
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, TimeoutError):
            self.close_connection = True

    def _reload(self, exporter: Exporter) -> None:
        """What SIGHUP does (mysqld_exporter's /-/reload re-reads its my.cnf; this re-reads
        the config, the peers' files and the web config), answered when done: 200 `ok`,
        or 500 when the new files were refused and the running config kept (the log says
        why). Any method, as mysqld_exporter; basic auth applies."""
        with self.server.reloading:
            ok = exporter.reload()
        if ok:
            self._send(200, b"ok\n")
        else:
            self._send(500, b"reload failed, the previous config is kept: see the log and "
                            b"dbgauge_config_last_reload_successful\n")

    def _status(self, exporter: Exporter, path: str) -> None:
        doc = redact_data(exporter.status())
        if path == "/status.json":
            self._send(200, json.dumps(doc, indent=2).encode() + b"\n", "application/json")
            return
        page = status_page(doc, exporter.config.daemon.status_refresh,
                           [(name, runner.cfg.kind, [c.name for c in runner.collectors])
                            for name, runner in exporter.scraper.runners.items()],
                           self.server.telemetry_path)
        self._send(200, page.encode(), "text/html; charset=utf-8")

    def _probe(self, exporter: Exporter, query: dict[str, list[str]]) -> None:
        """A configured target by name; else, when the daemon was started with a peer's
        credentials, the address `target` names, with `auth_module`'s credentials (the
        peers' multi-target mode: toolkit/exporter/transient.py)."""
        names = query.get("target", [])
        if len(names) != 1 or not names[0]:
            self._send(400, b"/probe needs exactly one target=NAME parameter\n")
            return
        target = names[0]
        if target in exporter.scraper.runners:
            self._metrics(exporter, names, query)
            return
        try:
            found = exporter.checkout(target, query.get("auth_module", [None])[0])
        except ProbeRefused as exc:
            self._send(400, f"{redact(exc.detail)}\n".encode())
            return
        if found is None:
            body = f"unknown target {redact_dsn(target)!r}: see / for configured targets\n"
            self._send(404, body.encode())
            return
        scraper, name = found
        try:
            self._metrics(exporter, [name], query, scraper)
        finally:
            scraper.release()

    def _metrics(self, exporter: Exporter, names: list[str] | None,
                 query: dict[str, list[str]], transient: Scraper | None = None) -> None:
        """Scrape `names` (every target when None) of the daemon's Scraper, or of
        `transient` (a /probe of an address), and answer with the exposition."""
        only = set(query.get("collect[]", [])) or None
        if only is not None:
            # `none` runs no collector (docs/deploy.md: a /metrics job beside /probe jobs
            # for the jobs' results; each connection is still checked, dbgauge_up stays)
            only.discard("none")
            valid = exporter.collector_names(names) if transient is None \
                else transient.collector_names(names or [])
            unknown = sorted(only - set(valid))
            if unknown:
                self._send(400, (f"unknown collect[] {', '.join(unknown)}: the collectors "
                                 f"{'this target runs' if names else 'the targets run'} are "
                                 f"{', '.join(valid)}\n").encode())
                return
        header = self.headers.get(TIMEOUT_HEADER)
        if transient is None:
            results = exporter.scrape(names, header, only)
        else:
            results = transient.scrape(names or [], exporter.deadline(header), only)
        # Scheduled jobs and the process are fleet-wide, not per target: only /metrics
        # serves them.
        jobs = exporter.job_snapshots() if names is None else []
        body, content_type = encode(results, self.headers.get("Accept"), jobs,
                                    exporter.wiring.registry.specs(), process=names is None,
                                    config=exporter.config_load if names is None else None)
        self._send(200, body, content_type)


class _Writer(io.BufferedIOBase):
    """The handler's wfile: every write goes out whole (sendall), nothing is buffered."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(data)
        self._sock.sendall(view)
        return view.nbytes


def _wants_gzip(accept_encoding: str | None) -> bool:
    """Accept-Encoding lists gzip (and not with q=0)."""
    for item in (accept_encoding or "").split(","):
        name, _, params = item.strip().partition(";")
        if name.strip().lower() in ("gzip", "x-gzip"):
            q = params.strip().lower().removeprefix("q=")
            return not (params and q.replace(".", "").strip("0") == "")
    return False


class DaemonServer(HTTPServer):
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, address: tuple[str, int], exporter: Exporter,
                 telemetry_path: str = "/metrics", sock: socket.socket | None = None) -> None:
        self.exporter = exporter
        self.telemetry_path = telemetry_path  # where /metrics is served (--web.telemetry-path)
        daemon = exporter.config.daemon
        self.connections = Connections(
            self._answer, workers=daemon.max_requests, header_timeout=daemon.header_timeout,
            idle_timeout=IDLE_TIMEOUT, max_connections=_max_connections(),
            tls=lambda: self.exporter.web.ssl_context(), allowed=self._allowed_peer)
        self.stopping = threading.Event()
        self.reloading = threading.Lock()  # one /-/reload at a time
        self._busy = 0
        self._idle = threading.Condition()
        self._auth_failures = 0
        self._auth_logged = 0.0
        self._auth_lock = threading.Lock()
        if sock is not None:  # systemd's, bound and listening already
            self.address_family = sock.family
            super().__init__(address, Handler, bind_and_activate=False)  # type: ignore[arg-type]
            self.socket.close()
            self.socket = sock
            self.server_address = sock.getsockname()[:2]
        else:
            if ":" in address[0]:
                self.address_family = socket.AF_INET6
            super().__init__(address, Handler)  # type: ignore[arg-type]  # takes a head too
        self.connections.start()

    def process_request(self, request: socket.socket,  # type: ignore[override]
                        client_address: tuple[str, int]) -> None:
        """From the accept loop: the reader takes the connection (no thread per client)."""
        self.connections.add(request, client_address)

    def _answer(self, sock: socket.socket, address: tuple[str, int], head: bytes) -> bool:
        """Answer one request (in a worker); True: keep the connection for the next."""
        try:
            handler = Handler(sock, address, self, head)
        except OSError:  # the client went away or stopped reading (TLS errors included)
            return False
        return not handler.close_connection and not self.stopping.is_set()

    def _allowed_peer(self, tls: ssl.SSLSocket) -> bool:
        if self.exporter.web.allowed_peer(tls.getpeercert()):
            return True
        log.warning("client certificate of %s has no SAN in client_allowed_sans",
                    tls.getpeername()[0])
        return False

    def server_close(self) -> None:
        """Close the listener and every connection not being answered."""
        super().server_close()
        self.connections.stop()

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


def _max_connections() -> int:
    """Sockets the daemon holds for clients at most: half the file descriptors it may open
    (the rest are for databases, logs and config files), at most 4096."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(16, min(4096, soft // 2))


class _InFlight:
    def __init__(self, server: DaemonServer) -> None:
        self._server = server

    def __enter__(self) -> None:
        self._server._enter()

    def __exit__(self, *_exc: object) -> None:
        self._server._leave()


# Allocations between young-generation collections (CPython's default is 700). One scrape
# of a MySQL server allocates tens of thousands of short-lived objects (rows, samples, lines)
# and almost none of them form cycles; at the default, the collector also walked every
# long-lived object (runners, connections, cached samples) every few scrapes, which cost a
# 1,000-target fleet more CPU than rendering its samples.
GC_THRESHOLD = (50_000, 20, 20)


def _tune_gc() -> None:
    """Move what start-up built (modules, config, collectors) out of the collector's view
    and collect the young generation less often (see GC_THRESHOLD)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


def _listen(exporter: Exporter, listen: str | None, telemetry_path: str,
            systemd_socket: bool) -> DaemonServer:
    """The server on `listen` (else daemon.listen), or on systemd's socket."""
    try:
        host, port = parse_listen(listen or exporter.config.daemon.listen)
    except ValueError as exc:
        raise ConfigError(str(exc), path="--listen") from None
    try:
        sock = systemd_listener() if systemd_socket else None
        return DaemonServer((host, port), exporter, telemetry_path, sock)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}",
                          path="daemon.listen") from None


def serve(wiring: Wiring, config_path: str | None, listen: str | None = None,
          ready: threading.Event | None = None, web_config_path: str | None = None,
          telemetry_path: str = "/metrics", systemd_socket: bool = False) -> int:
    """Run the daemon until SIGTERM/SIGINT; SIGHUP (or /-/reload) reloads the config and
    web config. `telemetry_path` is where /metrics is served (the Go exporters'
    --web.telemetry-path); `systemd_socket`: listen on the socket systemd passed.

    The listener is bound before heartbeat writers and scheduled jobs start. On SIGTERM
    the listener closes at once; scrapes in flight get STOP_GRACE to finish, then are cut
    short (their targets reported down) and answered: the daemon stops within a second.
    """
    config = wiring.load_config(config_path)
    setup_logging(config.daemon.log_format, config.daemon.log_level)
    for note in wiring.notes:
        log.warning("%s", note)
    exporter = Exporter(config, wiring, config_path, web_config_path)
    try:
        server = _listen(exporter, listen, telemetry_path, systemd_socket)
    except ConfigError:
        exporter.close()
        raise
    exporter.start()
    _tune_gc()
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
    host, port = server.server_address[:2]
    log.info("dbgauge %s listening on %s://%s:%d/%s with %d targets%s", __version__,
             exporter.web.scheme, host, port, " (systemd's socket)" if systemd_socket else "",
             len(config.targets), ", basic auth on" if exporter.web.users else "")
    if ready is not None:
        ready.set()
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()  # refuse new connections while the last answers go out
        if not server.wait_idle(STOP_GRACE):
            exporter.interrupt()  # stuck scrapes end now, their targets reported down
            if not server.wait_idle(STOP_GRACE):
                log.warning("requests still running after %.1fs; exiting anyway",
                            2 * STOP_GRACE)
        exporter.close(timeout=0.2)
        log.info("stopped")
    return 0
