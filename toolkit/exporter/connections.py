"""The daemon's connections: one thread reads every request's headers, a bounded pool
answers complete requests.

A connection costs a socket, never a thread, until its request headers are in: the
reader waits on all of them at once (selectors), TLS handshakes included, and gives each
an overall deadline (`daemon.header_timeout`), not a per-read one, so a client dribbling
a byte a second is dropped on time. A complete request goes to at most
`daemon.max_requests` workers; after the answer a keep-alive connection goes back to the
reader, so idle keep-alive connections hold no worker either. When `max_connections`
sockets are held, the one waiting longest for its headers makes room for a new one.
So 200 slow-header clients hold 200 sockets and no thread, and a scrape still gets a
worker.
"""

from __future__ import annotations

import logging
import re
import selectors
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("dbgauge.serve")

MAX_HEADER_BYTES = 64 * 1024  # request line and headers together
_END = re.compile(rb"\r?\n\r?\n")
Address = tuple[str, int]
# (connection, client address, request head) -> keep the connection open afterwards?
Answer = Callable[[socket.socket, Address, bytes], bool]


@dataclass(eq=False)
class _Conn:
    sock: socket.socket
    address: Address
    deadline: float  # monotonic: the headers (or, when idle, the first byte) are due
    buffer: bytearray = field(default_factory=bytearray)
    handshaking: bool = False
    idle: bool = False  # a kept-alive connection waiting for its next request
    since: float = field(default_factory=time.monotonic)


