"""mysql_auto_increment: how close each AUTO_INCREMENT column is to its type's maximum.

From information_schema.TABLES (AUTO_INCREMENT, the next value) joined with COLUMNS (the
integer type, signed or not, gives the largest value): the next value, the maximum and
their ratio, for the `limit` columns nearest their maximum (default 1000);
`..._truncated` says when columns were left out. A column at its maximum makes every
INSERT fail with a duplicate-key error. Opt-in, as in mysqld_exporter
(`--collect.auto_increment.columns`): it reads information_schema.COLUMNS, which is slow
with many tables; it runs under the target's query_timeout. MySQL 8 serves AUTO_INCREMENT
from cached statistics (information_schema_stats_expiry, 24 h by default: set it to 0, or
ANALYZE TABLE, for current values). Only tables the monitoring user can see are listed;
those it cannot are counted against InnoDB's own list (PROCESS), as `mysql_tables` counts
them: `..._tables_hidden` says how many, `..._truncated` is 1 and the collector fails
naming the grant, since a hidden column near its maximum would go unseen.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from dbgauge.collectors._summary import (
    Summary,
    limit_option,
    parse_summary,
    truncated_sample,
    truncated_spec,
)
from dbgauge.collectors.mysql_tables import read_hidden
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.errors import Incomplete
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Sample

_LABELS = ("schema", "table", "column")
KEYS = ("table_schema", "table_name", "column_name")
COLUMNS = ("auto_increment", "max_value")
NEXT = MetricSpec("dbgauge_mysql_auto_increment_next_value", "gauge",
                  "The next AUTO_INCREMENT value of the table (information_schema.TABLES."
                  "AUTO_INCREMENT), for the top N columns by used ratio.", _LABELS)
MAX = MetricSpec("dbgauge_mysql_auto_increment_max_value", "gauge",
                 "The largest value the AUTO_INCREMENT column's integer type holds "
                 "(information_schema.COLUMNS.COLUMN_TYPE).", _LABELS)
USED = MetricSpec("dbgauge_mysql_auto_increment_used_ratio", "gauge",
                  "The next AUTO_INCREMENT value over the type's maximum: 1 means the next "
                  "INSERT fails.", _LABELS)
TRUNCATED = truncated_spec("dbgauge_mysql_auto_increment", "AUTO_INCREMENT columns")
HIDDEN = MetricSpec("dbgauge_mysql_auto_increment_tables_hidden", "gauge",
                    "InnoDB tables (outside the system schemas) this account cannot see in "
                    "information_schema, whose AUTO_INCREMENT columns are therefore not "
                    "checked; absent when that cannot be told (no PROCESS).")
METRICS = MetricTable(NEXT, MAX, USED, TRUNCATED, HIDDEN)


@dataclass(frozen=True)
class AutoIncrementFacts(Summary):
    hidden: int | None = None  # InnoDB tables the account cannot see (None: cannot tell)
    hidden_error: str = ""


def read_auto_increment(conn: Connection, limit: int) -> AutoIncrementFacts:
    found = parse_summary(conn.query("auto_increment_columns", (limit + 1,)), KEYS, COLUMNS,
                          limit)
    hidden, error = read_hidden(conn)
    if error:
        error = error.replace("their sizes are missing", "their AUTO_INCREMENT columns are "
                                                        "not checked")
    return AutoIncrementFacts(found.rows, found.truncated, hidden, error)


def auto_increment_samples(facts: AutoIncrementFacts) -> Iterator[Sample]:
    yield truncated_sample(TRUNCATED, replace(facts, truncated=facts.truncated
                                              or bool(facts.hidden)))
    if facts.hidden is not None:
        yield Sample(HIDDEN.name, float(facts.hidden))
    for row in facts.rows:
        labels = dict(zip(_LABELS, row.keys, strict=True))
        value, top = row.values.get("auto_increment"), row.values.get("max_value")
        if value is not None:
            yield Sample(NEXT.name, value, labels)
        if top is not None:
            yield Sample(MAX.name, top, labels)
        if value is not None and top:
            yield Sample(USED.name, value / top, labels)
    if facts.hidden_error:
        raise Incomplete(facts.hidden_error)


class MySQLAutoIncrement(Collector[AutoIncrementFacts]):
    name = "mysql_auto_increment"
    refresh = 60  # slow-changing, and information_schema.COLUMNS is the costly part
    help = ("AUTO_INCREMENT headroom: next value, the type's maximum and their ratio for the "
            "columns nearest their maximum (information_schema); opt-in.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    default_enabled = False
    metrics = METRICS
    options = limit_option(1000, "AUTO_INCREMENT columns, the nearest their maximum first")

    def read(self, conn: Connection) -> AutoIncrementFacts:
        return read_auto_increment(conn, int(self.setting("limit")))

    def samples(self, facts: AutoIncrementFacts) -> Iterable[Sample]:
        return auto_increment_samples(facts)

    def incomplete(self, facts: AutoIncrementFacts) -> str | None:
        return facts.hidden_error or None
