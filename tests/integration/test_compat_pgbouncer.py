"""`--compat pgbouncer_exporter` against the sandbox's PgBouncer 1.18 (Debian 12's package).

Debian's prometheus-pgbouncer-exporter 1.7 does not start against this PgBouncer, nor any
since 1.8: its SHOW STATS collector reads the column total_requests, which PgBouncer 1.8
removed, and the KeyError at registration ends the process. The first test pins that
down (it fails the day Debian's exporter starts, so that its stats families get compared
too). The second runs the same exporter, with its own flags and environment, with that
one collector left out (the others are its own code, unchanged), beside `dbgauge serve
--compat pgbouncer_exporter`, and compares every family it exports: names, label sets,
types, and each value between two readings of the peer taken around dbgauge's.

Upstream's Go exporter is not packaged here: its names are checked on captured SHOW output
in tests/unit/test_dialect_pgbouncer.py, and its full family list (names, label names,
types) on the live PgBouncer below.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Iterator

import psycopg
import pytest

from dbgauge.toolkit import sandbox as sb
from tests.helpers import wait_for
from tests.helpers.daemon import Daemon, config_file, target_entry
from tests.helpers.peers import PGBOUNCER_EXPORTER, Family, compare, parse, peer
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

# Debian's exporter with its SHOW STATS collector replaced by one that collects nothing;
# everything else (flags, connection, collectors, HTTP handler) is the package's own.
WITHOUT_STATS = """
import sys
import prometheus_pgbouncer_exporter.cli as cli

class NoStats:
    def __init__(self, *args, **kwargs):
        pass

    def collect(self):
        return iter(())

cli.StatsCollector = NoStats
sys.argv[0] = "prometheus-pgbouncer-exporter"
cli.main()
"""


def debian_args(sandbox: Sandbox) -> list[str]:
    """Its flags: where to listen, and PgBouncer's console as the stats user `dbgauge`."""
    return ["--host", "127.0.0.1", "--port", "{port}", "--pgbouncer-host", "127.0.0.1",
            "--pgbouncer-port", str(sandbox.state.port("pgbouncer")),
            "--pgbouncer-user", "dbgauge"]


def debian_env(sandbox: Sandbox) -> dict[str, str]:
    return {"PGPASSWORD": sandbox.state.dbgauge_password}  # it has no password option


