"""A server that accepts TCP and never answers (a database frozen before its greeting, a
half-dead load balancer), for thousands of connections at once: one thread, a selector,
and every connection the client closes closed here too, so the test's own descriptors stay
flat however many scrapes give up on it."""

from __future__ import annotations

import selectors
import socket
import threading


class StalledListener:
    """Listens on 127.0.0.1 (a free port), accepts everything, never sends a byte; reads
    and drops what clients send; closes a connection once its client has."""

    def __init__(self, backlog: int = 4096) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(backlog)
        self.sock.setblocking(False)
        self.port: int = self.sock.getsockname()[1]
        self.accepted = 0  # connections accepted so far
        self.open = 0  # of them, not closed by their client yet
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.sock, selectors.EVENT_READ)
        self._stop = False
        self._thread = threading.Thread(target=self._serve, name="stalled", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop:
            for key, _ in self._selector.select(0.2):
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                if sock is self.sock:
                    self._accept()
                    continue
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    self._selector.unregister(sock)
                    sock.close()
                    self.open -= 1

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors: the client's connect stalls instead
                return
            conn.setblocking(False)
            self._selector.register(conn, selectors.EVENT_READ)
            self.accepted += 1
            self.open += 1

    def close(self) -> None:
        self._stop = True
        self._thread.join(5)
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        self._selector.close()

    def __enter__(self) -> StalledListener:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
