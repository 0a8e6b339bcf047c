"""check_postgres' threshold forms, filters and values as dbgauge reads them, on pure
inputs: lock specs (`lock-count`), the slots-left `-N` (`connections`), a level given
alone, --includeuser/--excludeuser, whole perfdata bytes and the settings checksum. The
same conditions on a real server beside check_postgres:
tests/integration/test_check_postgres_parity.py."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from typing import Any

import pytest

from dbgauge.checks.health import health_checks
from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.lock_count import (
    count_locks,
    judge_counts,
    levels,
    lock_spec,
    perf_thresholds,
)
from dbgauge.checks.health.model import NEVER
from dbgauge.checks.health.settings_checksum import settings_checksum
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.ranges import Range, parse_range
from dbgauge.toolkit.render.plugin import perf_value, render_perf
from dbgauge.toolkit.result import Status
from dbgauge.toolkit.targets import target_from_dsn

NODE = target_from_dsn("n=postgresql://u@h:5432/app")


def test_lock_specs_read_as_check_postgres_multival() -> None:
    """`N` is the total; `word=N` pairs, any separator, lower case, `lock` dropped."""
    assert lock_spec("250", "-w").at == {"total": 250}
    assert lock_spec("total=250;waiting=5;exclusive=2", "-w").at == {
        "total": 250, "waiting": 5, "exclusive": 2}
    assert lock_spec("ExclusiveLock=3:AccessExclusive = 1", "-c").at == {
        "exclusive": 3, "accessexclusive": 1}
    assert lock_spec("", "-c").at == {}
    for bad in ("many", "1.5", "-3"):
        with pytest.raises(ConfigError, match="'total=N;waiting=N;MODE=N'"):
            lock_spec(bad, "--critical")
    # check_postgres' defaults when neither is given; a level alone leaves the other unset
    assert [lv.at for lv in levels(Scope())] == [{"total": 100}, {"total": 150}]
    assert [lv.at for lv in levels(Scope(critical="3"))] == [{}, {"total": 3}]
    assert [lv.at for lv in levels(Scope(warning="waiting=1"))] == [{"waiting": 1}, {}]
    assert perf_thresholds(Scope(warning="total=250;waiting=5", critical="waiting=9")) == {
        "total_locks": ("@250:", None), "waiting_locks": ("@5:", "@9:")}


ROWS = [("app", "AccessShareLock", 4, 0), ("app", "ExclusiveLock", 2, 1),
        ("app", "RowExclusiveLock", 3, 0), ("postgres", "AccessExclusiveLock", 1, 1),
        ("template1", None, 0, 0)]


def test_locks_are_counted_per_database_and_summed_as_check_postgres() -> None:
    per_db = count_locks(ROWS)
    assert per_db["app"] == Counter(total=9, waiting=1, accessshare=4, exclusive=2,
                                    rowexclusive=3)
    assert per_db["template1"] == Counter(total=0, waiting=0)
    # at the level alerts (>=): 10 locks in all, 2 waiting, 2 ExclusiveLock
    got = judge_counts(NODE, per_db, Scope(warning="total=10", critical="waiting=3"))
    assert got.status is Status.WARNING
    assert got.findings[0].detail == "locks total=10 (threshold total=10: at or above)"
    got = judge_counts(NODE, per_db, Scope(critical="exclusive=2;waiting=5"))
    assert got.status is Status.CRITICAL and "exclusive=2" in got.findings[0].detail
    ok = judge_counts(NODE, per_db, Scope(warning="total=11;waiting=3;exclusive=3"))
    assert ok.status is Status.OK and ok.note == "locks exclusive=2 total=10 waiting=2"
    # perfdata: one item per database and type the thresholds name
    assert ("n:postgres:waiting_locks", 1.0) in ok.perfdata
    assert ("n:template1:exclusive_locks", 0.0) in ok.perfdata
    assert len(ok.perfdata) == 3 * 3
    # --include/--exclude pick databases; nothing matched is UNKNOWN, never OK
    only_app = judge_counts(NODE, per_db, Scope(include=("app",), warning="total=10"))
    assert only_app.status is Status.OK and "total=9" in only_app.note
    none = judge_counts(NODE, per_db, Scope(include=("nosuch",)))
    assert none.status is Status.UNKNOWN and none.findings[0].kind == "no-matching-database"


def test_the_slots_left_form_is_connections_only() -> None:
    left = parse_range("-10")
    assert left == Range(-math.inf, 10, inside=True, left=True)
    assert (str(left), left.plain) == ("-10", "@~:10")
    limits = health_checks()["connections"].limits("-10", "-5")
    assert limits is not None
    # 287 of 297 in use: 10 left warns, 5 left is critical, 11 left is fine
    seen = [limits.status(100.0 * used / 297, {"connections": used,
                                               "connections_left": 297 - used})
            for used in (286, 287, 292)]
    assert seen == [Status.OK, Status.WARNING, Status.CRITICAL]
    assert limits.perf("connections_percent") == {"connections_left": ("@~:10", "@~:5")}
    # --warning alone keeps backends' default critical, as check_postgres
    alone = health_checks()["connections"].limits("-10", None)
    assert alone is not None and alone.critical == Range(0, 95, percent=True)
    for name in ("lag", "sequence", "txn-wraparound", "database-size"):
        with pytest.raises(ConfigError, match="only `dbgauge check connections` takes it"):
            health_checks()[name].limits("-10", None)


def test_a_level_given_alone_leaves_the_other_unset_on_every_check() -> None:
    """check_postgres' validate_range: -c alone has no warning (and -w alone no
    critical), whatever the defaults; connections keeps its default critical, and
    connection check_pgsql's rule (test_health_checks.py)."""
    for check in health_checks().values():
        if check.defaults is None or check.name == "connection":
            continue
        level = Range(0, 50, percent=True) if check.defaults.share else \
            Range(0, 1e9, size=check.defaults.bytes, duration=check.defaults.seconds)
        only_c = check.limits(None, level)
        assert only_c is not None and only_c.warning == NEVER, check.name
        only_w = check.limits(level, None)
        assert only_w is not None
        assert (only_w.critical == NEVER) is (check.name != "connections"), check.name


