"""mysql_engine_innodb_status: the SHOW ENGINE INNODB STATUS numbers no status variable
or INNODB_METRICS row carries: read views open inside InnoDB, and queries inside InnoDB and
queued for it (MySQL, while innodb_thread_concurrency limits them; MariaDB 10.6+ no longer
prints that line).

mysql_innodb reads the monitor text only as a fallback; this collector reads it at every
scrape, which takes InnoDB's monitor mutex and returns kilobytes of text: opt-in, as in
mysqld_exporter (`--collect.engine_innodb_status`). Needs PROCESS. A line the server does
not print gives no series.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.privileges import PROCESS, query
from dbgauge.toolkit.db.values import text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

READ_VIEWS = MetricSpec("dbgauge_mysql_innodb_read_views_open", "gauge",
                        "Read views open inside InnoDB (SHOW ENGINE INNODB STATUS, TRANSACTIONS "
                        "section): each pins the undo history purge may not remove.")
INSIDE = MetricSpec("dbgauge_mysql_innodb_queries_inside", "gauge",
                    "Queries inside InnoDB (SHOW ENGINE INNODB STATUS, ROW OPERATIONS; MySQL "
                    "only).")
QUEUED = MetricSpec("dbgauge_mysql_innodb_queries_queued", "gauge",
                    "Queries waiting to enter InnoDB because innodb_thread_concurrency is "
                    "reached (SHOW ENGINE INNODB STATUS, ROW OPERATIONS; MySQL only).")
METRICS = MetricTable(READ_VIEWS, INSIDE, QUEUED)
_QUERIES = re.compile(r"(\d+) queries inside InnoDB, (\d+) queries in queue")
_VIEWS = re.compile(r"(\d+) read views open inside InnoDB")


@dataclass(frozen=True)
class EngineStatusFacts:
    """The numbers printed (None when the line is not there)."""

    read_views: float | None = None
    queries_inside: float | None = None
    queries_queued: float | None = None


def parse_engine_status(status: str) -> EngineStatusFacts:
    """The monitor text -> its numbers (the first line of each kind)."""
    queries, views = _QUERIES.search(status), _VIEWS.search(status)
    return EngineStatusFacts(float(views[1]) if views else None,
                             float(queries[1]) if queries else None,
                             float(queries[2]) if queries else None)


def engine_status_samples(facts: EngineStatusFacts) -> Iterator[Sample]:
    for spec, value in ((READ_VIEWS, facts.read_views), (INSIDE, facts.queries_inside),
                        (QUEUED, facts.queries_queued)):
        if value is not None:
            yield Sample(spec.name, value)


class MySQLEngineInnodbStatus(Collector[EngineStatusFacts]):
    name = "mysql_engine_innodb_status"
    help = ("Read views open, queries inside InnoDB and queued, from SHOW ENGINE INNODB "
            "STATUS at every scrape; opt-in.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    default_enabled = False
    metrics = METRICS

    def read(self, conn: Connection) -> EngineStatusFacts:
        rows = query(conn, "engine_innodb_status", PROCESS)
        return parse_engine_status(text(rows[0].get("Status")) if rows else "")

    def samples(self, facts: EngineStatusFacts) -> Iterable[Sample]:
        return engine_status_samples(facts)
