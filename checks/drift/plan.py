"""Which tables a run compares, and how each one is compared (pure decisions on the
catalogs the sides report).

A table is planned once per run: its columns and key on every side, which mode each
replica is hashed in (native, or portable across engines), whether its key can be cut
into ranges, and whether the whole-table pre-check may compare it. A table that cannot be
compared (columns or key that differ, a keyless table too large for one chunk, types that
have no portable text) becomes an "unchecked" result saying why, and the run goes on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dbgauge.checks.drift.chunks import INT_TYPES, KeyChoice, choose_key
from dbgauge.checks.drift.model import ChecksumOptions, TableResult
from dbgauge.checks.drift.normalize import Column, portable_problem
from dbgauge.checks.drift.select import select_tables
from dbgauge.checks.drift.sides import Side, grant_hint
from dbgauge.checks.drift.sql import TableQueries
from dbgauge.toolkit.db.values import text as _text
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.sql import quote_ident


@dataclass(frozen=True)
class TableEntry:
    """A table the run compares, as the source lists it."""

    schema: str
    table: str
    estimate: int  # rows, as the source's statistics estimate them
    readable: bool  # by the checking user

    @property
    def name(self) -> str:
        return f"{self.schema}.{self.table}"


@dataclass(frozen=True)
class TablePlan:
    """How one table is compared: the key, and the statements of every side."""

    name: str  # schema.table
    schema: str
    table: str
    key: KeyChoice | None
    source: Mapping[bool, TableQueries]  # by portable mode
    replicas: Mapping[str, TableQueries]
    int_key: bool
    rows_estimate: int
    ranges_safe: bool  # False: string keys across engines (collations order differently)
    # Every side is MariaDB of one major.minor version with the same columns in the same
    # order: CHECKSUM TABLE values are comparable.
    whole_table_ok: bool = False


def columns(side: Side, schema: str, table: str) -> list[Column]:
    """The table's columns on `side`, in order (empty when it does not exist there)."""
    return [Column(name=_text(r["name"]), data_type=_text(r["data_type"]).lower(),
                   column_type=_text(r["column_type"]).lower(), nullable=bool(int(r["nullable"])),
                   charset=_text(r["charset"]) or None)
            for r in side.q("checksum_columns", (schema, table))]


def _layout(column: Column) -> tuple[str, str, bool, str | None]:
    """What CHECKSUM TABLE's value depends on, per column (the row image's layout)."""
    return column.name.lower(), column.column_type, column.nullable, column.charset


def list_tables(source: Side, options: ChecksumOptions) -> list[TableEntry]:
    """The tables to compare (`checks.drift.select`): those asked for, by name or pattern
    (each must match), else every table the source lists; less the ignored ones."""
    rows = source.q("checksum_tables")
    found = {(_text(r["db"]), _text(r["tbl"])): (int(r["rows_estimate"] or 0),
                                               bool(int(r["readable"]))) for r in rows}
    wanted = select_tables(found, options, source.name, lambda n: grant_hint(source, n))
    return [TableEntry(schema, table, *found[(schema, table)]) for schema, table in wanted]


@dataclass(frozen=True)
class _Fit:
    """How one replica's copy of the table is compared: its statements, whether it lets
    the key be cut into ranges (not text keys across engines), and whether it lets the
    whole-table pre-check compare it (the same engine version and column layout)."""

    queries: TableQueries
    ranges_safe: bool
    whole_table_ok: bool