def test_includeuser_wins_over_excludeuser_and_names_match_exactly() -> None:
    both = Scope(include_user=("alice,bob",), exclude_user=("alice",))
    assert [both.skips_user(u) for u in ("alice", "bob", "carol")] == [False, False, True]
    out = Scope(exclude_user=("etl", "backup , cron"))
    assert [out.skips_user(u) for u in ("etl", "cron", "ETL", "etl2")] == [
        True, True, False, False]
    assert not Scope().skips_user("anyone") and not Scope().users_filtered


class Sessions:
    """A PostgreSQL connection answering check_sessions with the given rows."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.server = ServerInfo("postgres", (15,), "")
        self.rows, self.target = rows, None

    def query(self, name: str, params: Any = None) -> list[dict[str, Any]]:
        assert name == "check_sessions"
        return self.rows


def _session(user: str, db: str = "app", **ages: float) -> dict[str, Any]:
    return {"datname": db, "usename": user, "hidden": False, "pid": 7,
            "query_seconds": None, "xact_seconds": None, "idle_seconds": None, **ages}


def test_session_checks_judge_the_sessions_the_user_filters_keep() -> None:
    rows = [_session("etl", query_seconds=900.0, xact_seconds=901.0),
            _session("app", query_seconds=30.0, xact_seconds=40.0),
            _session("app", "other", idle_seconds=500.0, xact_seconds=600.0)]
    checks = health_checks()

    def run(name: str, scope: Scope, found: list[dict[str, Any]] = rows) -> Any:
        return checks[name].evaluate(NODE, Sessions(found), None, scope)  # type: ignore[arg-type]

    assert run("query-time", Scope(exclude_user=("etl",))).status is Status.OK
    assert run("query-time", Scope(include_user=("etl",))).status is Status.CRITICAL
    assert run("txn-time", Scope(exclude_user=("etl",))).perfdata[0] == (
        "n:transaction_seconds", 600.0)
    assert run("txn-time", Scope(exclude=("other",), exclude_user=("etl",))).perfdata[0] == (
        "n:transaction_seconds", 40.0)
    assert run("txn-idle", Scope(include=("app",))).status is Status.OK
    assert run("txn-idle", Scope(include_user=("app",))).status is Status.CRITICAL
    # a session it cannot see that the filters keep: UNKNOWN naming the grant
    hidden = [*rows, {**_session("batch"), "hidden": True}]
    with pytest.raises(Exception, match="pg_read_all_stats"):
        run("txn-time", Scope(exclude_user=("etl",)), hidden)
    assert run("txn-time", Scope(include_user=("app",)), hidden).status is Status.WARNING


def test_perfdata_bytes_are_whole_and_alert_as_the_range_does() -> None:
    """`-c '1.1 TB'` is 1209462790553.6 bytes: whole bytes that alert the same way on a
    count of bytes (end down, start up)."""
    size = parse_range("1.1 TB")
    perf = perf_value("n:app:database_size_bytes", 8666471.0,
                      {"database_size_bytes": (size.plain, "@1.5:2.5")})
    assert render_perf(perf) == "'n:app:database_size_bytes'=8666471B;1209462790553;@2:2;0"
    lower = perf_value("n:size_bytes", 1.0, {"size_bytes": ("10.2:", None)})
    assert lower.warn == "11:"
    kept = perf_value("n:lag_seconds", 1.5, {"lag_seconds": ("0.5", None)})
    assert (kept.value, kept.warn) == (1.5, "0.5")  # only bytes are whole


def test_the_settings_checksum_is_check_postgres_md5_of_what_psql_shows() -> None:
    rows = [("DateStyle", "ISO, MDY"), ("log_line_prefix", "%m [%p] "),
            ("statement_timeout", "30000")]
    text = "DateStyle ISO, MDY\nlog_line_prefix %m [%p]\nstatement_timeout 30000\n"
    assert settings_checksum(rows) == hashlib.md5(text.encode()).hexdigest()
    assert health_checks()["settings-checksum"].plain_session


def test_sequence_judges_the_exact_share_above_the_level() -> None:
    """check_postgres rounds 84.6 to 85 and alerts at 85; dbgauge does not (documented:
    its -w 85 is -w 84.5 here)."""
    limits = health_checks()["sequence"].limits("85", "95")
    assert limits is not None
    assert [limits.status(v) for v in (84.6, 85.0, 85.01)] == [
        Status.OK, Status.OK, Status.WARNING]
    early = health_checks()["sequence"].limits("84.5", None)
    assert early is not None and early.status(84.6) is Status.WARNING


def test_lock_count_is_scheduled_with_check_postgres_defaults_or_a_lock_spec() -> None:
    from dbgauge.checks.schedule import scheduled_health, validate_check_job

    checks = {"lock-count": scheduled_health(health_checks()["lock-count"])}
    validate_check_job(checks, "lock-count", None, None)
    validate_check_job(checks, "lock-count", "total=5", "total=10;waiting=2")
    with pytest.raises(ValueError, match="lock"):
        validate_check_job(checks, "lock-count", "total=x", None)


def test_owner_filters_keep_the_objects_of_the_users_named() -> None:
    from dbgauge.checks.health.scope import Item, kept, worst_item

    items = [Item("app", 9.0, owner="sandbox_admin"), Item("crm", 5.0, owner="crm_owner"),
             Item("postgres", 7.0, owner="postgres")]
    only = Scope(include_user=("crm_owner,postgres",))
    assert [i.label for i in kept(items, only)] == ["crm", "postgres"]
    assert [i.label for i in kept(items, Scope(exclude_user=("postgres",)))] == ["app", "crm"]
    none = worst_item(NODE, items, Scope(include_user=("nosuch",)), metric="m",
                      what="database")
    assert not isinstance(none, float)
    assert none.findings[0].severity is Status.UNKNOWN  # type: ignore[union-attr]
    assert "matched --includeuser/--excludeuser (3 database in all)" in none.note  # type: ignore[union-attr]
    # the checks whose check_postgres actions take them, and what they match there
    users = {name: c.user_filters for name, c in health_checks().items() if c.user_filters}
    assert users == {
        **dict.fromkeys(("query-time", "txn-idle", "txn-time"), "session user"),
        **dict.fromkeys(("database-size", "hitratio", "commitratio"), "database owner"),
        **dict.fromkeys(("relation-size", "index-size", "table-size", "indexes-size",
                         "total-relation-size", "last-vacuum", "last-analyze",
                         "last-autovacuum", "last-autoanalyze"), "relation owner")}
