"""`--compat-only`: the peer's output, for a switch that changes nothing else.

With `--compat X --compat-only` a target runs the peer's default collectors and serves
every family the peer serves by default (those the per-dialect tests compare value by
value), and of dbgauge's own names only its self metrics (up, collectors, build).
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.toolkit.db.base import Row
from dbgauge.toolkit.db.postgres import PostgresConnection
from dbgauge.toolkit.exporter.scrape import TargetRunner
from tests.helpers import DBGAUGE, REPO
from tests.helpers.daemon import target_config
from tests.helpers.peers import (
    MYSQLD_NOT_PRODUCED,
    POSTGRES_NOT_PRODUCED,
    mysqld_exporter,
    parse,
    postgres_exporter,
)
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

RUNTIME = ("go_", "process_", "promhttp_", "python_")
SELF = ("dbgauge_up", "dbgauge_collector_success", "dbgauge_collector_duration_seconds",
        "dbgauge_target_scrape_duration_seconds", "dbgauge_target_info", "dbgauge_build_info")


def _collect(sandbox: Sandbox, target: str, compat: str) -> str:
    done = subprocess.run([*DBGAUGE, "collect", "--config", str(sandbox.config), target,
                           "--compat", compat, "--compat-only"], capture_output=True,
                          text=True, timeout=60, check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(("compat", "target"), [("mysqld_exporter", "mariadb-primary"),
                                                ("postgres_exporter", "pg-primary")])
def test_compat_only_serves_the_peers_default_families_and_no_dbgauge_family(
        sandbox: Sandbox, tmp_path: Path, compat: str, target: str) -> None:
    if compat == "mysqld_exporter":
        running, not_produced = mysqld_exporter(sandbox, target, tmp_path), MYSQLD_NOT_PRODUCED
    else:
        running, not_produced = postgres_exporter(sandbox, target), POSTGRES_NOT_PRODUCED
    with running as peer:
        theirs = {n for n in parse(peer.scrape()) if not n.startswith(RUNTIME)}
    ours = set(parse(_collect(sandbox, target, compat)))
    assert len(theirs) > 100
    assert theirs - ours == set(not_produced) & theirs
    assert {n for n in ours if n.startswith("dbgauge_")} <= set(SELF)
    assert "dbgauge_up" in ours


def _statements(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, only: bool) -> list[str]:
    """The sql/ statements one scrape of pg-primary runs (its slow-changing collectors
    already cached), with `--compat postgres_exporter` and, if `only`, `--compat-only`."""
    cfg = replace(target_config(sandbox, "pg-primary", compat=["postgres_exporter"]),
                  compat_only=only)
    reg = registry()
    runner = TargetRunner(cfg, reg.for_target(cfg), reg.dialects_for(cfg))
    ran: list[str] = []
    query = PostgresConnection.query

    def recorded(self: PostgresConnection, name: str, params: Any = None) -> list[Row]:
        ran.append(name)
        return query(self, name, params)

    monkeypatch.setattr(PostgresConnection, "query", recorded)
    try:
        assert runner.scrape(time.monotonic() + 15).up
        ran.clear()
        result = runner.scrape(time.monotonic() + 15)
    finally:
        runner.close()
    assert result.up and all(run.success for run in result.collectors), result.collectors
    return ran


def test_compat_only_runs_no_statement_only_dbgauge_families_need(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """A peer's scrape should cost no more than the peer's: the lock summary (waiting and
    blocked backends, dbgauge's own families) is left out under --compat-only, and the
    lock counts postgres_exporter's pg_locks_count needs are still read."""
    both = _statements(sandbox, monkeypatch, only=False)
    peer_only = _statements(sandbox, monkeypatch, only=True)
    assert "lock_summary" in both and "lock_counts" in both
    assert "lock_summary" not in peer_only and "lock_counts" in peer_only
    assert len(peer_only) == len(set(peer_only)), "a statement ran twice in one scrape"
