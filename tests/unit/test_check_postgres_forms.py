"""check_postgres' threshold forms that no monitoring-plugin range can say, without a
server: bloat's sizes, percentages and `and`/`or` joins (`validate_size_or_percent_with_oper`
in check_postgres 2.25), custom-query's --valtype string and --reverse (`check_custom_query`),
each judged on canned rows as a fake connection returns them."""

from __future__ import annotations

import pytest

from dbgauge.checks.health import health_checks
from dbgauge.checks.health.bloat import BloatLevel, levels, parse_level
from dbgauge.checks.health.custom_query import numeric_limits, string_state
from dbgauge.checks.health.model import Thresholds
from dbgauge.checks.health.replicate_row import arrival_status, wait_limit
from dbgauge.checks.health.run import run_health
from dbgauge.checks.health.scope import Scope
from dbgauge.toolkit.db import Row
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.ranges import peer_size
from dbgauge.toolkit.result import Status
from dbgauge.toolkit.targets import Selection, Target

NODE = Target("db3", "postgres", "postgresql://dbgauge@db3:5432/app")
M = 1024.0 ** 2


@pytest.mark.parametrize(("text", "size"), [
    ("100 M", 100 * M), ("1 G", 1024 * M), ("500kB", 500 * 1024.0), ("2 gigabytes", 2048 * M),
    ("4096", 4096.0), ("1.5 M", 1.5 * M)])
def test_sizes_read_as_check_postgres_reads_them(text: str, size: float) -> None:
    assert peer_size(text) == size


@pytest.mark.parametrize("text", ["", "M", "ten", "-5 M", "1 X"])
def test_what_is_no_size_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a size"):
        peer_size(text)


@pytest.mark.parametrize(("text", "level"), [
    ("100 M", BloatLevel(size=100 * M, text="100 M")),
    ("150%", BloatLevel(percent=150.0, text="150%")),
    ("1 G and 150%", BloatLevel(1024 * M, 150.0, True, "1 G and 150%")),
    ("150% AND 1 G", BloatLevel(1024 * M, 150.0, True, "150% AND 1 G")),  # either order
    ("500 M or 40%", BloatLevel(500 * M, 40.0, False, "500 M or 40%")),
    ("20% && 150 M", BloatLevel(150 * M, 20.0, True, "20% && 150 M")),
    ("20% || 150 M", BloatLevel(150 * M, 20.0, False, "20% || 150 M")),
    ("", BloatLevel())])
def test_bloat_levels_parse_as_check_postgres(text: str, level: BloatLevel) -> None:
    assert parse_level(text, "-w") == level


@pytest.mark.parametrize("text", ["1 G and 2 G", "10% or 20%", "1 G xor 10%", "lots", "1:10"])
def test_bloat_levels_it_cannot_mean_are_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="-c"):
        parse_level(text, "-c")


@pytest.mark.parametrize(("level", "wasted", "percent", "alerts"), [
    ("100 M", 100 * M, 0.0, True),  # at the level: check_postgres' >=
    ("100 M", 99 * M, 900.0, False),
    ("150%", 0.0, 150.0, True), ("150%", 10 * M, 140.0, False),
    ("100 M and 150%", 200 * M, 140.0, False), ("100 M and 150%", 200 * M, 150.0, True),
    ("100 M or 150%", 1.0, 150.0, True), ("100 M or 150%", 100 * M, 0.0, True),
    ("100 M or 150%", 99 * M, 149.0, False), ("", 1e18, 1e9, False)])
def test_bloat_levels_alert_as_check_postgres(level: str, wasted: float, percent: float,
                                              alerts: bool) -> None:
    assert parse_level(level, "-w").alerts(wasted, percent) is alerts


def test_bloat_defaults_and_one_level_alone() -> None:
    """Neither given: 1 GB and 5 GB; one given alone: the other never alerts (as there)."""
    warning, critical = levels(Scope())
    assert (warning.size, critical.size) == (1024 * M, 5 * 1024 * M)
    warning, critical = levels(Scope(critical="10 M"))
    assert warning == BloatLevel() and critical.size == 10 * M


