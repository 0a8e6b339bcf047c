"""Rendering a schema snapshot into pgTAP (pure): which assertion each catalog fact
becomes, literal escaping, and a plan that matches the number of assertions."""

from __future__ import annotations

import re

from dbgauge.toolkit.pgtap.generate import (
    Column,
    Constraint,
    Function,
    Index,
    Relation,
    Snapshot,
    Trigger,
    lit,
    render,
)


def column(name: str, type_: str = "integer", *, not_null: bool = False,
           default: str | None = None, generated: str = "", base: str | None = None,
           table: str = "t") -> Column:
    return Column("app", table, name, type_, base or type_, not_null, default is not None,
                  default, generated)


def snapshot(**kw: object) -> Snapshot:
    base: dict[str, object] = dict(
        source="127.0.0.1:5432/db", server_version="15.4", search_path='"$user", public',
        schemas=("app",),
        relations=(Relation("app", "t", "r", None, None),), columns=(), constraints=(),
        indexes=(), functions=(), triggers=())
    base.update(kw)
    return Snapshot(**base)  # type: ignore[arg-type]


def assertions(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("SELECT ")
            and not line.startswith(("SELECT plan(", "SELECT * FROM finish()"))]


def test_plan_counts_the_assertions_and_wraps_in_a_rolled_back_transaction() -> None:
    text = render(snapshot(columns=(column("id", not_null=True), column("note", "text"))))
    plan = int(re.search(r"SELECT plan\((\d+)\);", text).group(1))  # type: ignore[union-attr]
    assert plan == len(assertions(text)) > 0
    assert "BEGIN;" in text and text.rstrip().endswith("ROLLBACK;")
    assert "search_path = \"$user\", public" in text
    assert render(snapshot()) == render(snapshot())  # no timestamp: regenerate and diff


def test_columns_types_nullability_and_pk() -> None:
    text = render(snapshot(
        columns=(column("id", "bigint", not_null=True), column("note", "text")),
        constraints=(Constraint("app", "t", "t_pkey", "p", ("id",), None, None, ()),)))
    assert ("SELECT columns_are('app'::name, 't'::name, ARRAY['id', 'note']::name[], "
            "'Table app.t should have the correct columns'::text);") in text
    assert ("SELECT col_type_is('app'::name, 't'::name, 'id'::name, 'bigint'::text, "
            "'Column app.t.id should be type bigint'::text);") in text
    assert "SELECT col_not_null('app'::name, 't'::name, 'id'::name," in text
    assert "SELECT col_is_null('app'::name, 't'::name, 'note'::name," in text
    assert "SELECT col_hasnt_default('app'::name, 't'::name, 'note'::name," in text
    assert "SELECT has_pk('app'::name, 't'::name," in text
    assert "SELECT col_is_pk('app'::name, 't'::name, ARRAY['id']::name[]," in text
    assert "hasnt_pk" not in text
    assert "hasnt_pk('app'::name, 'u'::name" in render(snapshot(
        relations=(Relation("app", "u", "r", None, None),)))


def test_defaults_follow_pgtaps_own_comparison_rules() -> None:
    text = render(snapshot(columns=(
        column("id", default="nextval('t_id_seq'::regclass)"),
        column("at", "timestamp with time zone", default="CURRENT_TIMESTAMP"),
        column("status", "text", default="'it''s'::text"),
        column("n", default="0"),
        column("doc", "json", default="'{}'::json"),
        column("d", "app.jdom", default="'{}'::json", base="json"),
        column("twice", default="(n * 2)", generated="s"),
    )))
    # function calls and SQL keywords: compared as text
    assert "'id'::name, 'nextval(''t_id_seq''::regclass)'::text," in text
    assert "'at'::name, 'CURRENT_TIMESTAMP'::text," in text
    # constants: pgTAP evaluates them, so they are passed as the same expression
    assert "col_default_is('app'::name, 't'::name, 'status'::name, ('it''s'::text)," in text
    assert "col_default_is('app'::name, 't'::name, 'n'::name, (0)," in text
    # no equality operator (json, or a domain over it): the expression text is compared
    for name in ("doc", "d"):
        line = next(x for x in text.splitlines() if f"Column app.t.{name} should default" in x)
        assert line.startswith("SELECT is((SELECT pg_catalog.pg_get_expr(")
    generated = next(x for x in text.splitlines() if "should be generated as (n * 2)" in x)
    assert "'s(n * 2)'::text" in generated


def test_quoted_type_names_bypass_col_type_is() -> None:
    text = render(snapshot(columns=(column("odd", 'app."Odd Type"'),)))
    line = next(x for x in text.splitlines() if "should be type app.\"Odd Type\"" in x)
    assert line.startswith("SELECT is((SELECT pg_catalog.format_type(a.atttypid, a.atttypmod)")
    assert "col_type_is" not in line


