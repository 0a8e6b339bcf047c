"""The write guard without servers: what each engine's answer means, and what a refusal
says (the sandbox tests in tests/integration/test_write_guard.py run it for real)."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from dbgauge.cli import cli
from dbgauge.cli.base import error_exit
from dbgauge.toolkit.errors import WriteRefused
from dbgauge.toolkit.sql import load_sql
from dbgauge.toolkit.write_guard import (
    WriteState,
    check_writable,
    parse_write_state,
    refusal,
)
from tests.helpers.captured import FixtureConnection


@pytest.mark.parametrize(("flavor", "row", "found", "absolute"), [
    # pymysql answers @@GLOBAL.read_only as 0/1
    ("mariadb", {"read_only": 0}, (), False),
    ("mariadb", {"read_only": 1}, ("read_only=ON",), False),
    ("mysql", {"read_only": 0, "super_read_only": 0}, (), False),
    ("mysql", {"read_only": 1, "super_read_only": 0}, ("read_only=ON",), False),
    ("mysql", {"read_only": 1, "super_read_only": 1},
     ("read_only=ON", "super_read_only=ON"), True),
    # psycopg answers pg_is_in_recovery() as a bool, current_setting() as text
    ("postgres", {"in_recovery": False, "default_transaction_read_only": "off"}, (), False),
    ("postgres", {"in_recovery": True, "default_transaction_read_only": "off"},
     ("in recovery (pg_is_in_recovery() is true)",), True),
    ("postgres", {"in_recovery": False, "default_transaction_read_only": "on"},
     ("default_transaction_read_only=on",), False),
])
def test_parse_write_state(flavor: str, row: dict[str, Any], found: tuple[str, ...],
                           absolute: bool) -> None:
    state = parse_write_state(flavor, row)
    assert state.found == found
    assert state.absolute is absolute
    assert state.writable is (not found)


def test_each_engine_asks_its_own_settings() -> None:
    assert "super_read_only" in load_sql("mysql", "write_guard", (8, 4, 0))
    mariadb = load_sql("mariadb", "write_guard", (10, 11, 0))
    assert "read_only" in mariadb and "super_read_only" not in mariadb  # MariaDB has none
    postgres = load_sql("postgres", "write_guard", (15,))
    assert "pg_is_in_recovery()" in postgres and "default_transaction_read_only" in postgres


def test_a_refusal_says_what_was_found_why_and_what_to_do() -> None:
    replica = refusal(WriteState(("read_only=ON",)), "write the heartbeat row", "target db2",
                      "pass --allow-read-only")
    assert replica == (
        "refusing to write the heartbeat row on target db2: the server is read-only "
        "(read_only=ON): it is a replica or a demoted primary, and a write there is an errant "
        "transaction (check split-brain goes CRITICAL on it); run it against the primary, or "
        "pass --allow-read-only if this server is meant to take dbgauge's writes anyway")
    locked = refusal(WriteState(("read_only=ON", "super_read_only=ON"), absolute=True), "w",
                     "db2", "pass --allow-read-only")
    assert "no account can write there" in locked
    assert "no option makes this server take writes" in locked
    assert "--allow-read-only" not in locked  # it would not help
    standby = refusal(parse_write_state("postgres", {"in_recovery": True}), "w", "pg2", None)
    assert "it is a standby" in standby and "run it against the primary" in standby


def _conn(flavor: str, row: dict[str, Any]) -> FixtureConnection:
    version = (15,) if flavor == "postgres" else (10, 11, 0)
    return FixtureConnection(flavor, version, {"write_guard": [row]})


def test_check_writable_refuses_unless_allowed_and_allowable() -> None:
    replica = {"read_only": 1}
    with pytest.raises(WriteRefused, match=r"read_only=ON"):
        check_writable(_conn("mariadb", replica), "w", "db2")
    assert check_writable(_conn("mariadb", replica), "w", "db2", allow_read_only=True).found \
        == ("read_only=ON",)
    assert check_writable(_conn("mariadb", {"read_only": 0}), "w", "db1").writable
    # nothing to allow where no account can write, nor where the caller offers no override
    with pytest.raises(WriteRefused, match="super_read_only=ON"):
        check_writable(_conn("mysql", {"read_only": 1, "super_read_only": 1}), "w", "db2",
                       allow_read_only=True)
    with pytest.raises(WriteRefused, match="default_transaction_read_only=on"):
        check_writable(_conn("postgres", {"in_recovery": False,
                                          "default_transaction_read_only": "on"}),
                       "w", "pg1", allow_read_only=True, override=None)
    assert error_exit(WriteRefused("x")) == 2


def test_the_override_options_are_documented_in_help() -> None:
    update = CliRunner().invoke(cli, ["heartbeat", "update", "--help"])
    assert "--allow-read-only" in update.output and "read_only" in update.output
    # pt-heartbeat's --check-read-only is accepted (checking is always on)
    pt = CliRunner().invoke(cli, ["heartbeat", "update", "postgresql://u@h/db",
                                  "--check-read-only"])
    assert pt.exit_code == 2 and "is a postgres server" in pt.output, pt.output
    checksum = CliRunner().invoke(cli, ["checksum", "--help"])
    assert "--allow-read-only" in checksum.output


def test_config_allow_read_only_reaches_the_writers() -> None:
    from dbgauge.app import parse_config
    from dbgauge.checks.schedule import checksum_jobs

    config = parse_config(
        "targets:\n"
        "  - {name: a, kind: mysql, dsn: 'mysql://u@h/',\n"
        "     heartbeat: {mode: write, allow_read_only: true}}\n"
        "  - {name: b, kind: mysql, dsn: 'mysql://u@h2/', heartbeat: {mode: write}}\n"
        "checksums:\n"
        "  - {source: a, replicas: [b], allow_read_only: true}\n"
        "  - {source: a, replicas: [b]}\n")
    writers = {t.name: t.heartbeat for t in config.all_targets()}
    assert writers["a"] is not None and writers["a"].allow_read_only
    assert writers["b"] is not None and not writers["b"].allow_read_only  # safe by default
    jobs = checksum_jobs(config)
    assert [job.options.allow_read_only for job in jobs] == [True, False]  # type: ignore[attr-defined]
