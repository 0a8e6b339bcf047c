"""What a connection is to the rest of dbgauge: rows as dicts, the server it talks to,
and the target it was opened for (drivers stay behind `toolkit.db.mysql`/`postgres`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from dbgauge.toolkit.db.version import Version, version_text
from dbgauge.toolkit.errors import QueryError

if TYPE_CHECKING:  # only named in annotations: a connection need not load the fan-out
    from dbgauge.toolkit.targets import Target

Row = dict[str, Any]


@dataclass(frozen=True)
class ServerInfo:
    """What a connection talks to: flavor is mysql, mariadb, postgres or pgbouncer."""

    flavor: str
    version: Version
    version_string: str

    @property
    def version_text(self) -> str:
        return version_text(self.version)


class Connection(Protocol):
    """What collectors and checks may do with a target."""

    server: ServerInfo
    target: Target | None  # what this connection was opened for, if known
    connect_seconds: float  # how long opening it took (check connection's perfdata)

    def query(self, name: str, params: Any = None) -> list[Row]:
        """Run the named statement from sql/<flavor>/ (values bound as %s params)."""
        ...

    def execute_sql(self, sql: str, params: Any = None) -> list[Row]:
        """Run literal SQL; for statements built by dbgauge itself, never user input."""
        ...

    def read_ahead(self, names: Sequence[str]) -> None:
        """Run these named parameterless SELECTs now, together where the driver can (one
        round trip), keeping each one's rows for the next `query(name)`, once; with no
        names, forget what was not asked for. One that failed runs again when asked, and
        fails then. A scrape reads ahead what its collectors ran last time (`ran`)."""
        ...

    def ran(self) -> tuple[str, ...]:
        """The named statements `query` ran without parameters since the last call
        (recorded from the first call on)."""
        ...

    def query_read_only(self, sql: str, max_rows: int) -> list[Row]:
        """Run one operator-written SELECT (a queries file's) in a read-only transaction
        that is rolled back; more than `max_rows` rows is a QueryError."""
        ...

    def close(self) -> None: ...

    def abort(self) -> None:
        """Interrupt a running statement from another thread; the connection is then dead."""
        ...

    @property
    def closed(self) -> bool: ...


def read_only(conn: Connection, fetch: Callable[[], list[Row]]) -> list[Row]:
    """`fetch` inside a read-only transaction that is always rolled back (both drivers'
    `query_read_only`); on a connection that died meanwhile the transaction died with it."""
    conn.execute_sql("START TRANSACTION READ ONLY")
    try:
        return fetch()
    finally:
        if not conn.closed:
            with contextlib.suppress(QueryError):
                conn.execute_sql("ROLLBACK")
