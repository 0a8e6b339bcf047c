"""`--compat-only`: the peer's output, for a switch that changes nothing else.

With `--compat X --compat-only` a target runs the peer's default collectors and serves
every family the peer serves by default (those the per-dialect tests compare value by
value), and of dbgauge's own names only its self metrics (up, collectors, build).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers import DBGAUGE, REPO
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
    done = subprocess.run([*DBGAUGE, "collect", "-c", str(sandbox.config), target,
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
