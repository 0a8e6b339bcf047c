"""mysql_queries: the operator's own queries (MySQL, MariaDB) in the same queries.yaml
format postgres_queries reads.

Set `collector_options: {mysql_queries: {file: /etc/dbgauge/queries.yaml}}`. Samples are
named `<prefix>_<column>` with the LABEL columns as labels; unlike postgres_queries there
is no `server` label (no MySQL exporter sets one: `target` names the server). Each query
runs in a READ ONLY transaction on the target's connection under its timeouts (MariaDB
max_statement_time, MySQL max_execution_time); see `collectors._queries`.
"""

from __future__ import annotations

from dbgauge.collectors._queries import QueriesCollector, success_spec
from dbgauge.toolkit.metrics import MetricTable

SUCCESS = success_spec("mysql")
METRICS = MetricTable(SUCCESS)


class MySQLQueries(QueriesCollector):
    name = "mysql_queries"
    help = ("Custom queries from a file in postgres_exporter's queries.yaml format (option "
            "`file`), named `<prefix>_<column>`; nothing when no file is set.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS
