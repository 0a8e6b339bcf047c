"""The exporter daemon against the real sandbox servers."""

from __future__ import annotations

import math
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from prometheus_client import ProcessCollector
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as om_families,
)
from prometheus_client.parser import text_string_to_metric_families as text_families

from dbgauge import app
from dbgauge.cli import cli
from dbgauge.toolkit import sandbox as sb
from dbgauge.toolkit.exporter.fleet import scrape_once
from dbgauge.toolkit.render.prometheus import build_families, negotiate, render
from tests.helpers import DBGAUGE, REPO, Metrics, parse_metrics, value, wait_for
from tests.helpers.daemon import Daemon, config_file, target_entry
from tests.helpers.exposition import reference
from tests.helpers.ports import PG_VERSION
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

TARGETS = ("mariadb-primary", "mariadb-replica", "pg-primary", "pg-standby", "pgbouncer",
           "pg-subscriber")






def test_healthy_sandbox_all_targets_up(daemon: Daemon) -> None:
    m = daemon.metrics()
    for target in TARGETS:
        assert value(m, "dbgauge_up", target=target) == 1.0, daemon.log_text()
    # every default collector ran and produced its data on the right kind of target
    for target, collector in [("mariadb-primary", "mysql_status"),
                              ("mariadb-replica", "mysql_status"),
                              ("pg-primary", "postgres_database"),
                              ("pg-standby", "postgres_database"),
                              ("pgbouncer", "pgbouncer_lists")]:
        assert value(m, "dbgauge_collector_success", target=target, collector=collector) == 1.0
        duration = value(m, "dbgauge_collector_duration_seconds", target=target,
                         collector=collector)
        assert duration is not None and 0 < duration < 5
    assert value(m, "dbgauge_target_info", target="mariadb-primary", flavor="mariadb") == 1.0
    pg_info = [dict(ls) for (n, ls) in m if n == "dbgauge_target_info"
               and ("target", "pg-primary") in ls]
    assert len(pg_info) == 1 and pg_info[0]["version"].startswith(f"{PG_VERSION}.")
    assert pg_info[0]["flavor"] == "postgres"
    # Uptime counts whole seconds: a sandbox started this second reads 0 until the next one
    wait_for(lambda: (value(daemon.metrics(), "dbgauge_mysql_uptime_seconds",
                            target="mariadb-primary") or 0) > 0, what="uptime above 0")
    assert value(m, "dbgauge_postgres_database_backends", target="pg-primary",
                 database="app") is not None
    assert (value(m, "dbgauge_pgbouncer_list_items", target="pgbouncer", list="databases")
            or 0) >= 1
    # the sandbox config's extra label reaches every series of the target
    assert value(m, "dbgauge_up", target="pg-primary", sandbox="true") == 1.0


def test_counters_move_between_scrapes(daemon: Daemon) -> None:
    first = value(daemon.metrics(), "dbgauge_mysql_questions_total", target="mariadb-primary")
    second = value(daemon.metrics(), "dbgauge_mysql_questions_total", target="mariadb-primary")
    assert first is not None and second is not None and second > first


def test_one_persistent_connection_per_target(daemon: Daemon) -> None:
    """Scrapes reuse the target's connection: the server sees no new connection."""
    def attempts() -> float:
        m = daemon.metrics("/probe?target=mariadb-primary")
        found = value(m, "dbgauge_mysql_connections_total", target="mariadb-primary")
        assert found is not None
        return found

    first = attempts()
    for _ in range(3):
        last = attempts()
    assert last == first


