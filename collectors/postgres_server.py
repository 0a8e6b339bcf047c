"""postgres_server: per-database size and transaction ID wraparound headroom, server start.

A database's `age(datfrozenxid)` grows until (auto)vacuum freezes its oldest rows; at
autovacuum_freeze_max_age autovacuum forces an anti-wraparound vacuum, and near 2^31 the
server stops taking writes. Exporting the age next to the limit lets an alert fire on
`xid_age / autovacuum_freeze_max_age` long before that; the same holds for multixact IDs.
Sizes are read only where the role may measure them (template0 included: measuring needs
no connection): a database the role may not see has no size series, never a failed scrape.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import flag, number, text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample, present

_P = "dbgauge_postgres_"
_DB = ("database",)

SIZE = MetricSpec(_P + "database_size_bytes", "gauge",
                  "Disk space the database uses (pg_database_size); absent for databases that "
                  "this role may not measure (no CONNECT, no pg_read_all_stats).", _DB)
XID_AGE = MetricSpec(_P + "database_xid_age", "gauge",
                     "Transactions since the database's oldest unfrozen transaction ID "
                     "(age(pg_database.datfrozenxid)); anti-wraparound autovacuum starts at "
                     "autovacuum_freeze_max_age, writes stop near 2^31.", _DB)
MXID_AGE = MetricSpec(_P + "database_mxid_age", "gauge",
                      "Multixact IDs since the database's oldest unfrozen multixact "
                      "(mxid_age(pg_database.datminmxid)); compare with "
                      "autovacuum_multixact_freeze_max_age.", _DB)
FREEZE_MAX_AGE = MetricSpec(_P + "autovacuum_freeze_max_age", "gauge",
                            "The xid age at which autovacuum forces a vacuum to prevent "
                            "wraparound (setting autovacuum_freeze_max_age).")
MULTIXACT_FREEZE_MAX_AGE = MetricSpec(
    _P + "autovacuum_multixact_freeze_max_age", "gauge",
    "The multixact age at which autovacuum forces a vacuum to prevent wraparound (setting "
    "autovacuum_multixact_freeze_max_age).")
START_TIME = MetricSpec(_P + "start_time_seconds", "gauge",
                        "When the server started (pg_postmaster_start_time), Unix seconds.")
ROLE_LIMIT = MetricSpec(_P + "role_connection_limit", "gauge",
                        "Connections the role may open at once (pg_roles.rolconnlimit); -1 "
                        "for no limit.", ("role",))
METRICS = MetricTable(SIZE, XID_AGE, MXID_AGE, FREEZE_MAX_AGE, MULTIXACT_FREEZE_MAX_AGE,
                      START_TIME, ROLE_LIMIT)


@dataclass(frozen=True)
class DatabaseAge:
    """One `server_databases` row; None where PostgreSQL reports NULL or dbgauge may not
    measure."""

    name: str
    size_bytes: float | None
    xid_age: float | None
    mxid_age: float | None
    connection_limit: float | None = None  # datconnlimit, -1 for none
    allow_connections: bool = True  # datallowconn (template0: false)


@dataclass(frozen=True)
class PgServerFacts:
    """Every database's size and ages, and the server-wide values."""

    databases: tuple[DatabaseAge, ...]
    start_time: float | None  # Unix seconds
    freeze_max_age: float | None
    multixact_freeze_max_age: float | None
    version: str = ""  # version(): 'PostgreSQL 15.20 (Debian ...) on x86_64...'
    server_version: str = ""  # server_version: '15.20', '16beta1', '15.4 (Ubuntu ...)'
    roles: tuple[tuple[str, float], ...] = ()  # (rolname, rolconnlimit)


def parse_databases(rows: Iterable[Row]) -> tuple[DatabaseAge, ...]:
    """`server_databases` rows -> DatabaseAge."""
    return tuple(DatabaseAge(str(row["datname"]), number(row.get("size_bytes")),
                             number(row.get("xid_age")), number(row.get("mxid_age")),
                             number(row.get("connection_limit")),
                             flag(row.get("allow_connections")) is not False)
                 for row in rows)


def parse_server(databases: Iterable[Row], info: Row) -> PgServerFacts:
    """Both statements' rows -> PgServerFacts."""
    return PgServerFacts(parse_databases(databases), number(info.get("start_time")),
                         number(info.get("autovacuum_freeze_max_age")),
                         number(info.get("autovacuum_multixact_freeze_max_age")),
                         text(info.get("version")), text(info.get("server_version")))


def parse_roles(rows: Iterable[Row]) -> tuple[tuple[str, float], ...]:
    """`roles` rows -> (role, connection limit)."""
    return tuple((text(r.get("rolname")), number(r.get("connection_limit")) or -1.0)
                 for r in rows)


def read_server(conn: Connection) -> PgServerFacts:
    facts = parse_server(conn.query("server_databases"), conn.query("server_info")[0])
    return replace(facts, roles=parse_roles(conn.query("roles")))


def server_samples(facts: PgServerFacts) -> Iterator[Sample]:
    """Per-database samples (NULLs left out), then the server-wide ones."""
    for db in facts.databases:
        yield from present(((SIZE, db.size_bytes), (XID_AGE, db.xid_age),
                            (MXID_AGE, db.mxid_age)), {"database": db.name})
    yield from present(((FREEZE_MAX_AGE, facts.freeze_max_age),
                        (MULTIXACT_FREEZE_MAX_AGE, facts.multixact_freeze_max_age),
                        (START_TIME, facts.start_time)))
    for role, limit in facts.roles:
        yield Sample(ROLE_LIMIT.name, limit, {"role": role})


class PostgresServer(Collector[PgServerFacts]):
    name = "postgres_server"
    refresh = 60  # slow-changing (and, for fleets, the costly part): see Collector.refresh
    help = ("Per database: size, xid and multixact age (wraparound headroom); the autovacuum "
            "freeze limits they are judged against; when the server started; each role's "
            "connection limit.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = METRICS

    def read(self, conn: Connection) -> PgServerFacts:
        return read_server(conn)

    def samples(self, facts: PgServerFacts) -> Iterable[Sample]:
        return server_samples(facts)