def plan_table(source: Side, replicas: Sequence[Side], options: ChecksumOptions,
               schema: str, table: str, estimate: int) -> TablePlan | TableResult:
    """The plan of one table, or an unchecked result saying why it cannot be compared."""
    name = f"{schema}.{table}"
    try:
        src_columns = columns(source, schema, table)
    except DbgaugeError as exc:
        return TableResult.unchecked(name, str(exc))
    key = choose_key(source.q("checksum_keys", (schema, table)))
    try:  # names are formatted into SQL: refuse, rather than escape, odd ones
        for ident in (schema, table, *(c.name for c in src_columns)):
            quote_ident(ident, source.flavor)
    except DbgaugeError as exc:
        return TableResult.unchecked(name, str(exc))
    fits: dict[str, _Fit] = {}
    for rep in replicas:
        fit = _fit(source, rep, schema, table, src_columns, key)
        if isinstance(fit, str):
            return TableResult.unchecked(name, fit)
        fits[rep.name] = fit
    src_queries = {
        mode: TableQueries(source.flavor, source.version, schema, table,
                           tuple(src_columns), key.columns if key else (),
                           key.index if key else None, mode)
        for mode in ({f.queries.portable for f in fits.values()} or {False})
    }
    by_name = {c.name.lower(): c for c in src_columns}
    int_key = bool(key and len(key.columns) == 1
                   and by_name[key.columns[0].lower()].data_type in INT_TYPES)
    ranges_safe = all(f.ranges_safe for f in fits.values())
    if key is None or not ranges_safe:
        count = int(source.run(src_queries[min(src_queries)].count())[0]["cnt"])
        if count > options.one_chunk_max_rows:
            why = ("no primary key or unique NOT NULL key to chunk by" if key is None else
                   "its key has text columns, which MySQL and PostgreSQL collations order "
                   "differently, so it is not cut into ranges across engines")
            return TableResult.unchecked(name, rows=count, reason=(
                f"{why}, and {count} rows is more than the "
                f"{options.one_chunk_max_rows} compared as one chunk"))
        estimate = count
    whole_table_ok = source.flavor == "mariadb" and all(f.whole_table_ok for f in fits.values())
    return TablePlan(
        name=name, schema=schema, table=table, key=key, source=src_queries,
        replicas={n: f.queries for n, f in fits.items()}, int_key=int_key,
        rows_estimate=estimate, ranges_safe=ranges_safe, whole_table_ok=whole_table_ok)


def _fit(source: Side, rep: Side, schema: str, table: str, src_columns: Sequence[Column],
         key: KeyChoice | None) -> _Fit | str:
    """How replica `rep` is compared, or why it cannot be: the table is missing there,
    or its columns or key differ, or (across engines) a column has no portable text."""
    rep_columns = columns(rep, schema, table)
    if not rep_columns:
        return (f"table does not exist on replica {rep.name} (or the checking user cannot "
                "see it)")
    by_name = {c.name.lower(): c for c in src_columns}
    rep_by_name = {c.name.lower(): c for c in rep_columns}
    only_src = sorted(set(by_name) - set(rep_by_name))
    only_rep = sorted(set(rep_by_name) - set(by_name))
    if only_src or only_rep:
        return (f"columns differ on replica {rep.name}"
                + (f"; only on the source: {', '.join(only_src)}" if only_src else "")
                + (f"; only on the replica: {', '.join(only_rep)}" if only_rep else ""))
    portable = rep.mysql != source.mysql
    whole_table_ok = (rep.flavor == source.flavor and rep.version[:2] == source.version[:2]
                      and [_layout(c) for c in rep_columns] == [_layout(c) for c in src_columns])
    ranges_safe = True
    if portable:
        problem = (portable_problem(source.flavor, src_columns)
                   or portable_problem(rep.flavor, rep_columns))
        if problem:
            return problem
        ranges_safe = key is None or all(
            by_name[k.lower()].data_type in INT_TYPES for k in key.columns)
    rep_index = None
    if key is not None:
        rep_choice = choose_key(rep.q("checksum_keys", (schema, table)))
        if rep_choice is None or [c.lower() for c in rep_choice.columns] != [
                c.lower() for c in key.columns]:
            return (f"the key differs on replica {rep.name}: the source is chunked by "
                    f"({', '.join(key.columns)}), the replica has "
                    + (f"({', '.join(rep_choice.columns)})" if rep_choice else
                       "no usable key"))
        rep_index = rep_choice.index
    ordered = tuple(rep_by_name[c.name.lower()] for c in src_columns)
    rep_key = tuple(rep_by_name[k.lower()].name for k in key.columns) if key else ()
    return _Fit(TableQueries(rep.flavor, rep.version, schema, table, ordered, rep_key,
                             rep_index, portable), ranges_safe, whole_table_ok)
