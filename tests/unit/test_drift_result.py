"""Results, renderings, repair statements, resume state and scheduled-job metrics of
`dbgauge checksum` (pure)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from dbgauge.app import parse_config
from dbgauge.checks.drift.model import (
    ChecksumOptions,
    Difference,
    DriftError,
    TableResult,
    Unnamed,
)
from dbgauge.checks.drift.normalize import Column
from dbgauge.checks.drift.repair import literal, repair_script
from dbgauge.checks.drift.result import checksum_result
from dbgauge.checks.drift.schedule import METRICS, checksum_jobs, samples
from dbgauge.checks.drift.sides import check_kinds
from dbgauge.checks.drift.state import RunState, result_from_json, result_to_json
from dbgauge.cli.base import RESULT_EXIT
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.render.checksum import render_checksum, render_checksum_json
from dbgauge.toolkit.result import CheckResult
from dbgauge.toolkit.targets import Target, resolve

DRIFTED = TableResult(
    "app.t", "drift", rows=100, chunks=3, differing_chunks=(("replica-1", 1),),
    differing_rows=(("replica-1", 2),),
    differences=(Difference("replica-1", "changed", (("id", 5),), ("name", "amount")),
                 Difference("replica-1", "extra", (("id", 7),))),
    seconds=0.5, repair=(("replica-1", ("DELETE FROM `app`.`t` WHERE `id` = 7;",)),))
CLEAN = TableResult("app.u", "ok", rows=10, chunks=1, whole_table=True)
UNCHECKED = TableResult("app.v", "unchecked", reason="no primary key")


def result(*tables: TableResult) -> CheckResult:
    return checksum_result("direct", "src", ("replica-1",), tables, 1.0)


def exit_code(run: CheckResult) -> int:
    return RESULT_EXIT["checksum"][run.status]


def test_exit_codes_and_statuses() -> None:
    assert (result(CLEAN).evidence["status"], exit_code(result(CLEAN))) == ("ok", 0)
    assert (result(CLEAN, DRIFTED, UNCHECKED).evidence["status"],
            exit_code(result(DRIFTED))) == ("drift", 1)
    assert (result(CLEAN, UNCHECKED).evidence["status"],
            exit_code(result(UNCHECKED))) == ("error", 2)
    assert exit_code(result(CLEAN, DRIFTED, UNCHECKED)) == 1
    assert result(UNCHECKED).status == 3
    assert result(DRIFTED).findings[0].kind == "checksum/changed"
    assert result(DRIFTED).name == "checksum"


def test_json_shape() -> None:
    evidence = result(DRIFTED, CLEAN).evidence
    assert evidence["tables"][0]["repair"] == [
        ["replica-1", ["DELETE FROM `app`.`t` WHERE `id` = 7;"]]]
    assert evidence["tables"][1]["seconds"] == CLEAN.seconds  # exact, for the text
    doc = json.loads(render_checksum_json(result(DRIFTED, CLEAN)))
    assert doc["status"] == "drift"
    table = doc["tables"][0]
    assert {"table", "rows", "chunks", "differences"} <= set(table)
    assert table["differences"] == [  # columns of changed rows; values never by default
        {"replica": "replica-1", "kind": "changed", "key": {"id": 5},
         "columns": ["name", "amount"]},
        {"replica": "replica-1", "kind": "extra", "key": {"id": 7}}]
    assert doc["repair"] == {"replica-1": ["DELETE FROM `app`.`t` WHERE `id` = 7;"]}
    assert [t["whole_table"] for t in doc["tables"]] == [False, True]
    json.dumps(doc)


def test_text_summary() -> None:
    text = render_checksum(result(DRIFTED, UNCHECKED))
    assert "app.t" in text and "no primary key" in text
    assert "replica-1: changed id=5 (columns: name, amount)" in text
    assert text.splitlines()[-1].startswith("DRIFT in 1 table(s)")
    assert "DELETE FROM `app`.`t` WHERE `id` = 7;" in text


def test_results_survive_the_state_file() -> None:
    table = TableResult("app.t", "drift", differences=(
        Difference("r", "changed", (("at", dt.datetime(2024, 1, 1)), ("b", b"\x00")),
                   ("v", "w"), (("v", "1.50", None), ("w", "0x00", 3))),))
    assert result_from_json(json.loads(json.dumps(result_to_json(table)))) == table
    assert result_from_json(json.loads(json.dumps(result_to_json(CLEAN)))) == CLEAN
    keyless = TableResult("app.k", "drift", differing_chunks=(("r", 1),),
                          unnamed=(Unnamed("r", 5, 4), Unnamed("s", None, None)))
    assert result_from_json(json.loads(json.dumps(result_to_json(keyless)))) == keyless


def test_state_is_kept_per_arguments(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    opts = ChecksumOptions(tables=("app.t",), state_file=path)
    state = RunState.open(opts, "direct", "src", ["r"], ["mysql://db1:3306/", "mysql://db2:3306/"])
    state.progress("app.t", (10,), 10, 1, [], 1000)
    state.save(force=True)
    resumed = RunState.open(ChecksumOptions(tables=("app.t",), state_file=path, resume=True),
                            "direct", "src", ["r"], ["mysql://db1:3306/", "mysql://db2:3306/"])
    assert resumed.resumed and resumed.table("app.t") is not None
    # other arguments, or other servers under the same names: never continue someone
    # else's run, and say what differs
    with pytest.raises(DriftError, match=r"written for another run \(--tables was "
                                         r"\['app.t'\], now \['app.x'\]\): pass --state-file"):
        RunState.open(ChecksumOptions(tables=("app.x",), state_file=path, resume=True),
                      "direct", "src", ["r"])
    with pytest.raises(DriftError, match=r"\(r was mysql://db2:3306/, now mysql://db9:3306/\)"):
        RunState.open(ChecksumOptions(tables=("app.t",), state_file=path, resume=True),
                      "direct", "src", ["r"], ["mysql://db1:3306/", "mysql://db9:3306/"])
    assert RunState.open(ChecksumOptions(tables=("app.t",), state_file=path, resume=True,
                                         chunk_time=9, retries=1), "direct", "src", ["r"],
                         ["mysql://db1:3306/", "mysql://db2:3306/"]).resumed  # pacing: free
    resumed.complete()
    done = RunState.open(ChecksumOptions(tables=("app.t",), state_file=path, resume=True),
                         "direct", "src", ["r"])
    assert not done.resumed
    no_file = RunState.open(ChecksumOptions(keep_state=False), "direct", "src", ["r"])
    no_file.save(force=True)
    assert no_file.path is None


def test_a_checksum_of_dsns_does_not_load_the_config_machinery() -> None:
    """Start-up is part of every one-shot run's time: with DSNs only, neither pydantic nor
    YAML nor every collector is imported (they cost about 0.1 s)."""
    code = ("import sys; import dbgauge.cli.checksum; "
            "from dbgauge.checks.drift import run_checksum; "
            "from dbgauge.toolkit.targets import resolve; "
            "resolve('mysql://u@h/', None); import dbgauge.toolkit.db.mysql; "
            "print(sorted(m for m in ('pydantic', 'yaml', 'dbgauge.collectors.mysql_innodb', "
            "'psycopg') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[2]).stdout
    assert out.strip() == "[]"


def test_endpoints_from_dsn_or_target() -> None:
    target = resolve("mysql://u:pw@db1:3307/", None, password_file=Path("/pw"))
    assert (target.name, target.kind, target.password_file) == ("db1:3307", "mysql", None)
    assert target.connection_params().password == "pw"  # the DSN's own password wins
    pg = resolve("postgresql://u@10.0.0.5/app", None, password_file=Path("/pw"))
    assert (pg.name, pg.kind, pg.password_file) == ("10.0.0.5:5432", "postgres", Path("/pw"))
    config = parse_config("""