def test_probe_one_target_and_collect_filter(daemon: Daemon) -> None:
    m = daemon.metrics("/probe?target=pg-primary")
    assert value(m, "dbgauge_up", target="pg-primary") == 1.0
    assert value(m, "dbgauge_up", target="mariadb-primary") is None
    m = daemon.metrics("/probe?target=mariadb-primary&collect[]=mysql_replication")
    assert value(m, "dbgauge_up", target="mariadb-primary") == 1.0
    assert value(m, "dbgauge_collector_success", target="mariadb-primary",
                 collector="mysql_replication") == 1.0
    assert value(m, "dbgauge_mysql_uptime_seconds", target="mariadb-primary") is None
    # an unknown name is a mistake, not an empty scrape: 400 naming the valid ones
    status, body = daemon.get("/probe?target=mariadb-primary&collect[]=mysql_status"
                              "&collect[]=nothing_of_that_name")
    assert status == 400, body
    assert body.startswith("unknown collect[] nothing_of_that_name: ")
    listed = set(body.split(" are ", 1)[1].strip().split(", "))
    assert {"mysql_replication", "mysql_status", "mysql_global_status"} <= listed
    assert "postgres_database" not in body
    status, body = daemon.get("/metrics?collect[]=postgres_databse")
    assert status == 400 and "postgres_database" in body and "mysql_status" in body, body
    # `none` (docs/deploy.md: the /metrics job beside /probe jobs): no collector runs, each
    # connection is still checked
    m = daemon.metrics("/metrics?collect[]=none")
    assert value(m, "dbgauge_up", target="pg-primary") == 1.0
    assert not any(name == "dbgauge_collector_success" for name, _ in m)
    assert not any(name.startswith(("dbgauge_postgres_", "dbgauge_mysql_")) for name, _ in m)
    status, body = daemon.get("/probe?target=nope")
    assert status == 404 and "unknown target 'nope'" in body
    status, body = daemon.get("/probe")
    assert status == 400
    status, body = daemon.get("/")
    assert status == 200 and "/probe?target=pgbouncer" in body
    assert daemon.get("/healthz") == (200, "ok\n")


def test_promtool_finds_nothing_on_a_full_scrape(daemon: Daemon) -> None:
    _, body = daemon.get("/metrics")
    assert "dbgauge_up" in body
    proc = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True,
                          text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "" and proc.stderr.strip() == ""


OPENMETRICS = "application/openmetrics-text; version=1.0.0"


def exposition(body: bytes | str, openmetrics: bool) -> dict[str, tuple[str, str, list[Any]]]:
    """Exposition text parsed by prometheus_client: family (a counter's without _total)
    -> (type, HELP, its samples as (name, labels, value) in order)."""
    text = body.decode() if isinstance(body, bytes) else body
    parse = om_families if openmetrics else text_families
    out = {}
    for family in parse(text):
        kind = "unknown" if family.type == "untyped" else family.type
        out[family.name.removesuffix("_total")] = (kind, family.documentation, [
            (s.name, s.labels, "NaN" if math.isnan(s.value) else s.value)
            for s in family.samples])
    return out


def test_one_writer_makes_both_formats_of_a_full_scrape(sandbox: Sandbox) -> None:
    """A full scrape of the sandbox (every target and default collector, the process
    metrics): the text format and OpenMetrics are prometheus_client's own bytes for these
    families, and they carry the same families, types, HELP, samples and labels."""
    registry = app.registry()
    config = app.load_config(sandbox.config)
    results = scrape_once(config, registry, [t.name for t in config.all_targets()], 30)
    assert [r.target for r in results if not r.up] == []
    families = build_families(results, specs=registry.specs())
    process = list(ProcessCollector(registry=None).collect())
    text = render(families, process, negotiate(None))
    om = render(families, process, negotiate(OPENMETRICS))
    assert text == reference(families, process, None)[0]
    assert om == reference(families, process, OPENMETRICS)[0]
    parsed = exposition(text, openmetrics=False)
    assert len(parsed) > 300 and parsed == exposition(om, openmetrics=True)


def test_the_daemon_serves_both_formats_alike(daemon: Daemon) -> None:
    """/metrics in the text format and in OpenMetrics (two scrapes: values move, and so do
    the label values of top-N families such as statements by digest): the same families,
    types, HELP, and sample names with the same label names. The test above holds one
    scrape's two renderings to each other sample by sample."""
    def shape(body: str, openmetrics: bool) -> dict[str, tuple[str, str, list[Any]]]:
        return {name: (kind, help_, sorted({(s[0], tuple(sorted(s[1]))) for s in samples}))
                for name, (kind, help_, samples) in exposition(body, openmetrics).items()}

    status, text = daemon.get("/metrics")
    assert status == 200 and not text.rstrip().endswith("# EOF")
    status, om = daemon.get("/metrics", headers={"Accept": OPENMETRICS})
    assert status == 200 and om.endswith("\n# EOF\n")
    assert shape(text, False) == shape(om, True)


