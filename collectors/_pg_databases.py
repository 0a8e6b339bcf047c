"""Every database of a PostgreSQL server, for collectors whose statistics are per database.

PostgreSQL keeps pg_stat_user_tables and pg_statio_user_tables per database: a connection
sees only its own database's tables. postgres_exporter's `--auto-discover-databases`
connects to every database `pg_database` lists; the `databases` option does the same for
a dbgauge collector, under one bound:

- the extra databases are read one after another, on one extra connection at a time,
  opened with the target's DSN (its database replaced), password source,
  `connect_timeout` and session timeouts (`query_timeout`, `lock_timeout`), and closed
  right after: never more than one connection beyond the target's own;
- at most `max_databases` databases per collection, and none started (nor a connection
  waited for) once `time_budget` seconds have passed since the collection began; the
  target's scrape deadline still bounds the target's own connection, and each statement
  is bounded by the target's `query_timeout` on the server;
- a database that cannot be read (refused connection, no CONNECT privilege, a timeout)
  costs that database only: it is reported (`DatabaseRead.error`, logged once per
  distinct error) and the others go on.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from dbgauge.toolkit.db import Connection, connect
from dbgauge.toolkit.db.values import text
from dbgauge.toolkit.dsn import libpq_dsn
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.metrics import Option, OptionValue

log = logging.getLogger("dbgauge.collectors")

CURRENT, ALL = "current", "all"

OPTIONS: Mapping[str, Option] = {
    "databases": Option(CURRENT, "Which databases: `current` (the one the DSN names), "
                                 "`all` (every database a client may connect to, as "
                                 "postgres_exporter's --auto-discover-databases), or a "
                                 "comma-separated list of names"),
    "exclude_databases": Option("", "Comma-separated databases left out of `all` (or of "
                                    "the list)"),
    "max_databases": Option(100, "Most databases read per collection (the connected one "
                                 "first, then by name); those left over are reported as "
                                 "not read", maximum=10_000),
    "time_budget": Option(8, "Seconds after which no further database is started; those "
                             "left over are reported as not read", maximum=600),
}

T = TypeVar("T")


@dataclass(frozen=True)
class DatabaseRead(Generic[T]):
    """One database's outcome: what `read` returned, or why there is nothing."""

    database: str
    facts: T | None = None
    error: str | None = None


@dataclass(frozen=True)
class Selection:
    """The `databases`/`exclude_databases`/`max_databases`/`time_budget` settings."""

    databases: str = CURRENT
    exclude: frozenset[str] = frozenset()
    max_databases: int = 100
    time_budget: float = 8.0

    @classmethod
    def of(cls, setting: Callable[[str], OptionValue]) -> Selection:
        return cls(str(setting("databases")).strip() or CURRENT,
                   frozenset(split(str(setting("exclude_databases")))),
                   int(setting("max_databases")), float(setting("time_budget")))

    def chosen(self, current: str, connectable: Iterable[str]) -> list[str]:
        """The databases to read, the connected one first: `all` is every connectable
        one, a list is taken as given (a name that does not exist fails as its own)."""
        if self.databases == CURRENT:
            return [current]
        names = list(connectable) if self.databases == ALL else split(self.databases)
        ordered = [current] if current in names else []
        ordered += sorted(n for n in set(names) if n != current)
        return [n for n in ordered if n not in self.exclude]


def split(value: str) -> list[str]:
    """A comma-separated option's names, blanks dropped."""
    return [n.strip() for n in value.split(",") if n.strip()]


def read_databases(conn: Connection, selection: Selection,
                   read: Callable[[Connection], T]) -> tuple[DatabaseRead[T], ...]:
    """`read` on each chosen database: the connected one on `conn`, the others each on a
    connection of its own (see the module docstring). An error of the connected database
    propagates (the collector fails, as before); any other database's is its outcome."""
    started = time.monotonic()
    rows = conn.query("table_databases")
    current = text(rows[0].get("current")) if rows else ""
    if selection.databases == CURRENT or not rows:
        return (DatabaseRead(current, read(conn)),)
    names = selection.chosen(current, (text(r.get("datname")) for r in rows))
    out: list[DatabaseRead[T]] = []
    for index, name in enumerate(names):
        left = selection.time_budget - (time.monotonic() - started)
        if index >= selection.max_databases:
            out.append(DatabaseRead(name, error=f"over max_databases "
                                                f"({selection.max_databases})"))
        elif left <= 0:
            out.append(DatabaseRead(name, error=f"time_budget ({selection.time_budget:g} s) "
                                                "spent before this database"))
        elif name == current:
            out.append(DatabaseRead(name, read(conn)))
        else:
            out.append(_read_other(conn, name, read, left))
    return tuple(out)


def _read_other(conn: Connection, name: str, read: Callable[[Connection], T],
                left: float) -> DatabaseRead[T]:
    """`read` on a connection to database `name`, opened (within the target's
    connect_timeout and the budget `left`) and closed here."""
    target = conn.target
    if target is None:
        return DatabaseRead(name, error="no target to connect from")
    try:
        other = connect(dataclasses.replace(target, dsn=libpq_dsn(target.dsn, dbname=name)),
                        min(target.connect_timeout, left))
    except DbgaugeError as exc:
        return _failed(target.name, name, str(exc))
    try:
        return DatabaseRead(name, read(other))
    except DbgaugeError as exc:
        return _failed(target.name, name, str(exc))
    finally:
        other.close()


_logged: dict[tuple[str, str], str] = {}


def _failed(target: str, database: str, error: str) -> DatabaseRead[T]:
    """A database that could not be read: logged when its error is new."""
    if _logged.get((target, database)) != error:
        _logged[(target, database)] = error
        log.warning("target %s: database %s not read: %s", target, database, error,
                    extra={"target": target})
    return DatabaseRead(database, error=error)
