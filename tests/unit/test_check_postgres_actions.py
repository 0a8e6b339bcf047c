"""The check_postgres actions' shared parts without a server: check_postgres' filter
rules (`skip_item`, cases read from check_postgres 2.25's source), the worst object and
its per-object perfdata, ratios' `-w 90%` as a lower bound, checks without defaults,
--dbname's nodes, and the check_postgres -> dbgauge table against the registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbgauge.checks.health import health_checks
from dbgauge.checks.health.docs import PEER_BEGIN, PEER_END, peers_table
from dbgauge.checks.health.model import Measured, NodeOutcome
from dbgauge.checks.health.peers import CHECK_POSTGRES, DBGAUGE_ONLY
from dbgauge.checks.health.run import run_health
from dbgauge.checks.health.scope import Item, Scope, per_database, worst_item
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.result import Status
from dbgauge.toolkit.targets import Selection, Target

NODE = Target("db3", "postgres", "postgresql://dbgauge@db3:5432/app")


@pytest.mark.parametrize(("include", "exclude", "name", "schema", "skipped"), [
    ((), (), "orders", "public", False),
    (("orders",), (), "orders", "public", False),
    (("orders",), (), "order", "public", True),  # exact, not a prefix
    (("~^ord",), (), "orders", "public", False),  # ~ is a regular expression
    (("~der",), (), "orders", "public", False),  # searched, not anchored
    ((), ("pg_catalog.",), "pg_class", "pg_catalog", True),  # a trailing dot: a schema
    ((), ("~^pg_.",), "pg_class", "pg_toast", True),
    ((), ("a, orders",), "orders", "public", True),  # comma-separated lists
    (("pg_class",), ("pg_catalog.",), "pg_class", "pg_catalog", False),  # brought back
    (("pg_class",), ("pg_catalog.",), "pg_proc", "pg_catalog", True),
    (("pg_class",), ("pg_catalog.",), "orders", "public", False),  # neither: kept
])
def test_filters_as_check_postgres_skip_item(include: tuple[str, ...],
                                            exclude: tuple[str, ...], name: str, schema: str,
                                            skipped: bool) -> None:
    assert Scope(include, exclude).skips(name, schema) is skipped


def test_a_bad_regular_expression_is_a_usage_error() -> None:
    with pytest.raises(ConfigError, match="not a regular expression"):
        Scope(include=("~(",))


def test_worst_object_judged_and_every_object_in_perfdata() -> None:
    items = [Item("app", 10.0), Item("postgres", 30.0), Item("big", 50.0)]
    got = worst_item(NODE, items, Scope(exclude=("big",)), metric="size_bytes",
                     what="database")
    assert isinstance(got, Measured) and got.value == 30.0 and "postgres" in got.text
    assert list(got.extra) == [("app:size_bytes", 10.0), ("postgres:size_bytes", 30.0)]
    low = worst_item(NODE, items, Scope(), metric="hit_percent", what="database",
                     higher_is_worse=False)
    assert isinstance(low, Measured) and low.value == 10.0


def test_nothing_left_is_unknown_and_nothing_at_all_may_be_fine() -> None:
    got = worst_item(NODE, [Item("app", 1.0)], Scope(include=("nosuch",)), metric="m",
                     what="database")
    assert isinstance(got, NodeOutcome) and got.status is Status.UNKNOWN
    assert "matched --include/--exclude" in got.note
    none = worst_item(NODE, [], Scope(), metric="m", what="database", nothing="none here")
    assert isinstance(none, NodeOutcome) and none.status is Status.OK


def test_a_ratio_level_alerts_below_it_as_check_postgres() -> None:
    hit = health_checks()["hitratio"]
    limits = hit.limits("90%", "80%")
    assert limits is not None
    assert limits.status(95.0) is Status.OK
    assert limits.status(85.0) is Status.WARNING
    assert limits.status(70.0) is Status.CRITICAL


def test_sizes_take_units_and_checks_without_defaults_need_a_level() -> None:
    size = health_checks()["database-size"]
    limits = size.limits("10GB", None)
    assert limits is not None and limits.status(11 * 2 ** 30) is Status.WARNING
    assert limits.status(9 * 2 ** 30) is Status.OK
    with pytest.raises(ConfigError, match="no default thresholds"):
        run_health(size, Selection((NODE,), frozenset({"db3"})))


def test_dbname_makes_a_node_per_database() -> None:
    mysql = Target("db1", "mysql", "mysql://dbgauge@db1:3306/")
    got = per_database(Selection((NODE, mysql), frozenset({"db3", "db1"})), ("app,billing",))
    assert [t.name for t in got.targets] == ["db3/app", "db3/billing", "db1"]
    assert "dbname=billing" in got.targets[1].dsn
    assert got.named == {"db3/app", "db3/billing", "db1"}


def test_every_check_postgres_action_maps_to_registered_checks() -> None:
    checks = health_checks()
    assert len(CHECK_POSTGRES) == 60
    for action in CHECK_POSTGRES:
        assert action.provided in ("yes", "partly", "no"), action
        assert all(name in checks for name in action.checks), action
        assert bool(action.checks) == (action.provided != "no"), action
        assert action.provided == "yes" or action.note, action  # a gap says why
    mapped = {name for action in CHECK_POSTGRES for name in action.checks}
    for name, check in checks.items():
        if check.kinds & {"postgres", "pgbouncer"}:
            assert name in mapped | DBGAUGE_ONLY, f"{name} is in no check_postgres row"


def test_docs_table_of_check_postgres_actions_is_current() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "checks.md").read_text("utf-8")
    block = text[text.index(PEER_BEGIN):text.index(PEER_END) + len(PEER_END)]
    assert block == peers_table(CHECK_POSTGRES), "docs/checks.md is stale: run `make docs`"


def test_settings_checksum_is_check_postgres_md5_of_name_value_lines() -> None:
    from dbgauge.checks.health.settings_checksum import settings_checksum

    # check_postgres: Digest::MD5::md5_hex of "name setting\n" per row, in name order
    # (the value from `printf 'a 1\nb on\n' | md5sum`)
    assert settings_checksum([("a", "1"), ("b", "on")]) == "decc8c701b7c4853e5ca581dbc04a8b7"


def test_daemon_entries_need_what_the_command_line_needs() -> None:
    from dbgauge.checks.schedule import scheduled_health, validate_check_job

    checks = {name: scheduled_health(check) for name, check in health_checks().items()}
    with pytest.raises(ValueError, match=r"needs options: \{query: \.\.\.\}"):
        validate_check_job(checks, "custom-query", 1, None)
    validate_check_job(checks, "custom-query", 1, None, {"query": "SELECT 1"})
    with pytest.raises(ValueError, match="expected value: give it as critical"):
        validate_check_job(checks, "settings-checksum", None, None)
    validate_check_job(checks, "settings-checksum", None, "0123456789abcdef0123456789abcdef")
    with pytest.raises(ValueError, match="no default thresholds: give warning or critical"):
        validate_check_job(checks, "database-size", None, None)
    validate_check_job(checks, "database-size", "10GB", None)
    validate_check_job(checks, "wal-files", None, None)  # defaults 10 / 15, as check_postgres