class _Rows:
    """A connection answering each statement name with canned rows."""

    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows

    def query(self, name: str) -> list[Row]:
        return self.rows

    def query_read_only(self, sql: str, max_rows: int) -> list[Row]:
        return self.rows


def _bloat_rows() -> list[Row]:
    # a table 3x what it should be with 800 kB wasted, its index 10 MB wasted at 120%
    return [{"schemaname": "public", "tablename": "orders", "readable": True,
             "iname": "orders_pkey", "wasted_bytes": 800 * 1024.0,
             "index_wasted_bytes": 10 * M, "bloat_percent": 300.0,
             "index_bloat_percent": 120.0},
            {"schemaname": "public", "tablename": "tidy", "readable": True, "iname": None,
             "wasted_bytes": 0.0, "index_wasted_bytes": 0.0, "bloat_percent": 0.0,
             "index_bloat_percent": 0.0}]


@pytest.mark.parametrize(("warning", "critical", "status", "named"), [
    ("", "", Status.OK, ""),  # 1 GB / 5 GB
    ("5 M", "", Status.WARNING, "index orders_pkey"),
    ("", "200%", Status.CRITICAL, "table public.orders"),
    ("", "1 M and 200%", Status.OK, ""),  # the table is 300% but wastes only 800 kB
    ("500 kB and 200%", "", Status.WARNING, "table public.orders"),
    ("", "1 G or 310%", Status.OK, ""),
    ("", "9 M or 250%", Status.CRITICAL, "index orders_pkey,table public.orders")])
def test_bloat_judges_tables_and_indexes_each_on_its_own(
        warning: str, critical: str, status: Status, named: str) -> None:
    check = health_checks()["bloat"]
    scope = Scope(warning=warning, critical=critical)
    got = check.evaluate(NODE, _Rows(_bloat_rows()), None, scope)  # type: ignore[arg-type]
    assert got.status is status
    assert [f.detail.split(":")[0] for f in got.findings] == (named.split(",") if named else [])
    perf = dict(got.perfdata)  # one item per table and index, as check_postgres labels them
    assert perf["db3:orders_pkey:wasted_bytes"] == 10 * M
    assert perf["db3:public.tidy:wasted_bytes"] == 0.0


@pytest.mark.parametrize(("result", "warning", "critical", "reverse", "status"), [
    ("ok", "degraded", "down", "", Status.OK),
    ("degraded", "degraded", "down", "", Status.WARNING),
    ("down", "degraded", "down", "", Status.CRITICAL),
    ("Down", "degraded", "down", "", Status.OK),  # compared exactly, as there
    # --reverse: alerts when the result differs from the string
    ("up", "", "up", "1", Status.OK), ("down", "", "up", "1", Status.CRITICAL),
    ("down", "up", "", "1", Status.WARNING)])
def test_string_results_compare_as_check_postgres(result: str, warning: str, critical: str,
                                                  reverse: str, status: Status) -> None:
    scope = Scope(warning=warning, critical=critical,
                  options=(("valtype", "string"), ("reverse", reverse)))
    assert string_state(result, scope)[0] is status


def test_custom_query_string_rows_each_judged_worst_counts() -> None:
    check = health_checks()["custom-query"]
    rows: list[Row] = [{"result": "ok", "lag": 3}, {"result": "down", "lag": 9}]
    scope = Scope(query="SELECT ...", critical="down",
                  options=(("valtype", "string"), ("reverse", "")))
    got = check.evaluate(NODE, _Rows(rows), None, scope)  # type: ignore[arg-type]
    assert got.status is Status.CRITICAL
    assert got.findings[0].detail == "result 'down' is 'down'"
    assert dict(got.perfdata) == {"db3:lag": 9}  # the second column, per row


@pytest.mark.parametrize(("valtype", "warning", "refused"), [
    ("integer", "5m", "not a time"), ("size", "5m", "not a time"),
    ("time", "10GB", "not a size"), ("integer", "10GB", "not a size")])
