"""What the performance_schema and information_schema summary collectors share: rows keyed
by a few text columns (schema, table, event name...) with numeric columns, read as a top N
with one row more than the limit, so that a collector can say it left rows out.

Every such collector bounds its label set by its `limit` option and exports a
`..._truncated` gauge (1 when the server had more rows than the limit). NULL keys become
"" and NULL numbers are left out (no made-up 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import PS_SELECT, query
from dbgauge.toolkit.db.values import numbers, text
from dbgauge.toolkit.metrics import Collector, MetricSpec, Option, Sample

PICOSECONDS = 1e-12


@dataclass(frozen=True)
class Keyed:
    """One summary row: its key columns' text, in order, and its numbers by column."""

    keys: tuple[str, ...]
    values: Mapping[str, float]


@dataclass(frozen=True)
class Summary:
    """At most `limit` rows, in the server's order, and whether there were more."""

    rows: tuple[Keyed, ...] = ()
    truncated: bool = False


def parse_summary(rows: Iterable[Row], keys: Sequence[str], columns: Sequence[str],
                  limit: int) -> Summary:
    """Rows (key columns and numeric columns by name) -> at most `limit` Keyed; truncated
    when a row beyond the limit came back (the SQL asks for limit + 1)."""
    out: list[Keyed] = []
    for row in rows:
        if len(out) >= limit:
            return Summary(tuple(out), True)
        out.append(Keyed(tuple(text(row.get(k)) for k in keys), numbers(row, columns)))
    return Summary(tuple(out), False)


def read_summary(conn: Connection, name: str, needs: Mapping[str, str],
                 keys: Sequence[str], columns: Sequence[str], limit: int) -> Summary:
    """Run the named statement with `limit + 1` as its one parameter."""
    return parse_summary(query(conn, name, needs, (limit + 1,)), keys, columns, limit)


def truncated_spec(prefix: str, what: str) -> MetricSpec:
    return MetricSpec(f"{prefix}_truncated", "gauge",
                      f"1 when the server had more {what} than the collector's `limit` "
                      "option and the rest were left out, else 0.")


def limit_option(default: int, what: str) -> Mapping[str, Option]:
    return {"limit": Option(default, f"How many {what} at most.", maximum=100_000)}


def truncated_sample(spec: MetricSpec, summary: Summary) -> Sample:
    return Sample(spec.name, 1.0 if summary.truncated else 0.0)


def per_column(summary: Summary, labels: Sequence[str],
               families: Mapping[str, tuple[MetricSpec, str, float]]) -> Iterator[Sample]:
    """A sample per (row, column) the row has: `families` maps a column to (spec, the
    value of the extra label `labels[-1]` or "" for none, scale)."""
    for row in summary.rows:
        base = dict(zip(labels, row.keys, strict=False))
        for column, (spec, extra, scale) in families.items():
            value = row.values.get(column)
            if value is None:
                continue
            out = {**base, labels[-1]: extra} if extra else base
            yield Sample(spec.name, value * scale, out)


# column -> (family, the value of the last label or "" for none, scale to base units)
ColumnFamilies = Mapping[str, tuple[MetricSpec, str, float]]


class SummaryCollector(Collector[Summary]):
    """A summary collector: one statement (`statement`, read as its `keys` and `columns`,
    the top rows: the `limit` option's, or `fixed_limit` where the server's own row count
    bounds them), a sample per (row, column) by `families` with `labels` (the keys', then
    the column's), and the `truncated` gauge where the limit can cut. Opt-in, as
    mysqld_exporter's perf_schema collectors; needs `privilege` (SELECT on
    performance_schema unless said). A module declares one subclass with its names,
    statement and families; a collector whose rows need more than a sample per column
    overrides `samples`."""

    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    default_enabled = False
    statement: ClassVar[str]
    keys: ClassVar[tuple[str, ...]]
    columns: ClassVar[tuple[str, ...]]
    labels: ClassVar[tuple[str, ...]]
    families: ClassVar[ColumnFamilies] = {}
    truncated: ClassVar[MetricSpec | None] = None
    privilege: ClassVar[Mapping[str, str]] = PS_SELECT
    fixed_limit: ClassVar[int | None] = None

    def read(self, conn: Connection) -> Summary:
        limit = self.fixed_limit if self.fixed_limit is not None else int(self.setting("limit"))
        return read_summary(conn, self.statement, self.privilege, self.keys, self.columns,
                            limit)

    def samples(self, facts: Summary) -> Iterable[Sample]:
        if self.truncated is not None:
            yield truncated_sample(self.truncated, facts)
        yield from per_column(facts, self.labels, self.families)
