"""postgres_buffercache: how the shared buffers are used: buffers holding a page and free
ones, dirty and pinned ones, and the used ones' average usage count (pg_buffercache).

Few free buffers and a high average usage count say the working set does not fit in
shared_buffers; many dirty ones say the background writer and checkpoints lag behind. The
numbers come from the pg_buffercache extension, which must be created in the database
dbgauge connects to: without it there is nothing to read, and the collector fails saying
which database and what to run, never reporting zeros. PostgreSQL 16+ sums the buffers
with pg_buffercache_summary() (no buffer locks), as postgres_exporter's opt-in
buffercache_summary collector does; before 16 they are summed from the pg_buffercache view
(a lock per buffer partition while it is read), and the peer's families are not made, as
the peer makes none there. Opt-in, as the peer's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.errors import QueryError
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample
from dbgauge.toolkit.sql import load_sql, quote_ident

_P = "dbgauge_postgres_shared_buffers_"


def _gauge(name: str, what: str) -> MetricSpec:
    return MetricSpec(_P + name, "gauge", f"{what} (pg_buffercache).")


USED = _gauge("used", "Shared buffers holding a page")
UNUSED = _gauge("unused", "Shared buffers holding no page")
DIRTY = _gauge("dirty", "Shared buffers changed since read (not yet written)")
PINNED = _gauge("pinned", "Shared buffers pinned by a backend now")
USAGE = _gauge("usage_count_average", "Average usage count (0-5) of the used shared buffers; "
               "absent when none is used")
METRICS = MetricTable(USED, UNUSED, DIRTY, PINNED, USAGE)


@dataclass(frozen=True)
class PgBuffercacheFacts:
    """The buffer counts (None where NULL), and whether pg_buffercache_summary() gave them
    (PostgreSQL 16+, extension 1.4+) or the view."""

    used: float | None
    unused: float | None
    dirty: float | None
    pinned: float | None
    usagecount_avg: float | None
    summary: bool


def parse_buffercache(row: Row) -> PgBuffercacheFacts:
    """One row of buffercache.sql (either version)."""
    return PgBuffercacheFacts(number(row.get("buffers_used")), number(row.get("buffers_unused")),
                              number(row.get("buffers_dirty")),
                              number(row.get("buffers_pinned")),
                              number(row.get("usagecount_avg")), bool(row.get("summary")))


def missing(database: str, role: str) -> str:
    """What the collector fails with when the extension is not in the connected database."""
    grant = f"; GRANT pg_monitor TO {role}" if role else ""
    return (f"pg_buffercache is not installed in database {database or '(connected)'}: "
            f"as a superuser connected to it, run CREATE EXTENSION pg_buffercache{grant}")


def _summary_version(version: str) -> bool:
    """Extension 1.4 brought pg_buffercache_summary()."""
    try:
        return tuple(int(p) for p in version.split(".")) >= (1, 4)
    except ValueError:
        return False


def buffercache_samples(facts: PgBuffercacheFacts) -> Iterator[Sample]:
    for spec, value in ((USED, facts.used), (UNUSED, facts.unused), (DIRTY, facts.dirty),
                        (PINNED, facts.pinned), (USAGE, facts.usagecount_avg)):
        if value is not None:
            yield Sample(spec.name, value)


class PostgresBuffercache(Collector[PgBuffercacheFacts]):
    name = "postgres_buffercache"
    help = ("Shared buffers used, unused, dirty and pinned, and the used ones' average "
            "usage count (pg_buffercache, which must be created in the connected "
            "database); opt-in.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    default_enabled = False
    metrics = METRICS

    def read(self, conn: Connection) -> PgBuffercacheFacts:
        ext = conn.query("buffercache_extension")[0]
        if ext.get("schema") is None:
            raise QueryError(missing(text(ext.get("database")), text(ext.get("role"))))
        version = conn.server.version
        if version >= (16,) and not _summary_version(text(ext.get("version"))):
            version = (15,)  # an extension not updated since 15: no summary function
        sql = load_sql("postgres", "buffercache", version).replace(
            "{schema}", quote_ident(text(ext["schema"]), "postgres"))
        return parse_buffercache(conn.execute_sql(sql)[0])

    def samples(self, facts: PgBuffercacheFacts) -> Iterable[Sample]:
        return buffercache_samples(facts)