def test_killed_replica_is_down_and_comes_back(sandbox: Sandbox, daemon: Daemon) -> None:
    sb.stop_instance(sandbox.directory, "mariadb-replica")
    try:
        m = daemon.metrics()
        assert value(m, "dbgauge_up", target="mariadb-replica") == 0.0
        for other in TARGETS:
            if other != "mariadb-replica":
                assert value(m, "dbgauge_up", target=other) == 1.0
        assert daemon.proc.poll() is None
        assert daemon.get("/healthz")[0] == 200
    finally:
        sb.start_instance(sandbox.directory, "mariadb-replica")
    m = daemon.metrics()
    assert value(m, "dbgauge_up", target="mariadb-replica") == 1.0, daemon.log_text()
    assert "mariadb-replica is down" in daemon.log_text()


@pytest.fixture()
def blackhole() -> Iterator[int]:
    """A port that accepts TCP connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_silent_target_does_not_hang_the_scrape(sandbox: Sandbox, blackhole: int,
                                                tmp_path: Path) -> None:
    targets = [
        {"name": "silent-mysql", "kind": "mysql", "dsn": f"mysql://x@127.0.0.1:{blackhole}/",
         "connect_timeout": 30},
        {"name": "silent-pg", "kind": "postgres",
         "dsn": f"postgresql://x@127.0.0.1:{blackhole}/x", "connect_timeout": 30},
        target_entry(sandbox, "pg-primary"),
    ]
    d = Daemon(config_file(sandbox, tmp_path / "c.yaml", targets), tmp_path / "log")
    try:
        for _ in range(2):  # the second scrape must not be stuck behind the first
            started = time.monotonic()
            m = d.metrics(scrape_timeout=2)
            elapsed = time.monotonic() - started
            # the targets' connect_timeout is 30 s: an answer long before that means the
            # scrape deadline (2 s) bounded their connection attempts
            assert elapsed < 10, f"scrape took {elapsed:.2f}s with a 2s deadline"
            assert value(m, "dbgauge_up", target="silent-mysql") == 0.0
            assert value(m, "dbgauge_up", target="silent-pg") == 0.0
            assert value(m, "dbgauge_up", target="pg-primary") == 1.0
    finally:
        d.stop()


def test_wrong_password_is_down_logged_and_never_leaked(sandbox: Sandbox, tmp_path: Path) -> None:
    bad = "Wr0ng-Pa55word-xyz"
    (tmp_path / "bad.pw").write_text(bad)
    targets = []
    for name in ("mariadb-primary", "pg-primary", "pgbouncer"):
        t = target_entry(sandbox, name)
        t["name"] = f"{name}-badpw"
        t["password_file"] = str(tmp_path / "bad.pw")
        targets.append(t)
    targets.append({"name": "inline-dsn", "kind": "postgres",
                    "dsn": f"postgresql://dbgauge:{bad}@127.0.0.1:{sandbox.state.port('pg-primary')}/app"})
    d = Daemon(config_file(sandbox, tmp_path / "c.yaml", targets, log_format="json"),
               tmp_path / "log")
    try:
        status, body = d.get("/metrics")
        assert status == 200
        m = parse_metrics(body)
        for t in targets:
            assert value(m, "dbgauge_up", target=str(t["name"])) == 0.0
        assert bad not in body
    finally:
        d.stop()
    log = d.log_text()
    assert log.count("authentication failed") >= 4, log
    assert bad not in log


def test_sighup_reloads_and_bad_config_keeps_the_old(sandbox: Sandbox, tmp_path: Path) -> None:
    """A reload shows in dbgauge_config_last_reload_successful and _success_timestamp_seconds
    (Prometheus' own convention): 0 while a broken file is kept out, 1 and a newer time once
    a reload succeeds again; waited for on /metrics, where Prometheus sees it."""
    ok, at = "dbgauge_config_last_reload_successful", \
        "dbgauge_config_last_reload_success_timestamp_seconds"
    path = config_file(sandbox, tmp_path / "c.yaml", [target_entry(sandbox, "pg-primary")])
    d = Daemon(path, tmp_path / "log")

    def reloaded(successful: float, after: float) -> Metrics | None:
        m = d.metrics()
        return m if value(m, ok) == successful and (value(m, at) or 0) > after else None

    try:
        m = d.metrics()
        assert value(m, "dbgauge_up", target="pg-primary") == 1.0
        assert value(m, ok) == 1.0 and abs((value(m, at) or 0) - time.time()) < 60
        started = value(m, at) or 0
        assert value(d.metrics("/probe?target=pg-primary"), ok) is None  # fleet-wide only
        config_file(sandbox, path, [target_entry(sandbox, "pg-primary"),
                                target_entry(sandbox, "mariadb-primary")])
        d.proc.send_signal(signal.SIGHUP)
        m = wait_for(lambda: reloaded(1.0, started), what="a successful reload on /metrics")
        first = value(m, at) or 0
        assert "config reloaded" in d.log_text()
        m = d.metrics()  # a scrape begun after the reload (one in flight used the old config)
        assert value(m, "dbgauge_up", target="mariadb-primary") == 1.0
        path.write_text("targets:\n  - name: broken\n    kind: nosuch\n")
        d.proc.send_signal(signal.SIGHUP)
        m = wait_for(lambda: reloaded(0.0, first - 1), what="the failed reload on /metrics")
        assert value(m, at) == first  # the last success, unchanged
        assert "reload failed" in d.log_text() and "targets[0].kind" in d.log_text()
        assert value(m, "dbgauge_up", target="mariadb-primary") == 1.0
        assert value(m, "dbgauge_up", target="broken") is None
        config_file(sandbox, path, [target_entry(sandbox, "pg-primary")])
        d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: reloaded(1.0, first), what="the fixed config's reload on /metrics")
        assert value(d.metrics(), "dbgauge_up", target="mariadb-primary") is None
    finally:
        code = d.stop()
    assert code == 0, d.log_text()
    assert "stopped" in d.log_text()


@pytest.mark.parametrize("command", [["config", "check"], ["serve", "--config"],
                                     ["collect", "x", "--config"]])
def test_malformed_config_exits_2_naming_the_yaml_path(tmp_path: Path, command: list[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("targets:\n  - name: a\n    kind: mysql\n    dsn: mysql://u@h/\n"
                   "    query_timeout: forever\n")
    proc = subprocess.run([*DBGAUGE, *command, str(bad)], capture_output=True, text=True,
                          timeout=30, cwd=REPO, check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"{bad}:5: targets[0].query_timeout" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_config_check_accepts_the_sandbox_config(sandbox: Sandbox) -> None:
    proc = subprocess.run([*DBGAUGE, "config", "check", str(sandbox.config)],
                          capture_output=True, text=True, timeout=30, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "OK, 6 target(s)" in proc.stdout


def test_collect_prints_one_scrape(sandbox: Sandbox) -> None:
    proc = subprocess.run([*DBGAUGE, "collect", "--config", str(sandbox.config), "pgbouncer"],
                          capture_output=True, text=True, timeout=30, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    m = parse_metrics(proc.stdout)
    assert value(m, "dbgauge_up", target="pgbouncer") == 1.0
    assert value(m, "dbgauge_collector_success", target="pgbouncer",
                 collector="pgbouncer_lists") == 1.0


def test_listen_conflict_is_a_clear_error(sandbox: Sandbox, daemon: Daemon) -> None:
    proc = subprocess.run([*DBGAUGE, "serve", "--config", str(sandbox.config), "--listen",
                           f"127.0.0.1:{daemon.port}"], capture_output=True, text=True,
                          timeout=30, cwd=REPO, check=False)
    assert proc.returncode == 2
    assert f"cannot listen on 127.0.0.1:{daemon.port}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_promtool_is_installed() -> None:
    assert shutil.which("promtool"), "deploy/install-deps should have installed prometheus"


def test_collect_unreachable_target_exits_1_with_up_0(tmp_path: Path) -> None:
    """A closed port: `collect` prints the target as down (up 0) and exits 1."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u:pw123456@127.0.0.1:1/'}\n")
    result = CliRunner().invoke(cli, ["collect", "--config", str(cfg), "a"])
    assert result.exit_code == 1
    assert 'dbgauge_up{target="a"} 0.0' in result.output
    assert "target a is down: cannot connect to 127.0.0.1:1" in result.output
    assert "pw123456" not in result.output
