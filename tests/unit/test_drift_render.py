"""The checksum run's renderings -- JSON report, text, check result, daemon metrics -- are
byte for byte the golden outputs in tests/fixtures/drift/renderings.json: first produced by
the code of commit 049bba7 (before `checks/drift` became a package; its `job` label since
renamed `dbgauge_job`), then changed deliberately where the fixture's provenance says."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dbgauge.checks.drift.model import Difference, TableResult, Unnamed
from dbgauge.checks.drift.result import checksum_result
from dbgauge.checks.drift.schedule import samples
from dbgauge.toolkit.render.checksum import render_checksum, render_checksum_json

GOLDEN = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "drift"
                     / "renderings.json").read_text())["cases"]
HEADER = ("-- dbgauge checksum: make {r} match the source for {t}; review, then run on {r} "
          "(dbgauge never runs these)")


def script(replica: str, table: str, *statements: str) -> tuple[str, tuple[str, ...]]:
    return replica, (HEADER.format(r=replica, t=table), "SET SESSION sql_log_bin = 0;",
                     *statements, "SET SESSION sql_log_bin = 1;")


DRIFTED = TableResult(
    "app.t", "drift", rows=100, chunks=3, differing_chunks=(("replica-1", 1),),
    differing_rows=(("replica-1", 2),),
    differences=(Difference("replica-1", "changed", (("id", 5),)),
                 Difference("replica-1", "extra", (("id", 7),))),
    seconds=0.5, repair=(("replica-1", ("DELETE FROM `app`.`t` WHERE `id` = 7;",)),))
CLEAN = TableResult("app.u", "ok", rows=10, chunks=1, whole_table=True, seconds=0.0123456)
UNCHECKED = TableResult("app.v", "unchecked", reason="no primary key")
WIDE = TableResult(
    "shop.order_lines_with_a_long_name", "drift", rows=123456789, chunks=4321,
    differing_chunks=(("r1", 3), ("r2", 1)), differing_rows=(("r1", 5), ("r2", 1)),
    differences=(
        Difference("r2", "missing", (("at", dt.datetime(2024, 1, 2, 3, 4, 5, 6)),
                                     ("b", b"\x00\xff"))),
        Difference("r1", "changed", (("at", dt.datetime(2024, 1, 1)), ("b", b"a")), ("c",)),
        Difference("r1", "extra", (("at", dt.date(2024, 5, 6)), ("b", b""))),
    ),
    seconds=12.345678, reason=None, resumed_from_chunk=17,
    repair=(script("r2", "shop.order_lines_with_a_long_name", "REPLACE INTO x VALUES (1);"),
            script("r1", "shop.order_lines_with_a_long_name", "REPLACE INTO x VALUES (2);",
                   "-- changed row `id` = 4 no longer exists on the source: skipped",
                   "DELETE FROM x WHERE `id` = 3;")),
    notes=("r1: chunk (-inf, 10] differed when checksummed but its rows match now",
           "result kept from the resumed run"),
    rechecked_chunks=2)
SECOND = TableResult(
    "shop.z", "drift", rows=7, chunks=1, differing_chunks=(("r1", 1), ("r2", 1)),
    differing_rows=(("r1", 1), ("r2", 2)),
    differences=(Difference("r1", "changed", (("k", Decimal("1.50")), ("f", 0.1),
                                             ("n", None), ("s", "it's")),
                            ("v", "w"), (("v", "a \"b\"", None), ("w", 1.5, "0x00ff"))),
                 Difference("r2", "extra", (("k", Decimal("2")), ("f", 1e300), ("n", True),
                                            ("s", "")))),
    seconds=0.004,
    repair=(script("r1", "shop.z", "UPDATE 1;"), script("r2", "shop.z", "UPDATE 2;")))
NO_REPAIR = TableResult(  # resumed from a run without --print-repair
    "shop.y", "drift", rows=3, chunks=1, differing_chunks=(("r1", 1),),
    differing_rows=(("r1", 1),), differences=(Difference("r1", "missing", (("id", 1),)),),
    seconds=1.0)
KEYLESS = TableResult("shop.nokey", "drift", rows=500, chunks=1,
                      differing_chunks=(("r1", 1), ("r2", 1)),
                      unnamed=(Unnamed("r1", 500, 500), Unnamed("r2", 500, 499)),
                      seconds=0.25)

CASES: dict[str, dict[str, Any]] = {
    "one replica": dict(method="direct", source="src", replicas=("replica-1",),
                        tables=(DRIFTED, CLEAN, UNCHECKED), seconds=1.0, notes=()),
    "ok": dict(method="replicated", source="db1:3306", replicas=("db2:3306",),
               tables=(CLEAN,), seconds=0.126, notes=("db2:3306 is not a replica: compared "
                                                     "as is",)),
    "error": dict(method="direct", source="src", replicas=("replica-1",),
                  tables=(CLEAN, UNCHECKED), seconds=3.0, notes=()),
    "empty": dict(method="direct", source="src", replicas=("a", "b"), tables=(),
                  seconds=0.0, notes=()),
    "two replicas": dict(method="direct", source="pg-primary", replicas=("r1", "r2"),
                         tables=(WIDE, NO_REPAIR, SECOND, KEYLESS, UNCHECKED),
                         seconds=99.999, notes=("r2 has several subscriptions: compared "
                                                "without waiting for a position",
                                                "resuming")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_renderings_are_unchanged(case: str) -> None:
    c = CASES[case]
    result = checksum_result(c["method"], c["source"], c["replicas"], c["tables"],
                             c["seconds"], c["notes"])
    golden = GOLDEN[case]
    assert render_checksum_json(result) == golden["json"]
    assert render_checksum(result) == golden["text"]
    assert (result.name, int(result.status), result.summary) == (
        golden["check"]["name"], golden["check"]["status"], golden["check"]["summary"])
    assert [list(p) for p in result.perfdata] == golden["check"]["perfdata"]
    assert [[int(f.severity), f.node, f.kind, f.detail, dict(f.evidence)]
            for f in result.findings] == golden["check"]["findings"]
    assert [[s.name, s.value, dict(s.labels)]
            for s in samples("checksum:src", result, 1700000000.0)] == golden["samples"]


def test_repair_scripts_are_grouped_by_table_then_replica() -> None:
    """The JSON merges each replica's scripts; the text prints them table by table."""
    result = checksum_result(**CASES["two replicas"])
    assert list(json.loads(render_checksum_json(result))["repair"]) == ["r2", "r1"]
    text = render_checksum(result)
    headers = [line for line in text.splitlines() if line.startswith("-- dbgauge")]
    assert [h.split(" match")[0][-2:] + h.split("for ")[1].split(";")[0] for h in headers] == [
        "r2shop.order_lines_with_a_long_name", "r1shop.order_lines_with_a_long_name",
        "r1shop.z", "r2shop.z"]