@pytest.fixture(scope="module")
def dbgauge(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """`dbgauge serve` with the PgBouncer target only, speaking pgbouncer_exporter."""
    tmp = tmp_path_factory.mktemp("compat-pgbouncer")
    config = config_file(sandbox, tmp / "dbgauge.yaml", [target_entry(sandbox, "pgbouncer")],
                         compat=["pgbouncer_exporter"])
    daemon = Daemon(config, tmp / "serve.log")
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture
def app_clients(sandbox: Sandbox) -> Iterator[Counter[str]]:
    """Clients of app_tiny through PgBouncer with application names (web x2, batch x1, one
    without), idle; yields how many per name."""
    names = ["web", "web", "batch", ""]
    dsn = sandbox.admin_dsn("pgbouncer", sb.TINY_POOL_DATABASE)
    conns = [psycopg.connect(dsn, prepare_threshold=None, connect_timeout=5,
                             **({"application_name": n} if n else {})) for n in names]
    try:
        yield Counter(names)
    finally:
        for conn in conns:
            conn.close()


def _ours(daemon: Daemon) -> dict[str, Family]:
    status, body = daemon.get("/metrics")
    assert status == 200, body
    return parse(body, drop_labels=["sandbox"])  # the sandbox target's own label


def first_of_repeats(text: str) -> str:
    """The exposition with a repeated series' later lines left out: Prometheus keeps the
    first sample of a series that a scrape repeats."""
    seen: set[str] = set()
    out = []
    for line in text.splitlines():
        key = line.rsplit(" ", 1)[0]
        if not line.startswith("#") and key in seen:
            continue
        seen.add(key)
        out.append(line)
    return "\n".join(out)


def test_debians_exporter_does_not_start_on_pgbouncer_1_8_or_later(sandbox: Sandbox) -> None:
    args = [a.replace("{port}", "0") for a in debian_args(sandbox)]
    proc = subprocess.run([PGBOUNCER_EXPORTER, *args], env={**os.environ, **debian_env(sandbox)},
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode != 0
    assert "KeyError: 'total_requests'" in proc.stderr, proc.stderr


def test_every_family_debians_exporter_exports(sandbox: Sandbox, dbgauge: Daemon) -> None:
    _ours(dbgauge)  # dbgauge's connection is open, so both sides count it among the clients
    with peer(["/usr/bin/python3", "-c", WITHOUT_STATS, *debian_args(sandbox)],
              debian_env(sandbox), ready="pgbouncer_used_clients") as running:
        raw = running.scrape()
        before = parse(first_of_repeats(raw))
        ours = _ours(dbgauge)
        after = parse(first_of_repeats(running.scrape()))
    # its own process (prometheus_client's default registry) is not PgBouncer's data
    families = sorted(n for n in set(before) & set(after)
                      if not n.startswith(("process_", "python_")))
    assert len(families) == 16, families
    assert compare(before, ours, after, families) == []
    # app and app_tiny are both database app: the peer repeats the series, 10 then 2
    assert [line for line in raw.splitlines()
            if line.startswith('pgbouncer_pool_size{database="app"}')] == [
        'pgbouncer_pool_size{database="app"} 10.0', 'pgbouncer_pool_size{database="app"} 2.0']
    assert ours["pgbouncer_pool_size"].samples[
        ("pgbouncer_pool_size", frozenset({("database", "app")}))] == 10


# upstream pgbouncer_exporter 0.12.1 (collector.go), and 0.10's SHOW STATS names: the
# families PgBouncer 1.18 gives data for, with their label names and types
_POOL = frozenset({"database", "user"})
_ENTRY = frozenset({"name", "host", "port", "database", "force_user", "pool_mode"})
_COUNTERS = ("sql_transactions_pooled_total", "queries_pooled_total", "received_bytes_total",
             "sent_bytes_total", "server_in_transaction_seconds_total",
             "queries_duration_seconds_total", "client_wait_seconds_total")
UPSTREAM: dict[str, tuple[str, frozenset[str]]] = {
    "pgbouncer_up": ("gauge", frozenset()),
    "pgbouncer_version_info": ("gauge", frozenset({"version"})),
    "pgbouncer_client_connections": ("gauge", frozenset(
        {"database", "user", "application_name", "state"})),
    **{f"pgbouncer_{n}": ("gauge", frozenset()) for n in (
        "databases", "users", "pools", "free_clients", "used_clients", "login_clients",
        "free_servers", "used_servers", "cached_dns_names", "cached_dns_zones",
        "in_flight_dns_queries", "config_max_client_connections",
        "config_max_user_connections")},
    **{f"pgbouncer_pools_{n}": ("gauge", _POOL) for n in (
        "client_active_connections", "client_active_cancel_connections",
        "client_waiting_connections", "client_waiting_cancel_connections",
        "server_active_connections", "server_active_cancel_connections",
        "server_being_canceled_connections", "server_idle_connections",
        "server_used_connections", "server_testing_connections", "server_login_connections",
        "client_maxwait_seconds")},
    **{f"pgbouncer_databases_{n}": ("gauge", _ENTRY) for n in (
        "pool_size", "reserve_pool", "max_connections", "current_connections", "paused",
        "disabled")},
    **{f"pgbouncer_stats_totals_{n}": ("counter", frozenset({"database"})) for n in _COUNTERS},
    **{f"pgbouncer_stats_{n}": ("counter", frozenset({"database"})) for n in _COUNTERS},
}
DEBIAN_ONLY = {"pgbouncer_dns_names", "pgbouncer_dns_zones", "pgbouncer_dns_queries",
               "pgbouncer_dns_pending", "pgbouncer_active_clients", "pgbouncer_waiting_clients",
               "pgbouncer_pool_size", "pgbouncer_reserve_pool"}


def test_upstreams_full_family_list(sandbox: Sandbox, dbgauge: Daemon,
                                    app_clients: Counter[str]) -> None:
    def counted() -> dict[str, Family] | None:
        ours = _ours(dbgauge)
        family = ours.get("pgbouncer_client_connections")
        tiny = family and {dict(k[1])["application_name"]: v for k, v in family.samples.items()
                           if dict(k[1])["database"] == sb.TINY_POOL_DATABASE}
        return ours if tiny == app_clients else None

    ours = wait_for(counted, what="the app_tiny clients by application_name")
    peer_families = {n: f for n, f in ours.items() if n.startswith("pgbouncer_")}
    assert set(peer_families) == set(UPSTREAM) | DEBIAN_ONLY
    assert len(UPSTREAM) == 48
    for name, (type_, labels) in UPSTREAM.items():
        family = peer_families[name]
        assert (family.type, family.label_names()) == (type_, frozenset({labels})), name
    version = next(iter(peer_families["pgbouncer_version_info"].samples))[1]
    assert dict(version)["version"].startswith("PgBouncer 1.18")
    clients = peer_families["pgbouncer_client_connections"]
    assert {dict(k[1])["state"] for k in clients.samples} == {"active"}
    # dbgauge's own family has the same series while max_applications (50) is not reached
    own = ours["dbgauge_pgbouncer_client_connections"].samples
    assert {(k[0].replace("dbgauge_", ""), k[1] - {("target", "pgbouncer")}): v
            for k, v in own.items()} == clients.samples
