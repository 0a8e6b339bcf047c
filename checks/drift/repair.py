"""Repair statements for `dbgauge checksum --print-repair` (pure: no I/O).

dbgauge never changes user data: these statements are printed for an operator to review
and run on the replica. Values are the source's, written as literals of the replica's
engine (this text is never executed by dbgauge, so nothing here is a bound parameter).
MySQL-family replicas get REPLACE/DELETE inside `sql_log_bin = 0`, so the repair does not
become an errant GTID; PostgreSQL gets INSERT/UPDATE/DELETE. Both scripts set the session
time zone to UTC because the timestamps are written in UTC.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from dbgauge.checks.drift.chunks import Bound, canonical_key
from dbgauge.checks.drift.normalize import MYSQL_FAMILY, Column
from dbgauge.toolkit.sql import quote_ident

_MYSQL_ESCAPES = {"\\": "\\\\", "'": "\\'", "\0": "\\0", "\n": "\\n", "\r": "\\r",
                  "\x1a": "\\Z"}


def _quote(text: str, mysql: bool) -> str:
    if mysql:
        return "'" + "".join(_MYSQL_ESCAPES.get(ch, ch) for ch in text) + "'"
    return "'" + text.replace("'", "''") + "'"


def _timedelta(value: dt.timedelta) -> str:
    total = round(value.total_seconds() * 1_000_000)
    sign = "-" if total < 0 else ""
    total = abs(total)
    seconds, micros = divmod(total, 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}.{micros:06d}"


def literal(value: Any, flavor: str, category: str) -> str:
    """`value` as an SQL literal of `flavor` for a column of `category`."""
    mysql = flavor in MYSQL_FAMILY
    if value is None:
        return "NULL"
    if isinstance(value, memoryview | bytearray):
        value = bytes(value)
    if category == "bool" and isinstance(value, bool | int):
        return ("1" if value else "0") if mysql else ("true" if value else "false")
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        return _quote({"inf": "Infinity", "-inf": "-Infinity"}.get(repr(value), "NaN"), mysql)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return f"X'{value.hex()}'" if mysql else f"'\\x{value.hex()}'::bytea"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return _quote(value.isoformat(sep=" ", timespec="microseconds"), mysql)
    if isinstance(value, dt.date | dt.time):
        return _quote(value.isoformat(), mysql)
    if isinstance(value, dt.timedelta):
        return _quote(_timedelta(value), mysql)
    if isinstance(value, str | uuid.UUID):
        return _quote(str(value), mysql)
    return _quote(json.dumps(value, default=str), mysql)


def _where(flavor: str, key_columns: Sequence[Column], key: Bound) -> str:
    return " AND ".join(
        f"{quote_ident(col.name, flavor)} = {literal(v, flavor, col.category(flavor))}"
        for col, v in zip(key_columns, key, strict=True))


def repair_script(flavor: str, replica: str, schema: str, table: str,
                  replica_columns: Sequence[Column], source_columns: Sequence[Column],
                  key: Sequence[str], items: Sequence[tuple[str, Bound]],
                  source_rows: Mapping[Bound, Mapping[str, Any]]) -> list[str]:
    """Statements that make `replica` hold the source's rows for `items` ((kind, key));
    `replica_columns[i]` is the replica's column for `source_columns[i]`."""
    mysql = flavor in MYSQL_FAMILY
    name = f"{quote_ident(schema, flavor)}.{quote_ident(table, flavor)}"
    by_name = {c.name: c for c in replica_columns}
    key_columns = [by_name[k] for k in key]
    cols = ", ".join(quote_ident(c.name, flavor) for c in replica_columns)
    out = [f"-- dbgauge checksum: make {replica} match the source for {schema}.{table}; "
           f"review, then run on {replica} (dbgauge never runs these)"]
    out += (["SET SESSION sql_log_bin = 0;", "SET SESSION time_zone = '+00:00';"] if mysql
            else ["SET TIME ZONE 'UTC';"])
    for kind, bound in items:
        where = _where(flavor, key_columns, bound)
        if kind == "extra":
            out.append(f"DELETE FROM {name} WHERE {where};")  # noqa: S608 (printed)
            continue
        row = source_rows.get(canonical_key(bound))
        if row is None:
            out.append(f"-- {kind} row {where} no longer exists on the source: skipped")
            continue
        values = [literal(row[s.name], flavor, r.category(flavor))
                  for s, r in zip(source_columns, replica_columns, strict=True)]
        if mysql:
            out.append(f"REPLACE INTO {name} ({cols}) VALUES ({', '.join(values)});")  # noqa: S608
        elif kind == "missing":
            out.append(f"INSERT INTO {name} ({cols}) VALUES ({', '.join(values)});")  # noqa: S608
        else:
            sets = ", ".join(f"{quote_ident(r.name, flavor)} = {v}"
                             for r, v in zip(replica_columns, values, strict=True)
                             if r.name not in key)
            out.append(f"UPDATE {name} SET {sets} WHERE {where};")  # noqa: S608
    if mysql:
        out.append("SET SESSION sql_log_bin = 1;")
    return out