def test_a_name_with_a_newline_stays_on_its_line() -> None:
    table = TableResult("app.a\nb", "drift", rows=3, chunks=1,
                        differing_chunks=(("replica\t1", 1),), differing_rows=(("replica\t1", 1),),
                        differences=(Difference("replica\t1", "missing", (("id", "x\ny"),)),),
                        notes=("seen in app.a\nb",))
    text = render_checksum(checksum_result("direct", "src", ["replica\t1"], [table], 0.1))
    lines = text.splitlines()
    assert lines[2].startswith("app.a\\nb  ") and lines[2].endswith("drift")
    assert "  replica\\t1: missing id=x\\ny" in lines
    assert "  note: seen in app.a\\nb" in lines
    assert all("\t" not in line for line in lines) and len(lines) == 6
    assert json.loads(render_checksum_json(
        checksum_result("direct", "src", ["r"], [table], 0.1)))["tables"][0]["table"] == \
        "app.a\nb"


@pytest.mark.parametrize(("raw", "shown"), [
    ("plain.name", "plain.name"), ("a\nb", "a\\nb"), ("a\r\nb", "a\\r\\nb"),
    ("back\\slash", "back\\slash"), ("esc\x1b[2J", "esc\\x1b[2J"), ("ls\u2028x", "ls\\u2028x"),
    ("rtl\u202ex", "rtl\\u202ex"), ("héllo wörld", "héllo wörld"),
])
def test_one_line_escapes_what_would_break_or_hide(raw: str, shown: str) -> None:
    from dbgauge.toolkit.render.text import one_line

    assert one_line(raw) == shown
    assert "\n" not in one_line(raw) and len(one_line(raw).splitlines()) == 1


def test_an_error_is_a_json_report_too() -> None:
    from dbgauge.toolkit.render.checksum import render_checksum_error_json

    doc = json.loads(render_checksum_error_json(
        "source db1: cannot connect to mysql://u:hunter2@db1:3306/"))
    assert doc["status"] == "error" and doc["tables"] == []
    assert "cannot connect" in doc["error"] and "hunter2" not in doc["error"]