targets:
  - {name: db, kind: mysql, dsn: "mysql://u@h/"}
  - {name: bouncer, kind: pgbouncer, dsn: "postgresql://u@h:6432/pgbouncer"}
  - {name: slow, kind: mysql, dsn: "mysql://u@h/", query_timeout: 9,
     password_env: DBGAUGE_TEST_PW}
""")
    configured = {t.name: t for t in config.all_targets()}
    assert resolve("db", configured).name == "db"
    assert resolve("slow", configured) == Target(
        "slow", "mysql", "mysql://u@h/", "DBGAUGE_TEST_PW", None, query_timeout=9.0)
    with pytest.raises(ConfigError, match="no target named 'x'"):
        resolve("x", configured)
    with pytest.raises(ConfigError, match="PgBouncer"):
        check_kinds([resolve("bouncer", configured)])
    with pytest.raises(ConfigError, match="--config"):
        resolve("db", None)


@pytest.mark.parametrize(("value", "flavor", "category", "expected"), [
    (None, "mysql", "int", "NULL"),
    ("it's a \\ test\n", "mysql", "string", "'it\\'s a \\\\ test\\n'"),
    ("it's", "postgres", "string", "'it''s'"),
    (b"\x00\xff", "mysql", "binary", "X'00ff'"),
    (b"\x00\xff", "postgres", "binary", "'\\x00ff'::bytea"),
    (1, "postgres", "bool", "true"),
    (True, "mariadb", "bool", "1"),
    (0.1, "mysql", "double", "0.1"),
    (float("inf"), "postgres", "double", "'Infinity'"),
    (Decimal("1.50"), "mysql", "decimal", "1.50"),
    (dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=1))), "postgres",
     "timestamptz", "'2024-01-02 02:04:05.000000'"),
    (dt.timedelta(hours=-1, seconds=1), "mysql", "time", "'-00:59:59.000000'"),
])
def test_literals(value: object, flavor: str, category: str, expected: str) -> None:
    assert literal(value, flavor, category) == expected


def test_repair_scripts_per_engine() -> None:
    cols = [Column("id", "int", "int", False), Column("v", "varchar", "varchar(9)", True)]
    items = [("missing", (1,)), ("changed", (2,)), ("extra", (3,)), ("changed", (4,))]
    rows = {(1,): {"id": 1, "v": "a"}, (2,): {"id": 2, "v": None}}
    mysql = repair_script("mariadb", "r", "app", "t", cols, cols, ["id"], items, rows)
    assert mysql[1:3] == ["SET SESSION sql_log_bin = 0;", "SET SESSION time_zone = '+00:00';"]
    assert "REPLACE INTO `app`.`t` (`id`, `v`) VALUES (1, 'a');" in mysql
    assert "REPLACE INTO `app`.`t` (`id`, `v`) VALUES (2, NULL);" in mysql
    assert "DELETE FROM `app`.`t` WHERE `id` = 3;" in mysql
    assert any(s.startswith("-- changed row `id` = 4 no longer exists") for s in mysql)
    assert mysql[-1] == "SET SESSION sql_log_bin = 1;"
    pcols = [Column("id", "int4", "integer", False), Column("v", "text", "text", True)]
    pg = repair_script("postgres", "r", "app", "t", pcols, cols, ["id"], items, rows)
    assert 'INSERT INTO "app"."t" ("id", "v") VALUES (1, \'a\');' in pg
    assert 'UPDATE "app"."t" SET "v" = NULL WHERE "id" = 2;' in pg
    assert 'DELETE FROM "app"."t" WHERE "id" = 3;' in pg


def test_scheduled_job_samples_match_their_declarations() -> None:
    specs = {s.name: s for s in METRICS}
    out = samples("checksum:src", result(DRIFTED, CLEAN, UNCHECKED), 1700000000.0)
    for sample in out:
        assert sorted(sample.labels) == sorted(specs[sample.name].labels), sample
        assert "cached" in specs[sample.name].help.lower()
    by = {(s.name, tuple(sorted(s.labels.items()))): s.value for s in out}
    job = ("dbgauge_job", "checksum:src")
    assert by[("dbgauge_checksum_tables_checked", (job,))] == 2
    assert by[("dbgauge_checksum_tables_unchecked", (job,))] == 1
    assert by[("dbgauge_checksum_drift", (job,))] == 1
    assert by[("dbgauge_checksum_differing_rows",
               (job, ("replica", "replica-1"), ("table", "app.t")))] == 2
    assert by[("dbgauge_checksum_differing_rows",
               (job, ("replica", "replica-1"), ("table", "app.u")))] == 0


@pytest.mark.parametrize(("counts", "rows"), [((10, 7), 3), ((10, 10), 1), ((None, None), 1)])
def test_a_keyless_table_that_differs_has_differing_rows_above_zero(
        counts: tuple[int | None, int | None], rows: int) -> None:
    """Its rows cannot be named, but an alert on differing_rows > 0 must still fire."""
    keyless = TableResult("app.nokey", "drift", rows=10, chunks=1,
                          differing_chunks=(("replica-1", 1),),
                          unnamed=(Unnamed("replica-1", *counts),))
    out = samples("checksum:src", result(keyless), 1700000000.0)
    by = {(s.name, s.labels.get("table")): s.value for s in out}
    assert by[("dbgauge_checksum_differing_rows", "app.nokey")] == rows
    assert by[("dbgauge_checksum_differing_chunks", "app.nokey")] == 1


def test_checksum_jobs_from_config() -> None:
    config = parse_config("""
