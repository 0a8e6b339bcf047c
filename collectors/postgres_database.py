"""postgres_database: per-database backends and transaction counters.

The foundation's PostgreSQL collector; it grows into the full pg_stat_database
collector in the PostgreSQL collectors issue.
"""

from __future__ import annotations

from collections.abc import Iterable

from collectors.base import Collector, MetricSpec, Sample, number
from toolkit.db import Connection

BACKENDS = MetricSpec("dbgauge_postgres_database_backends", "gauge",
                      "Backends connected to the database (pg_stat_database.numbackends).",
                      ("database",))
COMMITS = MetricSpec("dbgauge_postgres_database_xact_commits_total", "counter",
                     "Transactions committed (pg_stat_database.xact_commit).", ("database",))
ROLLBACKS = MetricSpec("dbgauge_postgres_database_xact_rollbacks_total", "counter",
                       "Transactions rolled back (pg_stat_database.xact_rollback).",
                       ("database",))
MAX_CONNECTIONS = MetricSpec("dbgauge_postgres_max_connections", "gauge",
                             "Configured connection limit (max_connections).")
RESERVED = MetricSpec("dbgauge_postgres_superuser_reserved_connections", "gauge",
                      "Connection slots reserved for superusers "
                      "(superuser_reserved_connections).")


class PostgresDatabase(Collector):
    name = "postgres_database"
    help = "Per-database backends, commits and rollbacks from pg_stat_database; max_connections."
    kind = "postgres"
    flavors = frozenset({"postgres"})
    metrics = (BACKENDS, COMMITS, ROLLBACKS, MAX_CONNECTIONS, RESERVED)

    def collect(self, conn: Connection) -> Iterable[Sample]:
        for row in conn.query("stat_database_basic"):
            labels = {"database": str(row["datname"])}
            for spec, column in ((BACKENDS, "numbackends"), (COMMITS, "xact_commit"),
                                 (ROLLBACKS, "xact_rollback")):
                value = number(row[column])
                if value is not None:
                    yield Sample(spec.name, value, labels)
        settings = conn.query("max_connections")[0]
        yield Sample(MAX_CONNECTIONS.name, float(settings["max_connections"]))
        yield Sample(RESERVED.name, float(settings["reserved_connections"]))
