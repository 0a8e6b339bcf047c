"""The daemon's status page (/ and /status.json) against the session sandbox: the same
trees as `dbgauge status`, refreshed at most once per daemon.status_refresh however many
views it gets, and a node's change shown after the next refresh."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import wait_for
from tests.helpers.daemon import Daemon, config_file
from tests.helpers.servers import Sandbox, replicating, run

pytestmark = pytest.mark.integration


@pytest.fixture()
def page_daemon(sandbox: Sandbox, tmp_path: Path, request: pytest.FixtureRequest
                ) -> Iterator[Daemon]:
    refresh = getattr(request, "param", "1s")
    d = Daemon(config_file(sandbox, tmp_path / "c.yaml", status_refresh=refresh),
               tmp_path / "serve.log")
    yield d
    d.stop()


def doc(d: Daemon) -> dict[str, Any]:
    status, body = d.get("/status.json")
    assert status == 200, body
    out: dict[str, Any] = json.loads(body)
    return out


def replica(document: dict[str, Any]) -> dict[str, Any]:
    return next(n for n in document["nodes"] if n["name"] == "mariadb-replica")


def test_page_shows_the_trees_and_follows_a_change(page_daemon: Daemon,
                                                   sandbox: Sandbox) -> None:
    # The daemon's heartbeat writer starts with it: OK once its first row has replicated.
    first = wait_for(lambda: (lambda d: d if d["status"] == "OK" else None)(doc(page_daemon)),
                     timeout=30, what="every node to be OK")
    assert first["schema"] == "dbgauge.status/1"
    assert [t["node"] for t in first["clusters"]] == ["mariadb-primary", "pg-primary"]
    status, page = page_daemon.get("/")
    assert status == 200
    assert '<meta http-equiv="refresh" content="1">' in page
    assert 'data-node="mariadb-replica" data-status="OK" data-up="true" data-link="replica"' \
        in page
    assert '<span class="state">OK</span>' in page  # the state in words, not only colour
    assert 'href="/probe?target=pgbouncer"' in page
    run(sandbox, "mariadb-replica", "STOP SLAVE SQL_THREAD")
    try:
        changed = wait_for(lambda: (lambda d: d if replica(d)["status"] == "CRITICAL"
                                    else None)(doc(page_daemon)), timeout=10)
        assert replica(changed)["replication"] == "IO Yes, SQL No"
        assert changed["status"] == "CRITICAL"
    finally:
        run(sandbox, "mariadb-replica", "START SLAVE SQL_THREAD")
    wait_for(lambda: replicating(sandbox), timeout=30)


@pytest.mark.parametrize("page_daemon", ["1h"], indirect=True)
def test_views_within_the_interval_add_no_queries(page_daemon: Daemon,
                                                  sandbox: Sandbox) -> None:
    first = doc(page_daemon)
    run(sandbox, "mariadb-replica", "STOP SLAVE SQL_THREAD")
    try:
        # Many views, all answered from the one discovery: the stopped thread is not seen.
        for _ in range(20):
            assert doc(page_daemon) == first
            assert page_daemon.get("/")[0] == 200
    finally:
        run(sandbox, "mariadb-replica", "START SLAVE SQL_THREAD")
    wait_for(lambda: replicating(sandbox), timeout=30)
