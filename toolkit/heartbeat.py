"""pt-heartbeat-compatible heartbeat: the one home of the heartbeat row -- its table, its
timestamps, writing it, reading it and measuring lag by it -- for the daemon, the
`mysql_heartbeat` collector, `check lag`, split-brain and `dbgauge heartbeat`.

Seconds_Behind_Source goes NULL exactly when lag matters most (SQL thread stopped) and
only has one-second resolution. A heartbeat row written on the primary and read on the
replica measures what users feel instead: how old the newest replicated write is.

The writer (`HeartbeatWriter`, started by the daemon for `heartbeat: {mode: write}`
targets and run by `dbgauge heartbeat update`) replaces this server's row, keyed by
`@@server_id`, every `interval` seconds with the exporter's own clock as a UTC
microsecond timestamp, in the same format and table layout pt-heartbeat uses
(`pt-heartbeat --utc` reads it, and dbgauge reads tables pt-heartbeat writes). Because
the reader (`read_source`) computes lag with the same clock, a daemon that writes on the
primary and reads on the replica measures lag without clock skew.

Which row is the source's: `source_server_id` if configured, else the most recently
written row whose server_id is not this server's own -- after a failover that is the new
primary's row without any reconfiguration, and it costs no extra statement. On a
`mode: write` target it is its own row, so the lag there is the writer's freshness.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from dbgauge.toolkit.db import Connection, connect
from dbgauge.toolkit.db.privileges import query
from dbgauge.toolkit.db.values import number
from dbgauge.toolkit.errors import ConfigError, DbgaugeError, QueryError, WriteRefused
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.sql import load_sql, quote_ident, quote_qualified
from dbgauge.toolkit.targets import Heartbeat, Target
from dbgauge.toolkit.write_guard import check_writable

log = logging.getLogger("dbgauge.heartbeat")

_TS_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"
_MAX_RETRY_WAIT = 10.0  # seconds between reconnect attempts once a server stays down
_NO_SUCH_TABLE = 1146
HEARTBEAT_NEEDS = "SELECT on the heartbeat table (GRANT SELECT ON dbgauge.* TO ...)"


def table_name(database: str, table: str) -> str:
    """pt-heartbeat's `-D database --table table` as one name (a `table` given as
    schema.table stands alone)."""
    return table if "." in table else f"{database}.{table}"


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


@dataclass(frozen=True)
class HeartbeatRow:
    server_id: int
    ts: float  # Unix time


def parse_heartbeat_rows(rows: Iterable[Mapping[str, Any]]) -> list[HeartbeatRow]:
    """Rows of (server_id, ts) -> parsed rows; rows with an unreadable ts are skipped."""
    out: list[HeartbeatRow] = []
    for row in rows:
        server_id = number(row.get("server_id"))
        if server_id is None:
            continue
        try:
            out.append(HeartbeatRow(int(server_id), parse_ts(row.get("ts"))))
        except ValueError:
            continue
    return out


def pick_source_row(rows: list[HeartbeatRow], own_server_id: int | None,
                    wanted: int | None) -> HeartbeatRow | None:
    """The row to measure: `wanted` if given, else the newest row not written by us."""
    if wanted is not None:
        return next((r for r in rows if r.server_id == wanted), None)
    others = [r for r in rows if r.server_id != own_server_id]
    return max(others, key=lambda r: r.ts, default=None)


@dataclass(frozen=True)
class HeartbeatTable:
    """Every row of a heartbeat table, and the server_id of the server that was read."""

    rows: tuple[HeartbeatRow, ...]
    own_server_id: int | None  # None when the table has no row


def read_heartbeat_table(conn: Connection, table: str) -> HeartbeatTable:
    """The rows of `table` (schema.name); QueryError when it cannot be read, with a hint
    when it does not exist."""
    (statement,) = heartbeat_sql(conn.server.flavor, "heartbeat_read", table)
    try:
        raw = query(conn, "heartbeat_read", HEARTBEAT_NEEDS, sql=statement)
    except QueryError as exc:
        if exc.errno != _NO_SUCH_TABLE:
            raise
        raise exc.again(f"heartbeat table {table} does not exist on this server: "
                        "run a heartbeat writer (heartbeat: {mode: write}) on the source, "
                        f"or set heartbeat.table to pt-heartbeat's table ({exc})") from None
    own = int(number(raw[0].get("own_server_id")) or 0) if raw else None
    return HeartbeatTable(tuple(parse_heartbeat_rows(raw)), own)


@dataclass(frozen=True)
class HeartbeatReading:
    """The source's heartbeat row and the exporter's clock when it was read."""

    source: HeartbeatRow
    now: float  # Unix time

    @property
    def lag(self) -> float:
        """How old the row is by the exporter's clock (0 if the writer's clock is ahead)."""
        return max(0.0, self.now - self.source.ts)


def read_source(conn: Connection, settings: Heartbeat,
                clock: Callable[[], float] = time.time) -> HeartbeatReading:
    """The source's row (see the module's doc) and `clock` when it was read; QueryError
    when the table or the row is missing."""
    table = read_heartbeat_table(conn, settings.table)
    now = clock()
    wanted = table.own_server_id if settings.mode == "write" else settings.source_server_id
    row = pick_source_row(list(table.rows), table.own_server_id, wanted)
    if row is None:
        which = f"server_id {wanted}" if wanted is not None else "another server"
        raise QueryError(f"no heartbeat row from {which} in {settings.table} "
                         f"({len(table.rows)} row(s)): is a heartbeat writer running on "
                         "the source?")
    return HeartbeatReading(row, now)


def with_heartbeat(target: Target, settings: Heartbeat) -> Target:
    """`target` with these heartbeat settings: MySQL-family servers only."""
    if target.kind != "mysql":
        raise ConfigError(f"{target.name} is a {target.kind} server: the heartbeat is "
                          "pt-heartbeat's, for MySQL and MariaDB")
    split_table(settings.table)
    return replace(target, heartbeat=settings)


class HeartbeatWriter:
    """A daemon thread that keeps this server's heartbeat row fresh.

    It owns its own connection (never the scrape connection), reconnects after any
    failure, logs each distinct failure once and its recovery once, and never raises
    into the daemon. Before every write it asks whether the server is read-only
    (`toolkit.write_guard`): while it is, nothing is written (not even the table), the
    refusal is logged once, and it asks again every interval, so a server promoted to
    primary gets its heartbeat without a restart. `override` is how the user allows
    writing on a read-only server (the config key, or the command line's option).
    """

    def __init__(self, target: Target, clock: Callable[[], float] = time.time, *,
                 create_table: bool = True, override: str | None = None) -> None:
        if target.heartbeat is None:
            raise ConfigError(f"target {target.name} has no heartbeat settings")
        self.target = target
        self.interval = target.heartbeat.interval
        self.table = target.heartbeat.table
        split_table(self.table)  # fail now, not in the thread, on a bad name
        self._clock = clock
        self._create_table = create_table
        self._allow_read_only = target.heartbeat.allow_read_only
        self._override = override or (f"set heartbeat.allow_read_only: true on target "
                                      f"{target.name}")
        self._noted_read_only = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: Connection | None = None
        self._table_ready = False
        self._last_error: str | None = None
        self.writes = 0  # successful writes, for tests and debugging
        self.failed = 0  # failed attempts since the last successful write
        self.refused = 0  # times the server was found read-only, nothing written

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"heartbeat-{self.target.name}")
        self._thread.start()
        log.info("heartbeat writer for %s started: %s every %.3g s", self.target.name,
                 self.table, self.interval, extra={"target": self.target.name})

    def run(self) -> None:
        """The write loop until `request_stop()` (the foreground `dbgauge heartbeat
        update`, e.g. under systemd). The loop runs in its own thread and the calling
        thread only joins it: a signal handler runs in the main thread, and its
        `request_stop()` (Event.set) would wait forever for the event's lock if it
        interrupted the main thread inside Event.wait, holding that lock."""
        self.start()
        thread = self._thread
        while thread is not None and thread.is_alive():
            thread.join(0.5)
        self._thread = None

    def request_stop(self) -> None:
        """Ask the loop to end after the current write (safe in a signal handler while
        the loop runs in another thread: `run`, `start`)."""
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
            except WriteRefused as exc:  # asked again every interval, on this connection
                self.refused += 1
                self.failed = 0
                self._refused(exc)
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
        self._check_writable(conn)
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

    def _check_writable(self, conn: Connection) -> None:
        """WriteRefused if the server is read-only (unless allowed: then say so once)."""
        state = check_writable(conn, f"write the heartbeat row ({self.table})",
                               f"target {self.target.name}",
                               allow_read_only=self._allow_read_only, override=self._override)
        if state.writable or self._noted_read_only:
            self._noted_read_only = not state.writable
            return
        self._noted_read_only = True
        log.warning("heartbeat writer for %s writes although the server is read-only (%s): "
                    "allow_read_only is set", self.target.name, ", ".join(state.found),
                    extra={"target": self.target.name})

    def _refused(self, exc: WriteRefused) -> None:
        message = str(exc)
        if message != self._last_error:
            log.warning("heartbeat writer for %s wrote nothing: %s (asking again every %.3g s)",
                        self.target.name, message, self.interval,
                        extra={"target": self.target.name})
        else:
            log.debug("heartbeat writer for %s: the server is still read-only",
                      self.target.name, extra={"target": self.target.name})
        self._last_error = message

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


class HeartbeatMonitor:
    """pt-heartbeat --monitor: each target's lag every round, with its averages over the
    last 1, 5 and 15 minutes; a target keeps its connection between rounds, and one that
    cannot be read says why on its line and is tried again next round."""

    def __init__(self, targets: Sequence[Target]) -> None:
        self.targets = list(targets)
        self._conns: dict[str, Connection] = {}
        self._history: dict[str, list[tuple[float, float]]] = {t.name: [] for t in targets}
        self._stop = threading.Event()

    def line(self, target: Target, at: float) -> str:
        """One reading of `target`: `NAME: 0.42s [ 0.40s, 0.38s, 0.38s ]`, or its error."""
        try:
            lag = self._lag(target)
        except DbgaugeError as exc:
            return redact(f"{target.name}: error: {exc}")
        samples = self._history[target.name]
        samples.append((at, lag))
        del samples[:-2000]  # 15 min at 0.5 s
        averages = ", ".join("   -  " if a is None else f"{a:5.2f}s"
                             for a in frame_averages(samples, at))
        return f"{target.name}: {lag:5.2f}s [ {averages} ]"

    def _lag(self, target: Target) -> float:
        if target.heartbeat is None:
            raise ConfigError(f"target {target.name} has no heartbeat settings")
        conn = self._conns.get(target.name)
        if conn is None or conn.closed:
            conn = self._conns[target.name] = connect(target)
        return read_source(conn, target.heartbeat).lag

    def run(self, interval: float, run_time: float | None, emit: Callable[[str], None]) -> None:
        """Emit every target's line every `interval` until `request_stop()`, Ctrl-C or
        `run_time`; the connections are closed at the end."""
        end = None if run_time is None else time.monotonic() + run_time
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                for target in self.targets:
                    emit(self.line(target, started))
                if end is not None and time.monotonic() >= end:
                    break
                time.sleep(max(0.0, interval - (time.monotonic() - started)))
        except KeyboardInterrupt:
            pass
        finally:
            for conn in self._conns.values():
                conn.close()

    def request_stop(self) -> None:
        """End the loop before its next round (safe in a signal handler)."""
        self._stop.set()
