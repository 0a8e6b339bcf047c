"""same-schema's comparison without a server: a catalog snapshot (as pgtap generate reads
it) and the extras become objects, two object sets become one message per difference,
and check_postgres' --filter leaves kinds or names out."""

from __future__ import annotations

import pytest

from dbgauge.checks.health import health_checks
from dbgauge.checks.health.run import run_health
from dbgauge.checks.health.schema_diff import differences, objects, parse_filter
from dbgauge.checks.health.scope import Scope
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.pgtap.generate import (
    Column,
    Function,
    Index,
    Relation,
    Snapshot,
    Trigger,
)
from dbgauge.toolkit.targets import Selection, Target


def _snap(*, v_type: str = "text", extension_table: bool = False) -> Snapshot:
    return Snapshot(
        "db", "15.4", "public", ("public",),
        (Relation("public", "t", "r", None, None), Relation("public", "vw", "v", None,
                                                            " SELECT t.id FROM t;"),
         Relation("public", "s1", "S", None, None),
         *((Relation("public", "ext_t", "r", "ext", None),) if extension_table else ())),
        (Column("public", "t", "id", "integer", "integer", True, False, None, ""),
         Column("public", "t", "v", v_type, v_type, False, True, "'x'::text", ""),
         *((Column("public", "ext_t", "i", "integer", "integer", False, False, None, ""),)
           if extension_table else ())),
        (), (Index("public", "t", "t_pkey", "CREATE UNIQUE INDEX t_pkey ON public.t (id)"),),
        (Function("public", "f", (), "integer", "f()", None),
         Function("public", "ext_f", (), "integer", "ext_f()", "ext")),
        (Trigger("public", "t", "tr", "public", "trg"),))


EXTRAS = [("constraint", "public.t.t_pkey", "PRIMARY KEY (id)"),
          ("function body", "public.f()", "c4ca4238"),
          ("trigger definition", "public.t.tr", "CREATE TRIGGER tr BEFORE INSERT ON t ..."),
          ("extension", "plpgsql", "1.0")]


def test_a_snapshot_becomes_objects_extension_members_left_out() -> None:
    got = objects(_snap(extension_table=True), EXTRAS)
    assert got[("column", "public.t.v")] == "text DEFAULT 'x'::text"
    assert got[("column", "public.t.id")] == "integer NOT NULL"
    assert got[("function", "public.f()")] == "returns integer, body md5 c4ca4238"
    assert got[("trigger", "public.t.tr")].startswith("CREATE TRIGGER tr")
    assert ("sequence", "public.s1") in got and ("view", "public.vw") in got
    assert not any("ext_" in name for _, name in got)  # the extension stands for them
    assert objects(_snap(), EXTRAS, bodies=False)[("function", "public.f()")] == (
        "returns integer")


def test_one_message_per_difference() -> None:
    ref = objects(_snap(), EXTRAS)
    other = dict(objects(_snap(v_type="character varying(10)"), EXTRAS))
    del other[("sequence", "public.s1")]
    other[("index", "public.t_v")] = "CREATE INDEX t_v ON public.t (v)"
    assert differences("a", ref, "b", other) == [
        """column public.t.v differs: "text DEFAULT 'x'::text" on a, """
        """"character varying(10) DEFAULT 'x'::text" on b""",
        "index public.t_v is on b only (not on a)",
        "sequence public.s1 is missing on b (on a)"]
    assert differences("a", ref, "b", ref) == []


@pytest.mark.parametrize(("given", "kept", "dropped"), [
    ("noindexes", [("table", "public.t")], [("index", "public.t_v")]),
    ("notables", [("index", "public.t_v")], [("table", "public.t"), ("column", "public.t.v")]),
    ("notrigger=slony", [("trigger", "public.t.tr")], [("trigger", "public.t._slony_log")]),
    ("notrigger=^tr$", [("trigger", "public.t.tr2")], [("trigger", "public.t.tr")]),
    ("nofunction=^f$, noschema", [("function", "public.g()")],
     [("function", "public.f(integer)"), ("schema", "public")]),
    ("noperm nouser noposition", [("table", "public.t")], [])])
def test_check_postgres_filters(given: str, kept: list[tuple[str, str]],
                                dropped: list[tuple[str, str]]) -> None:
    keep = parse_filter(given)
    assert all(keep.keeps(*o) for o in kept)
    assert not any(keep.keeps(*o) for o in dropped)


def test_nofuncbody_and_bad_filters() -> None:
    assert parse_filter("nofuncbody").bodies is False
    for bad in ("noodles", "index", "notrigger=(", "nouser=bob"):
        with pytest.raises(ConfigError, match="--filter"):
            parse_filter(bad)


def test_same_schema_needs_two_databases() -> None:
    nodes = Selection((Target("p", "postgres", "postgresql://u@127.0.0.1:1/x"),), frozenset())
    with pytest.raises(ConfigError, match="two or more databases"):
        run_health(health_checks()["same-schema"], nodes, scope=Scope())