targets:
  - {name: a, kind: mysql, dsn: "mysql://u@h1/"}
  - {name: b, kind: mysql, dsn: "mysql://u@h2/"}
checksums:
  - {source: a, replicas: [b], interval: 10m, tables: [app.t]}
  - {source: a, replicas: [b], method: direct, whole_table_time: 0}
""")
    jobs = checksum_jobs(config)
    assert [j.name for j in jobs] == ["checksum:a", "checksum:a:2"]
    assert jobs[0].interval == 600 and jobs[0].metrics == METRICS
    assert [j.options.whole_table_time for j in jobs] == [2.0, 0.0]
    with pytest.raises(ConfigError, match="whole_table_time"):
        parse_config("targets: [{name: a, kind: mysql, dsn: 'mysql://u@h/'}]\n"
                     "checksums: [{source: a, replicas: [a], whole_table_time: -1}]")


def test_text_and_json_round_the_exact_time_each_their_own_way() -> None:
    """The evidence keeps exact seconds: the text shows them to 10 ms, the JSON to 1 ms,
    as both did before the run became a CheckResult (0.0049 s is 0.00 s and 0.005 s)."""
    quick = TableResult("app.q", "ok", rows=1, chunks=1, seconds=0.0049)
    run = checksum_result("direct", "src", ("replica-1",), (quick,), 0.0049)
    assert "  0.00s  ok" in render_checksum(run)
    assert render_checksum(run).endswith("(1 table(s), 0.00 s)")
    doc = json.loads(render_checksum_json(run))
    assert doc["seconds"] == 0.005 and doc["tables"][0]["seconds"] == 0.005
