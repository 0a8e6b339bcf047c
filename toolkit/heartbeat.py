"""pt-heartbeat-compatible heartbeat: the daemon-side writer and the helpers its reader shares.

Seconds_Behind_Source goes NULL exactly when lag matters most (SQL thread stopped) and
only has one-second resolution. A heartbeat row written on the primary and read on the
replica measures what users feel instead: how old the newest replicated write is.

The writer (`HeartbeatWriter`, started by the daemon for `heartbeat: {mode: write}`
targets) replaces this server's row, keyed by `@@server_id`, every `interval` seconds
with the exporter's own clock as a UTC microsecond timestamp, in the same format and
table layout pt-heartbeat uses (`pt-heartbeat --utc` reads it, and dbgauge reads tables
pt-heartbeat writes). Because the reader computes lag with the same clock, a daemon that
writes on the primary and reads on the replica measures lag without clock skew.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from dbgauge.toolkit.db import Connection, connect
from dbgauge.toolkit.errors import ConfigError, DbgaugeError
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.sql import load_sql, quote_ident, quote_qualified
from dbgauge.toolkit.targets import Target

log = logging.getLogger("dbgauge.heartbeat")

_TS_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"
_MAX_RETRY_WAIT = 10.0  # seconds between reconnect attempts once a server stays down


def split_table(table: str) -> tuple[str, str]:
    """'schema.table' -> ('schema', 'table'); both parts must pass `quote_ident`."""
    schema, sep, name = table.partition(".")
    if not sep or "." in name:
        raise ConfigError(f"heartbeat table {table!r} must be written as schema.table")
    quote_qualified(table, "mysql")
    return schema, name


def heartbeat_sql(flavor: str, name: str, table: str) -> list[str]:
    """The statements of sql/<flavor or schema>/<name>.sql with {schema}/{table} filled in.

    A file may hold several statements separated by `;` (the DDL does).
    """
    schema, _ = split_table(table)
    text = load_sql(flavor, name)
    text = text.replace("{table}", quote_qualified(table, "mysql"))
    text = text.replace("{schema}", quote_ident(schema, "mysql"))
    return [part.strip() for part in text.split(";") if part.strip()]


def format_ts(epoch: float) -> str:
    """Unix time -> pt-heartbeat's UTC 'YYYY-MM-DDTHH:MM:SS.ffffff' (26 characters)."""
    return datetime.fromtimestamp(epoch, UTC).strftime(_TS_FORMAT)


def parse_ts(value: object) -> float:
    """A heartbeat `ts` value -> Unix time, read as UTC (pt-heartbeat --utc, dbgauge).

    Accepts the ISO 'T' form pt-heartbeat writes and a space-separated one; a fraction
    of up to six digits is optional. Raises ValueError on anything else.
    """
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if isinstance(value, datetime):
        moment = value
    else:
        text = str(value).strip().replace(" ", "T", 1)
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"heartbeat ts {value!r} is not a timestamp") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


class HeartbeatWriter:
    """A daemon thread that keeps this server's heartbeat row fresh.

    It owns its own connection (never the scrape connection), reconnects after any
    failure, logs each distinct failure once and its recovery once, and never raises
    into the daemon.
    """

    def __init__(self, target: Target, clock: Callable[[], float] = time.time, *,
                 create_table: bool = True) -> None:
        if target.heartbeat is None:
            raise ConfigError(f"target {target.name} has no heartbeat settings")
        self.target = target
        self.interval = target.heartbeat.interval
        self.table = target.heartbeat.table
        split_table(self.table)  # fail now, not in the thread, on a bad name
        self._clock = clock
        self._create_table = create_table
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: Connection | None = None
        self._table_ready = False
        self._last_error: str | None = None
        self.writes = 0  # successful writes, for tests and debugging
        self.failed = 0  # failed attempts since the last successful write

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"heartbeat-{self.target.name}")
        self._thread.start()
        log.info("heartbeat writer for %s started: %s every %.3g s", self.target.name,
                 self.table, self.interval, extra={"target": self.target.name})

    def run(self) -> None:
        """The write loop in the calling thread until `request_stop()` (the foreground
        `dbgauge heartbeat update`, e.g. under systemd)."""
        self._run()

    def request_stop(self) -> None:
        """Ask the loop to end after the current write (safe in a signal handler)."""
        self._stop.set()

    @property
    def running(self) -> bool:
        """True while the writer thread is alive (it never exits on database errors)."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop; a write stuck on a dead server is unblocked by closing its socket."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout / 2)
            if thread.is_alive():
                conn = self._conn
                if conn is not None:
                    conn.abort()
                thread.join(timeout / 2)
        self._close()
        self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.beat()
                self.failed = 0
                wait = self.interval - (time.monotonic() - started)
            except Exception as exc:  # the daemon must outlive any failure here
                self.failed += 1
                self._failed(exc)
                # Keep trying every interval at first, then back off while it stays down.
                wait = min(max(self.interval, 0.5 * self.failed), _MAX_RETRY_WAIT)
            self._stop.wait(max(0.0, wait))
        self._close()

    def beat(self) -> None:
        """Write one heartbeat now (connecting and creating the table when needed)."""
        conn = self._conn
        if conn is None or conn.closed:
            self._close()
            conn = self._conn = connect(self.target)
            self._table_ready = False
        if not self._table_ready:
            self._ensure_table(conn)
            self._table_ready = True
        ts = format_ts(self._clock())
        for statement in heartbeat_sql(conn.server.flavor, "heartbeat_write", self.table):
            conn.execute_sql(statement, (ts,))
        self.writes += 1
        if self._last_error is not None:
            log.info("heartbeat writer for %s is writing again", self.target.name,
                     extra={"target": self.target.name})
            self._last_error = None

    def _ensure_table(self, conn: Connection) -> None:
        """Create the schema and table unless they exist (no DDL privilege needed then)."""
        schema, name = split_table(self.table)
        rows = conn.query("heartbeat_table_exists", (schema, name))
        if rows and int(rows[0]["found"]):
            return
        if not self._create_table:
            raise ConfigError(f"heartbeat table {self.table} does not exist on "
                              f"{self.target.name}: pass --create-table (CREATE privilege on "
                              "its schema) or create it as pt-heartbeat --create-table does")
        for statement in heartbeat_sql("schema", "mysql_heartbeat", self.table):
            conn.execute_sql(statement)
        log.info("created heartbeat table %s on %s", self.table, self.target.name,
                 extra={"target": self.target.name})

    def _failed(self, exc: Exception) -> None:
        message = str(exc) if isinstance(exc, DbgaugeError) else f"{type(exc).__name__}: {exc}"
        message = redact(message)
        if message != self._last_error:
            log.warning("heartbeat writer for %s cannot write %s: %s", self.target.name,
                        self.table, message, extra={"target": self.target.name})
        self._last_error = message
        self._close()

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


FRAMES = (60.0, 300.0, 900.0)  # pt-heartbeat --monitor's default --frames 1m,5m,15m


def frame_averages(samples: Sequence[tuple[float, float]], now: float,
                   frames: Sequence[float] = FRAMES) -> list[float | None]:
    """pt-heartbeat --monitor's moving averages: the mean lag of the (time, lag) samples
    within each frame before `now` (None for a frame without samples)."""
    out: list[float | None] = []
    for frame in frames:
        inside = [lag for at, lag in samples if now - at <= frame]
        out.append(sum(inside) / len(inside) if inside else None)
    return out
