"""A replica's own binlog as evidence: which errant GTIDs it holds, where the first one
starts, when it was written and what it did.

Pure parsing of SHOW BINLOG EVENTS rows (`parse_event`, `event_gtid`,
`summarize_transaction`) and of a binlog event header, plus the bounded scan that reads
them (`read_errant_events`) and the header read from the binlog file when dbgauge runs on
the database host (`event_time`).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dbgauge.checks.split_brain.model import BinlogEvent, ErrantEvents
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.errors import QueryError

_MAX_BINLOG_EVENTS = 20000  # events read per replica to find the first errant one
_BINLOG_PAGE = 2000
_SUMMARY_CHARS = 120


def parse_event(row: Mapping[str, Any]) -> BinlogEvent:
    return BinlogEvent(text(row.get("Log_name")), int(number(row.get("Pos")) or 0),
                       text(row.get("Event_type")), int(number(row.get("Server_id")) or 0),
                       int(number(row.get("End_log_pos")) or 0), text(row.get("Info")))


_MARIADB_EVENT_GTID = re.compile(r"\bGTID (\d+-\d+-\d+)\b")
_MYSQL_EVENT_GTID = re.compile(r"GTID_NEXT\s*=\s*'([^']+)'")
_TABLE_MAP = re.compile(r"\(([^()]+)\)\s*$")


def event_gtid(event: BinlogEvent) -> str | None:
    """The GTID a Gtid event starts ('0-2-5' on MariaDB, 'uuid:n' on MySQL), else None."""
    if event.event_type != "Gtid":
        return None
    m = _MARIADB_EVENT_GTID.search(event.info) or _MYSQL_EVENT_GTID.search(event.info)
    return m.group(1) if m else None


def summarize_transaction(events: Sequence[BinlogEvent]) -> str:
    """One line for a transaction's events (those after its Gtid event).

    The statement when the binlog carries it (MariaDB Annotate_rows, MySQL Rows_query,
    statement-based or DDL Query events), else the row events and their tables.
    """
    def clip(value: str) -> str:
        flat = " ".join(value.split())
        return flat if len(flat) <= _SUMMARY_CHARS else flat[: _SUMMARY_CHARS - 3] + "..."

    for e in events:
        if e.event_type in ("Annotate_rows", "Rows_query"):
            return clip(e.info.removeprefix("# "))
        if e.event_type == "Query" and e.info.strip().upper() not in ("BEGIN", "COMMIT"):
            return clip(e.info)
    tables = [m.group(1) for e in events if e.event_type == "Table_map"
              for m in [_TABLE_MAP.search(e.info)] if m]
    rows = sorted({e.event_type.split("_rows")[0].lower() for e in events
                   if "_rows" in e.event_type.lower()})
    if rows:
        return clip(f"{'/'.join(rows)} rows in {', '.join(dict.fromkeys(tables)) or '?'}")
    return clip(", ".join(e.event_type for e in events) or "empty transaction")


def parse_event_header(header: bytes) -> tuple[int, int, int]:
    """A binlog event's first 19 bytes -> (unix timestamp, event type code, server_id)."""
    timestamp, type_code, server_id = struct.unpack_from("<IBI", header)
    return timestamp, type_code, server_id


def event_time(basename: str, event: BinlogEvent) -> float | None:
    """The event's timestamp read from the binlog file itself, when it is readable here
    (dbgauge runs on the database host); None otherwise or when the header disagrees."""
    if not basename:
        return None
    try:
        with open(Path(basename).parent / event.log_name, "rb") as handle:
            handle.seek(event.pos)
            header = handle.read(19)
    except OSError:
        return None
    if len(header) < 19:
        return None
    timestamp, _, server_id = parse_event_header(header)
    return float(timestamp) if server_id == event.server_id else None


def _header_state(events: Sequence[BinlogEvent]) -> str | None:
    """The GTID state a binlog file starts with (Gtid_list / Previous_gtids Info)."""
    for e in events:
        if e.event_type == "Gtid_list":
            return e.info.strip().strip("[]")
        if e.event_type == "Previous_gtids":
            return e.info
    return None


def read_errant_events(conn: Connection, is_errant: Callable[[str], bool],
                       before_file: Callable[[str], bool]) -> ErrantEvents | None:
    """Scan the binlog from the file where the errant GTIDs begin.

    `before_file(state)` says whether a file's starting GTID state already holds errant
    transactions (then they began in an earlier file). None if the binlog cannot be read.
    """
    try:
        files = [text(r.get("Log_name")) for r in conn.query("split_brain_binary_logs")]
        start = 0
        for i in range(len(files) - 1, -1, -1):
            head = [parse_event(r) for r in
                    conn.query("split_brain_binlog_events", (files[i], 4, 4))]
            state = _header_state(head)
            if state is None or not before_file(state):
                start = i
                break
        found: list[str] = []
        first: BinlogEvent | None = None
        body: list[BinlogEvent] = []  # the first errant transaction's events
        collecting = False
        read = 0
        for name in files[start:]:
            pos = 4
            while read < _MAX_BINLOG_EVENTS:
                page = [parse_event(r) for r in conn.query(
                    "split_brain_binlog_events", (name, pos, _BINLOG_PAGE))]
                read += len(page)
                for e in page:
                    gtid = event_gtid(e)
                    if gtid is None:
                        if collecting and len(body) < 20:
                            body.append(e)
                        continue
                    collecting = False
                    if is_errant(gtid):
                        found.append(gtid)
                        if first is None:
                            first, collecting = e, True
                if len(page) < _BINLOG_PAGE or not page[-1].end_log_pos:
                    break
                pos = page[-1].end_log_pos  # where the next event starts
        return ErrantEvents(tuple(found), first, summarize_transaction(body) if first else "",
                            complete=read < _MAX_BINLOG_EVENTS)
    except QueryError:
        return None
