"""Shared fixtures: one real-server sandbox per test session (per xdist worker), and a
running daemon.

The sandbox has its own directory and base port (`tests.helpers.ports`), so a developer's
`make demo` sandbox is never disturbed. If it cannot start, every integration test fails
loudly: there is no skip for missing servers.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbgauge.toolkit import sandbox as sb
from dbgauge.toolkit.sandbox.layout import Layout
from dbgauge.toolkit.sandbox.model import INSTANCES
from tests.helpers import REPO
from tests.helpers.daemon import Daemon
from tests.helpers.drift import SBR_USER
from tests.helpers.ports import BASE_PORT, PG_VERSION, SANDBOX_DIR, claim, claimed_by
from tests.helpers.servers import Sandbox, mariadb_account

# Fixtures that start real servers (the sandbox) or a daemon: a test using one, directly or
# through another fixture, is an integration test.
SERVER_FIXTURES = frozenset({"sandbox", "daemon"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse a test that needs a server without the `integration` mark, and an unmarked test
    in tests/integration/: `pytest -m "not integration"` must run with no server at all."""
    wrong = []
    for item in items:
        marked = item.get_closest_marker("integration") is not None
        needs = SERVER_FIXTURES & set(getattr(item, "fixturenames", ()))
        in_integration = "integration" in Path(str(item.fspath)).parts
        if not marked and (needs or in_integration):
            why = f"uses {', '.join(sorted(needs))}" if needs else "is in tests/integration"
            wrong.append(f"{item.nodeid} {why} but is not marked integration")
    if wrong:
        raise pytest.UsageError("\n".join(wrong))


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    running = SANDBOX_DIR.is_dir() and any(s.running for s in sb.status(SANDBOX_DIR))
    other = claimed_by(SANDBOX_DIR, REPO, running)
    if other is not None:
        pytest.fail(f"the test sandbox {SANDBOX_DIR} (base port {BASE_PORT}) is running for "
                    f"the checkout {other}: stop it (dbgauge sandbox down --dir "
                    f"{SANDBOX_DIR}), or give this run DBGAUGE_TEST_BASE_PORT", pytrace=False)
    try:
        config = sb.up(SANDBOX_DIR, BASE_PORT, pg_version=PG_VERSION)
    except sb.SandboxError as exc:
        pytest.fail(f"the real-server sandbox could not start: {exc}", pytrace=False)
    claim(SANDBOX_DIR, REPO)
    yield Sandbox(SANDBOX_DIR, config, sb.load_state(SANDBOX_DIR))
    if not os.environ.get("DBGAUGE_KEEP_SANDBOX"):
        sb.down(SANDBOX_DIR)


@pytest.fixture(scope="module")
def sbr_user(sandbox: Sandbox) -> Iterator[None]:
    """SBR_USER on the MariaDB primary: it may set the session binlog_format, as the
    replicated method of `dbgauge checksum` needs (the monitoring user may not)."""
    with mariadb_account(sandbox, SBR_USER, f"sbr-{sandbox.state.dbgauge_password}",
                         "SELECT, BINLOG ADMIN, SLAVE MONITOR", "dbgauge"):
        yield


@pytest.fixture(autouse=True)
def _servers_outlive_the_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """A sandbox server that died during a test fails that test, with its log's tail, and is
    started again: one crash is reported where it happened instead of failing every later
    test with "connection refused"."""
    yield
    if "sandbox" not in request.fixturenames:
        return
    layout = Layout(SANDBOX_DIR.resolve())
    dead = [name for name in INSTANCES if layout.running_pid(name) is None]
    if not dead:
        return
    report = []
    for name in dead:
        log = layout.log(name)
        tail = log.read_text(errors="replace").splitlines()[-25:] if log.is_file() else []
        report.append(f"{name} is not running after the test; the tail of {log}:\n"
                      + "\n".join(tail))
        sb.start_instance(SANDBOX_DIR, name)
    pytest.fail("\n\n".join(report), pytrace=False)


@pytest.fixture(scope="session")
def daemon(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(sandbox.config, tmp_path_factory.mktemp("daemon") / "serve.log")
    yield d
    d.stop()