class Connections:
    """Reader thread, worker pool and the sockets they hold (see the module docstring)."""

    def __init__(self, answer: Answer, *, workers: int, header_timeout: float,
                 idle_timeout: float, max_connections: int,
                 tls: Callable[[], ssl.SSLContext | None],
                 allowed: Callable[[ssl.SSLSocket], bool]) -> None:
        self._answer = answer
        self._max_workers = max(1, workers)
        self._header_timeout = header_timeout
        self._idle_timeout = idle_timeout
        self._max_connections = max(2, max_connections)
        self._tls = tls
        self._allowed = allowed
        self._lock = threading.Lock()
        self._incoming: deque[_Conn] = deque()
        self._ready: deque[tuple[_Conn, bytes]] = deque()
        self._work = threading.Condition(self._lock)
        self._workers = 0
        self._idle_workers = 0
        self._held = 0  # sockets owned: in the reader, queued or being answered
        self._stopping = False
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._pending: dict[int, _Conn] = {}  # reader-owned, by fd
        self._reader = threading.Thread(target=self._read_loop, name="http-reader",
                                        daemon=True)

    def start(self) -> None:
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._reader.start()

    @property
    def threads(self) -> int:
        """Worker threads started so far (at most `workers`)."""
        return self._workers

    # ------------------------------------------------------------------ accepting

    def add(self, sock: socket.socket, address: Address) -> None:
        """A new connection from the accept loop: the reader takes it from here."""
        sock.setblocking(False)
        with self._lock:
            if self._stopping:
                _close(sock)
                return
            self._held += 1
            self._incoming.append(_Conn(sock, address, time.monotonic()
                                        + self._header_timeout))
        self._wake()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:  # the pipe is full: the reader wakes anyway
            pass

    # ------------------------------------------------------------------ reading

    def _read_loop(self) -> None:
        while True:
            with self._lock:
                if self._stopping:
                    break
                incoming, self._incoming = list(self._incoming), deque()
            for conn in incoming:
                self._adopt(conn)
            now = time.monotonic()
            for conn in [c for c in self._pending.values() if c.deadline <= now]:
                if not conn.idle:
                    log.debug("dropping %s: request headers not complete in %.0fs",
                              conn.address[0], self._header_timeout)
                self._drop(conn)
            timeout = min((c.deadline for c in self._pending.values()), default=now + 1.0)
            for key, _events in self._selector.select(max(0.0, min(timeout - now, 1.0))):
                if key.fileobj is self._wake_r:
                    self._drain_wake()
                    continue
                found = self._pending.get(key.fd)
                if found is not None:
                    self._progress(found)
        for conn in list(self._pending.values()):
            self._drop(conn)
        self._selector.close()
        _close(self._wake_r)
        _close(self._wake_w)

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass

    def _adopt(self, conn: _Conn) -> None:
        """A connection enters the reader: new (maybe TLS) or back from a worker."""
        if len(self._pending) >= self._max_connections - self._busy():
            self._make_room()
        if not conn.idle and not conn.handshaking and not conn.buffer:
            context = self._tls()
            if context is not None:
                try:
                    conn.sock = context.wrap_socket(conn.sock, server_side=True,
                                                    do_handshake_on_connect=False)
                except (ssl.SSLError, OSError):
                    self._release(conn)
                    return
                conn.handshaking = True
        self._pending[conn.sock.fileno()] = conn
        self._selector.register(conn.sock, selectors.EVENT_READ)
        tls_buffered = isinstance(conn.sock, ssl.SSLSocket) and not conn.handshaking \
            and conn.sock.pending() > 0
        if tls_buffered or (conn.buffer and _END.search(conn.buffer)):  # pipelined
            self._progress(conn)

    def _busy(self) -> int:
        with self._lock:
            return self._held - len(self._pending)

    def _make_room(self) -> None:
        """At the cap: drop the connection that has waited longest for its headers."""
        if self._pending:
            oldest = min(self._pending.values(), key=lambda c: (not c.idle, c.since))
            log.debug("connection limit reached: dropping %s", oldest.address[0])
            self._drop(oldest)

    def _progress(self, conn: _Conn) -> None:
        try:
            if conn.handshaking:
                assert isinstance(conn.sock, ssl.SSLSocket)
                conn.sock.do_handshake()
                conn.handshaking = False
                if not self._allowed(conn.sock):
                    self._drop(conn)
                    return
            while True:
                chunk = conn.sock.recv(65536)
                if not chunk:
                    self._drop(conn)
                    return
                if conn.idle:
                    conn.idle = False
                    conn.deadline = time.monotonic() + self._header_timeout
                conn.buffer += chunk
                if _END.search(conn.buffer) or len(conn.buffer) > MAX_HEADER_BYTES:
                    break
        except ssl.SSLWantReadError:
            self._watch(conn, selectors.EVENT_READ)
            if not (conn.buffer and _END.search(conn.buffer)):
                return
        except ssl.SSLWantWriteError:
            self._watch(conn, selectors.EVENT_WRITE)
            return
        except BlockingIOError:
            if not (conn.buffer and _END.search(conn.buffer)):
                return
        except (ssl.SSLError, OSError) as exc:
            log.debug("connection from %s failed: %s", conn.address[0], exc)
            self._drop(conn)
            return
        match = _END.search(conn.buffer)
        if match is None:  # over MAX_HEADER_BYTES
            log.debug("dropping %s: request headers over %d bytes", conn.address[0],
                      MAX_HEADER_BYTES)
            self._drop(conn)
            return
        head, rest = bytes(conn.buffer[:match.end()]), conn.buffer[match.end():]
        conn.buffer = bytearray(rest)
        self._unwatch(conn)
        self._dispatch(conn, head)

    def _watch(self, conn: _Conn, events: int) -> None:
        self._selector.modify(conn.sock, events)

    def _unwatch(self, conn: _Conn) -> None:
        self._pending.pop(conn.sock.fileno(), None)
        try:
            self._selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass

    def _drop(self, conn: _Conn) -> None:
        self._unwatch(conn)
        self._release(conn)

    def _release(self, conn: _Conn) -> None:
        _close(conn.sock)
        with self._lock:
            self._held -= 1

    # ------------------------------------------------------------------ answering

    def _dispatch(self, conn: _Conn, head: bytes) -> None:
        with self._lock:
            self._ready.append((conn, head))
            if self._idle_workers == 0 and self._workers < self._max_workers:
                self._workers += 1
                threading.Thread(target=self._work_loop, name=f"http-{self._workers}",
                                 daemon=True).start()
            else:
                self._work.notify()

    def _work_loop(self) -> None:
        while True:
            with self._lock:
                while not self._ready and not self._stopping:
                    self._idle_workers += 1
                    self._work.wait()
                    self._idle_workers -= 1
                if self._stopping:
                    return
                conn, head = self._ready.popleft()
            keep = False
            try:
                conn.sock.setblocking(True)
                conn.sock.settimeout(self._header_timeout)  # bounds writing the answer
                keep = self._answer(conn.sock, conn.address, head)
            except Exception:  # a bug answering one request must not kill the worker
                log.exception("error answering %s", conn.address[0])
            if keep:
                try:
                    conn.sock.setblocking(False)
                except OSError:
                    keep = False
            if not keep:
                self._release(conn)
                continue
            conn.idle = not conn.buffer
            now = time.monotonic()
            conn.deadline = now + (self._idle_timeout if conn.idle else self._header_timeout)
            conn.since = now
            with self._lock:
                if self._stopping:
                    stopped = True
                else:
                    stopped = False
                    self._incoming.append(conn)
            if stopped:
                self._release(conn)
            else:
                self._wake()

    # ------------------------------------------------------------------ stopping

    def stop(self) -> None:
        """Close every connection not being answered; workers finish their answer."""
        with self._lock:
            self._stopping = True
            queued, self._ready = list(self._ready), deque()
            incoming, self._incoming = list(self._incoming), deque()
            self._work.notify_all()
        for conn, _head in queued:
            self._release(conn)
        for conn in incoming:
            self._release(conn)
        self._wake()
        if self._reader.is_alive():
            self._reader.join(2.0)


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        pass
