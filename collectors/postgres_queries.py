"""postgres_queries: the operator's own queries, from a postgres_exporter queries.yaml.

Set `collector_options: {postgres_queries: {file: /etc/dbgauge/queries.yaml}}` on a target
(or under `daemon:` for all) and the samples keep postgres_exporter's names
(`<prefix>_<column>`) and labels, its constant `server` label (the DSN's host:port)
included, so dashboards and rules written for postgres_exporter keep working. Each query
runs read-only on the target's connection under its timeouts; see `collectors._queries`.

With `databases: all` (what postgres_exporter's --auto-discover-databases does to a
queries.yaml) each query runs on every connectable database too, one extra connection at
a time (`collectors._pg_databases`), except those marked `master: true`, which run on the
DSN's database only, as the peer runs them. A series two databases both give is kept
once and that query reported failed: its rows need a label telling the databases apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from dbgauge.collectors._pg_databases import CURRENT, Selection, read_databases
from dbgauge.collectors._pg_databases import OPTIONS as DATABASE_OPTIONS
from dbgauge.collectors._queries import OPTIONS as QUERY_OPTIONS
from dbgauge.collectors._queries import (
    QueriesCollector,
    QueriesFacts,
    QueriesState,
    read_queries,
    server_label,
    success_spec,
)
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.metrics import MetricSpec, MetricTable, Sample

SUCCESS = success_spec("postgres")
DATABASE_SUCCESS = MetricSpec(
    "dbgauge_postgres_custom_query_database_success", "gauge",
    "With the `databases` option: 1 if the custom queries ran on this database during "
    "this scrape, 0 if it could not be read (the log says why; its series are missing).",
    ("database",))
METRICS = MetricTable(SUCCESS, DATABASE_SUCCESS)


class PostgresQueries(QueriesCollector):
    name = "postgres_queries"
    help = ("Custom queries from a postgres_exporter queries.yaml file (option `file`), with "
            "postgres_exporter's names and labels, on the DSN's database or on every one "
            "(`databases`); nothing when no file is set.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    metrics = METRICS
    options = {**QUERY_OPTIONS, **DATABASE_OPTIONS}
    with_server_label = True

    def read(self, conn: Connection) -> QueriesFacts:
        selection = Selection.of(self.setting)
        path = str(self.setting("file"))
        if selection.databases == CURRENT or not path:
            return super().read(conn)
        if self._state is None:
            self._state = QueriesState()
        state, max_rows, server = self._state, int(self.setting("max_rows")), server_label(conn)

        def one(other: Connection) -> QueriesFacts:
            database = "" if other is conn else _database(other)
            return read_queries(other, path, max_rows, state, server, database)

        outcomes = read_databases(conn, selection, one)
        results = tuple(r for o in outcomes if o.facts is not None for r in o.facts.results)
        return QueriesFacts(results, conn.server.version, server,
                            tuple((o.database, o.error) for o in outcomes))

    def samples(self, facts: QueriesFacts) -> Iterable[Sample]:
        return _with_databases(facts, super().samples(facts))


def _database(conn: Connection) -> str:
    return (parse_dsn(conn.target.dsn).dbname or "?") if conn.target is not None else "?"


def _with_databases(facts: QueriesFacts, rest: Iterable[Sample]) -> Iterator[Sample]:
    """Each database's success first: the queries' samples end in Incomplete when one
    failed."""
    for database, error in facts.databases:
        yield Sample(DATABASE_SUCCESS.name, 0.0 if error else 1.0, {"database": database})
    yield from rest
