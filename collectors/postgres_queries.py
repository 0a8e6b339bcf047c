"""postgres_queries: the operator's own queries, from a postgres_exporter queries.yaml.

Set `collector_options: {postgres_queries: {file: /etc/dbgauge/queries.yaml}}` on a target
(or under `daemon:` for all) and the samples keep postgres_exporter's names
(`<prefix>_<column>`) and labels, its constant `server` label (the DSN's host:port)
included, so dashboards and rules written for postgres_exporter keep working. Each query
runs read-only on the target's connection under its timeouts; see `collectors._queries`.
"""

from __future__ import annotations

from dbgauge.collectors._queries import QueriesCollector, success_spec
from dbgauge.toolkit.metrics import MetricTable

SUCCESS = success_spec("postgres")
METRICS = MetricTable(SUCCESS)


class PostgresQueries(QueriesCollector):
    name = "postgres_queries"
    help = ("Custom queries from a postgres_exporter queries.yaml file (option `file`), with "
            "postgres_exporter's metric names and labels; nothing when no file is set.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    metrics = METRICS
    with_server_label = True
