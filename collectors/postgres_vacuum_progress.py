"""postgres_vacuum_progress: every VACUUM running now, autovacuum's included, and how far
it has gone (pg_stat_progress_vacuum).

A vacuum that takes hours on a big table is the usual reason dead tuples pile up and
transaction IDs age: its phase, the heap blocks scanned and vacuumed out of the total, the
index passes (more than one means maintenance_work_mem was too small for the dead tuples)
and the dead tuples collected say how far it is and why it is slow. Per-vacuum series
exist only while it runs; `dbgauge_postgres_vacuums_running` is always there. Tables are
named as the connected database resolves them; a table of another database is named by
its oid (`pg_class.oid`). PostgreSQL 17 counts dead tuples as item ids and sizes their
store in bytes instead of a tuple limit: `…_max_dead_tuples` is absent there and
`…_dead_tuple_bytes` present.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import pg_cannot_see
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.errors import Incomplete
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample, state_set

_P = "dbgauge_postgres_vacuum_"
_T = ("database", "table")

# pg_stat_progress_vacuum.phase, in PostgreSQL's order (postgres_exporter's too).
PHASES = ("initializing", "scanning heap", "vacuuming indexes", "vacuuming heap",
          "cleaning up indexes", "truncating heap", "performing final cleanup")

RUNNING = MetricSpec("dbgauge_postgres_vacuums_running", "gauge",
                     "VACUUMs running now, autovacuum's and manual ones "
                     "(pg_stat_progress_vacuum rows).")
PHASE = MetricSpec(_P + "phase", "gauge",
                   "1 for the running vacuum's current phase (initializing, scanning heap, "
                   "vacuuming indexes, vacuuming heap, cleaning up indexes, truncating heap, "
                   "performing final cleanup), 0 for the others.", (*_T, "phase"))


def _gauge(name: str, what: str) -> MetricSpec:
    return MetricSpec(_P + name, "gauge", f"{what} (pg_stat_progress_vacuum).", _T)


# column -> family
COLUMNS: Mapping[str, MetricSpec] = {
    "heap_blks_total": _gauge("heap_blocks", "Heap blocks of the table being vacuumed"),
    "heap_blks_scanned": _gauge("heap_blocks_scanned", "Heap blocks scanned so far"),
    "heap_blks_vacuumed": _gauge("heap_blocks_vacuumed", "Heap blocks vacuumed so far"),
    "index_vacuum_count": _gauge("index_passes",
                                 "Completed index vacuum passes; more than one means the "
                                 "dead tuples did not fit in maintenance_work_mem"),
    "dead_tuples": _gauge("dead_tuples", "Dead tuples collected since the last index pass "
                          "(num_dead_tuples; num_dead_item_ids on PostgreSQL 17+)"),
    "max_dead_tuples": _gauge("max_dead_tuples", "Dead tuples that fit before an index pass "
                              "(PostgreSQL 16 and older)"),
    "max_dead_tuple_bytes": _gauge("max_dead_tuple_bytes", "Bytes of dead tuple storage "
                                   "before an index pass (PostgreSQL 17+)"),
    "dead_tuple_bytes": _gauge("dead_tuple_bytes", "Bytes of dead tuple storage used "
                               "(PostgreSQL 17+)"),
}
METRICS = MetricTable(RUNNING, PHASE, *COLUMNS.values())


@dataclass(frozen=True)
class VacuumProgress:
    """One running vacuum: where (database "" if unknown), its phase as PostgreSQL spells
    it, and its numeric columns by name (NULL left out)."""

    database: str
    table: str
    phase: str
    values: Mapping[str, float]


@dataclass(frozen=True)
class PgVacuumProgressFacts:
    vacuums: tuple[VacuumProgress, ...]
    hidden: int = 0  # vacuums the role sees only the pid of (another role's)
    role: str = ""

    @property
    def unseen(self) -> str:
        return pg_cannot_see(f"{self.hidden} running vacuum(s) (pg_stat_progress_vacuum)",
                             self.role) if self.hidden else ""


def parse_progress(rows: Iterable[Row]) -> PgVacuumProgressFacts:
    """`vacuum_progress` rows -> the running vacuums (a row without a phase is one the
    role may not see: counted apart)."""
    rows = list(rows)
    seen = [r for r in rows if r.get("phase") is not None]
    return PgVacuumProgressFacts(tuple(VacuumProgress(
        text(r.get("datname")), text(r.get("relname")), text(r.get("phase")),
        {c: v for c in COLUMNS if (v := number(r.get(c))) is not None}) for r in seen),
        len(rows) - len(seen), text(rows[0].get("role")) if rows else "")


def progress_samples(facts: PgVacuumProgressFacts) -> Iterator[Sample]:
    """The count, then each vacuum's phase and progress (the first of two vacuums of one
    table, not seen in practice, wins)."""
    yield Sample(RUNNING.name, float(len(facts.vacuums)))
    seen: set[tuple[str, str]] = set()
    for vacuum in facts.vacuums:
        if (vacuum.database, vacuum.table) in seen:
            continue
        seen.add((vacuum.database, vacuum.table))
        labels = {"database": vacuum.database, "table": vacuum.table}
        yield from state_set(PHASE, "phase", PHASES, vacuum.phase, labels)
        for column, value in vacuum.values.items():
            yield Sample(COLUMNS[column].name, value, labels)


class PostgresVacuumProgress(Collector[PgVacuumProgressFacts]):
    name = "postgres_vacuum_progress"
    help = ("Running VACUUMs (autovacuum's too): phase, heap blocks scanned and vacuumed of "
            "the total, index passes, dead tuples collected (pg_stat_progress_vacuum).")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = METRICS

    def read(self, conn: Connection) -> PgVacuumProgressFacts:
        return parse_progress(conn.query("vacuum_progress"))

    def samples(self, facts: PgVacuumProgressFacts) -> Iterable[Sample]:
        if facts.hidden:  # a count of the vacuums it sees is not the server's
            raise Incomplete(facts.unseen)
        return progress_samples(facts)

    def incomplete(self, facts: PgVacuumProgressFacts) -> str | None:
        return facts.unseen or None
