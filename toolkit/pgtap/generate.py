"""Snapshot a live schema into a pgTAP file that fails, naming the change, when it drifts.

The catalog is read with the named queries `sql/postgres/pgtap_generate_*.sql`; rendering
(`render`) is a pure function of the snapshot. Every expected value is computed the way
the pgTAP function that checks it computes the actual one (format_type for col_type_is,
tap_funky's regtype text for has_function/function_returns, pgTAP's own default-expression
rules for col_default_is), so the file passes on its source schema by construction.
Where a pgTAP function cannot be trusted (a quoted type name, a default of a type without
an equality operator, generated columns, index and view definitions) the check is a plain
`is()` on the catalog text, which still names what changed.

Text such as format_type() output depends on search_path: run the file with the same
search_path it was generated with (the header records it). The file runs on any major from
13 to 18: view definitions are printed by the server the file runs on (pg_get_viewdef's
layout differs between majors), and extension members, whose sets follow the extension's
version, are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dbgauge.toolkit.db import connect_dsn
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import ConfigError

# pgTAP's _def_is(): such defaults are compared as text, others are evaluated and cast.
_DEFAULT_AS_TEXT = (re.compile(r"^[^']+[(]"), re.compile(r"[)]::[^']+$"))
_DEFAULT_SPECIAL = frozenset({
    "CURRENT_CATALOG", "CURRENT_ROLE", "CURRENT_SCHEMA", "CURRENT_USER", "SESSION_USER",
    "USER", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "LOCALTIME",
    "LOCALTIMESTAMP"})
# Types whose values is() cannot compare (no default equality operator).
_NO_EQUALITY = frozenset({"json", "xml", "point", "line", "lseg", "box", "path", "polygon",
                          "circle", "txid_snapshot", "pg_snapshot"})
# For the generated file (never run by dbgauge); {schema} is an escaped literal.
_USER_FUNCTIONS = (
    "SELECT p.proname || '(' || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')'"
    " FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace"
    " WHERE n.nspname = {schema} AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d"
    " WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid"
    " AND d.deptype = 'e')")
# Relations of the kinds listed, extension members aside (the file's own query, never
# run by dbgauge; {schema} and {kinds} are escaped literals).
_USER_RELATIONS = (
    "SELECT c.relname::text FROM pg_catalog.pg_class c"
    " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname = {schema} AND c.relkind::text = ANY({kinds}) AND NOT EXISTS ("
    "SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_class'::regclass"
    " AND d.objid = c.oid AND d.deptype = 'e')")
_TABLE_KINDS = ("r", "p")
_VIEW_KINDS = ("v", "m")


@dataclass(frozen=True)
class Relation:
    schema: str
    name: str
    kind: str  # r, p (tables), v, m (views), S (sequences)
    extension: str | None
    definition: str | None


@dataclass(frozen=True)
class Column:
    schema: str
    table: str
    name: str
    type: str
    base_type: str
    not_null: bool
    has_default: bool
    default_expr: str | None
    generated: str  # "" or "s" (stored generated column)


@dataclass(frozen=True)
class Constraint:
    schema: str
    table: str
    name: str
    type: str  # p or f
    columns: tuple[str, ...]
    ref_schema: str | None
    ref_table: str | None
    ref_columns: tuple[str, ...]


@dataclass(frozen=True)
class Index:
    schema: str
    table: str
    name: str
    definition: str


@dataclass(frozen=True)
class Function:
    schema: str
    name: str
    args: tuple[str, ...]
    returns: str
    signature: str
    extension: str | None


@dataclass(frozen=True)
class Trigger:
    schema: str
    table: str
    name: str
    function_schema: str
    function_name: str


@dataclass(frozen=True)
class Snapshot:
    """What the generator read from the catalog, in catalog order."""

    source: str
    server_version: str
    search_path: str
    schemas: tuple[str, ...]
    relations: tuple[Relation, ...]
    columns: tuple[Column, ...]
    constraints: tuple[Constraint, ...]
    indexes: tuple[Index, ...]
    functions: tuple[Function, ...]
    triggers: tuple[Trigger, ...]


def lit(text: str) -> str:
    """An SQL string literal (standard_conforming_strings, the default since 9.1)."""
    return "'" + text.replace("'", "''") + "'"


def nm(text: str) -> str:
    """A name argument, typed: pgTAP overloads differ by NAME vs TEXT, and an untyped
    literal would pick the wrong one (e.g. col_type_is(table, column, type, description))."""
    return f"{lit(text)}::name"


def names(items: Iterable[str]) -> str:
    values = ", ".join(lit(i) for i in items)
    return f"ARRAY[{values}]::name[]"


def txt(text: str) -> str:
    return f"{lit(text)}::text"


def _call(function: str, *args: str, desc: str) -> str:
    """One assertion, always with its description (the schema-qualified overloads of
    several pgTAP functions have none without it)."""
    return f"SELECT {function}({', '.join((*args, txt(desc)))});"


def _qual(*parts: str) -> str:
    return ".".join(parts)


def _default_compared_as_text(expr: str) -> bool:
    return any(p.search(expr) for p in _DEFAULT_AS_TEXT) or expr in _DEFAULT_SPECIAL


def _column_lookup(c: Column, what: str) -> str:
    """A scalar subquery for the generated file: dbgauge never runs it, and every value
    in it is an escaped literal (`lit`)."""
    lookup = ("(SELECT {what} FROM pg_catalog.pg_attribute a"
              " JOIN pg_catalog.pg_class c ON c.oid = a.attrelid"
              " JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
              " LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid"
              " AND ad.adnum = a.attnum"
              " WHERE n.nspname = {schema} AND c.relname = {table}"
              " AND a.attname = {column} AND a.attnum > 0 AND NOT a.attisdropped)")
    return lookup.format(what=what, schema=lit(c.schema), table=lit(c.table),
                         column=lit(c.name))


def _column_tests(c: Column, is_table: bool) -> list[str]:
    s, t, n = nm(c.schema), nm(c.table), nm(c.name)
    where = _qual(c.schema, c.table, c.name)
    out: list[str] = []
    if '"' in c.type:  # col_type_is would re-quote a quoted name and never match
        have = _column_lookup(c, "pg_catalog.format_type(a.atttypid, a.atttypmod)")
        out.append(_call("is", have, txt(c.type), desc=f"Column {where} should be type {c.type}"))
    else:
        out.append(_call("col_type_is", s, t, n, txt(c.type),
                         desc=f"Column {where} should be type {c.type}"))
    if not is_table:
        return out
    if c.not_null:
        out.append(_call("col_not_null", s, t, n, desc=f"Column {where} should be NOT NULL"))
    else:
        out.append(_call("col_is_null", s, t, n, desc=f"Column {where} should allow NULL"))
    expr = c.default_expr
    if c.generated:
        have = _column_lookup(
            c, "a.attgenerated::text || pg_catalog.pg_get_expr(ad.adbin, ad.adrelid)")
        out.append(_call("is", have, txt(c.generated + (expr or "")),
                         desc=f"Column {where} should be generated as {expr}"))
    elif not c.has_default or expr is None:
        out.append(_call("col_hasnt_default", s, t, n,
                         desc=f"Column {where} should not have a default"))
    else:
        desc = f"Column {where} should default to {expr}"
        if _default_compared_as_text(expr):
            out.append(_call("col_default_is", s, t, n, txt(expr), desc=desc))
        elif c.base_type.removesuffix("[]") in _NO_EQUALITY:
            have = _column_lookup(c, "pg_catalog.pg_get_expr(ad.adbin, ad.adrelid)")
            out.append(_call("is", have, txt(expr), desc=desc))
        else:
            # pgTAP evaluates such a default and compares values: give it the same
            # (constant) expression, so both sides are cast the same way.
            out.append(_call("col_default_is", s, t, n, f"({expr})", desc=desc))
    return out


def _regclass(schema: str, name: str) -> str:
    return f"pg_catalog.to_regclass(pg_catalog.format('%I.%I', {lit(schema)}, {lit(name)}))"


def _index_definition_test(schema: str, name: str, definition: str) -> str:
    return _call("is", f"pg_catalog.pg_get_indexdef({_regclass(schema, name)})",
                 txt(definition),
                 desc=f"Index {_qual(schema, name)} should be defined as when generated")


def _view_definition_tests(rel: Relation, number: int) -> list[str]:
    """The view's definition, compared as the running server prints it: pg_get_viewdef's
    layout differs between majors (16 stopped prefixing columns with their table), so the
    text read at generation becomes a temporary view, and both views' definitions are
    printed by the server the file runs on. Creating it is a test of its own (a definition
    that no longer parses fails there, not the whole file); ROLLBACK drops it."""
    temp = f"_dbgauge_view_{number}"
    query = (rel.definition or "").strip().removesuffix(";")
    where = _qual(rel.schema, rel.name)
    return [
        _call("lives_ok", txt(f"CREATE TEMPORARY VIEW {temp} AS {query}"),
              desc=f"View {where}'s definition as generated should still be valid"),
        _call("is", f"pg_catalog.pg_get_viewdef({_regclass(rel.schema, rel.name)}, true)",
              f"pg_catalog.pg_get_viewdef(pg_catalog.to_regclass({lit('pg_temp.' + temp)}), "
              "true)", desc=f"View {where} should be defined as when generated"),
    ]


def _schema_tests(snap: Snapshot, schema: str, rels: list[Relation]) -> list[str]:
    out = [_call("has_schema", nm(schema), desc=f"Schema {schema} should exist")]
    mine = [r for r in rels if r.extension is None]
    members = len(mine) < len(rels)  # an extension's relations live here too
    for function, kinds, what in (("tables_are", _TABLE_KINDS, "tables"),
                                  ("views_are", ("v",), "views"),
                                  ("materialized_views_are", ("m",), "materialized views"),
                                  ("sequences_are", ("S",), "sequences")):
        desc = f"Schema {schema} should have the correct {what}"
        if members:
            # *_are() would count the extension's relations, which differ between its
            # versions (and so between majors): compare the others' names instead.
            query = _USER_RELATIONS.format(
                schema=lit(schema), kinds=f"ARRAY[{', '.join(lit(k) for k in kinds)}]")
            expected = ", ".join(lit(r.name) for r in mine if r.kind in kinds)
            out.append(_call("set_eq", txt(query), f"ARRAY[{expected}]::text[]",
                             desc=desc + " (extension members aside)"))
        else:
            out.append(_call(function, nm(schema),
                             names(r.name for r in rels if r.kind in kinds), desc=desc))
    funcs = [f for f in snap.functions if f.schema == schema]
    user = [f for f in funcs if f.extension is None]
    if any(f.extension is not None for f in funcs):
        # functions_are() counts extension functions too (e.g. pgTAP's own when it lives
        # here): compare the user functions' signatures instead.
        expected = ", ".join(lit(f.signature) for f in user)
        out.append(_call("set_eq", txt(_USER_FUNCTIONS.format(schema=lit(schema))),
                         f"ARRAY[{expected}]::text[]",
                         desc=f"Schema {schema} should have the correct functions "
                              "(extension members aside)"))
    else:
        out.append(_call("functions_are", nm(schema), names(sorted({f.name for f in user})),
                         desc=f"Schema {schema} should have the correct functions"))
    return out


def _relation_tests(snap: Snapshot, rel: Relation, number: int) -> list[str]:
    is_table = rel.kind in _TABLE_KINDS
    s, t, where = nm(rel.schema), nm(rel.name), _qual(rel.schema, rel.name)
    label = "Table" if is_table else "View"
    out: list[str] = []
    cols = [c for c in snap.columns if c.schema == rel.schema and c.table == rel.name]
    out.append(_call("columns_are", s, t, names(c.name for c in cols),
                     desc=f"{label} {where} should have the correct columns"))
    for col in cols:
        out.extend(_column_tests(col, is_table))
    if not is_table:
        out.extend(_view_definition_tests(rel, number))
    cons = [k for k in snap.constraints if k.schema == rel.schema and k.table == rel.name]
    pks = [k for k in cons if k.type == "p"]
    if is_table and pks:
        out.append(_call("has_pk", s, t, desc=f"Table {where} should have a primary key"))
        out.append(_call("col_is_pk", s, t, names(pks[0].columns),
                         desc=f"Columns {where}({', '.join(pks[0].columns)}) should be "
                              "a primary key"))
    elif is_table:
        out.append(_call("hasnt_pk", s, t, desc=f"Table {where} should not have a primary key"))
    for fk in (k for k in cons if k.type == "f"):
        ref = _qual(fk.ref_schema or "", fk.ref_table or "")
        out.append(_call("fk_ok", s, t, names(fk.columns), nm(fk.ref_schema or ""),
                         nm(fk.ref_table or ""), names(fk.ref_columns),
                         desc=f"{where}({', '.join(fk.columns)}) should reference "
                              f"{ref}({', '.join(fk.ref_columns)})"))
    idx = [i for i in snap.indexes if i.schema == rel.schema and i.table == rel.name]
    if is_table or idx:
        out.append(_call("indexes_are", s, t, names(i.name for i in idx),
                         desc=f"{label} {where} should have the correct indexes"))
    for index in idx:
        out.append(_index_definition_test(index.schema, index.name, index.definition))
    trg = [g for g in snap.triggers if g.schema == rel.schema and g.table == rel.name]
    if is_table or trg:
        out.append(_call("triggers_are", s, t, names(g.name for g in trg),
                         desc=f"{label} {where} should have the correct triggers"))
    for g in trg:
        out.append(_call("trigger_is", s, t, nm(g.name), nm(g.function_schema),
                         nm(g.function_name),
                         desc=f"Trigger {g.name} on {where} should call "
                              f"{_qual(g.function_schema, g.function_name)}()"))
    return out


def _function_tests(func: Function) -> list[str]:
    where = f"{_qual(func.schema, func.name)}({', '.join(func.args)})"
    s, f, args = nm(func.schema), nm(func.name), names(func.args)
    return [_call("has_function", s, f, args, desc=f"Function {where} should exist"),
            _call("function_returns", s, f, args, txt(func.returns),
                  desc=f"Function {where} should return {func.returns}")]


def render(snap: Snapshot) -> str:
    """The pgTAP file for a snapshot: pure and deterministic (no timestamp), so a CI job
    can regenerate it and diff against the committed copy."""
    body: list[str] = []
    count = 0

    def section(title: str, tests: list[str]) -> None:
        nonlocal count
        body.append(f"\n-- {title}")
        body.extend(tests)
        count += len(tests)

    own = [r for r in snap.relations if r.extension != "pgtap"]
    views = {r: n for n, r in enumerate((r for r in own if r.kind in _VIEW_KINDS), 1)}
    for schema in snap.schemas:
        rels = [r for r in own if r.schema == schema]
        section(f"schema {schema}", _schema_tests(snap, schema, rels))
        for rel in rels:
            if rel.extension is None and rel.kind in _TABLE_KINDS + _VIEW_KINDS:
                label = "table" if rel.kind in _TABLE_KINDS else "view"
                section(f"{label} {_qual(rel.schema, rel.name)}",
                        _relation_tests(snap, rel, views.get(rel, 0)))
        for func in snap.functions:
            if func.schema == schema and func.extension is None:
                section(f"function {_qual(func.schema, func.signature)}",
                        _function_tests(func))

    header = [
        "-- pgTAP schema snapshot written by `dbgauge pgtap generate`.",
        f"-- Source: {snap.source} (PostgreSQL {snap.server_version}).",
        f"-- Schemas: {', '.join(snap.schemas) or '(none)'}.",
        f"-- Generated with search_path = {snap.search_path}; run it with the same one.",
        "-- It runs on PostgreSQL 13 and later, whichever major it was generated on; it",
        "-- creates temporary views (the TEMPORARY privilege on the database) to compare view",
        "-- definitions as that server prints them.",
        "-- It passes on the schema it came from and fails, naming the difference, when",
        "-- the schema drifts. After a reviewed change, regenerate it and commit the diff.",
        "-- Run: dbgauge pgtap run THIS_FILE --dsn postgresql://user@host:port/db",
        "",
        "BEGIN;",
        f"SELECT plan({count});",
    ]
    footer = ["", "SELECT * FROM finish();", "ROLLBACK;", ""]
    return "\n".join(header + body + footer)


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in (value or ()))


def take_snapshot(conn: Any, schemas: Sequence[str], source: str) -> Snapshot:
    """Read the catalog through `conn` (a toolkit.db Connection)."""
    info = conn.query("pgtap_generate_info")[0]
    available = [str(r["schema"]) for r in conn.query("pgtap_generate_schemas")]
    if schemas:
        missing = [s for s in schemas if s not in available]
        if missing:
            raise ConfigError(
                f"schema {', '.join(repr(s) for s in missing)} not found in database "
                f"{info['database']!r} at {source} (user schemas there: "
                f"{', '.join(available) or 'none'})")
        chosen = tuple(dict.fromkeys(schemas))
    else:
        chosen = tuple(available)
    params = {"schemas": list(chosen)}
    relations = tuple(Relation(r["schema"], r["name"], r["kind"], r["extension"],
                               r["definition"])
                      for r in conn.query("pgtap_generate_relations", params))
    columns = tuple(Column(r["schema"], r["table_name"], r["column_name"], r["type"],
                           r["base_type"], bool(r["not_null"]), bool(r["has_default"]),
                           r["default_expr"], r["generated"] or "")
                    for r in conn.query("pgtap_generate_columns", params))
    constraints = tuple(Constraint(r["schema"], r["table_name"], r["name"], r["type"],
                                   _strs(r["columns"]), r["ref_schema"], r["ref_table"],
                                   _strs(r["ref_columns"]))
                        for r in conn.query("pgtap_generate_constraints", params))
    indexes = tuple(Index(r["schema"], r["table_name"], r["name"], r["definition"])
                    for r in conn.query("pgtap_generate_indexes", params))
    functions = tuple(Function(r["schema"], r["name"], _strs(r["args"]), r["returns"],
                               r["signature"], r["extension"])
                      for r in conn.query("pgtap_generate_functions", params))
    triggers = tuple(Trigger(r["schema"], r["table_name"], r["name"], r["function_schema"],
                             r["function_name"])
                     for r in conn.query("pgtap_generate_triggers", params))
    return Snapshot(f"{source}/{info['database']}", str(info["server_version"]),
                    str(info["search_path"]), chosen, relations,
                    columns, constraints, indexes, functions, triggers)


def generate_from_dsn(dsn: str, schemas: Sequence[str]) -> str:
    """Connect, snapshot the schemas (default: every user schema) and render the file."""
    params = parse_dsn(dsn)
    if params.family != "postgres":
        raise ConfigError("pgtap generate needs a postgresql:// DSN, got a MySQL-family one")
    conn = connect_dsn(dsn, kind="postgres")
    try:
        snap = take_snapshot(conn, schemas, params.address)
    finally:
        conn.close()
    return render(snap)