def test_indexes_foreign_keys_triggers_views_functions() -> None:
    text = render(snapshot(
        relations=(Relation("app", "t", "r", None, None),
                   Relation("app", "v", "v", None, " SELECT 1 AS one;"),
                   Relation("app", "t_id_seq", "S", None, None)),
        constraints=(Constraint("app", "t", "t_u_fkey", "f", ("u_id",), "other", "u", ("id",)),),
        indexes=(Index("app", "t", "t_pkey",
                       "CREATE UNIQUE INDEX t_pkey ON app.t USING btree (id)"),),
        triggers=(Trigger("app", "t", "t_touch", "app", "touch"),),
        functions=(Function("app", "touch", (), "trigger", "touch()", None),
                   Function("app", "f", ("integer", "text"), "setof integer",
                            "f(a integer, b text)", None)),
    ))
    assert ("SELECT fk_ok('app'::name, 't'::name, ARRAY['u_id']::name[], 'other'::name, "
            "'u'::name, ARRAY['id']::name[],") in text
    assert "SELECT indexes_are('app'::name, 't'::name, ARRAY['t_pkey']::name[]," in text
    assert "pg_get_indexdef(pg_catalog.to_regclass(pg_catalog.format('%I.%I', 'app', 't_pkey')))" \
        in text
    assert "'CREATE UNIQUE INDEX t_pkey ON app.t USING btree (id)'::text" in text
    assert "SELECT triggers_are('app'::name, 't'::name, ARRAY['t_touch']::name[]," in text
    assert "SELECT trigger_is('app'::name, 't'::name, 't_touch'::name, 'app'::name, " \
           "'touch'::name," in text
    assert "SELECT views_are('app'::name, ARRAY['v']::name[]," in text
    assert "SELECT sequences_are('app'::name, ARRAY['t_id_seq']::name[]," in text
    # the definition is compared as the running server prints it (portable across majors)
    assert ("SELECT lives_ok('CREATE TEMPORARY VIEW _dbgauge_view_1 AS SELECT 1 AS one'::text, "
            "'View app.v''s definition as generated should still be valid'::text);") in text
    assert ("SELECT is(pg_catalog.pg_get_viewdef(pg_catalog.to_regclass(pg_catalog.format("
            "'%I.%I', 'app', 'v')), true), pg_catalog.pg_get_viewdef(pg_catalog.to_regclass("
            "'pg_temp._dbgauge_view_1'), true), 'View app.v should be defined as when "
            "generated'::text);") in text
    assert "SELECT functions_are('app'::name, ARRAY['f', 'touch']::name[]," in text
    assert ("SELECT function_returns('app'::name, 'f'::name, ARRAY['integer', 'text']::name[], "
            "'setof integer'::text,") in text
    # a view gets no NOT NULL/default checks, a table without triggers still pins "none"
    assert "col_is_null('app'::name, 'v'::name" not in text


def test_extension_objects() -> None:
    text = render(snapshot(
        relations=(Relation("app", "t", "r", None, None),
                   Relation("app", "tap_funky", "v", "pgtap", "x"),
                   Relation("app", "spatial_ref_sys", "r", "postgis", None)),
        functions=(Function("app", "plan", ("integer",), "text", "plan(integer)", "pgtap"),
                   Function("app", "mine", (), "integer", "mine()", None)),
    ))
    # extension members are left out: pgTAP's own, and another extension's table, whose
    # set differs between its versions (pg_stat_statements has a view more on 14+), so
    # the *_are() functions, which would count them, give way to the user relations' names
    assert "tap_funky" not in text and "spatial_ref_sys" not in text
    assert "tables_are(" not in text and "views_are(" not in text
    line = next(x for x in text.splitlines() if "should have the correct tables" in x)
    assert line.startswith("SELECT set_eq('SELECT c.relname::text FROM pg_catalog.pg_class c")
    assert "c.relkind::text = ANY(ARRAY[''r'', ''p''])" in line
    assert "d.deptype = ''e''" in line and "ARRAY['t']::text[]" in line
    line = next(x for x in text.splitlines() if "should have the correct views" in x)
    assert "ARRAY[]::text[]" in line
    # functions_are() would count the extension's functions: signatures are compared instead
    assert "functions_are" not in text
    line = next(x for x in text.splitlines() if x.startswith("SELECT set_eq("))
    assert "d.deptype = ''e''" in line
    assert "ARRAY['mine()']::text[]" in text
    assert "has_function('app'::name, 'plan'::name" not in text


def test_literals_are_escaped() -> None:
    assert lit("it's") == "'it''s'"
    text = render(snapshot(schemas=("we'ird",), relations=(
        Relation("we'ird", "t'x", "r", None, None),)))
    assert "has_schema('we''ird'::name," in text
    assert "'t''x'::name" in text