def test_valtype_refuses_another_unit(valtype: str, warning: str, refused: str) -> None:
    with pytest.raises(ConfigError, match=f"{refused}.*--valtype {valtype}"):
        numeric_limits(Scope(warning=warning, options=(("valtype", valtype),)))


@pytest.mark.parametrize(("valtype", "warning", "value", "status"), [
    ("time", "5 minutes", 301.0, Status.WARNING), ("time", "5m", 299.0, Status.OK),
    ("size", "10GB", 11 * 1024.0 ** 3, Status.WARNING), ("integer", "5", 5.0, Status.OK),
    ("", "5m", 400.0, Status.WARNING)])
def test_numeric_valtypes_read_their_units(valtype: str, warning: str, value: float,
                                           status: Status) -> None:
    limits = numeric_limits(Scope(warning=warning, options=(("valtype", valtype),)))
    assert limits.status(value) is status


def test_reverse_turns_a_level_into_a_lower_bound() -> None:
    limits = numeric_limits(Scope(warning="10", critical="5", options=(("reverse", "1"),)))
    assert [limits.status(v) for v in (11, 9, 4)] == [Status.OK, Status.WARNING,
                                                      Status.CRITICAL]
    with pytest.raises(ConfigError, match="--reverse takes a plain level"):
        numeric_limits(Scope(warning="5:10", options=(("reverse", "1"),)))


def test_custom_query_needs_a_level() -> None:
    own = health_checks()["custom-query"].own_thresholds
    assert own is not None
    with pytest.raises(ConfigError, match="give --warning or --critical"):
        own.check(Scope(query="SELECT 1 AS result"))


def _times(warning: str | None, critical: str | None) -> Thresholds:
    limits = health_checks()["replicate-row"].limits(warning, critical)
    assert limits is not None
    return limits


@pytest.mark.parametrize(("warning", "critical", "seconds", "status"), [
    ("1", "5", 0.2, Status.OK), ("1", "5", 2.0, Status.WARNING),
    ("1", "5", 6.0, Status.CRITICAL), ("1", "5", None, Status.CRITICAL),
    ("1", None, None, Status.WARNING),  # -w alone: not arrived by then is WARNING
    (None, "2s", None, Status.CRITICAL), ("1m", "2m", 61.0, Status.WARNING)])
def test_replicate_row_judges_each_arrival(warning: str | None, critical: str | None,
                                           seconds: float | None, status: Status) -> None:
    assert arrival_status(_times(warning, critical), seconds) is status


def test_replicate_row_waits_for_the_longest_level() -> None:
    assert wait_limit(_times("1", "5")) == 5.0
    assert wait_limit(_times("3s", None)) == 3.0
    with pytest.raises(ConfigError, match="takes times to wait"):
        wait_limit(_times("5:", None))


def test_replicate_row_refuses_check_postgres_user_table_form() -> None:
    """--repinfo names a user table to UPDATE: refused before any server is touched (the
    node here does not exist)."""
    check = health_checks()["replicate-row"]
    nodes = Selection((Target("p", "postgres", "postgresql://u@127.0.0.1:1/x"),), frozenset())
    with pytest.raises(ConfigError, match=r"does not write to user tables.*dbgauge\.heartbeat"):
        run_health(check, nodes, _times(None, "5"),
                   scope=Scope(options=(("repinfo", "orders,id,3,rep,a,b"),)))
    with pytest.raises(ConfigError, match="give --warning or --critical"):
        run_health(check, nodes)


def test_own_thresholds_as_perfdata() -> None:
    """Graphs keep their threshold lines: a range or a size goes into perfdata's warn/crit,
    a string, a percentage or a join does not (no number says it)."""
    bloat = health_checks()["bloat"].own_thresholds
    query = health_checks()["custom-query"].own_thresholds
    assert bloat is not None and bloat.perf is not None
    assert query is not None and query.perf is not None
    assert bloat.perf(Scope(warning="100 M", critical="1 G and 50%")) == {
        "wasted_bytes": ("104857600", None)}
    assert query.perf(Scope(warning="5", critical="6")) == {"result": ("5", "6")}
    assert query.perf(Scope(critical="down", options=(("valtype", "string"),))) == {}
